"""Tests for topologies.ports: each switch port's rate, queue and PFC, from its tier."""

from __future__ import annotations

from pathlib import Path

import pytest

from topologies.addressing import plan_addresses
from topologies.ports import (
    ROCE_FRAME,
    PortSettings,
    SwitchSettings,
    ack_queue,
    drain_queue,
    frames_per_second,
    paced_mbps,
    pfc_thresholds,
    switch_end_mbps,
    switch_settings,
)
from topologies.spec import SpecError, load_spec, parse_spec

SMALL = Path(__file__).resolve().parents[3] / "topologies" / "ai_zone_small.yaml"

# One rack of two one-NIC hosts under one CTSW joined to a second rack; the
# uplink tier has its own rate, queue and thresholds, the host tier no PFC.
SPEC = parse_spec({
    "racks": [{"count": 2, "hosts": 2}], "ctsws": 1,
    "links": {"host": {"rate_mbps": 12.5, "pfc": {"enabled": False}},
              "rtsw_ctsw": {"rate_mbps": 20, "queue": 100, "pfc": {"xoff": 40, "xon": 30}}},
})


def test_rtsw_ports_take_their_tiers_settings() -> None:
    """rtsw1: ports 1-2 at 12.5 Mb/s without PFC, port 3 (uplink) at 20 Mb/s with class 3;
    the drain lane in queue 1 (the default classes take 3 and 7). In bytes: queues of 64 and
    100 RoCE frames (x 1,082 = 69,248 and 108,200 B); port 3's XOFF/XON 40/30 frames (43,280
    / 32,460 B); the round trip's headroom, 20e6 / 8 x 20 ms + 1,514 = 51,514 B, fits above
    XOFF (XOFF kept), and the PG's headroom is what the queue holds above XOFF, 108,200 -
    43,280 = 64,920 B. The buffer counts packets (the spec's default)."""
    s = switch_settings(plan_addresses(SPEC), "rtsw1")
    assert s == SwitchSettings(queues=8, ports=(
        PortSettings(port=1, intf="rtsw1-eth1", tier="host", rate_mbps=12.5, queue=64, pfc=(),
                     xoff=24, xon=12),
        PortSettings(port=2, intf="rtsw1-eth2", tier="host", rate_mbps=12.5, queue=64, pfc=(),
                     xoff=24, xon=12),
        PortSettings(port=3, intf="rtsw1-eth3", tier="rtsw_ctsw", rate_mbps=20, queue=100,
                     pfc=(3,), xoff=40, xon=30, xoff_bytes=43_280,
                     xon_bytes=32_460, headroom_bytes=64_920),
    ), drain=1, buffer_unit="packets", shared_bytes=None, alpha=None)
    assert [p.queue_bytes for p in s.ports] == [69_248, 69_248, 108_200]


def test_a_buffer_in_bytes_and_its_pool_reach_the_settings() -> None:
    """`buffer: {accounting: bytes, shared_mb: 1.5, alpha: 2}`: every switch counts bytes,
    with a 1,500,000-B pool at alpha 2; refused with the key named otherwise."""
    spec = SPEC.model_copy(update={"buffer": parse_spec({
        "racks": [{"hosts": 1}],
        "buffer": {"accounting": "bytes", "shared_mb": 1.5, "alpha": 2}}).buffer})
    s = switch_settings(plan_addresses(spec), "ctsw1")
    assert (s.buffer_unit, s.shared_bytes, s.alpha) == ("bytes", 1_500_000, 2.0)
    assert SwitchSettings.from_json(s.to_json()) == s
    with pytest.raises(SpecError, match="buffer: .*shared_mb needs accounting: bytes"):
        parse_spec({"racks": [{"hosts": 1}], "buffer": {"shared_mb": 1}})
    with pytest.raises(SpecError, match="buffer: .*alpha needs shared_mb"):
        parse_spec({"racks": [{"hosts": 1}], "buffer": {"accounting": "bytes", "alpha": 1}})
    with pytest.raises(SpecError, match="buffer.accounting"):
        parse_spec({"racks": [{"hosts": 1}], "buffer": {"accounting": "cells"}})


def test_lossless_classes_are_the_pfc_priorities() -> None:
    """A second lossless class (tc 5) makes PFC cover priorities 3 and 5."""
    spec = SPEC.model_copy(update={"qos": parse_spec({
        "racks": [{"hosts": 1}],
        "qos": {"classes": {"bulk": {"tc": 5, "dscp": [10], "lossless": True}}}}).qos})
    s = switch_settings(plan_addresses(spec), "ctsw1")
    assert [p.pfc for p in s.ports] == [(3, 5), (3, 5)]


def test_settings_round_trip_through_json() -> None:
    """What run.json keeps reads back equal."""
    s = switch_settings(plan_addresses(SPEC), "rtsw1")
    assert SwitchSettings.from_json(s.to_json()) == s


def test_rate_as_a_gbps_flag_value() -> None:
    """12.5 Mb/s -> "0.0125", 10 Mb/s -> "0.01" (p4switch --port-speed takes Gb/s)."""
    s = switch_settings(plan_addresses(SPEC), "rtsw1")
    assert [p.gbps for p in s.ports] == ["0.0125", "0.0125", "0.02"]


def test_full_size_frames_per_second() -> None:
    """10 Mb/s of 1514-byte frames: 10e6 / 12112 = 825.6 -> 826 (never below the rate); an
    exact quotient stays as it is; never 0."""
    assert frames_per_second(10) == 826
    assert frames_per_second(1000) == 82563  # 1e9 / 12112 = 82,562.7
    assert frames_per_second(12.112) == 1000  # exactly 1,000 frames
    assert frames_per_second(0.001) == 1


def test_roce_frames_per_second() -> None:
    """A RoCE WRITE Middle packet at MTU 1024 is 1082 bytes on the veth: 1 Mb/s is
    1e6 / 8656 = 115.5 -> 116 of them a second, 10 Mb/s 1155.6 -> 1156."""
    assert ROCE_FRAME == 1082
    assert frames_per_second(1, ROCE_FRAME) == 116
    assert frames_per_second(10, ROCE_FRAME) == 1156


def test_paced_rate_is_the_frames_rate_in_megabits() -> None:
    """116 frames of 1,082 B a second are 116 x 8,656 = 1,004,096 b/s: 1.004096 Mb/s for a
    1 Mb/s tier, less than one frame a second above it."""
    assert paced_mbps(1, ROCE_FRAME) == pytest.approx(1.004096, abs=1e-12)
    assert paced_mbps(10, ROCE_FRAME) == pytest.approx(1156 * 8656 / 1e6, abs=1e-12)


def test_the_switch_end_of_a_cable_is_shaped_five_percent_above_the_ports_pace() -> None:
    """The switch's side of the cable is shaped 5 % faster than the switch's port, so a
    backlog waits in the switch's queue, not in tc. BMv2's queues pace packets: 1,004,096
    b/s x 1.05 = 1,054,300.8 b/s for a 1 Mb/s tier in 1,082-B frames; 602 frames of 4,154 B
    (20 Mb/s, jumbo links) are 20,005,664 b/s, x 1.05 = 21,005,947.2. p4switch's ports pace
    bits at the tier's rate (no frame): 20 x 1.05 = 21, 1 x 1.05 = 1.05."""
    assert switch_end_mbps(1, ROCE_FRAME) == pytest.approx(1.0543008, abs=1e-9)
    assert switch_end_mbps(20, 4154) == pytest.approx(21.0059472, abs=1e-9)
    assert switch_end_mbps(20) == pytest.approx(21.0, abs=1e-12)
    assert switch_end_mbps(1) == pytest.approx(1.05, abs=1e-12)


def test_drain_lane_is_the_lowest_queue_no_class_uses() -> None:
    """Eight queues, classes 0, 3 and 7 named: queue 1. Classes in 1, 2 and 3: queue 4. The
    top queue is never it (RC ACKs' lane on BMv2): four queues with classes 1 and 2 leave
    none (0). One or two queues: none."""
    assert drain_queue(8, {0, 3, 7}) == 1
    assert drain_queue(8, {1, 2, 3, 7}) == 4
    assert drain_queue(4, {1, 2}) == 0
    assert drain_queue(4, {2}) == 1
    assert drain_queue(2, {0}) == 0
    assert drain_queue(1, set()) == 0


def test_the_ack_lane_is_the_top_queue_and_never_the_drain_lane() -> None:
    """Eight queues: 7; four: 3; four with classes 1 and 2 leave queue 3 to the ACKs and no
    drain lane."""
    assert (ack_queue(8), ack_queue(4)) == (7, 3)
    assert ack_queue(4) != drain_queue(4, {1, 2}) == 0


def test_switch_settings_carry_the_drain_lane() -> None:
    """ai_zone_small's classes (3 and 7): drain lane 1, and it survives run.json."""
    got = switch_settings(plan_addresses(load_spec(SMALL)), "rtsw1")
    assert got.drain == 1
    assert SwitchSettings.from_json(got.to_json()) == got
    old = {k: v for k, v in got.to_json().items() if k != "drain"}  # a run.json from before
    assert SwitchSettings.from_json(old).drain == 0


def test_jumbo_links_size_the_queues_and_thresholds_in_4_kib_frames() -> None:
    """SPEC with `mtu: 9000`: path MTU 4,096, so the lossless class is made of 4,154-byte
    frames. rtsw1's uplink (20 Mb/s, queue 100, XOFF/XON 40/30): queue 100 x 4,154 =
    415,400 B, XOFF 40 x 4,154 = 166,160 B, XON 30 x 4,154 = 124,620 B; the round trip's
    headroom 20e6 / 8 x 20 ms + the largest frame 9,014 = 59,014 B fits above XOFF, and the
    PG's headroom is what the queue holds above XOFF, 415,400 - 166,160 = 249,240 B."""
    plan = plan_addresses(SPEC.model_copy(update={"mtu": 9000}))
    assert (plan.path_mtu, plan.roce_frame, plan.mtu_frame) == (4096, 4154, 9014)
    up = switch_settings(plan, "rtsw1").ports[2]
    assert (up.frame, up.queue_bytes) == (4154, 415_400)
    assert (up.xoff_bytes, up.xon_bytes, up.headroom_bytes) == (166_160, 124_620, 249_240)
    th = pfc_thresholds(plan, up)
    assert (th.headroom_bytes, th.headroom_fits) == (59_014, True)
    assert SwitchSettings.from_json(switch_settings(plan, "rtsw1").to_json()) == \
        switch_settings(plan, "rtsw1")
    # BMv2 paces the uplink in those frames: 20e6 / (8 x 4,154) = 601.8 -> 602 a second.
    assert frames_per_second(20, up.frame) == 602
