"""Dataplane scenarios: what each switch role must do, as functions of a `Dataplane`.

Port 1 faces the hosts (or the tier below); ports 2-5 are the uplinks /
bundle members a test groups. Each scenario installs what it needs (undone
after the test), sends real packets and checks what leaves and what the
counters say. Statistical scenarios use fixed seeds and tolerances that a
constant or broken hash cannot meet.

Names defined here: one function per scenario (see each docstring), and
`HOST`, `UPLINKS`.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

from scapy.layers.inet import IP
from scapy.layers.l2 import ARP, Ether

from .helpers import DROP, TC_CONTROL, Dataplane
from .packets import (
    ack4,
    arp_request,
    cnp4,
    flow_tag,
    host_mac,
    lldp,
    mac_pause,
    pfc_pause,
    roce4,
    routed,
    switch_mac,
    udp4,
    udp6,
)
from .ports import Mask

HOST = 1
UPLINKS = (2, 3, 4, 5)


def _delta(before: tuple[int, int], pkts: int, nbytes: int) -> tuple[int, int]:
    return before[0] + pkts, before[1] + nbytes


def _pb(v: object) -> tuple[int, int]:
    return (v.packets, v.bytes)  # type: ignore[attr-defined]


def _expect_drop(dp: Dataplane, reason: str, sends: list[bytes], port: int = HOST) -> None:
    """Each frame of `sends` is dropped: nothing leaves, drops[reason] moves by exactly them."""
    before = _pb(dp.counter("drops", DROP[reason]))
    for f in sends:
        dp.send(port, f)
    want = _delta(before, len(sends), sum(len(f) for f in sends))
    got = dp.wait_counter(lambda: dp.counter("drops", DROP[reason]), want)
    assert got == want, f"drops[{reason}] is {got}, expected {want}"
    dp.expect_none(timeout=0.1)


# --- routing -------------------------------------------------------------------

def ipv4_longest_prefix_with_mac_rewrite(dp: Dataplane) -> None:
    """IPv4 goes to the longest matching prefix's next hop, MACs rewritten, TTL - 1,
    header checksum recomputed, everything else untouched."""
    dp.add_route("10.1.0.0/16", dp.add_next_hop(2))
    dp.add_route("10.1.2.0/24", dp.add_next_hop(3))
    a = udp4("10.0.0.1", "10.1.9.9", tag=1, dscp=26, ecn=2)
    b = udp4("10.0.0.1", "10.1.2.3", tag=2)
    dp.send(HOST, a)
    dp.expect(2, routed(a, 2))
    dp.send(HOST, b)
    dp.expect(3, routed(b, 3))
    dp.expect_none(timeout=0.1)


def ipv6_longest_prefix_with_mac_rewrite(dp: Dataplane) -> None:
    """IPv6 goes to the longest matching prefix's next hop, MACs rewritten, hop limit - 1."""
    dp.add_route("2001:db8:1::/48", dp.add_next_hop(4))
    dp.add_route("2001:db8:1:2::/64", dp.add_next_hop(5))
    a = udp6("2001:db8::1", "2001:db8:1:9::9", tag=1)
    b = udp6("2001:db8::1", "2001:db8:1:2::3", tag=2)
    dp.send(HOST, a)
    dp.expect(4, routed(a, 4))
    dp.send(HOST, b)
    dp.expect(5, routed(b, 5))
    dp.expect_none(timeout=0.1)


def ttl_expiry_dropped_and_counted(dp: Dataplane) -> None:
    """TTL / hop limit 1 or 0 is dropped (not punted) and counted; TTL 2 leaves with 1."""
    dp.add_route("10.1.0.0/16", dp.add_next_hop(2))
    dp.add_route("2001:db8:1::/48", dp.add_next_hop(2))
    ok = udp4("10.0.0.1", "10.1.0.1", ttl=2, tag=7)
    dp.send(HOST, ok)
    got = Ether(dp.expect(2, routed(ok, 2)).frame)
    assert got[IP].ttl == 1
    _expect_drop(dp, "ttl", [bytes(udp4("10.0.0.1", "10.1.0.1", ttl=1)),
                             bytes(udp4("10.0.0.1", "10.1.0.1", ttl=0)),
                             bytes(udp6("2001:db8::1", "2001:db8:1::1", hlim=1))])
    assert dp.no_packet_in(0.05), "an expired packet was punted"


def bad_ipv4_checksum_dropped_and_counted(dp: Dataplane) -> None:
    """A packet whose IPv4 header checksum is wrong is dropped and counted."""
    dp.add_route("10.1.0.0/16", dp.add_next_hop(2))
    pkt = udp4("10.0.0.1", "10.1.0.1", tag=3)
    frame = bytearray(bytes(pkt))
    frame[24] ^= 0x5A  # IPv4 header checksum, high byte
    _expect_drop(dp, "checksum", [bytes(frame)])
    dp.send(HOST, pkt)
    dp.expect(2, routed(pkt, 2))


def unrouted_dropped_and_counted(dp: Dataplane) -> None:
    """No route, or a drop route, drops the packet and counts it as no-route."""
    dp.add_drop_route("10.9.0.0/16")
    _expect_drop(dp, "no_route", [bytes(udp4("10.0.0.1", "10.8.0.1")),
                                  bytes(udp4("10.0.0.1", "10.9.0.1")),
                                  bytes(udp6("2001:db8::1", "2001:db8:9::1"))])


def next_hop_miss_dropped_and_counted(dp: Dataplane) -> None:
    """A route whose next_id has no next_hop entry drops the packet as no-route on every
    target: nothing leaves (not even on port 0, where BMv2's no-op miss of a selector
    table would send it)."""
    dp.add_route("10.6.0.0/16", 77)  # no next_hop entry for 77
    dp.add_route("2001:db8:6::/48", 77)
    port0 = _pb(dp.counter("tx_port", 0))
    _expect_drop(dp, "no_route", [bytes(udp4("10.0.0.1", "10.6.0.1", tag=2)),
                                  bytes(udp6("2001:db8::1", "2001:db8:6::1", tag=3))])
    assert _pb(dp.counter("tx_port", 0)) == port0, "a next-hop miss left on port 0"


def emptied_group_dropped_and_counted(dp: Dataplane) -> None:
    """A route to a group that has lost every member (the entry is a hit that runs no
    action) drops the packet as no-route; with its members back it forwards again."""
    group = dp.add_ecmp_group(1030, [2, 3])
    dp.add_route("10.7.0.0/16", group)
    ok = udp4("10.0.0.1", "10.7.0.1", tag=1)
    dp.send(HOST, ok)
    (r,) = dp.collect(1, [2, 3])
    assert Mask(routed(ok, r.port)).matches(r.frame), r.frame.hex()
    dp.modify(dp.group(group, [], max_size=2))
    port0 = _pb(dp.counter("tx_port", 0))
    _expect_drop(dp, "no_route", [bytes(udp4("10.0.0.1", "10.7.0.1", tag=3)),
                                  bytes(udp4("10.0.0.1", "10.7.0.2", sport=999, tag=4))])
    assert _pb(dp.counter("tx_port", 0)) == port0, "an emptied group sent to port 0"


# --- ARP -------------------------------------------------------------------------

def arp_reply_for_gateway(dp: Dataplane) -> None:
    """An ARP request for a gateway address is answered out of the port it came in on."""
    dp.add_arp_reply("10.0.0.1", switch_mac(HOST))
    dp.send(HOST, arp_request("10.0.0.2", "10.0.0.1"))
    reply = Ether(dp.expect(HOST, Mask(_arp_reply()), timeout=2).frame)
    assert reply[ARP].op == 2
    assert (reply[ARP].hwsrc, reply[ARP].psrc) == (switch_mac(HOST), "10.0.0.1")
    assert (reply[ARP].hwdst, reply[ARP].pdst) == (host_mac(HOST), "10.0.0.2")
    _expect_drop(dp, "not_ip", [bytes(arp_request("10.0.0.2", "10.0.0.99"))])


def _arp_reply() -> Ether:
    req = arp_request("10.0.0.2", "10.0.0.1")
    rep = Ether(bytes(req))
    rep[Ether].dst, rep[Ether].src = host_mac(HOST), switch_mac(HOST)
    rep[ARP].op = 2
    rep[ARP].hwsrc, rep[ARP].psrc = switch_mac(HOST), "10.0.0.1"
    rep[ARP].hwdst, rep[ARP].pdst = host_mac(HOST), "10.0.0.2"
    return Ether(bytes(rep))


def arp_not_answered(dp: Dataplane) -> None:
    """A switch without hosts does not answer ARP: the request is dropped and counted."""
    _expect_drop(dp, "not_ip", [bytes(arp_request("10.0.0.2", "10.0.0.1"))])


# --- pin / ECMP / E-ECMP -----------------------------------------------------------

def pin_sends_each_slice_to_its_uplink(dp: Dataplane) -> None:
    """pin: each destination slice's /32 leaves on its one uplink, whatever the flow."""
    dp.set_mode("pin")
    slices = {s: UPLINKS[(s - 1) % len(UPLINKS)] for s in range(1, 9)}
    for s, up in slices.items():
        dp.add_route(f"10.2.0.{s}/32", dp.add_next_hop(up))
    rng = random.Random(1)
    n = 0
    for s in slices:
        for _ in range(6):
            dp.send(HOST, roce4("10.0.0.1", f"10.2.0.{s}", qp=rng.randrange(1, 1 << 24),
                                sport=rng.randrange(49152, 65536), tag=s * 100 + n))
            n += 1
    where = dp.ports_by_tag(n, UPLINKS)
    for tag, port in where.items():
        assert port == slices[tag // 100], f"slice {tag // 100} left on {port}"


def pin_keeps_a_destination_on_one_member(dp: Dataplane) -> None:
    """pin: a destination reached through a group still takes one member for all its flows."""
    dp.set_mode("pin")
    dp.add_route("10.3.0.0/16", dp.add_ecmp_group(1024, UPLINKS))
    rng = random.Random(2)
    n = 0
    for d in range(1, 9):
        for _ in range(6):
            dp.send(HOST, udp4(f"10.0.{rng.randrange(256)}.{rng.randrange(1, 255)}",
                               f"10.3.0.{d}", sport=rng.randrange(1024, 65536),
                               tag=d * 100 + n))
            n += 1
    where = dp.ports_by_tag(n, UPLINKS)
    per_dst: dict[int, set[int]] = {}
    for tag, port in where.items():
        per_dst.setdefault(tag // 100, set()).add(port)
    assert all(len(p) == 1 for p in per_dst.values()), per_dst
    assert len(set().union(*per_dst.values())) > 1, "every destination on one member"


def ecmp_spreads_flows_over_members(dp: Dataplane, n_flows: int = 400) -> None:
    """ecmp: many 5-tuples spread evenly over a group's members; a flow always takes one."""
    dp.set_mode("ecmp", salt=5)
    dp.add_route("10.3.0.0/16", dp.add_ecmp_group(1024, UPLINKS))
    rng = random.Random(3)
    flows = [(f"10.0.{rng.randrange(256)}.{rng.randrange(1, 255)}",
              f"10.3.{rng.randrange(256)}.{rng.randrange(1, 255)}",
              rng.randrange(1024, 65536), rng.randrange(1024, 65536)) for _ in range(n_flows)]
    for i, (src, dst, sport, dport) in enumerate(flows):
        dp.send(HOST, udp4(src, dst, sport=sport, dport=dport, tag=i))
    where = dp.ports_by_tag(n_flows, UPLINKS)
    load = Counter(where.values())
    mean = n_flows / len(UPLINKS)
    # About 4.6 standard deviations of a fair hash; a constant or
    # mostly-constant hash is far outside.
    assert all(0.6 * mean <= load[p] <= 1.4 * mean for p in UPLINKS), load
    for i, (src, dst, sport, dport) in enumerate(flows[:20]):
        dp.send(HOST, udp4(src, dst, sport=sport, dport=dport, tag=i))
    again = dp.ports_by_tag(20, UPLINKS)
    assert all(again[i] == where[i] for i in range(20)), "a flow changed member"


def eecmp_spreads_qps_of_one_flow(dp: Dataplane, n_qps: int = 200) -> None:
    """eecmp: one RoCEv2 5-tuple spreads over the members when only the dest QP varies;
    ecmp keeps all of it on one member."""
    dp.add_route("10.3.0.0/16", dp.add_ecmp_group(1024, UPLINKS))
    dp.set_mode("eecmp", salt=5)
    for qp in range(n_qps):
        dp.send(HOST, roce4("10.0.0.1", "10.3.0.1", qp=0x100 + qp, tag=qp))
    load = Counter(dp.ports_by_tag(n_qps, UPLINKS).values())
    mean = n_qps / len(UPLINKS)
    assert all(0.5 * mean <= load[p] <= 1.5 * mean for p in UPLINKS), load
    dp.set_mode("ecmp", salt=5)
    for qp in range(n_qps):
        dp.send(HOST, roce4("10.0.0.1", "10.3.0.1", qp=0x100 + qp, tag=qp))
    load = Counter(dp.ports_by_tag(n_qps, UPLINKS).values())
    assert len(load) == 1, f"ecmp spread one 5-tuple: {load}"


def eecmp_non_roce_falls_back_to_5tuple(dp: Dataplane) -> None:
    """eecmp: non-RoCE traffic hashes the 5-tuple only (payload bytes where a BTH would
    be do not matter), and different 5-tuples still spread."""
    dp.add_route("10.3.0.0/16", dp.add_ecmp_group(1024, UPLINKS))
    dp.set_mode("eecmp", salt=5)
    for i in range(40):
        # The tag sits where a BTH's destination QP would: it must not be hashed.
        dp.send(HOST, udp4("10.0.0.1", "10.3.0.1", sport=7777, dport=5000, tag=i))
    same = Counter(dp.ports_by_tag(40, UPLINKS).values())
    assert len(same) == 1, same
    rng = random.Random(4)
    for i in range(80):
        dp.send(HOST, udp4("10.0.0.1", "10.3.0.1", sport=rng.randrange(1024, 65536),
                           dport=5000, tag=i))
    spread = Counter(dp.ports_by_tag(80, UPLINKS).values())
    assert len(spread) == len(UPLINKS), spread


def salt_changes_the_mapping(dp: Dataplane, n_flows: int = 64) -> None:
    """A new salt remaps flows (not just relabels members, which keeps stacked tiers
    polarised); the same salt gives the same mapping."""
    dp.add_route("10.3.0.0/16", dp.add_ecmp_group(1024, UPLINKS[:2]))
    rng = random.Random(5)
    flows = [(f"10.0.{rng.randrange(256)}.{rng.randrange(1, 255)}", rng.randrange(1024, 65536))
             for _ in range(n_flows)]

    def mapping(salt: int) -> dict[int, int]:
        dp.set_mode("ecmp", salt=salt)
        for i, (src, sport) in enumerate(flows):
            dp.send(HOST, udp4(src, "10.3.0.1", sport=sport, tag=i))
        return dp.ports_by_tag(n_flows, UPLINKS[:2])

    a, a2, b = mapping(1), mapping(1), mapping(2)
    assert a == a2, "same salt, different mapping"
    same = sum(a[i] == b[i] for i in range(n_flows))
    # With 2 members a relabelling keeps (or swaps) every flow: same in {0, n}.
    assert 0.2 * n_flows <= same <= 0.8 * n_flows, f"{same}/{n_flows} flows kept their member"
    assert len(set(b.values())) == 2


# --- counters ----------------------------------------------------------------------

def counters_move_by_exactly_the_packets_sent(dp: Dataplane, n: int = 7) -> None:
    """rx/tx per port and per (port, class), the route's direct counter and drops by
    reason move by exactly the packets and bytes sent."""
    dp.map_dscp(10, 3)
    route = dp.add_route("10.1.0.0/16", dp.add_next_hop(2))
    pkts = [bytes(udp4("10.0.0.1", "10.1.0.1", dscp=10, tag=i, size=40 + i)) for i in range(n)]
    expired = [bytes(udp4("10.0.0.1", "10.1.0.1", dscp=10, ttl=1, tag=99))]
    size = sum(len(p) for p in pkts)
    cells = {
        "rx_port": ("rx_port", HOST, n + 1, size + len(expired[0])),
        "rx_port_tc": ("rx_port_tc", dp.port_tc(HOST, 3), n + 1, size + len(expired[0])),
        "tx_port": ("tx_port", 2, n, size),
        "tx_port_tc": ("tx_port_tc", dp.port_tc(2, 3), n, size),
        "drops[ttl]": ("drops", DROP["ttl"], 1, len(expired[0])),
    }
    before = {k: _pb(dp.counter(name, idx)) for k, (name, idx, _, _) in cells.items()}
    route_before = dp.direct_counter(route)
    for p in pkts + expired:
        dp.send(HOST, p)
    assert len(dp.collect(n, [2])) == n
    for k, (name, idx, dn, db) in cells.items():
        want = _delta(before[k], dn, db)
        got = dp.wait_counter(lambda name=name, idx=idx: dp.counter(name, idx), want)
        assert got == want, f"{k}: {got}, expected {want}"
    want = _delta(route_before, n, size)
    got = dp.wait_counter(lambda: dp.direct_counter(route), want)
    assert got == want, f"route direct counter: {got}, expected {want}"


# --- PFC ---------------------------------------------------------------------------

def pfc_frames_never_forwarded(dp: Dataplane, port: int = HOST) -> None:
    """PFC and 802.3x PAUSE frames go nowhere: on a port without p4switch's native PFC
    (every port here, on every target) they reach the program, which honours PFC frames
    where the controller enabled it (control/pfc.p4) and drops and counts them all
    (drops[pfc]); a routed packet sent after them is not affected."""
    dp.add_route("0.0.0.0/1", dp.add_next_hop(2))
    frames = [pfc_pause({3: 0xFFFF}, in_port=port), pfc_pause({3: 0}, in_port=port),
              mac_pause(0xFFFF, in_port=port)]
    _expect_drop(dp, "pfc", frames, port=port)
    probe = udp4("10.0.0.1", "10.1.0.1", tag=1, in_port=port)
    dp.send(port, probe)
    dp.expect(2, routed(probe, 2))


# --- packet I/O and ACL ----------------------------------------------------------------

def packet_out_and_packet_in(dp: Dataplane) -> None:
    """A packet-out leaves on the port it names, as sent; a punted frame comes back as a
    packet-in carrying its ingress port, and is not forwarded."""
    frame = lldp(in_port=3, tag=1)
    ctl = dp.port_tc(3, TC_CONTROL)
    before = _pb(dp.counter("tx_port_tc", ctl))
    dp.packet_out(frame, 3)
    dp.expect(3, frame)
    # It left in the control class (and, with one queue and no tc_to_queue entry, queue 0).
    # Packets only: BMv2 counts the bytes it came in with (the 2-byte packet_out header
    # too), p4switch the bytes that leave.
    got = dp.wait_counter(lambda: (dp.counter("tx_port_tc", ctl).packets, 0), (before[0] + 1, 0))
    assert got[0] == before[0] + 1, f"tx_port_tc[3, control class]: {got[0]} packets"
    entry = dp.add_acl("punt_to_cpu", eth_type=(0x88CC, 0xFFFF))
    probe = lldp(in_port=4, tag=2)
    dp.send(4, probe)
    got = dp.expect_packet_in()
    assert got.metadata.get("ingress_port") == 4, got.metadata
    assert got.payload == probe
    dp.expect_none(timeout=0.1)
    assert dp.wait_counter(lambda: dp.direct_counter(entry), (1, len(probe))) == (1, len(probe))


def acl_drop_counted(dp: Dataplane) -> None:
    """An ACL drop entry drops what it matches (counted), and only that."""
    dp.add_route("10.1.0.0/16", dp.add_next_hop(2))
    dp.add_acl("drop", ip_proto=(17, 0xFF), l4_dst_port=(9999, 0xFFFF))
    _expect_drop(dp, "acl", [bytes(udp4("10.0.0.1", "10.1.0.1", dport=9999))])
    ok = udp4("10.0.0.1", "10.1.0.1", dport=9998, tag=1)
    dp.send(HOST, ok)
    dp.expect(2, routed(ok, 2))


def acl_drops_one_psn_of_a_qp(dp: Dataplane, n: int = 10) -> None:
    """ACL keys on the BTH destination QP and PSN: one RoCEv2 packet of one QP is dropped
    (counted), the same PSN on another QP and the QP's other PSNs go through; non-RoCE
    packets have QP and PSN 0 whatever their payload."""
    dp.add_route("10.1.0.0/16", dp.add_next_hop(2))
    full = (0xFFFFFF, 0xFFFFFF)
    dp.add_acl("drop", bth_dst_qp=(0x42, full[0]), bth_psn=(5, full[1]))
    sent = [roce4("10.0.0.1", "10.1.0.1", qp=0x42, tag=psn) for psn in range(n)]
    other = roce4("10.0.0.1", "10.1.0.1", qp=0x43, tag=5)
    before = _pb(dp.counter("drops", DROP["acl"]))
    for pkt in [*sent, other]:
        dp.send(HOST, pkt)
    # (PSN, destination QP) of what left: the BTH follows Ethernet, IPv4 and UDP (42 bytes).
    got = sorted((int.from_bytes(r.frame[51:54], "big"), int.from_bytes(r.frame[47:50], "big"))
                 for r in dp.collect(n, [2]))
    assert got == sorted([(psn, 0x42) for psn in range(n) if psn != 5] + [(5, 0x43)]), got
    want = _delta(before, 1, len(bytes(sent[5])))
    assert dp.wait_counter(lambda: dp.counter("drops", DROP["acl"]), want) == want
    # A UDP packet to another port whose payload holds QP 0x42 / PSN 5 where a BTH would be:
    # not RoCE, so its QP and PSN are 0 for the ACL.
    fake = udp4("10.0.0.1", "10.1.0.1", dport=4792, tag=0x0042)
    dp.send(HOST, fake)
    dp.expect(2, routed(fake, 2))
    dp.add_acl("drop", priority=20, bth_dst_qp=(0, full[0]), bth_psn=(0, full[1]),
               l4_dst_port=(4792, 0xFFFF))
    _expect_drop(dp, "acl", [bytes(fake)])


# --- QoS, ECN, native PFC (a switch with 8 queues and slow ports, see test_qos.py) ----------

def _send_burst(dp: Dataplane, pkts: list[bytes]) -> None:
    for p in pkts:
        dp.send(HOST, p)


def priority_order_under_contention(dp: Dataplane, port: int) -> None:
    """DSCP -> class -> queue: a high-priority burst sent after a low-priority one overtakes
    it on a congested port; each class stays in order."""
    dp.add_route("10.4.0.0/16", dp.add_next_hop(port))
    dp.map_dscp(10, 1)
    dp.map_dscp(46, 5)
    dp.map_tc_to_queue(1, 1)
    dp.map_tc_to_queue(5, 5)
    low = [bytes(udp4("10.0.0.1", "10.4.0.1", dscp=10, tag=i)) for i in range(20)]
    high = [bytes(udp4("10.0.0.1", "10.4.0.2", dscp=46, tag=100 + i)) for i in range(10)]
    _send_burst(dp, low + high)
    got = dp.collect(30, [port], timeout=10)
    tags = [flow_tag(r.frame) for r in got]
    assert len(tags) == 30, f"{len(tags)} of 30 arrived"
    lows = [t for t in tags if t is not None and t < 100]
    highs = [t for t in tags if t is not None and t >= 100]
    assert lows == sorted(lows) and highs == sorted(highs), tags
    last_high = max(tags.index(t) for t in highs)
    after = sum(1 for t in tags[last_high + 1:] if t < 100)
    # FIFO would put every high packet behind every low one (after == 0).
    assert after >= 5, f"only {after} low packets left after the high class: {tags}"


def cnp_goes_to_the_control_class(dp: Dataplane, port: int) -> None:
    """A CNP (BTH opcode 0x81) is put in the control class whatever its DSCP, and with
    that class mapped to the top queue it overtakes queued data."""
    dp.add_route("10.4.0.0/16", dp.add_next_hop(port))
    dp.map_tc_to_queue(7, 7)
    ctl = dp.port_tc(port, 7)
    before = _pb(dp.counter("tx_port_tc", ctl))
    data = [bytes(udp4("10.0.0.1", "10.4.0.1", tag=i)) for i in range(20)]
    cnp = bytes(cnp4("10.0.0.1", "10.4.0.9", qp=0x42, tag=500))
    _send_burst(dp, data + [cnp])
    got = dp.collect(21, [port], timeout=10)
    assert len(got) == 21, f"{len(got)} of 21 arrived"
    # IPv4 protocol UDP, destination port 4791, BTH opcode CNP.
    pos = next(i for i, r in enumerate(got) if r.frame[23] == 17
               and r.frame[36:38] == b"\x12\xb7" and r.frame[42] == 0x81)
    assert pos <= 3, f"the CNP left in position {pos}"
    want = _delta(before, 1, len(cnp))
    assert dp.wait_counter(lambda: dp.counter("tx_port_tc", ctl), want) == want


def ack_lane_takes_acks_past_their_class_queue(dp: Dataplane, port: int) -> None:
    """An RC ACK of the lossless class waits in its class's queue, behind the data queued
    there (FIFO: it leaves last), until `ack_queue` gives that class's ACKs the top
    queue: then it overtakes the same data, and is still counted in its class (3)."""
    dp.add_route("10.4.0.0/16", dp.add_next_hop(port))
    dp.map_dscp(26, 3)
    dp.map_tc_to_queue(3, 3)
    dp.map_tc_to_queue(7, 7)
    cell = dp.port_tc(port, 3)
    for lane, tag in ((False, 700), (True, 800)):
        if lane:
            dp.map_ack_queue(3, 7)
        before = _pb(dp.counter("tx_port_tc", cell))
        data = [bytes(roce4("10.0.0.1", "10.4.0.1", qp=0x42, tag=tag + i)) for i in range(20)]
        ack = bytes(ack4("10.0.0.1", "10.4.0.9", qp=0x43, tag=tag + 99))
        assert ack[42] == 0x11, "not an RC ACKNOWLEDGE (BTH opcode 0x11)"
        _send_burst(dp, data + [ack])
        got = dp.collect(21, [port], timeout=10)
        assert len(got) == 21, f"{len(got)} of 21 arrived"
        # IPv4 protocol UDP, destination port 4791, BTH opcode RC ACKNOWLEDGE.
        acks = [i for i, r in enumerate(got) if r.frame[23] == 17
                and r.frame[36:38] == b"\x12\xb7" and r.frame[42] == 0x11]
        assert len(acks) == 1, f"ACKs among what left: {acks}"
        pos = acks[0]
        if lane:
            assert pos <= 3, f"with the ACK lane the ACK left in position {pos}"
        else:
            assert pos == 20, f"without the ACK lane the ACK left in position {pos}, not last"
        want = _delta(before, 21, sum(map(len, data)) + len(ack))
        assert dp.wait_counter(lambda: dp.counter("tx_port_tc", cell), want) == want


def packet_out_overtakes_queued_data(dp: Dataplane, port: int) -> None:
    """A packet-out (a link probe) leaves in the control class: with that class mapped to
    the top queue it overtakes a queue of data on a congested port."""
    dp.add_route("10.4.0.0/16", dp.add_next_hop(port))
    dp.map_tc_to_queue(TC_CONTROL, 7)
    ctl = dp.port_tc(port, TC_CONTROL)
    before = _pb(dp.counter("tx_port_tc", ctl))
    data = [bytes(udp4("10.0.0.1", "10.4.0.1", tag=i)) for i in range(20)]
    probe = lldp(in_port=port, tag=600)
    _send_burst(dp, data)
    dp.packet_out(probe, port)
    got = dp.collect(21, [port], timeout=10)
    assert len(got) == 21, f"{len(got)} of 21 arrived"
    pos = next(i for i, r in enumerate(got) if r.frame == probe)
    # FIFO would put it last (position 20).
    assert pos <= 4, f"the packet-out left in position {pos}"
    got_ctl = dp.wait_counter(lambda: (dp.counter("tx_port_tc", ctl).packets, 0),
                              (before[0] + 1, 0))
    assert got_ctl[0] == before[0] + 1, f"tx_port_tc[{port}, control class]: {got_ctl[0]}"


def arp_reply_overtakes_queued_data(dp: Dataplane, port: int) -> None:
    """An ARP reply is network control: it leaves in the control class, ahead of data
    queued on the port the request came in on (a host asking for its gateway while its
    downlink is busy gets its answer)."""
    dp.add_route("10.4.0.0/16", dp.add_next_hop(port))
    dp.map_tc_to_queue(TC_CONTROL, 7)
    dp.add_arp_reply("10.4.0.254", switch_mac(port))
    ctl = dp.port_tc(port, TC_CONTROL)
    before = _pb(dp.counter("tx_port_tc", ctl))
    _send_burst(dp, [bytes(udp4("10.0.0.1", "10.4.0.1", tag=i)) for i in range(20)])
    dp.send(port, arp_request("10.4.0.1", "10.4.0.254", in_port=port))
    got = dp.collect(21, [port], timeout=10)
    assert len(got) == 21, f"{len(got)} of 21 arrived"
    pos = next(i for i, r in enumerate(got) if Ether(r.frame).haslayer(ARP))
    # In the data's queue it would leave last (position 20).
    assert pos <= 4, f"the ARP reply left in position {pos}"
    assert Ether(got[pos].frame)[ARP].op == 2
    got_ctl = dp.wait_counter(lambda: (dp.counter("tx_port_tc", ctl).packets, 0),
                              (before[0] + 1, 0))
    assert got_ctl[0] == before[0] + 1, f"tx_port_tc[{port}, control class]: {got_ctl[0]}"


def queue_depth_registers_follow_the_queue(dp: Dataplane, port: int, n: int = 20) -> None:
    """queue_depth holds the queue depth the last packet of a (port, class) found,
    queue_peak the largest since the controller wrote it to 0; other cells do not move."""
    dp.add_route("10.4.0.0/16", dp.add_next_hop(port))
    dp.map_dscp(10, 1)
    dp.map_tc_to_queue(1, 1)
    cell, other = dp.port_tc(port, 1), dp.port_tc(port, 2)
    dp.set_register("queue_peak", cell, 0)
    other_before = (dp.register("queue_depth", other), dp.register("queue_peak", other))

    def burst(k: int, base: int) -> None:
        _send_burst(dp, [bytes(udp4("10.0.0.1", "10.4.0.1", dscp=10, tag=base + i))
                         for i in range(k)])
        assert len(dp.collect(k, [port], timeout=10)) == k

    burst(n, 0)
    peak = dp.register("queue_peak", cell)
    # The port drains 100 packets/s: most of a back-to-back burst finds a queue.
    assert n // 2 <= peak <= n - 1, f"peak {peak} after a burst of {n}"
    assert 0 < dp.register("queue_depth", cell) <= peak
    burst(1, 100)  # alone, into an empty queue
    assert dp.register("queue_depth", cell) == 0
    assert dp.register("queue_peak", cell) == peak, "the peak moved for an empty queue"
    dp.set_register("queue_peak", cell, 0)
    assert dp.register("queue_peak", cell) == 0
    burst(1, 200)
    assert dp.register("queue_peak", cell) == 0
    burst(3, 300)
    assert 1 <= dp.register("queue_peak", cell) <= 2
    assert (dp.register("queue_depth", other), dp.register("queue_peak", other)) == other_before


def ecn_marks_only_above_the_threshold(dp: Dataplane, port: int, n: int = 30) -> None:
    """ECN-capable packets leave CE-marked only when more than the (port, class)
    threshold were queued ahead of them; Not-ECT packets, other classes and a high
    threshold are never marked; the marks are counted."""
    dp.add_route("10.4.0.0/16", dp.add_next_hop(port))
    dp.map_dscp(10, 1)
    dp.map_tc_to_queue(1, 1)
    dp.set_ecn_threshold(port, 1, 4)
    marked_cell = dp.port_tc(port, 1)

    def burst(dscp: int, ecn: int) -> list[tuple[int, int]]:
        pkts = [udp4("10.0.0.1", "10.4.0.1", dscp=dscp, ecn=ecn, tag=i) for i in range(n)]
        _send_burst(dp, [bytes(p) for p in pkts])
        got = dp.collect(n, [port], timeout=10)
        assert len(got) == n, f"{len(got)} of {n} arrived"
        out = []
        for r in got:
            tag = flow_tag(r.frame)
            assert tag is not None
            exp = Mask(routed(pkts[tag], port)).dont_care(IP, "tos", low_bits=2).dont_care(
                IP, "chksum")
            assert exp.matches(r.frame), f"packet {tag} changed beyond ECN: {r.frame.hex()}"
            out.append((tag, Ether(r.frame)[IP].tos & 3))
        return sorted(out)

    before = _pb(dp.counter("ecn_marked", marked_cell))[0]
    ect = burst(10, 2)
    ce = [tag for tag, e in ect if e == 3]
    # Packet i finds at most i packets ahead of it: the first 5 are below the threshold.
    assert all(tag > 4 for tag in ce), ect
    assert all(e in (2, 3) for _, e in ect), ect
    assert len(ce) >= n // 3, f"only {len(ce)} of {n} marked: the queue did not build? {ect}"
    marked = dp.wait_counter(lambda: (dp.counter("ecn_marked", marked_cell).packets, 0),
                             (before + len(ce), 0))[0]
    assert marked == before + len(ce)
    assert all(e == 0 for _, e in burst(10, 0)), "a Not-ECT packet was marked"
    assert all(e == 2 for _, e in burst(0, 2)), "class 0 has no threshold but was marked"
    dp.map_dscp(12, 2)
    dp.map_tc_to_queue(2, 1)
    dp.set_ecn_threshold(port, 2, 1000)
    assert all(e == 2 for _, e in burst(12, 2)), "marked below a threshold of 1000"


def pause_frame_stops_its_class(dp: Dataplane, port: int) -> None:
    """Native PFC: a PAUSE for priority 3 received on a PFC port holds that port's queue 3
    (other queues still flow) until a resume; the frame never reaches the program."""
    dp.add_route("10.5.0.0/16", dp.add_next_hop(port))
    dp.map_dscp(24, 3)
    dp.map_tc_to_queue(3, 3)
    rx, drops = _pb(dp.counter("rx_port", port)), _pb(dp.counter("drops", DROP["pfc"]))
    dp.send(port, pfc_pause({3: 0xFFFF}, in_port=port))
    held = udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=1)
    free = udp4("10.0.0.1", "10.5.0.2", dscp=0, tag=2)
    dp.send(HOST, held)
    dp.send(HOST, free)
    dp.expect(port, routed(free, port))
    dp.expect_none([port], timeout=0.5)
    dp.send(port, pfc_pause({3: 0}, in_port=port))
    dp.expect(port, routed(held, port))
    assert _pb(dp.counter("rx_port", port)) == rx, "a PAUSE frame reached the program"
    assert _pb(dp.counter("drops", DROP["pfc"])) == drops


def xoff_sent_upstream_when_a_queue_fills(dp: Dataplane, egress: int, n: int = 56) -> None:
    """Native PFC: when a lossless class backs up, the switch sends PAUSE (XOFF) for that
    priority out of the ingress port, then a resume (XON) as the queue drains; nothing
    is lost."""
    dp.add_route("10.5.0.0/16", dp.add_next_hop(egress))
    dp.map_dscp(24, 3)
    dp.map_tc_to_queue(3, 3)
    _send_burst(dp, [bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=i)) for i in range(n)])
    assert len(dp.collect(n, [egress], timeout=15)) == n, "a lossless packet was lost"
    pauses = []
    for r in dp.collect(2, [HOST], timeout=2):  # takes every frame there
        f = r.frame
        assert f[:6] == bytes.fromhex("0180c2000001") and f[12:16] == b"\x88\x08\x01\x01", f.hex()
        enable = int.from_bytes(f[16:18], "big")
        pauses.append((enable, int.from_bytes(f[18 + 2 * 3:20 + 2 * 3], "big")))
    # XOFF (refreshed while the queue stays above XON), then one XON.
    assert pauses and all(enable == 1 << 3 for enable, _ in pauses), pauses
    assert all(q == 0xFFFF for _, q in pauses[:-1]) and pauses[-1][1] == 0, pauses


# --- PFC in the program (control/pfc.p4; both targets, see test_pfc.py) ----------------

def _pfc_class_setup(dp: Dataplane, routes: dict[str, int]) -> None:
    """Routes prefix -> port; DSCP 24 is class 3, in queue 3."""
    for prefix, port in routes.items():
        dp.add_route(prefix, dp.add_next_hop(port))
    dp.map_dscp(24, 3)
    dp.map_tc_to_queue(3, 3)


def _resume(dp: Dataplane, port: int, tc: int = 3) -> None:
    """Send XON for `tc` into `port` and wait until the program has seen it (clears a pause
    a scenario left, since registers outlive the test's table entries)."""
    slot = dp.port_tc(port, tc)
    before = dp.counter("pfc_rx", slot).packets
    dp.send(port, pfc_pause({tc: 0}, in_port=port))
    got = dp.wait_counter(lambda: (dp.counter("pfc_rx", slot).packets, 0), (before + 1, 0))
    assert got[0] == before + 1, "the XON was not seen"


def pause_holds_its_class_for_its_time(dp: Dataplane, port: int, other: int,
                                       rate_bps: float = 1e6, quanta: int = 1000) -> float:
    """A PFC frame received on `port` for class 3 holds class 3 towards `port` for
    quanta x 512 bit-times at the port's rate; class 0 to `port` and class 3 to `other`
    still flow. Returns how long the held packet was held (seconds)."""
    _pfc_class_setup(dp, {"10.5.0.0/16": port, "10.6.0.0/16": other})
    dp.set_pfc_port(port, rate_bps=rate_bps)
    dp.set_lossless(port, 3, xoff=1000, xon=999)
    dp.set_lossless(other, 3, xoff=1000, xon=999)
    pause = quanta * 512 / rate_bps
    slot = dp.port_tc(port, 3)
    before = dp.counter("pfc_rx", slot).packets
    t0 = time.monotonic()
    dp.send(port, pfc_pause({3: quanta}, in_port=port))
    assert dp.wait_counter(lambda: (dp.counter("pfc_rx", slot).packets, 0),
                           (before + 1, 0))[0] == before + 1, "the PFC frame was not counted"
    held = [udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=i) for i in range(3)]
    free = udp4("10.0.0.1", "10.5.0.2", dscp=0, tag=10)
    elsewhere = udp4("10.0.0.1", "10.6.0.1", dscp=24, tag=11)
    for p in [*held, free, elsewhere]:
        dp.send(HOST, p)
    dp.expect(port, routed(free, port), timeout=pause / 2)
    dp.expect(other, routed(elsewhere, other), timeout=pause / 2)
    out = [dp.expect(port, routed(h, port), timeout=pause + 2) for h in held]
    took = out[0].at - t0
    assert took >= 0.9 * pause, f"held {took:.3f} s of a {pause:.3f} s pause"
    assert took <= pause + 1.5, f"held {took:.3f} s for a {pause:.3f} s pause"
    assert [r.at for r in out] == sorted(r.at for r in out)
    dp.expect_none([port, other], timeout=0.1)
    return took


def xon_releases_a_pause_early(dp: Dataplane, port: int, rate_bps: float = 1e6) -> None:
    """A PFC frame with quanta 0 (XON) ends the class's pause at once; held packets leave
    in the order they came."""
    _pfc_class_setup(dp, {"10.5.0.0/16": port})
    dp.set_pfc_port(port, rate_bps=rate_bps)
    dp.set_lossless(port, 3, xoff=1000, xon=999)
    slot = dp.port_tc(port, 3)
    before = dp.counter("pfc_rx", slot).packets
    dp.send(port, pfc_pause({3: 0xFFFF}, in_port=port))  # 33.5 s at 1 Mb/s
    assert dp.wait_counter(lambda: (dp.counter("pfc_rx", slot).packets, 0),
                           (before + 1, 0))[0] == before + 1
    held = [bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=i)) for i in range(10)]
    _send_burst(dp, held)
    dp.expect_none([port], timeout=0.5)
    _resume(dp, port)
    got = dp.collect(10, [port], timeout=3)
    tags = [flow_tag(r.frame) for r in got]
    assert tags == list(range(10)), tags


def a_line_joined_during_the_pause_drains_in_order(dp: Dataplane, port: int) -> None:
    """Packets that join a held line while the pause lasts go round between older ones, so
    the loop is out of order when XON comes; the ones not yet at their turn go round the
    port's drain lane (`pfc_drain`, counted in `drain_passes`), and the class still leaves
    in the order it came, nothing lost. `port` must be paced (all its queues): an unpaced
    drain lane, above the lowest queue, could keep the line's head there from being served
    (the fabric paces it at `topologies.ports.DRAIN_SPEEDUP` times the port's rate)."""
    _pfc_class_setup(dp, {"10.5.0.0/16": port})
    dp.set_pfc_port(port, rate_bps=1e6)
    dp.set_lossless(port, 3, xoff=100_000, xon=99_999)
    dp.set_drain(port, 1)
    slot = dp.port_tc(port, 3)
    before = dp.counter("pfc_rx", slot).packets
    drained = dp.counter("drain_passes", slot).packets
    dp.send(port, pfc_pause({3: 0xFFFF}, in_port=port))  # 33.5 s at 1 Mb/s
    assert dp.wait_counter(lambda: (dp.counter("pfc_rx", slot).packets, 0),
                           (before + 1, 0))[0] == before + 1
    n = 0
    for _ in range(4):  # each batch joins while the earlier ones go round
        _send_burst(dp, [bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=n + i))
                         for i in range(6)])
        n += 6
        time.sleep(0.1)
    dp.expect_none([port], timeout=0.3)
    _resume(dp, port)
    got = dp.collect(n, [port], timeout=5)
    tags = [flow_tag(r.frame) for r in got]
    assert tags == list(range(n)), tags
    assert dp.counter("drain_passes", slot).packets > drained, "nothing went round the drain lane"


def watchdog_releases_a_pause_that_never_ends(dp: Dataplane, port: int,
                                              watchdog_us: int = 200_000) -> None:
    """PAUSE frames that keep coming (a PFC storm) hold a class no longer than the watchdog
    allows: after watchdog_us its packets leave, and the storm is counted once."""
    _pfc_class_setup(dp, {"10.5.0.0/16": port})
    dp.set_pfc_port(port, rate_bps=1e6)
    dp.set_lossless(port, 3, xoff=1000, xon=999, watchdog_us=watchdog_us)
    slot = dp.port_tc(port, 3)
    storms = dp.counter("pfc_storms", slot).packets
    stop = threading.Event()

    def storm() -> None:
        while not stop.is_set():
            dp.send(port, pfc_pause({3: 0xFFFF}, in_port=port))
            stop.wait(0.05)

    t = threading.Thread(target=storm, daemon=True)
    t0 = time.monotonic()
    t.start()
    try:
        time.sleep(0.05)
        pkt = udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=1)
        dp.send(HOST, pkt)
        got = dp.expect(port, routed(pkt, port), timeout=5)
        took = got.at - t0
        assert watchdog_us / 1e6 * 0.9 <= took <= 3, f"released after {took:.3f} s"
        # While the storm lasts, the class is not held at all.
        again = udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=2)
        dp.send(HOST, again)
        dp.expect(port, routed(again, port), timeout=0.5)
    finally:
        stop.set()
        t.join()
    got = dp.wait_counter(lambda: (dp.counter("pfc_storms", slot).packets, 0), (storms + 1, 0))
    assert got[0] == storms + 1, f"{got[0] - storms} storms counted"
    _resume(dp, port)
