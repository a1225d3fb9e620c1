"""Tests for model.forward: the model's paths are the ones the switches' entries give.

Two implementations meet here: the model walks `RouteGraph.route_sets`
vectorised over flows; `controller.paths.predict_path` does LPM over the
entities `compute_all` writes, one packet at a time. Every flow's
directed links must agree, per mode, with and without failed links.
"""

from __future__ import annotations

import numpy as np
import pytest

from controller.paths import predict_path
from controller.routegraph import RouteGraph
from controller.routes import compute_all
from model.flows import Flows
from model.forward import TIERS, LinkTable, route_flows
from topologies.addressing import plan_addresses
from topologies.spec import parse_spec

TWO = plan_addresses(parse_spec({"name": "two_zones", "atsws": 1, "zones": [
    {"racks": [{"count": 2, "hosts": 2, "nics": 2}], "ctsws": 2},
    {"racks": [{"count": 2, "hosts": 2, "nics": 2}], "ctsws": 2}]}))


def random_flows(n: int, seed: int) -> Flows:
    rng = np.random.default_rng(seed)
    nics = len(TWO.nics())
    src = rng.integers(0, nics, n)
    dst = (src + rng.integers(1, nics, n)) % nics
    return Flows(src=src, dst=dst, sport=rng.integers(1024, 65536, n),
                 dport=np.full(n, 4791), qp=rng.integers(1, 1 << 24, n), size=np.ones(n))


@pytest.mark.parametrize("failed", [(), ("rtsw1-eth5--ctsw1-eth1",), ("ctsw3-eth3--atsw1-eth3",),
                                    ("h1-eth0--rtsw1-eth1",)], ids=lambda f: f[0] if f else "none")
@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_model_paths_equal_predicted_paths_from_entries(mode: str, failed: tuple[str, ...]) -> None:
    """300 random flows: the model's links per flow == predict_path's links over the entries."""
    g = RouteGraph(TWO, frozenset(failed))
    links = LinkTable(g)
    flows = random_flows(300, 11)
    routed = route_flows(g, links, flows, mode)
    entries = {k: v.install_order() for k, v in compute_all(TWO, mode, frozenset(failed)).items()}
    nics = TWO.nics()
    for i in range(len(flows)):
        src, dst = nics[flows.src[i]], nics[flows.dst[i]]
        want = predict_path(TWO, entries, src.intf, dst.ip, sport=int(flows.sport[i]),
                            dport=4791, qp=int(flows.qp[i]))
        got = [links.ids[links.link[d]] for d in routed.link_of[routed.flow_of == i]]
        if src.intf == "h1-eth0" and failed == ("h1-eth0--rtsw1-eth1",):
            assert got == [] and not routed.delivered[i]
            continue
        assert routed.delivered[i] == (want.delivered_to == dst.intf)
        if want.delivered_to:
            assert got == list(want.links)


def test_link_table_tiers_and_rates_from_the_spec() -> None:
    """two_zones rates: host 20, rtsw_ctsw 20, ctsw_atsw 10 Mb/s at 400G line rate -> 400/400/200G."""
    spec = parse_spec({"name": "t", "line_rate_gbps": 400, "atsws": 1,
                       "links": {"host": {"rate_mbps": 20}, "rtsw_ctsw": {"rate_mbps": 20},
                                 "ctsw_atsw": {"rate_mbps": 10}},
                       "zones": [{"racks": [{"count": 1, "hosts": 1}], "ctsws": 1},
                                 {"racks": [{"count": 1, "hosts": 1}], "ctsws": 1}]})
    plan = plan_addresses(spec)
    lt = LinkTable(RouteGraph(plan), spec)
    rate = {TIERS[t]: c for t, c in zip(lt.tier.tolist(), lt.capacity.tolist(), strict=True)}
    assert rate == {"host up": 400e9, "host down": 400e9, "rtsw_ctsw up": 400e9,
                    "rtsw_ctsw down": 400e9, "ctsw_atsw up": 200e9, "ctsw_atsw down": 200e9}
