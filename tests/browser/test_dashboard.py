"""The dashboard against a running ai_zone_small, in Debian's chromium (root, Mininet).

One fabric for the module, brought up as a user does (`aizone up`, under
the shared network lock), the page opened at the URL `up` prints. The
tests check the drawing against the API's topology and against the plan
computed from the YAML, that the page lives on one event stream, fail a
link through the CLI and watch it turn to the failed style, change the
routing mode from the page and read it back over the API, fail and restore
a link from the page, read a switch's tables and counters, and watch the
colours move while `aizone run allreduce` runs (a screenshot of that is
saved under the test's tmp dir, or in $AIZONE_ARTIFACTS, its path
printed). Every change is undone; the fixture restores any link left down
and the mode before `aizone down`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from browser_support import Fabric, aizone
from dashboard_support import IDLE_RGB, click_link, drawn_graph, expected_graph, live_page

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "topologies" / "ai_zone_small.yaml"
CLI_FAILED = "rtsw1-eth5--ctsw1-eth1"  # `aizone link down rtsw1 ctsw1`
PAGE_FAILED = "rtsw4-eth6--ctsw2-eth4"  # rtsw4's uplink to ctsw2, failed from the page

pytestmark = pytest.mark.root


@dataclass
class PageLog:
    """What the page asked of the server, and the script errors it raised."""

    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def page_log() -> PageLog:
    return PageLog()


@pytest.fixture(scope="module")
def page(fabric: Fabric, browser: Any, page_log: PageLog) -> Iterator[Any]:
    """The dashboard at the URL `aizone up` printed, once it has drawn the fabric and gone live."""
    with live_page(browser, fabric.url, page_log.errors, page_log.requests) as p:
        yield p
    assert not page_log.errors, page_log.errors


def _artifact(tmp_path: Path, name: str) -> Path:
    """Where a screenshot goes: $AIZONE_ARTIFACTS (kept, e.g. by CI) or the test's tmp dir."""
    where = Path(os.environ.get("AIZONE_ARTIFACTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where / name


def _wait(page: Any, js: str, arg: Any = None, timeout: float = 20) -> Any:
    return page.wait_for_function(js, arg=arg, timeout=timeout * 1000).json_value()


def _edge_state(page: Any, link: str) -> str:
    state: str = page.get_attribute(f'#fabric .edge[data-id="{link}"]', "data-state")
    return state


def test_drawn_graph_equals_the_topology_and_the_plan(fabric: Fabric, page: Any) -> None:
    """Nodes and links drawn, by id, are the API's topology and the plan of the YAML."""
    topo = fabric.api.get("/topology")
    plan_nodes, plan_links = expected_graph(SMALL)
    drawn = drawn_graph(page)
    assert {k: v["role"] for k, v in drawn["nodes"].items()} == plan_nodes
    assert set(drawn["nodes"]) == {n["id"] for n in topo["nodes"]}
    assert set(drawn["edges"]) == plan_links == {e["id"] for e in topo["edges"]}
    # ai_zone_small by hand: 4 RTSWs, 2 CTSWs, 8 hosts; 16 NIC links + 8 uplinks
    assert len(drawn["nodes"]) == 14 and len(drawn["edges"]) == 24
    assert drawn["edges"][CLI_FAILED]["a"] == "rtsw1" and drawn["edges"][CLI_FAILED]["b"] == "ctsw1"
    assert {e["state"] for e in drawn["edges"].values()} == {"up"}
    assert page.text_content("#fabric-name") == "ai_zone_small"
    assert page.get_attribute("#mode button.active", "data-mode") == topo["mode"] == "eecmp"


def test_the_page_lives_on_one_event_stream(page: Any, page_log: PageLog) -> None:
    """Statistics arrive about once a second over one SSE stream; nothing polls the switches."""
    before = page.evaluate("window.aizone.statsEvents")
    page.wait_for_timeout(3500)
    got = page.evaluate("window.aizone.statsEvents") - before
    assert got >= 2, f"{got} statistics events in 3.5 s"
    api = [u.split("/api/v1/", 1)[1] for u in page_log.requests if "/api/v1/" in u]
    streams = [u for u in api if u.startswith("events")]
    assert len(streams) == 1, api
    assert "kinds=stats," in streams[0]
    assert api.count("stats") <= 1 and not [u for u in api if u.startswith(("routes", "counters"))]


def test_a_link_failed_through_the_cli_turns_to_the_failed_style(fabric: Fabric,
                                                                 page: Any) -> None:
    """`aizone link down rtsw1 ctsw1`: that link (only) is drawn failed; `link up` restores it."""
    down = aizone("link", "down", "rtsw1", "ctsw1")
    assert down.returncode == 0, down.stderr
    _wait(page, "id => document.querySelector(`#fabric .edge[data-id='${id}']`)"
                ".dataset.state === 'failed'", CLI_FAILED)
    drawn = drawn_graph(page)
    assert drawn["edges"][CLI_FAILED]["dash"] not in ("none", "")  # dashed
    assert [k for k, v in drawn["edges"].items() if v["state"] != "up"] == [CLI_FAILED]
    assert page.is_visible(f'#fabric .edge[data-id="{CLI_FAILED}"] .cut')
    up = aizone("link", "up", "rtsw1", "ctsw1")
    assert up.returncode == 0, up.stderr
    _wait(page, "id => document.querySelector(`#fabric .edge[data-id='${id}']`)"
                ".dataset.state === 'up'", CLI_FAILED)
    assert fabric.link_up(CLI_FAILED)


def test_the_mode_switched_from_the_page_reads_back_over_the_api(fabric: Fabric,
                                                                 page: Any) -> None:
    """Clicking `pin` changes the fabric's mode (GET /status says pin); `eecmp` puts it back."""
    for mode in ("pin", "eecmp"):
        page.click(f'#mode button[data-mode="{mode}"]')
        _wait(page, "m => document.querySelector('#mode button.active')?.dataset.mode === m && "
                    "!document.querySelector('#mode').classList.contains('busy')", mode)
        assert fabric.api.get("/status")["mode"] == mode
        assert fabric.api.get("/routes", switch="rtsw1")["mode"] == mode


def test_a_link_failed_and_restored_from_the_page(fabric: Fabric, page: Any) -> None:
    """Click a link, `Fail link`: the API says it is down; `Restore link`: up again."""
    click_link(page, PAGE_FAILED)
    page.wait_for_selector("#selection button[data-action='set-link']")
    assert "rtsw4:6 ↔ ctsw2:4" in page.text_content("#selection h2")
    page.click("#selection button[data-action='set-link']")  # Fail link
    _wait(page, "id => document.querySelector(`#fabric .edge[data-id='${id}']`)"
                ".dataset.state === 'failed'", PAGE_FAILED)
    assert not fabric.link_up(PAGE_FAILED)
    page.wait_for_selector("#selection button.restore")
    page.click("#selection button.restore")
    _wait(page, "id => document.querySelector(`#fabric .edge[data-id='${id}']`)"
                ".dataset.state === 'up'", PAGE_FAILED)
    assert fabric.link_up(PAGE_FAILED)
    page.click("#close-selection")


def test_clicking_a_switch_shows_its_tables_and_counters(fabric: Fabric, page: Any) -> None:
    """rtsw1's panel lists the entries read back (as many as GET /routes) and its port counters."""
    page.click('#fabric .node[data-id="rtsw1"] .box')
    page.wait_for_selector("#sel-routes details")
    page.wait_for_selector("#sel-counters table")
    routes = fabric.api.get("/routes", switch="rtsw1")["switches"]["rtsw1"]
    text = page.text_content("#sel-routes")
    assert "equal to the intent" in text and f"{len(routes['entries'])} entities" in text
    assert "routing.ipv4_route" in text
    rows = page.eval_on_selector_all(
        "#sel-counters tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))")
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5", "6"]
    # the uplinks carry the link probes, so their counters have moved since bring-up
    assert int(rows[4][1]) > 0 and int(rows[4][3]) > 0
    ports = page.eval_on_selector_all("#selection .ports-table tbody tr",
                                      "rs => rs.map(r => r.dataset.port)")
    assert sorted(ports, key=int) == ["1", "2", "3", "4", "5", "6"]
    page.click("#close-selection")


def test_colours_move_while_an_allreduce_runs(fabric: Fabric, page: Any,
                                              tmp_path: Path) -> None:
    """Idle links are drawn idle; under `aizone run allreduce` the job's uplinks change colour."""
    deadline = time.monotonic() + 5  # the link restored last may wait for a snapshot
    while True:
        drawn = drawn_graph(page)
        busy = {k: v for k, v in drawn["edges"].items() if v["strokes"] != [IDLE_RGB, IDLE_RGB]}
        if not busy or time.monotonic() > deadline:
            break
        page.wait_for_timeout(200)
    assert not busy, f"links not drawn idle before any traffic: {busy}"
    result: dict[str, Any] = {}

    def run() -> None:
        result["proc"] = aizone("run", "allreduce", "--ranks", "8", "--size", "1M", "--json",
                                timeout=240)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    _wait(page, "() => ['running', 'done'].includes("
                "document.querySelector('#job [data-phase]')?.dataset.phase)", timeout=60)
    coloured = _wait(page, f"""() => {{
        const moved = [...document.querySelectorAll('#fabric .edge[data-tier="rtsw_ctsw"]')]
            .filter((g) => [...g.querySelectorAll('.half')]
                .some((l) => getComputedStyle(l).stroke !== '{IDLE_RGB}'));
        return moved.length >= 2 ? moved.map((g) => g.dataset.id) : false;
    }}""", timeout=60)
    page.wait_for_timeout(900)  # one more snapshot: the picture a person sees mid-job
    shot = _artifact(tmp_path, "dashboard.png")
    page.screenshot(path=str(shot))
    print(f"\nscreenshot under traffic: {shot}")
    worker.join(240)
    proc = result["proc"]
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    job = json.loads(proc.stdout)
    # The uplinks drawn in colour are ones the job loaded (its own before/after counters;
    # link probes alone carry about a kB a second).
    loaded = {lk["id"] for lk in job["links"] if lk["up_bytes"] + lk["down_bytes"] > 20_000}
    assert set(coloured) <= loaded, (coloured, loaded)
    _wait(page, "() => document.querySelector('#job [data-phase]')?.dataset.phase === 'done'")
    assert f"#{job['id']}" in page.text_content("#job")
    assert page.is_visible(f'#jobs tr[data-job="{job["id"]}"]')
    done = _artifact(tmp_path, "dashboard-done.png")
    page.screenshot(path=str(done))
    print(f"screenshot after the job: {done}")


def test_a_link_captured_from_the_page_is_a_pcap(fabric: Fabric, page: Any,
                                                 tmp_path: Path) -> None:
    """Click a link, `Capture 5 s`: the browser downloads a pcap of that link's A end, rtsw4:6
    (libpcap's magic, then records: the link probes cross it every 0.2 s)."""
    click_link(page, PAGE_FAILED)
    page.wait_for_selector("#selection a[data-action='capture'][data-seconds='5']")
    with page.expect_download(timeout=60_000) as got:
        page.click("#selection a[data-action='capture'][data-seconds='5']")
    download = got.value
    assert download.suggested_filename == "rtsw4_6.pcap"  # the API's name for rtsw4:6
    path = tmp_path / "link.pcap"
    download.save_as(path)
    data = path.read_bytes()
    assert data[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4"), data[:24]
    assert len(data) > 24 + 16, "a global header and no packet"
    page.click("#close-selection")
