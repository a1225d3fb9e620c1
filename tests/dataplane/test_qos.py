"""QoS on an RTSW with 8 priority queues and congested ports: DSCP -> class -> queue,
the control class, ECN marking, and native PFC (p4switch only).

Port 2 drains each queue at 100 packets/s (both targets: p4switch's
--queue-rate, BMv2's set_queue_rate). Port 5 is congested for priority
tests: on p4switch a 100 kb/s port all queues share; on BMv2 a 100 pps
queue rate. Port 3 runs PFC on priority 3 at 1 Mb/s (a full PAUSE lasts
33 s), port 1 sends XOFF/XON upstream for priority 3 (p4switch only).
"""

from __future__ import annotations

from . import scenarios as sc
from .switch import SwitchOptions

ROLE = "rtsw"


def switch_options(target: str) -> SwitchOptions:
    if target == "p4switch":
        return SwitchOptions(priority_queues=8, queue_rate={2: 100}, port_speed={5: 0.0001, 3: 0.001},
                             pfc={1: "3", 3: "3"})
    return SwitchOptions(priority_queues=8, queue_rate={2: 100, 5: 100})


def test_dscp_priority_overtakes_under_contention(dp):
    """A high-priority DSCP sent after a low one leaves before most of it."""
    sc.priority_order_under_contention(dp, port=5)


def test_cnp_goes_to_the_top_class(dp):
    """CNPs ride the control class (tc 7) and overtake queued data."""
    sc.cnp_goes_to_the_control_class(dp, port=5)


def test_ack_lane_takes_rc_acks_past_their_class_queue(dp):
    """With `ack_queue` (what the controller installs on BMv2) an RC ACK of class 3
    overtakes class 3's queued data; without it, it waits behind it."""
    sc.ack_lane_takes_acks_past_their_class_queue(dp, port=5)


def test_packet_out_overtakes_queued_data(dp):
    """Packet-outs (link probes) ride the control class and overtake queued data."""
    sc.packet_out_overtakes_queued_data(dp, port=5)


def test_arp_reply_overtakes_queued_data(dp):
    """An ARP reply rides the control class, ahead of a host port's queued data."""
    sc.arp_reply_overtakes_queued_data(dp, port=5)


def test_queue_depth_registers_follow_the_queue(dp):
    """queue_depth / queue_peak per (port, class) read back over P4Runtime; peak resets."""
    sc.queue_depth_registers_follow_the_queue(dp, port=2)


def test_ecn_marks_only_above_the_threshold(dp):
    """CE marks appear only above the (port, class) threshold and are counted."""
    sc.ecn_marks_only_above_the_threshold(dp, port=2)


def test_pause_frame_stops_its_class_until_resumed(dp, native_pfc):
    """A received PFC PAUSE holds that priority's queue; resume releases it."""
    sc.pause_frame_stops_its_class(dp, port=3)


def test_xoff_and_xon_sent_upstream_as_a_queue_fills_and_drains(dp, native_pfc):
    """A backed-up lossless class sends PAUSE then resume upstream; nothing lost."""
    sc.xoff_sent_upstream_when_a_queue_fills(dp, egress=2)
