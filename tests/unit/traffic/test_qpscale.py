"""QP-scaling strategies: split and round_robin, and the immediate-data convention."""

from __future__ import annotations

from collections import Counter

import pytest

from traffic.qpscale import STRATEGIES, decode_imm, encode_imm, round_robin, split, strategy


def test_split_cuts_each_message_into_one_chunk_per_qp() -> None:
    """3 messages of 10 bytes over 4 QPs: chunks 3,3,2,2 on QPs 0-3 for every message."""
    posts = split(3, 10, 4)
    assert len(posts) == 12
    for m in range(3):
        mine = [p for p in posts if p.message == m]
        assert [(p.qp_index, p.offset, p.length) for p in mine] == [
            (0, 0, 3),
            (1, 3, 3),
            (2, 6, 2),
            (3, 8, 2),
        ]
        assert all(p.chunks == 4 for p in mine)


def test_split_uses_fewer_chunks_than_qps_for_tiny_messages() -> None:
    """A 2-byte message over 4 QPs is 2 one-byte chunks; an empty one is a single post."""
    assert [(p.qp_index, p.length, p.chunks) for p in split(1, 2, 4)] == [(0, 1, 2), (1, 1, 2)]
    assert [(p.qp_index, p.length, p.chunks) for p in split(1, 0, 4)] == [(0, 0, 1)]


def test_round_robin_posts_whole_messages_on_qps_in_turn() -> None:
    """Message m goes whole to QP m mod Q."""
    posts = round_robin(6, 100, 4)
    assert [(p.message, p.qp_index, p.offset, p.length, p.chunks) for p in posts] == [
        (m, m % 4, 0, 100, 1) for m in range(6)
    ]


@pytest.mark.parametrize("name", sorted(STRATEGIES), ids=sorted(STRATEGIES))
def test_every_strategy_covers_every_byte_once(name: str) -> None:
    """Posts of a message tile it exactly, whatever the strategy."""
    posts = STRATEGIES[name](5, 1001, 3)
    for m in range(5):
        ranges = sorted((p.offset, p.length) for p in posts if p.message == m)
        assert sum(length for _, length in ranges) == 1001
        assert all(a + la == b for (a, la), (b, _) in zip(ranges, ranges[1:], strict=False))


@pytest.mark.parametrize(
    ("name", "expected"),
    [("split", {0: 8, 1: 8, 2: 8, 3: 8}), ("round_robin", {0: 2, 1: 2, 2: 2, 3: 2})],
    ids=["split", "round_robin"],
)
def test_posts_per_qp(name: str, expected: dict[int, int]) -> None:
    """8 messages over 4 QPs: split posts 8 per QP, round_robin 2 per QP."""
    assert Counter(p.qp_index for p in STRATEGIES[name](8, 4096, 4)) == expected


@pytest.mark.parametrize(
    ("messages", "size", "qps"),
    [(-1, 1, 1), (1, -1, 1), (1, 1, 0), (1, 1, 256)],
    ids=["messages", "size", "no-qps", "too-many-qps"],
)
def test_strategies_reject_bad_arguments(messages: int, size: int, qps: int) -> None:
    """Negative counts and QP counts outside 1..255 are ValueErrors."""
    with pytest.raises(ValueError):
        split(messages, size, qps)


def test_immediate_data_round_trips_message_and_chunks() -> None:
    """encode_imm/decode_imm keep the message id (24 bits) and chunk count (8 bits)."""
    assert decode_imm(encode_imm(0x123456, 4)) == (0x123456, 4)
    assert decode_imm(encode_imm((1 << 24) + 5, 1)) == (5, 1)  # ids wrap
    with pytest.raises(ValueError):
        encode_imm(1, 0)


def test_rr_is_round_robin_under_every_spelling() -> None:
    """strategy() finds rr, round_robin and round-robin; unknown names are ValueErrors."""
    assert strategy("rr") is strategy("round_robin") is strategy("round-robin") is round_robin
    assert strategy("split") is split
    with pytest.raises(ValueError, match="one of split, rr"):
        strategy("spray")


def test_round_robin_continues_from_where_the_last_step_stopped() -> None:
    """start=3 over 4 QPs: messages go to QPs 3, 0, 1."""
    assert [p.qp_index for p in round_robin(3, 10, 4, start=3)] == [3, 0, 1]
