"""The Switch device on a basic L3 program (p4/l3.p4): forwarding, counters, checksums, writes."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4switch.pipeline.harness import masked_equal
from p4switch.pipeline.state import ActionCall, Code, FieldMatch, StateError, TableEntry

DMAC, SMAC = 0x020000000001, 0x020000000002


def route(prefix: int, plen: int, nhop: int) -> TableEntry:
    return TableEntry(match={0: FieldMatch(kind="lpm", value=prefix, prefix_len=plen)},
                      action=ActionCall(action="MyIngress.set_nhop", args=(nhop,)))


def nhop(n: int, port: int) -> TableEntry:
    return TableEntry(match={0: FieldMatch(kind="exact", value=n)},
                      action=ActionCall(action="MyIngress.forward", args=(DMAC, SMAC, port)))


@pytest.fixture
def sw(make_switch):
    h = make_switch("l3")
    s = h.switch
    s.table_insert("MyIngress.ipv4_lpm", route(0x0A000000, 8, 1))
    s.table_insert("MyIngress.ipv4_lpm", route(0x0A010000, 16, 2))
    s.table_insert("MyIngress.nhop", nhop(1, 3))
    s.table_insert("MyIngress.nhop", nhop(2, 4))
    return h


def udp(dst: str, ttl: int = 64, **kw) -> bytes:
    return bytes(Ether(dst="00:00:00:00:00:01") / IP(src="1.1.1.1", dst=dst, ttl=ttl, **kw)
                 / UDP(sport=1234, dport=80) / b"hello")


@pytest.mark.parametrize("dst,port", [("10.1.2.3", 4), ("10.2.0.1", 3)], ids=["longest", "shorter"])
def test_longest_prefix_wins(sw, dst, port):
    """The /16 route beats the /8 one for addresses it covers."""
    out = sw.send(1, udp(dst))
    assert [p for p, _ in out] == [port]


def test_forwarded_packet_rewritten_with_valid_checksum(sw):
    """MACs rewritten, TTL decremented, IPv4 checksum recomputed, payload kept."""
    (port, data), = sw.send(1, udp("10.1.2.3", ttl=64))
    pkt = Ether(data)
    assert pkt.dst == "02:00:00:00:00:01" and pkt.src == "02:00:00:00:00:02"
    assert pkt[IP].ttl == 63
    want = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
                 / IP(src="1.1.1.1", dst="10.1.2.3", ttl=63) / UDP(sport=1234, dport=80) / b"hello")
    assert masked_equal(data, want)
    chk = pkt[IP].chksum
    del pkt[IP].chksum
    assert Ether(bytes(pkt))[IP].chksum == chk


def test_no_route_drops_by_default_action(sw):
    """A miss runs the default action drop()."""
    assert sw.send(1, udp("192.168.0.1")) == []


def test_ttl_one_is_dropped(sw):
    """The program drops packets whose TTL would expire."""
    assert sw.send(1, udp("10.1.2.3", ttl=1)) == []


def test_non_ip_is_dropped(sw):
    """The program drops what is not IPv4."""
    assert sw.send(1, bytes(Ether(type=0x86DD) / (b"\x00" * 40))) == []


def test_counters_and_direct_counters(sw):
    """counter(ingress_port) and the route's direct counter count packets and bytes."""
    frame = udp("10.1.2.3")
    sw.send(5, frame)
    sw.send(5, frame)
    assert sw.switch.counter_read("MyIngress.port_rx", 5) == (2, 2 * len(frame))
    hits = {e.match[0].prefix_len: (e.counter_packets, e.counter_bytes)
            for e in sw.switch.table_entries("MyIngress.ipv4_lpm")}
    assert hits == {16: (2, 2 * len(frame)), 8: (0, 0)}


def test_bad_checksum_still_forwarded_with_fixed_checksum(sw):
    """verify_checksum only flags; compute rewrites the checksum."""
    frame = bytearray(udp("10.1.2.3"))
    frame[24] ^= 0xFF
    (port, data), = sw.send(1, bytes(frame))
    pkt = Ether(data)
    chk = pkt[IP].chksum
    del pkt[IP].chksum
    assert Ether(bytes(pkt))[IP].chksum == chk


def test_set_default_action_changes_miss_behaviour(sw):
    """table_set_default replaces the miss action; None restores the program's."""
    s = sw.switch
    s.table_set_default("MyIngress.ipv4_lpm", ActionCall(action="MyIngress.set_nhop", args=(9,)))
    # a miss is still a miss (nhop is not applied): egress_spec stays 0, not dropped
    assert [p for p, _ in sw.send(1, udp("192.168.0.1"))] == [0]
    assert s.table_default("MyIngress.ipv4_lpm").action.args == (9,)
    s.table_set_default("MyIngress.ipv4_lpm", None)
    assert sw.send(1, udp("192.168.0.1")) == []


def test_modify_and_delete_entries(sw):
    """Modify changes the action; delete removes the route."""
    s = sw.switch
    s.table_modify("MyIngress.ipv4_lpm", route(0x0A010000, 16, 1))
    assert [p for p, _ in sw.send(1, udp("10.1.2.3"))] == [3]
    s.table_delete("MyIngress.ipv4_lpm", route(0x0A010000, 16, 1))
    s.table_delete("MyIngress.ipv4_lpm", route(0x0A000000, 8, 1))
    assert sw.send(1, udp("10.1.2.3")) == []


@pytest.mark.parametrize("op,entry,code", [
    ("insert", route(0x0A000000, 8, 1), Code.ALREADY_EXISTS),
    ("delete", route(0x0B000000, 8, 1), Code.NOT_FOUND),
    ("modify", route(0x0B000000, 8, 1), Code.NOT_FOUND),
    ("insert", TableEntry(match={0: FieldMatch(kind="exact", value=1)},
                          action=ActionCall(action="MyIngress.set_nhop", args=(1,))), Code.INVALID_ARGUMENT),
    ("insert", TableEntry(match={0: FieldMatch(kind="lpm", value=1, prefix_len=8)},
                          action=ActionCall(action="MyIngress.forward", args=(1, 2, 3))), Code.INVALID_ARGUMENT),
    ("insert", TableEntry(match={0: FieldMatch(kind="lpm", value=1 << 24, prefix_len=8)},
                          action=ActionCall(action="MyIngress.set_nhop", args=(1 << 20,))), Code.INVALID_ARGUMENT),
], ids=["duplicate", "delete-missing", "modify-missing", "wrong-kind", "foreign-action", "arg-too-wide"])
def test_bad_writes_raise_state_error_and_change_nothing(sw, op, entry, code):
    """Invalid writes raise StateError with the P4Runtime code; the table is unchanged."""
    s = sw.switch
    before = len(list(s.table_entries("MyIngress.ipv4_lpm")))
    with pytest.raises(StateError) as ei:
        getattr(s, f"table_{op}")("MyIngress.ipv4_lpm", entry)
    assert ei.value.code == code
    assert len(list(s.table_entries("MyIngress.ipv4_lpm"))) == before


def test_unknown_table_is_not_found(sw):
    """Writes to a table the program lacks fail with NOT_FOUND."""
    with pytest.raises(StateError) as ei:
        sw.switch.table_insert("nope", route(0, 0, 1))
    assert ei.value.code == Code.NOT_FOUND


@pytest.mark.parametrize("cut", [0, 1, 13, 14, 20, 33], ids=lambda c: f"cut{c}")
def test_truncated_packets_never_raise(sw, cut):
    """Short frames end the parser early and are dropped or forwarded, never crash."""
    sw.send(1, udp("10.1.2.3")[:cut])
    assert sw.switch.stats["errors"] == 0


def test_packet_in_handler_gets_cpu_port_traffic(make_switch):
    """Frames sent to the CPU port go to the packet-in handler, not to transmit."""
    h = make_switch("l3", cpu_port=64, packet_in=True)
    s = h.switch
    s.table_insert("MyIngress.ipv4_lpm", route(0x0A000000, 8, 1))
    s.table_insert("MyIngress.nhop", nhop(1, 64))
    assert h.send(1, udp("10.0.0.1")) == []
    assert len(h.packet_ins) == 1
    assert h.packet_ins[0][1] == {}


def test_table_write_many_reports_each_op_and_applies_the_rest(sw):
    """One result per op: failures (duplicate, missing) change nothing, the other ops apply."""
    s = sw.switch
    results = s.table_write_many("MyIngress.ipv4_lpm", [
        ("insert", route(0x0B000000, 8, 2)),
        ("insert", route(0x0A000000, 8, 2)),   # exists (to next hop 1): refused
        ("delete", route(0x0C000000, 8, 1)),   # missing
        ("modify", route(0x0A010000, 16, 1)),
        ("frobnicate", route(0x0D000000, 8, 1)),
    ])
    assert [None if r is None else r.code for r in results] == [
        None, Code.ALREADY_EXISTS, Code.NOT_FOUND, None, Code.INVALID_ARGUMENT]
    assert [p for p, _ in sw.send(1, udp("11.1.1.1"))] == [4]
    assert [p for p, _ in sw.send(1, udp("10.2.0.1"))] == [3]  # the /8 still goes to next hop 1
    assert [p for p, _ in sw.send(1, udp("10.1.2.3"))] == [3]  # modified to next hop 1


def test_table_write_many_modify_default_sets_the_default_action(sw):
    """A 'modify' of the default entry replaces the miss action (drop -> set_nhop: no longer dropped)."""
    s = sw.switch
    assert sw.send(1, udp("99.1.1.1")) == []
    (r,) = s.table_write_many("MyIngress.ipv4_lpm", [
        ("modify", TableEntry(match={}, is_default=True, action=ActionCall(action="MyIngress.set_nhop", args=(2,))))])
    assert r is None
    assert s.table_default("MyIngress.ipv4_lpm").action == ActionCall(action="MyIngress.set_nhop", args=(2,))
    assert [p for p, _ in sw.send(1, udp("99.1.1.1"))] == [0]  # a miss: nhop not applied, egress_spec 0


def test_table_entries_without_copy_is_a_live_read_only_view(sw):
    """table_entries(copy=False) returns the installed entries themselves, following writes."""
    s = sw.switch
    view = s.table_entries("MyIngress.ipv4_lpm", copy=False)
    assert len(view) == 2
    e = route(0x0B000000, 8, 2)
    s.table_write_many("MyIngress.ipv4_lpm", [("insert", e)])
    assert len(view) == 3 and any(x is e for x in view)


def test_default_entry_direct_counter_counts_misses(sw):
    """Misses count on the default entry's direct counter; it can be written like an entry's."""
    s = sw.switch
    frame = udp("99.1.2.3")
    sw.send(1, frame)
    d = s.table_default("MyIngress.ipv4_lpm")
    assert (d.counter_packets, d.counter_bytes) == (1, len(frame))
    s.direct_counter_write("MyIngress.ipv4_lpm", TableEntry(match={}, is_default=True), 10, 1000)
    sw.send(1, frame)
    d = s.table_default("MyIngress.ipv4_lpm")
    assert (d.counter_packets, d.counter_bytes) == (11, 1000 + len(frame))
    hits = [(e.counter_packets, e.counter_bytes) for e in s.table_entries("MyIngress.ipv4_lpm")]
    assert hits == [(0, 0), (0, 0)]


def test_direct_meter_set_accepts_the_default_entry(make_switch):
    """direct_meter_set with is_default configures the default entry's meter (read back by table_default)."""
    s = make_switch("misc").switch
    s.direct_meter_set("I.metered", TableEntry(match={}, is_default=True), (1, 10, 2, 20))
    assert s.table_default("I.metered").meter_config == (1, 10, 2, 20)
