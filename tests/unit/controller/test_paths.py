"""Tests for controller.paths: one packet's path predicted from the switches' entries.

The hand-worked example (two_zones, eecmp, salts = device ids: rtsw1 1,
ctsw1 5, ctsw2 6, atsw1 9, ...): h1-eth0 10.0.0.1 -> 10.1.1.3 (h8-eth0),
UDP 49152 -> 4791, BTH destination QP 17. The 40-byte hash input is
00*12 0a000001 00*12 0a010103 11 c000 12b7 000011; its CRC-32
(binascii.crc32) is 0x336ce33a, below 0xFFFFFFFF so `flow` is that.

- rtsw1, salt 1: key = ((0x336ce33a ^ 1) * 0x9e3779b1) mod 2^32 = 0x415cfecb,
  crc16(41 5c fe cb) = 0xd9d5, odd: member 1 of group 1024 (3, 4) = port 4 -> ctsw2.
- ctsw2: 10.1.0.0/16 -> its one ATSW uplink, port 3.
- atsw1, salt 9: key 0x4fa13143, crc16 0x5713, odd: member 1 of group 1026 (3, 4)
  = port 4 -> ctsw4.
- ctsw4: 10.1.1.0/24 -> port 2 (rtsw4); rtsw4: 10.1.1.3/32 -> port 2 (h8).

With QP 18 (flow 0xaa65b280): rtsw1 key 0xd9666431, crc16 0x5730, even ->
port 3 (ctsw1); atsw1 key 0xcb2231b9, crc16 0x0c4a, even -> port 3 (ctsw3).
With rtsw1's salt set to 2, QP 17: key 0x66b691b8, crc16 0x8c92, even -> port 3.
"""

from __future__ import annotations

import pytest

from controller.entities import Action, TableEntry
from controller.paths import PathError, predict_path
from controller.routes import NAMES, compute_all
from topologies.addressing import plan_addresses
from topologies.spec import parse_spec

TWO = plan_addresses(parse_spec({"name": "two_zones", "atsws": 1, "zones": [
    {"racks": [{"count": 2, "hosts": 2, "nics": 1}], "ctsws": 2},
    {"racks": [{"count": 2, "hosts": 2, "nics": 1}], "ctsws": 2}]}))


def entries(mode: str, failed: frozenset[str] = frozenset()):
    return {k: v.install_order() for k, v in compute_all(TWO, mode, failed).items()}


def hops(path):
    return [(h.switch, h.ingress_port, h.egress_port) for h in path.hops]


def test_hand_worked_eecmp_path_qp17() -> None:
    """QP 17: rtsw1 port 4 -> ctsw2 -> atsw1 port 4 -> ctsw4 -> rtsw4 -> h8 (module docstring)."""
    p = predict_path(TWO, entries("eecmp"), "h1-eth0", "10.1.1.3", sport=49152, dport=4791, qp=17)
    assert hops(p) == [("rtsw1", 1, 4), ("ctsw2", 1, 3), ("atsw1", 2, 4), ("ctsw4", 3, 2),
                       ("rtsw4", 4, 2)]
    assert p.delivered_to == "h8-eth0" and p.dropped_at is None
    assert p.links == ("h1-eth0--rtsw1-eth1", "rtsw1-eth4--ctsw2-eth1", "ctsw2-eth3--atsw1-eth2",
                       "ctsw4-eth3--atsw1-eth4", "rtsw4-eth4--ctsw4-eth2", "h8-eth0--rtsw4-eth2")
    assert [(h.group_id, h.member_index) for h in p.hops] == [
        (1024, 1), (None, None), (1026, 1), (None, None), (None, None)]


def test_hand_worked_eecmp_path_qp18_takes_the_other_members() -> None:
    """QP 18: member 0 at rtsw1 (port 3, ctsw1) and at atsw1 (port 3, ctsw3)."""
    p = predict_path(TWO, entries("eecmp"), "h1-eth0", "10.1.1.3", qp=18)
    assert hops(p) == [("rtsw1", 1, 3), ("ctsw1", 1, 3), ("atsw1", 1, 3), ("ctsw3", 3, 2),
                       ("rtsw4", 3, 2)]


def test_salt_comes_from_the_switch_config_entry() -> None:
    """rtsw1's switch_config rewritten to salt 2: QP 17 leaves by port 3 instead of 4."""
    ents = entries("eecmp")
    ents["rtsw1"] = [e for e in ents["rtsw1"] if not getattr(e, "is_default", False)] + [
        TableEntry(table=NAMES["config_table"], is_default=True, action=Action(
            name=NAMES["config_action"], params=(("mode", 2), ("salt", 2))))]
    p = predict_path(TWO, ents, "h1-eth0", "10.1.1.3", qp=17)
    assert p.hops[0].egress_port == 3


def test_ecmp_ignores_the_qp() -> None:
    """ecmp: QPs 17 and 18 of one 5-tuple take the same path."""
    ents = entries("ecmp")
    a = predict_path(TWO, ents, "h1-eth0", "10.1.1.3", qp=17)
    b = predict_path(TWO, ents, "h1-eth0", "10.1.1.3", qp=18)
    assert hops(a) == hops(b)


def test_pin_follows_the_slice() -> None:
    """pin: 10.1.1.3 is on rtsw4 port 2 (an even slice): rtsw1 pins it to port 4 (ctsw2)."""
    p = predict_path(TWO, entries("pin"), "h1-eth0", "10.1.1.3", qp=17)
    assert p.hops[0].egress_port == 4 and p.hops[1].egress_port == 3


def test_failed_link_is_routed_around() -> None:
    """rtsw1-ctsw2 down: QP 17 leaves rtsw1 by port 3 (the only uplink left)."""
    p = predict_path(TWO, entries("eecmp", frozenset({"rtsw1-eth4--ctsw2-eth1"})), "h1-eth0",
                     "10.1.1.3", qp=17)
    assert p.hops[0].egress_port == 3 and p.delivered_to == "h8-eth0"


def test_drop_route_ends_the_path() -> None:
    """Both rtsw1 uplinks down: rtsw1 drops 10.1.1.3 (a drop route)."""
    failed = frozenset({"rtsw1-eth3--ctsw1-eth1", "rtsw1-eth4--ctsw2-eth1"})
    p = predict_path(TWO, entries("eecmp", failed), "10.0.0.1", "10.1.1.3")
    assert p.hops == () and p.dropped_at == "rtsw1" and "drop route" in p.reason


def test_unknown_source_is_a_path_error() -> None:
    """A source that is no NIC of the plan raises PathError naming it."""
    with pytest.raises(PathError, match="h99-eth0"):
        predict_path(TWO, entries("eecmp"), "h99-eth0", "10.1.1.3")
