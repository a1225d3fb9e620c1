"""PFC PAUSE frames: build, parse, pause durations and per-priority pause state."""

from __future__ import annotations

import pytest
from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
from scapy.layers.l2 import Ether

from traffic.pfc import PFC_DST_MAC, PauseState, parse_pfc, pfc_frame, quanta_seconds

SRC = "02:00:00:00:00:09"


def test_pfc_frame_has_the_8021qbb_wire_layout() -> None:
    """EtherType 0x8808, opcode 0x0101, enable vector bit p, timer p at 18 + 2p."""
    data = bytes(pfc_frame(SRC, {3: 0xFFFF, 0: 5}))
    assert data[:6] == bytes.fromhex("0180c2000001")
    assert data[12:16] == bytes.fromhex("88080101")
    assert data[16:18] == bytes.fromhex("0009")  # priorities 0 and 3
    assert data[18:20] == bytes.fromhex("0005") and data[24:26] == bytes.fromhex("ffff")
    assert len(data) == 60  # padded to the minimum frame


def test_pfc_frame_round_trips_through_scapy_and_parse_pfc() -> None:
    """scapy dissects our frame as class-based flow control; parse_pfc reads it back."""
    data = bytes(pfc_frame(SRC, {3: 1000, 5: 0}))
    pkt = Ether(data)
    assert pkt.dst == PFC_DST_MAC
    assert pkt[MACControlClassBasedFlowControl].c3_pause_time == 1000
    assert parse_pfc(data) == {3: 1000, 5: 0}


@pytest.mark.parametrize(
    "frame",
    [
        bytes(Ether(dst=PFC_DST_MAC) / MACControlPause(pause_time=10)),
        bytes(Ether(type=0x0800) / (b"x" * 50)),
        b"\x01\x80",
    ],
    ids=["8023x-pause", "not-mac-control", "short"],
)
def test_parse_pfc_returns_none_for_other_frames(frame: bytes) -> None:
    """An 802.3x global PAUSE, other traffic and runts are not PFC."""
    assert parse_pfc(frame) is None


@pytest.mark.parametrize(
    ("quanta", "bps", "seconds"),
    [(0xFFFF, 10e9, 0xFFFF * 512 / 10e9), (1, 100e9, 5.12e-9), (0, 1e9, 0.0)],
    ids=["max-at-10g", "one-at-100g", "xon"],
)
def test_quanta_are_512_bit_times(quanta: int, bps: float, seconds: float) -> None:
    """One quantum is 512 bit-times at the link speed."""
    assert quanta_seconds(quanta, bps) == pytest.approx(seconds)


def test_pause_state_pauses_only_the_named_priority() -> None:
    """A PAUSE for priority 3 stops 3 until the quanta run out, and nothing else."""
    state = PauseState(link_bps=1e6)  # 1 quantum = 512 us
    state.apply({3: 100}, now=10.0)
    assert state.is_paused(3, 10.0) and state.is_paused(3, 10.05)
    assert not state.is_paused(3, 10.0 + 100 * 512e-6 + 1e-9)
    assert not state.is_paused(2, 10.0)
    assert state.frames == 1


def test_pause_state_refresh_replaces_and_xon_resumes() -> None:
    """A later frame replaces the deadline; quanta 0 resumes at once."""
    state = PauseState(link_bps=1e6)
    state.apply({3: 1000}, now=0.0)
    state.apply({3: 10}, now=0.001)
    assert state.paused_until(3) == pytest.approx(0.001 + 10 * 512e-6)
    state.apply({3: 0}, now=0.002)
    assert not state.is_paused(3, 0.002)


def test_pfc_frame_rejects_bad_priority_and_quanta() -> None:
    """Priorities are 0..7 and quanta 16 bits."""
    with pytest.raises(ValueError, match="priority"):
        pfc_frame(SRC, {8: 1})
    with pytest.raises(ValueError, match="quanta"):
        pfc_frame(SRC, {1: 1 << 16})


def test_paused_seconds_counts_refreshes_once_and_stops_at_xon() -> None:
    """PAUSE 0.1 s at t=0, refreshed at t=0.05 for 0.1 s, XON at t=0.12: paused 0.12 s."""
    state = PauseState(10e6)
    q = int(0.1 * 10e6 / 512)  # 1953 quanta: 0.0999936 s at 10 Mb/s
    state.apply({3: q}, 0.0)
    state.apply({3: q}, 0.05)
    assert state.paused_seconds(3, 0.07) == pytest.approx(0.07)
    state.apply({3: 0}, 0.12)
    assert state.paused_seconds(3, 1.0) == pytest.approx(0.12)
    assert state.paused_seconds(4, 1.0) == 0.0


def test_paused_seconds_ends_when_the_quanta_run_out() -> None:
    """A 1000-quanta PAUSE at 10 Mb/s lasts 51.2 ms, however late it is read."""
    state = PauseState(10e6)
    state.apply({3: 1000}, 2.0)
    assert state.paused_seconds(3, 10.0) == pytest.approx(0.0512)
