"""Helpers for the browser tests: the plan's graph as the dashboard should draw it, the page read back.

`expected_graph(yaml)` computes, from the topology file alone (the
addressing plan, not the daemon), the node and link ids the page must draw.
`drawn_graph(page)` reads them back from the page's SVG, with each link's
state and each direction's utilisation. `geometry(page)` gives every node's
box, label and ports in screen pixels, for the readability checks.
`click_link(page, id)` clicks a drawn link with the mouse; `live_page(browser,
url, errors)` opens the dashboard and waits until it is live.

Names defined here: `expected_graph`, `plan_topology`, `drawn_graph`,
`geometry`, `click_link`, `live_page`, `IDLE_RGB`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from topologies.addressing import plan_addresses
from topologies.spec import load_spec

# The colour of an idle link in format.js (#2b3754), as getComputedStyle gives it.
IDLE_RGB = "rgb(43, 55, 84)"


def expected_graph(yaml: Path) -> tuple[dict[str, str], set[str]]:
    """(node id -> tier, link ids) of a topology, from its addressing plan."""
    plan = plan_addresses(load_spec(yaml))
    nodes = {s.name: s.role for s in plan.switches} | {h.name: "host" for h in plan.hosts}
    return nodes, {lk.id for lk in plan.links}


def plan_topology(yaml: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """What GET /api/v1/topology and /status would answer for this file's fabric, from its plan."""
    spec = load_spec(yaml)
    plan = plan_addresses(spec)
    rates = {t: getattr(getattr(spec.links, t), "rate_mbps", None)
             for t in ("host", "rtsw_ctsw", "ctsw_atsw")}
    topology = {
        "name": plan.name, "mode": spec.routing.mode,
        "nodes": [{"id": s.name, "kind": "switch", "role": s.role, "zone": s.zone,
                   "position": s.position} for s in plan.switches]
        + [{"id": h.name, "kind": "host", "role": "host", "zone": h.zone, "rack": h.rack,
            "position": h.position, "rtsw": h.rtsw} for h in plan.hosts],
        "edges": [{"id": lk.id, "a": lk.a, "b": lk.b, "tier": lk.tier,
                   "a_port": lk.a_port, "b_port": lk.b_port, "rate_mbps": rates.get(lk.tier),
                   "up": True} for lk in plan.links],
    }
    line = spec.line_rate_gbps
    status = {"phase": "up", "name": plan.name, "target": "p4switch", "mode": spec.routing.mode,
              "scale": {"line_rate_gbps": line, **{
                  t: {"rate_mbps": r, "scale": line * 1000 / r if r else None}
                  for t, r in rates.items()}},
              "switches": [{"name": s.name, "role": s.role, "alive": True, "ready": True}
                           for s in plan.switches],
              "hosts": [{"name": h.name, "zone": h.zone, "rack": h.rack,
                         "nics": [{"intf": n.intf, "ip": n.ip} for n in h.nics]}
                        for h in plan.hosts]}
    return topology, status


def drawn_graph(page: Any) -> dict[str, Any]:
    """The page's drawing: nodes (id -> role, state) and links (id -> state, utilisations)."""
    result: dict[str, Any] = page.evaluate("""() => ({
        nodes: Object.fromEntries([...document.querySelectorAll('#fabric .node')].map(
            (g) => [g.dataset.id, {role: g.dataset.role, state: g.dataset.state}])),
        edges: Object.fromEntries([...document.querySelectorAll('#fabric .edge')].map(
            (g) => [g.dataset.id, {state: g.dataset.state, a: g.dataset.a, b: g.dataset.b,
                    ab: Number(g.dataset.utilAb), ba: Number(g.dataset.utilBa),
                    strokes: [...g.querySelectorAll('.half')].map(
                        (l) => getComputedStyle(l).stroke),
                    dash: getComputedStyle(g.querySelector('.half')).strokeDasharray}])),
    })""")
    return result


def geometry(page: Any) -> dict[str, Any]:
    """Screen boxes (px) of the SVG, each node's box and label, and its ports."""
    result: dict[str, Any] = page.evaluate("""() => {
        const r = (e) => { const b = e.getBoundingClientRect();
                           return {x: b.x, y: b.y, w: b.width, h: b.height}; };
        return {
          svg: r(document.querySelector('#fabric')),
          nodes: [...document.querySelectorAll('#fabric .node')].map((g) => ({
            id: g.dataset.id, role: g.dataset.role, box: r(g.querySelector('.box')),
            label: r(g.querySelector('.label')),
            ports: [...g.querySelectorAll('.port, .nic')].map((p) => r(p))})),
        };
    }""")
    return result


def click_link(page: Any, link: str, at: float = 0.3) -> None:
    """A real mouse click on the drawn link, `at` of the way from its lower end."""
    x, y = page.evaluate("""([id, t]) => {
        const line = document.querySelector(`#fabric .edge[data-id='${id}'] .hit`);
        const p = line.getPointAtLength(line.getTotalLength() * t);
        const m = line.getScreenCTM();
        return [p.x * m.a + p.y * m.c + m.e, p.x * m.b + p.y * m.d + m.f];
    }""", [link, at])
    page.mouse.click(x, y)


@contextlib.contextmanager
def live_page(browser: Any, url: str, errors: list[str],
              requests: list[str] | None = None) -> Iterator[Any]:
    """The dashboard at `url` in a new page of `browser`, once it has drawn the fabric and
    received its first statistics; the page's script errors go to `errors`, the URLs it asks
    for to `requests` (when given). Closed on exit."""
    p = browser.new_page()
    if requests is not None:
        p.on("request", lambda r: requests.append(r.url))
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.goto(url)
    p.wait_for_selector("#fabric .edge")
    p.wait_for_function("window.aizone.statsEvents >= 1", timeout=15_000)
    try:
        yield p
    finally:
        p.close()
