"""The spine roles on one switch, each in turn: CTSW (p4/ctsw.p4, the zone spine) and ATSW
(p4/atsw.p4, the aggregator joining zones): routing, no ARP, pin / ECMP / E-ECMP, salt,
counters, PFC frames, packet I/O (scenarios in scenarios.py)."""

from __future__ import annotations

import pytest

from . import scenarios as sc


@pytest.fixture(scope="module", params=["ctsw", "atsw"])
def role(request: pytest.FixtureRequest) -> str:
    return request.param


def test_routes_ipv4_by_longest_prefix_with_mac_rewrite(dp):
    """IPv4: LPM next hop, MAC rewrite, TTL - 1, checksum recomputed."""
    sc.ipv4_longest_prefix_with_mac_rewrite(dp)


def test_routes_ipv6_by_longest_prefix_with_mac_rewrite(dp):
    """IPv6: LPM next hop, MAC rewrite, hop limit - 1."""
    sc.ipv6_longest_prefix_with_mac_rewrite(dp)


def test_ttl_expiry_is_dropped_and_counted(dp):
    """TTL / hop limit <= 1 is dropped and counted, TTL 2 leaves with 1."""
    sc.ttl_expiry_dropped_and_counted(dp)


def test_bad_ipv4_checksum_is_dropped_and_counted(dp):
    """A wrong IPv4 header checksum drops the packet (counted)."""
    sc.bad_ipv4_checksum_dropped_and_counted(dp)


def test_does_not_answer_arp(dp):
    """No hosts attach here: ARP requests are dropped and counted."""
    sc.arp_not_answered(dp)


def test_pin_sends_each_destination_to_its_one_uplink(dp):
    """pin: every flow to a destination leaves on its one uplink."""
    sc.pin_sends_each_slice_to_its_uplink(dp)


def test_ecmp_spreads_many_flows_over_the_group(dp):
    """ecmp: 400 flows spread evenly over 4 members, each flow sticky."""
    sc.ecmp_spreads_flows_over_members(dp)


def test_eecmp_spreads_qps_of_one_flow_over_uplinks(dp):
    """eecmp spreads one 5-tuple by destination QP; ecmp does not."""
    sc.eecmp_spreads_qps_of_one_flow(dp)


def test_salt_change_remaps_flows(dp):
    """A new salt remaps flows (not a relabelling); the same salt is stable."""
    sc.salt_changes_the_mapping(dp)


def test_counters_move_by_exactly_the_packets_sent(dp):
    """Port, class, route and drop counters move by exactly what was sent."""
    sc.counters_move_by_exactly_the_packets_sent(dp)


def test_pfc_frames_are_never_forwarded(dp):
    """PFC / PAUSE frames reach the program (no native PFC here), which drops and counts them."""
    sc.pfc_frames_never_forwarded(dp)


def test_packet_out_and_packet_in_round_trip(dp):
    """Packet-out leaves on its port; a punted frame returns as a packet-in."""
    sc.packet_out_and_packet_in(dp)


def test_next_hop_miss_is_dropped_and_counted(dp):
    """No next_hop entry for a route's next_id: dropped as no-route, on every target."""
    sc.next_hop_miss_dropped_and_counted(dp)


def test_emptied_group_is_dropped_and_counted(dp):
    """A group that lost every member: dropped as no-route."""
    dp.p4switch_only("simple_switch_grpc 1.15.5 crashes (SIGSEGV) on a lookup that reaches an "
                     "emptied group (MatchTableIndirectWS leaves the next node unset)")
    sc.emptied_group_dropped_and_counted(dp)


def test_acl_drops_one_psn_of_a_qp(dp):
    """ACL on BTH dest QP + PSN drops exactly one RoCEv2 packet; non-RoCE has QP/PSN 0."""
    sc.acl_drops_one_psn_of_a_qp(dp)
