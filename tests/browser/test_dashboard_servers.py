"""The dashboard of a fabric over two servers, in Debian's chromium (root, Mininet's cluster mode).

`aizone up ai_zone_small --servers localhost,<server>` as a user runs it,
the second server a network namespace with its own sshd
(tests/fabric/servers_support.py); the page opened at the URL `up` prints.
A switch that runs on the other server shows that server, its tables read
back over P4Runtime (as many entries as GET /routes, equal to the intent)
and its counters; a host there shows it too; a link between the two
servers says it crosses them (a VXLAN tunnel) where a link inside one
server does not; and a capture clicked on the page, of a link whose switch
end runs on the other server, downloads a pcap of that port taken there
(the link probes cross it every 0.2 s). When the server's clock jumps 5 s
ahead (its sshd reloaded with libfaketime for new sessions), the page's
event log says so, and again when it is back. Skips, saying why, where
sshd or chromium cannot run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from browser_support import ROOT, SMALL, Fabric
from dashboard_support import click_link, live_page
from scapy.utils import rdpcap

from controller.client import ApiClient
from tests.fabric.servers_support import NamespaceServers, faketime_missing, sshd_missing
from tests.provides import chosen_target, net_lock, unavailable
from topologies.addressing import plan_addresses
from topologies.runstate import read_state
from topologies.spec import load_spec

pytestmark = pytest.mark.root


@dataclass(frozen=True, kw_only=True)
class Spread:
    """The fabric up over this machine and `server`, and where each node runs."""

    fabric: Fabric
    server: str
    placement: dict[str, str]
    servers: NamespaceServers


def _aizone(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aizone.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def spread(request: pytest.FixtureRequest) -> Iterator[Spread]:
    """ai_zone_small up over this machine and one namespace server, down at the end."""
    if os.geteuid() != 0:
        unavailable("root", "the dashboard's browser test brings a fabric up: it needs root")
    why = sshd_missing()
    if why:
        unavailable("sshd", f"sshd cannot run here: {why}")
    target = chosen_target(request.config, "auto")
    with net_lock(), NamespaceServers(1) as servers:
        server = servers.addresses[0]
        env = {**os.environ, **servers.env()}
        up = _aizone(env, "up", str(SMALL), "--target", target, "--json",
                     "--servers", f"localhost,{server}")
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
        api = ApiClient()
        try:
            state = read_state()
            assert state is not None
            yield Spread(fabric=Fabric(api, json.loads(up.stdout)), server=server,
                         placement=dict(state.meta["placement"]), servers=servers)
        finally:
            api.close()
            down = _aizone(env, "down")
            assert down.returncode == 0, down.stderr


@pytest.fixture(scope="module")
def page(spread: Spread, browser: Any) -> Iterator[Any]:
    """The dashboard at the URL `aizone up` printed, once it has drawn the fabric and gone live."""
    errors: list[str] = []
    with live_page(browser, spread.fabric.url, errors) as p:
        yield p
    assert not errors, errors


def _there(spread: Spread, prefix: str) -> str:
    """The first node named `prefix...` that runs on the other server."""
    return sorted(n for n, s in spread.placement.items()
                  if s == spread.server and n.startswith(prefix))[0]


def test_a_switch_on_the_other_server_shows_it_and_its_tables(spread: Spread,
                                                              page: Any) -> None:
    """Its panel says where it runs; its entries are read back over P4Runtime from there."""
    name = _there(spread, "rtsw")
    page.click(f'#fabric .node[data-id="{name}"] .box')
    page.wait_for_selector("#sel-routes details")
    page.wait_for_selector("#sel-counters table")
    assert f"on {spread.server}" in page.text_content("#selection .sub")
    routes = spread.fabric.api.get("/routes", switch=name)["switches"][name]
    text = page.text_content("#sel-routes")
    assert "equal to the intent" in text and f"{len(routes['entries'])} entities" in text
    rows = page.eval_on_selector_all(
        "#sel-counters tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))")
    # ports 1-4 to its hosts, 5-6 its uplinks: the link probes have moved the uplinks' counters
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5", "6"]
    assert int(rows[4][1]) > 0 and int(rows[4][3]) > 0
    page.click("#close-selection")
    here = sorted(n for n, s in spread.placement.items()
                  if s != spread.server and n.startswith("rtsw"))[0]
    page.click(f'#fabric .node[data-id="{here}"] .box')
    page.wait_for_selector("#sel-routes details")
    sub = page.text_content("#selection .sub")
    assert "on localhost" in sub and spread.server not in sub
    page.click("#close-selection")


def test_a_host_on_the_other_server_shows_it(spread: Spread, page: Any) -> None:
    name = _there(spread, "h")
    page.click(f'#fabric .node[data-id="{name}"] .box')
    page.wait_for_selector("#selection .sel-head")
    assert f"on {spread.server}" in page.text_content("#selection .sub")
    page.click("#close-selection")


def test_a_link_between_the_servers_says_so_and_is_captured_there(spread: Spread, page: Any,
                                                                   tmp_path: Path) -> None:
    """An uplink from a rack switch on the other server to a spine here: the panel says it
    crosses the servers; `Capture 5 s` downloads a pcap of its A end, taken on that server.
    An uplink inside one server says nothing of the kind."""
    plan = plan_addresses(load_spec(SMALL))
    where = spread.placement
    crossing = next(lk for lk in plan.links if lk.tier == "rtsw_ctsw"
                    and where[lk.a] == spread.server and where[lk.b] != spread.server)
    inside = next(lk for lk in plan.links if lk.tier == "rtsw_ctsw" and where[lk.a] == where[lk.b])
    click_link(page, inside.id)
    page.wait_for_selector("#selection a[data-action='capture'][data-seconds='5']")
    assert "crosses servers" not in page.text_content("#selection .sub")
    page.click("#close-selection")
    click_link(page, crossing.id)
    page.wait_for_selector("#selection a[data-action='capture'][data-seconds='5']")
    assert (f"crosses servers: {spread.server} ↔ {where[crossing.b]} (VXLAN tunnel)"
            in page.text_content("#selection .sub"))
    with page.expect_download(timeout=60_000) as got:
        page.click("#selection a[data-action='capture'][data-seconds='5']")
    download = got.value
    assert download.suggested_filename == f"{crossing.a}_{crossing.a_port}.pcap"
    path = tmp_path / "crossing.pcap"
    download.save_as(path)
    # Taken there and carried back byte for byte: every record parses, and the probes that
    # cross the link every 0.2 s are in it.
    packets = rdpcap(str(path))
    assert len(packets) >= 5, packets
    page.click("#close-selection")


def test_a_server_clock_gone_off_and_back_is_in_the_event_log(spread: Spread,
                                                              page: Any) -> None:
    why = faketime_missing()
    if why:
        unavailable("sshd", f"no way to skew a server's clock: {why}")
    log = "#events"
    try:
        spread.servers.set_clock_skew(0, 5.0)
        page.wait_for_function(
            "s => document.querySelector('#events').textContent.includes(s)",
            arg=f"server {spread.server}: its clock is +5.0", timeout=60_000)
        spread.servers.set_clock_skew(0, None)
        page.wait_for_function(
            "s => document.querySelector('#events').textContent.includes(s)",
            arg=f"{spread.server}: clock back within the bound", timeout=60_000)
    finally:
        spread.servers.set_clock_skew(0, None)
    first = page.eval_on_selector(f"{log} li", "li => li.className")
    assert first == "good", first
