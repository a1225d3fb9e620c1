"""Tests for controller.web: where the dashboard is served from, and the stream it listens to.

The application is the daemon's real one (`controller.api.create_app` on a
`Daemon` that has not brought a fabric up, no root needed). The event
stream is read from the real uvicorn server on a Unix socket, subscribed
with the kinds the page asks for, and carries a statistics snapshot built by
`controller.stats.build_snapshot` from hand-made counter readings of
ai_zone_small, so the figures the page colours links by are checked by hand.
The page itself is driven by tests/browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import logging
import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from controller.api import ApiServer, create_app
from controller.daemon import Daemon, DaemonConfig
from controller.sessions import CounterCell
from controller.stats import Reading, build_snapshot
from controller.web import ASSET_PREFIX, STATIC_DIR
from tests.unit.controller.netutil import free_port
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "topologies" / "ai_zone_small.yaml"


@pytest.fixture()
def daemon() -> Daemon:
    return Daemon(DaemonConfig(topology=None))


@pytest.fixture()
def client(daemon: Daemon) -> TestClient:
    return TestClient(create_app(daemon), client=("127.0.0.1", 50000))


class _Refs(HTMLParser):
    """The URLs a page loads: script src, link href, img src."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        want = {"script": "src", "link": "href", "img": "src"}.get(tag)
        for k, v in attrs:
            if k == want and v:
                self.urls.append(v)


_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;]*?\bfrom\s+["'](\./[^"']+)["']""", re.M | re.S)


def _page_js() -> dict[str, str]:
    return {p.name: p.read_text() for p in STATIC_DIR.glob("*.js")}


def test_root_serves_the_dashboard_page(client: TestClient) -> None:
    """GET / is the HTML page with the fabric's SVG and the mode buttons, revalidated each load."""
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["cache-control"] == "no-cache"
    assert '<svg id="fabric"' in r.text
    modes = re.findall(r'<button data-mode="(\w+)"', r.text)
    assert modes == ["pin", "ecmp", "eecmp"]


def test_every_asset_the_page_loads_is_served_with_its_type(client: TestClient) -> None:
    """The page's scripts, style sheet and icon, and every module they import, answer 200.

    Each is revalidated on load (no-cache, then 304 with its ETag), and nothing
    in the static folder is left unused (what ships is what loads).
    """
    refs = _Refs()
    refs.feed(client.get("/").text)
    assert refs.urls, "the page loads nothing"
    todo = list(refs.urls)
    seen: dict[str, str] = {}
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        assert not url.startswith(("/", "http:", "https:")), f"{url}: not relative to the page"
        r = client.get("/" + url)
        assert r.status_code == 200, url
        seen[url] = r.headers["content-type"]
        assert r.headers["cache-control"] == "no-cache", url
        assert client.get("/" + url, headers={"If-None-Match": r.headers["etag"]}
                          ).status_code == 304, url
        if url.endswith(".js"):
            base = url.rsplit("/", 1)[0]
            todo += [f"{base}/{m[2:]}" for m in _IMPORT.findall(r.text)]
    kinds = {u.rsplit(".", 1)[-1]: t.split(";")[0] for u, t in seen.items()}
    assert kinds == {"js": "text/javascript", "css": "text/css", "svg": "image/svg+xml"}
    served = {u.removeprefix(ASSET_PREFIX.strip("/") + "/") for u in seen}
    assert served == {p.name for p in STATIC_DIR.iterdir() if p.name != "index.html"}


def test_the_api_is_not_shadowed_by_the_page(client: TestClient) -> None:
    """API paths still answer JSON; unknown paths are 404s, not the page; no path escapes."""
    assert client.get("/api/v1/status").json()["phase"] == "starting"
    assert client.get("/openapi.json").status_code == 200
    missing = client.get("/api/v1/nothing-here")
    assert missing.status_code == 404 and missing.headers["content-type"] == "application/json"
    assert client.get(f"{ASSET_PREFIX}/nothing.js").status_code == 404
    assert client.get(f"{ASSET_PREFIX}/../__init__.py").status_code == 404
    assert client.get(f"{ASSET_PREFIX}/%2e%2e/__init__.py").status_code == 404


def test_the_page_talks_to_the_api_through_relative_urls() -> None:
    """No script names a host or an absolute /api path: the page works through an SSH tunnel."""
    for name, text in _page_js().items():
        assert not re.search(r"""["'`]/api/""", text), name
        assert not re.search(r"https?://", text.replace("http://www.w3.org/2000/svg", "")), name


def test_package_data_ships_every_asset() -> None:
    """pyproject's package data for `controller` covers each static file (a wheel carries them)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"].get("package-data", {}).get("controller", [])
    for path in STATIC_DIR.iterdir():
        rel = path.relative_to(STATIC_DIR.parents[1]).as_posix()
        assert any(fnmatch.fnmatch(rel, g) for g in globs), f"{rel} is not in package-data"


def _page_kinds() -> list[str]:
    m = re.search(r"export const EVENT_KINDS = \[([^\]]*)\]", _page_js()["dashboard.js"])
    assert m, "dashboard.js: no EVENT_KINDS"
    return re.findall(r'"(\w+)"', m.group(1))


def _cells(values: dict[int, int]) -> dict[int, CounterCell]:
    """Counter cells of ports with these byte counts (one packet per 1,250 bytes)."""
    return {i: CounterCell(index=i, packets=b // 1250, bytes=b) for i, b in values.items()}


def test_stream_for_the_dashboard_carries_the_snapshot_it_colours(daemon: Daemon,
                                                                  tmp_path: Path) -> None:
    """The page's subscription gets its kinds only, one JSON data line per event, in order.

    The snapshot between two readings of rtsw1 a second apart, in which port 5
    (the uplink to ctsw1, 20 Mb/s) sent 2,500,000 bytes: 20 Mb/s, utilisation
    1.0 on rtsw1-eth5--ctsw1-eth1 from rtsw1 to ctsw1; port 6 sent 250,000
    bytes: 2 Mb/s, 0.1 towards ctsw2. rtsw2's first uplink is reported down.
    """
    kinds = _page_kinds()
    assert {"stats", "mode", "link", "job", "down"} <= set(kinds)
    plan = plan_addresses(load_spec(SMALL))
    ports = [p.port for p in plan.switch("rtsw1").ports]
    before = {"rtsw1": Reading(switch="rtsw1", at=100.0, rx=_cells(dict.fromkeys(ports, 0)),
                               tx=_cells(dict.fromkeys(ports, 0)))}
    now = {"rtsw1": Reading(switch="rtsw1", at=101.0, rx=_cells(dict.fromkeys(ports, 0)),
                            tx=_cells({**dict.fromkeys(ports, 0), 5: 2_500_000, 6: 250_000}))}
    snap = build_snapshot(plan, before, now, {"host": 10.0, "rtsw_ctsw": 20.0},
                          link_up=lambda link: link != "rtsw2-eth5--ctsw1-eth2")
    blocks: list[list[str]] = []

    async def main() -> None:
        daemon.bus.bind(asyncio.get_running_loop())
        server = ApiServer(daemon, host="127.0.0.1", port=free_port(),
                           unix_path=tmp_path / "api.sock", token="t0ken")
        await server.start()
        try:
            transport = httpx.AsyncHTTPTransport(uds=str(tmp_path / "api.sock"))
            async with httpx.AsyncClient(transport=transport, base_url="http://aizone") as c:
                listening = asyncio.Event()

                async def publish() -> None:
                    # A "mode" event (a kind the page asks for) marked as a hello, until the
                    # client has read one: what follows goes out once it is subscribed.
                    while not listening.is_set():
                        daemon.bus.publish("mode", {"hello": True})
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(listening.wait(), 0.05)
                    daemon.bus.publish("check", {"phase": "start"})  # not asked for
                    daemon.bus.publish("stats", snap)
                    daemon.bus.publish("mode", {"mode": "pin", "previous": "eecmp",
                                                "seconds": 0.1})
                    daemon.bus.publish("link", {"link": "rtsw1-eth5--ctsw1-eth1", "up": False,
                                                "cause": "admin"})
                    daemon.bus.publish("job", {"id": 1, "phase": "running", "step": 3,
                                               "steps": 14, "elapsed": 1.5})
                    daemon.bus.publish("down", {})

                task = asyncio.create_task(publish())
                async with c.stream("GET", "/api/v1/events",
                                    params={"kinds": ",".join(kinds)}) as r:
                    assert r.headers["content-type"].startswith("text/event-stream")
                    block: list[str] = []
                    async for line in r.aiter_lines():
                        if line:
                            block.append(line)
                        elif block:
                            if '"hello": true' in block[-1]:
                                listening.set()
                            else:
                                blocks.append(block)
                            block = []
                await task
        finally:
            await server.stop()

    asyncio.run(main())
    assert [b[1] for b in blocks] == ["event: stats", "event: mode", "event: link", "event: job",
                                      "event: down"]
    events: list[dict[str, Any]] = []
    for b in blocks:
        assert len(b) == 3 and b[0].startswith("id: ") and b[2].startswith("data: "), b
        ev = json.loads(b[2][6:])
        assert ev["kind"] == b[1][7:] and ev["seq"] == int(b[0][4:])
        events.append(ev)
    links = {lk["id"]: lk for lk in events[0]["data"]["links"]}
    assert len(links) == 24  # 16 host links + 4 RTSWs x 2 uplinks
    assert links["rtsw1-eth5--ctsw1-eth1"]["a_to_b"] == {"bps": 20e6, "pps": 2000.0, "util": 1.0}
    assert links["rtsw1-eth6--ctsw2-eth1"]["a_to_b"]["util"] == 0.1
    assert links["rtsw1-eth5--ctsw1-eth1"]["up"] is True
    assert links["rtsw2-eth5--ctsw1-eth2"]["up"] is False
    assert links["rtsw2-eth5--ctsw1-eth2"]["a_to_b"] is None  # rtsw2 not read: no figure
    assert events[1]["data"]["mode"] == "pin"
    assert events[3]["data"] == {"id": 1, "phase": "running", "step": 3, "steps": 14,
                                 "elapsed": 1.5}


def test_a_browser_leaving_the_stream_leaves_no_error(daemon: Daemon, tmp_path: Path) -> None:
    """Closing the page (or reloading it) mid-stream, three times: the server logs no error.

    A browser drops its EventSource on every reload and closed tab, so the
    stream's end on a disconnect must be a normal one.
    """
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep(level=logging.ERROR)

    async def main() -> None:
        daemon.bus.bind(asyncio.get_running_loop())
        server = ApiServer(daemon, host="127.0.0.1", port=free_port(),
                           unix_path=tmp_path / "api.sock", token="t0ken")
        await server.start()
        logging.getLogger("uvicorn.error").addHandler(keep)  # after uvicorn set its logging up
        try:
            transport = httpx.AsyncHTTPTransport(uds=str(tmp_path / "api.sock"))
            async with httpx.AsyncClient(transport=transport, base_url="http://aizone") as c:
                for _ in range(3):
                    async with c.stream("GET", "/api/v1/events") as r:
                        daemon.bus.publish("stats", {"links": []})
                        async for line in r.aiter_lines():
                            if line.startswith("data: "):
                                break  # the tab closes here
                await asyncio.sleep(0.3)
        finally:
            logging.getLogger("uvicorn.error").removeHandler(keep)
            await server.stop()

    asyncio.run(main())
    assert [f"{r.getMessage().strip()}: {r.exc_info[1] if r.exc_info else ''}"
            for r in records] == []
