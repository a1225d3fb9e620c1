"""Receiver accounting: ICRC and PSN checks, reassembly, message completion (no root)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from traffic.receiver import Receiver
from traffic.sender import Frame

FramesFor = Callable[..., list[Frame]]
DST_IP = "10.9.0.2"


def _feed(frames: list[bytes], ip: str | None = DST_IP) -> dict[str, object]:
    receiver = Receiver(ip)
    for k, data in enumerate(frames):
        receiver.feed(data, ts=100.0 + k * 1e-3)
    return receiver.report()


@pytest.mark.parametrize("strategy", ["split", "round_robin"], ids=["split", "round_robin"])
def test_all_messages_complete_when_nothing_is_lost(frames_for: FramesFor, strategy: str) -> None:
    """Every packet of every QP arrives: all messages complete, no errors."""
    frames = frames_for(strategy=strategy, messages=6)
    report = _feed([f.data for f in frames])
    assert report["packets"] == len(frames)
    assert report["messages_complete"] == 6 and report["messages_incomplete"] == 0
    assert report["writes_complete"] == (24 if strategy == "split" else 6)
    for key in ("icrc_errors", "psn_errors", "sequence_errors", "length_errors", "malformed"):
        assert report[key] == 0, key
    assert report["payload_bytes"] == 6 * 3000
    assert report["first_ts"] == 100.0 and report["last_ts"] == pytest.approx(
        100 + (len(frames) - 1) * 1e-3
    )
    assert report["message_time_us"]["count"] == 6  # type: ignore[index]


def test_per_qp_counts_follow_round_robin(frames_for: FramesFor) -> None:
    """Round-robin of 8 messages over 4 QPs completes 2 writes on each QP."""
    report = _feed([f.data for f in frames_for(strategy="round_robin", messages=8)])
    per_qp = report["per_qp"]
    assert {qp: c["writes"] for qp, c in per_qp.items()} == {"17": 2, "18": 2, "19": 2, "20": 2}  # type: ignore[union-attr]
    assert all(c["first_psn"] == 0 and c["psn_errors"] == 0 for c in per_qp.values())  # type: ignore[union-attr]


def test_a_lost_packet_is_a_psn_error_and_its_message_never_completes(
    frames_for: FramesFor,
) -> None:
    """Dropping a Middle packet: one PSN error, that message stays incomplete, others finish."""
    frames = frames_for(strategy="round_robin", qps=(17,), messages=3)  # 3 packets per message
    kept = [f.data for k, f in enumerate(frames) if k != 1]
    report = _feed(kept)
    assert report["psn_errors"] == 1
    assert report["messages_complete"] == 2
    assert report["sequence_errors"] == 0  # the gap explains the orphaned Last


def test_a_lost_first_packet_does_not_count_as_a_sequence_error(frames_for: FramesFor) -> None:
    """Dropping a First packet is seen as a PSN gap, not as an opcode out of place."""
    frames = frames_for(strategy="round_robin", qps=(17,), messages=2)
    report = _feed([f.data for k, f in enumerate(frames) if k != 3])
    assert (report["psn_errors"], report["sequence_errors"], report["messages_complete"]) == (
        1,
        0,
        1,
    )


def test_reordered_packets_are_psn_errors(frames_for: FramesFor) -> None:
    """Swapping two packets of one QP breaks PSN order."""
    data = [f.data for f in frames_for(strategy="round_robin", qps=(17,), messages=1)]
    data[0], data[1] = data[1], data[0]
    report = _feed(data)
    assert report["psn_errors"] >= 1  # type: ignore[operator]
    assert report["messages_complete"] == 0


def test_a_corrupted_packet_is_an_icrc_error_and_is_dropped(frames_for: FramesFor) -> None:
    """A flipped payload bit fails the ICRC; the packet is dropped so the next one shows a gap."""
    data = [bytearray(f.data) for f in frames_for(strategy="round_robin", qps=(17,), messages=2)]
    data[1][-10] ^= 0xFF
    report = _feed([bytes(d) for d in data])
    assert report["icrc_errors"] == 1
    assert report["psn_errors"] == 1
    assert report["messages_complete"] == 1
    assert report["per_qp"]["17"]["icrc_errors"] == 1  # type: ignore[index]


def test_packets_to_other_addresses_are_ignored(frames_for: FramesFor) -> None:
    """A receiver bound to one IP does not count RoCE traffic to another."""
    report = _feed([f.data for f in frames_for()], ip="10.9.0.99")
    assert report["packets"] == 0


def test_malformed_rocev2_is_counted_not_fatal(frames_for: FramesFor) -> None:
    """A truncated RoCE frame to our IP counts as malformed; the rest still complete."""
    frames = [f.data for f in frames_for(strategy="round_robin", qps=(17,), messages=1, size=100)]
    report = _feed([frames[0][:50], *frames])
    assert report["malformed"] == 1 and report["messages_complete"] == 1


def test_split_message_completes_only_when_every_chunk_has(frames_for: FramesFor) -> None:
    """With one QP's chunk missing, a split message stays incomplete."""
    frames = frames_for(strategy="split", messages=1, size=400)  # one packet per QP
    report = _feed([f.data for f in frames if f.qp != 19])
    assert report["writes_complete"] == 3
    assert report["messages_complete"] == 0 and report["messages_incomplete"] == 1
