"""The dashboard's drawing of each preset stays readable (chromium, no root, no fabric).

The page and its scripts come from the daemon's real application (a daemon
that has not brought anything up, served by uvicorn on loopback); the API
answers the page needs (topology, status) are what the addressing plan of
the preset says, handed to the page by Playwright's request routing, so
ai_zone and two_zones are drawn without bringing them up. At the window
size of the screenshot (1600x900) every node must be drawn, none may
overlap another, each label must fit its box and be at least 9 px high, the
tiers must be in order and each host under its RTSW.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from dashboard_support import expected_graph, geometry, plan_topology

from controller.api import create_app
from controller.daemon import Daemon, DaemonConfig

ROOT = Path(__file__).resolve().parents[2]
PRESETS = ["ai_zone_small", "ai_zone", "ai_zone_large", "two_zones"]
ROW = {"atsw": 0, "ctsw": 1, "rtsw": 2, "host": 3}


@pytest.fixture(scope="module")
def page_url() -> Iterator[str]:
    """The daemon's application (no fabric) on a loopback port; its URL."""
    server = uvicorn.Server(uvicorn.Config(create_app(Daemon(DaemonConfig(topology=None))),
                                           log_level="warning", lifespan="off"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        threading.Event().wait(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(5)
        sock.close()


def _open(browser: Any, url: str, yaml: Path) -> Any:
    topology, status = plan_topology(yaml)
    answers = {"topology": topology, "status": status, "stats": {}, "jobs": []}
    page = browser.new_page()

    def api(route: Any) -> None:
        what = route.request.url.split("/api/v1/", 1)[1].split("?")[0]
        if what == "events":
            route.fulfill(status=204)  # no stream: an EventSource stops on 204
        elif what in answers:
            route.fulfill(status=200, content_type="application/json",
                          body=json.dumps(answers[what]))
        else:
            route.fulfill(status=404, content_type="application/json",
                          body=json.dumps({"error": f"not in this test: {what}"}))

    page.route("**/api/v1/**", api)
    page.goto(url)
    page.wait_for_selector("#fabric .node")
    return page


@pytest.mark.parametrize("preset", PRESETS)
def test_each_preset_is_drawn_whole_and_readable(browser: Any, page_url: str, preset: str,
                                                 tmp_path: Path) -> None:
    """Every node and link drawn once; no overlap; labels fit and are >= 9 px; tiers in order."""
    yaml = ROOT / "topologies" / f"{preset}.yaml"
    page = _open(browser, page_url, yaml)
    try:
        nodes, links = expected_graph(yaml)
        geo = geometry(page)
        drawn = {n["id"]: n for n in geo["nodes"]}
        assert {k: v["role"] for k, v in drawn.items()} == nodes
        edges = page.eval_on_selector_all("#fabric .edge", "els => els.map(e => e.dataset.id)")
        assert sorted(edges) == sorted(links)
        svg = geo["svg"]
        for n in geo["nodes"]:
            b, lab = n["box"], n["label"]
            assert svg["x"] <= b["x"] and b["x"] + b["w"] <= svg["x"] + svg["w"], n["id"]
            assert svg["y"] <= b["y"] and b["y"] + b["h"] <= svg["y"] + svg["h"], n["id"]
            assert b["x"] < lab["x"] and lab["x"] + lab["w"] < b["x"] + b["w"], f"{n['id']}: label"
            assert lab["h"] >= 9, f"{n['id']}: label {lab['h']:.1f} px high"
            xs = sorted((p["x"], p["y"]) for p in n["ports"])
            assert len(set(xs)) == len(xs), f"{n['id']}: two ports in one place"
        boxes = [n["box"] for n in geo["nodes"]]
        for i, p in enumerate(boxes):
            for q in boxes[i + 1:]:
                apart = (p["x"] + p["w"] + 4 <= q["x"] or q["x"] + q["w"] + 4 <= p["x"]
                         or p["y"] + p["h"] + 4 <= q["y"] or q["y"] + q["h"] + 4 <= p["y"])
                assert apart, f"nodes overlap: {p} {q}"
        centre = {n["id"]: (n["box"]["x"] + n["box"]["w"] / 2, n["box"]["y"] + n["box"]["h"] / 2)
                  for n in geo["nodes"]}
        by_row = sorted(geo["nodes"], key=lambda n: ROW[n["role"]])
        for p, q in zip(by_row, by_row[1:], strict=False):
            if ROW[p["role"]] < ROW[q["role"]]:
                assert centre[p["id"]][1] < centre[q["id"]][1], (p["id"], q["id"])
        topology, _ = plan_topology(yaml)
        for h in (n for n in topology["nodes"] if n["kind"] == "host"):
            rack = [n["id"] for n in topology["nodes"] if n.get("rtsw") == h["rtsw"]]
            xs = [centre[x][0] for x in rack]
            assert min(xs) <= centre[h["rtsw"]][0] <= max(xs), f"{h['id']} not under {h['rtsw']}"
        shot = tmp_path / f"dashboard-{preset}.png"
        page.screenshot(path=str(shot))
        print(f"screenshot: {shot}")
    finally:
        page.close()


@pytest.mark.parametrize(("preset", "scrolls"), [("ai_zone", False), ("ai_zone_large", True)])
def test_a_fabric_too_wide_to_read_whole_scrolls_to_its_last_rack(
        browser: Any, page_url: str, preset: str, scrolls: bool) -> None:
    """16 racks side by side would need labels under 9 px in this window: the drawing keeps
    them readable and the frame scrolls sideways, so that its last host comes into view;
    8 racks fit and do not scroll."""
    page = _open(browser, page_url, ROOT / "topologies" / f"{preset}.yaml")
    try:
        frame = page.evaluate("""() => { const f = document.querySelector('#fabric-scroll');
            return {scroll: f.scrollWidth, client: f.clientWidth}; }""")
        assert (frame["scroll"] > frame["client"]) is scrolls, frame
        last = max((n for n in geometry(page)["nodes"] if n["role"] == "host"),
                   key=lambda n: n["box"]["x"])
        page.eval_on_selector("#fabric-scroll", "f => { f.scrollLeft = f.scrollWidth; }")
        seen = page.evaluate("""(id) => {
            const f = document.querySelector('#fabric-scroll').getBoundingClientRect();
            const b = document.querySelector(`#fabric .node[data-id='${id}'] .box`)
                .getBoundingClientRect();
            return f.left <= b.left && b.right <= f.right; }""", last["id"])
        assert seen, f"{last['id']} is not in view once scrolled to the right"
    finally:
        page.close()
