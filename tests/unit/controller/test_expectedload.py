"""controller.expectedload: the loads a fabric's emulation is placed by, worked out by hand.

On ai_zone_small (4 racks x 2 hosts x 2 NICs, host links 10 Mb/s, uplinks
20 Mb/s) the reference ring over the 16 NICs, packed, goes h1-eth0, h1-eth1,
h2-eth0, ... h8-eth1 and back to h1-eth0. A host's two NICs talk inside the
host; every other hop crosses a rack switch, so each NIC's cable carries one
direction of the ring (eth1 sends, eth0 receives), each at the same bytes,
and a rack sends one hop up into the spine (h2-eth1 -> h3-eth0, ...) and
takes one down. The busiest direction of any link is a host cable at its
10 Mb/s, so the job lasts the bytes of one hop at 10 Mb/s, and then: every
host cable 10 Mb/s; every rack's two uplinks together 10 up + 10 down =
20 Mb/s, however the hash splits the 8 QPs; each CTSW carries what the
racks' uplinks to it carry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.expectedload import expected_link_mbps
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_the_reference_ring_loads_ai_zone_small_as_worked_out(mode: str) -> None:
    plan = plan_addresses(load_spec(ROOT / "topologies" / "ai_zone_small.yaml"))
    loads = expected_link_mbps(plan, mode)
    hosts = [lk for lk in plan.links if lk.tier == "host"]
    assert len(hosts) == 16
    for lk in hosts:
        assert loads[lk.id] == pytest.approx(10.0), lk.id
    for rack in ("rtsw1", "rtsw2", "rtsw3", "rtsw4"):
        up = [lk.id for lk in plan.links if lk.tier == "rtsw_ctsw" and lk.a == rack]
        assert len(up) == 2
        assert sum(loads.get(i, 0.0) for i in up) == pytest.approx(20.0), rack
    assert set(loads) <= {lk.id for lk in plan.links}
    assert sum(loads.values()) == pytest.approx(16 * 10.0 + 4 * 20.0)
