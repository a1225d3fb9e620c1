"""Tests for controller.qos: the QoS entries of a switch, written out by hand from a small spec."""

from __future__ import annotations

import finsy as fy
import pytest

from controller.entities import Action, Exact, TableEntry, Ternary
from controller.qos import compute_qos
from controller.wire import encode, from_finsy
from topologies.addressing import plan_addresses
from topologies.spec import parse_spec

# One zone: two racks of one host with two NICs, one CTSW. The host tier's
# ECN threshold is 10, the RTSW-CTSW tier's 20.
SMALL = {
    "racks": [{"count": 2, "hosts": 1, "nics": 2}], "ctsws": 1,
    "links": {"host": {"ecn_threshold": 10}, "rtsw_ctsw": {"ecn_threshold": 20}},
}

DSCP_TO_TC = "FabricIngress.qos.dscp_to_tc"
TC_TO_QUEUE = "FabricIngress.qos.tc_to_queue"
ECN = "FabricEgress.ecn.ecn_threshold"


def dscp(value: int, tc: int) -> TableEntry:
    return TableEntry(table=DSCP_TO_TC, match=(("dscp", Ternary(value=value, mask=0x3F)),),
                      action=Action(name="FabricIngress.qos.set_tc", params=(("tc", tc),)),
                      priority=1)


def queue(tc: int) -> TableEntry:
    return TableEntry(table=TC_TO_QUEUE, match=(("tc", Exact(value=tc)),),
                      action=Action(name="FabricIngress.qos.set_queue", params=(("queue", tc),)))


def ecn(port: int, tc: int, depth: int) -> TableEntry:
    return TableEntry(table=ECN, match=(("port", Exact(value=port)), ("tc", Exact(value=tc))),
                      action=Action(name="FabricEgress.ecn.set_ecn_threshold",
                                    params=(("depth", depth),)))


ACK_QUEUE = "FabricIngress.qos.ack_queue"


def ack(tc: int, q: int) -> TableEntry:
    return TableEntry(table=ACK_QUEUE, match=(("tc", Exact(value=tc)),),
                      action=Action(name="FabricIngress.qos.set_queue", params=(("queue", q),)))


def qos_of(spec_data: dict, switch: str, *, packet_queues: bool = False
           ) -> tuple[TableEntry, ...]:
    spec = parse_spec(spec_data, source="small.yaml")
    return compute_qos(spec, plan_addresses(spec), switch, packet_queues=packet_queues)


def test_rtsw_gets_default_classes_queues_and_ecn_per_port() -> None:
    """Defaults: DSCP 26 -> 3, 48 -> 7; classes 0..7 in queues 0..7; ECN on class 3 per port."""
    assert qos_of(SMALL, "rtsw1") == (
        dscp(26, 3), dscp(48, 7),
        *(queue(tc) for tc in range(8)),
        # ports 1, 2: h1's two NICs (host tier); port 3: the uplink to ctsw1.
        ecn(1, 3, 10), ecn(2, 3, 10), ecn(3, 3, 20),
    )


def test_ctsw_thresholds_come_from_its_downlinks_tier() -> None:
    """ctsw1's ports 1 and 2 face rtsw1 and rtsw2: the RTSW-CTSW tier's threshold."""
    got = [e for e in qos_of(SMALL, "ctsw1") if e.table == ECN]
    assert got == [ecn(1, 3, 20), ecn(2, 3, 20)]


def test_custom_classes_map_each_dscp_and_every_lossless_class() -> None:
    """data takes DSCP 24 and 26, a lossless bulk class 1 takes DSCP 10; ECN on classes 1 and 3."""
    spec = {**SMALL, "qos": {"classes": {"data": {"dscp": [26, 24]},
                                         "bulk": {"tc": 1, "dscp": [10], "lossless": True}}}}
    entries = qos_of(spec, "rtsw2")
    assert [e for e in entries if e.table == DSCP_TO_TC] == [
        dscp(10, 1), dscp(24, 3), dscp(26, 3), dscp(48, 7)]
    assert [e for e in entries if e.table == ECN] == [
        ecn(1, 1, 10), ecn(1, 3, 10), ecn(2, 1, 10), ecn(2, 3, 10), ecn(3, 1, 20), ecn(3, 3, 20)]


def test_fewer_queues_map_only_the_classes_that_fit() -> None:
    """qos.queues 4 (control moved to class 2): tc 0..3 get queues, nothing for 4..7."""
    spec = {**SMALL, "qos": {"queues": 4, "classes": {"control": {"tc": 2}}}}
    assert [e for e in qos_of(spec, "rtsw1") if e.table == TC_TO_QUEUE] == [
        queue(0), queue(1), queue(2), queue(3)]


def test_no_lossless_class_means_no_ecn_entries() -> None:
    """data made lossy: no class to mark, no ecn_threshold entry."""
    spec = {**SMALL, "qos": {"classes": {"data": {"lossless": False}}}}
    assert not [e for e in qos_of(spec, "rtsw1") if e.table == ECN]


def test_packet_queues_give_each_lossless_class_an_ack_lane_in_the_top_queue() -> None:
    """Queues that count packets (BMv2): class 3's ACKs wait in queue 7, after the eight
    tc_to_queue entries; queues in bytes (p4switch): no ack_queue entry at all."""
    entries = qos_of(SMALL, "rtsw1", packet_queues=True)
    assert [e for e in entries if e.table == ACK_QUEUE] == [ack(3, 7)]
    assert entries.index(ack(3, 7)) == 2 + 8
    assert not [e for e in qos_of(SMALL, "rtsw1") if e.table == ACK_QUEUE]


def test_ack_lane_skips_a_class_that_is_the_top_queue() -> None:
    """Four queues, lossless classes 1 and 3: class 1's ACKs go to queue 3; class 3 is
    queue 3 itself, so its ACKs stay where they are (no entry)."""
    spec = {**SMALL, "qos": {"queues": 4, "classes": {
        "control": {"tc": 2}, "bulk": {"tc": 1, "dscp": [10], "lossless": True}}}}
    assert [e for e in qos_of(spec, "rtsw1", packet_queues=True) if e.table == ACK_QUEUE] == [
        ack(1, 3)]


@pytest.mark.parametrize("switch", ["rtsw1", "ctsw1"])
def test_entries_encode_with_the_program_p4info(schema: fy.P4Schema, switch: str) -> None:
    """Every QoS entry's table, keys, action and parameters exist in rtsw.p4's P4Info."""
    for e in qos_of(SMALL, switch, packet_queues=True):
        assert from_finsy(fy.P4TableEntry.decode(encode(e, schema), schema), schema) == e
