"""Queue-pair scaling: how a collective library spreads messages over QPs.

Meta's SIGCOMM 2024 paper ("RDMA over Ethernet for Distributed AI Training
at Meta Scale") raises the entropy E-ECMP can hash by posting one flow's
traffic on several QPs, in one of two ways:

- ``split``: every message is cut into one chunk per QP, each chunk posted
  as its own RDMA WRITE; a message completes when all its chunks have.
- ``round_robin``: whole messages go to QP 0, 1, ..., Q-1, 0, ... in turn
  (the better choice for production message sizes, per the paper); a
  collective keeps its place in the turn from one step to the next
  (``start``).

A strategy maps (messages, size, number of QPs) to an ordered list of
``Post`` (one RDMA WRITE each). ``STRATEGIES`` names them for CLIs and
JSON: ``split``, ``rr`` (also spelt ``round_robin``); ``strategy(name)``
looks one up by any of its spellings.

Every post carries immediate data saying which message it belongs to and
how many posts make that message up (``encode_imm``/``decode_imm``), so a
receiver counts whole messages without knowing the strategy: the way
collective libraries signal completion with RDMA WRITE-with-immediate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "MAX_QPS",
    "STRATEGIES",
    "Post",
    "decode_imm",
    "encode_imm",
    "round_robin",
    "split",
    "strategy",
]

# The immediate data holds the chunk count in 8 bits and the message id in 24.
MAX_QPS = 255
_MESSAGE_MOD = 1 << 24


@dataclass(frozen=True, kw_only=True)
class Post:
    """One RDMA WRITE a strategy asks for: a byte range of one message on one QP."""

    message: int  # application message index, 0-based
    qp_index: int  # index into the sender's list of destination QPs
    offset: int  # first byte of the message this post carries
    length: int
    chunks: int  # posts that make up the message


def _check(messages: int, size: int, qps: int) -> None:
    if messages < 0:
        raise ValueError(f"messages={messages!r}: must be >= 0")
    if size < 0:
        raise ValueError(f"size={size!r}: must be >= 0")
    if not 1 <= qps <= MAX_QPS:
        raise ValueError(f"qps={qps!r}: must be 1..{MAX_QPS}")


def split(messages: int, size: int, qps: int) -> list[Post]:
    """Cut each message into one near-equal chunk per QP (fewer if size < qps)."""
    _check(messages, size, qps)
    chunks = max(1, min(qps, size))
    base, extra = divmod(size, chunks)
    posts = []
    for m in range(messages):
        offset = 0
        for q in range(chunks):
            length = base + (1 if q < extra else 0)
            posts.append(Post(message=m, qp_index=q, offset=offset, length=length, chunks=chunks))
            offset += length
    return posts


def round_robin(messages: int, size: int, qps: int, start: int = 0) -> list[Post]:
    """Post message m whole on QP (start + m) mod Q."""
    _check(messages, size, qps)
    return [
        Post(message=m, qp_index=(start + m) % qps, offset=0, length=size, chunks=1)
        for m in range(messages)
    ]


STRATEGIES: dict[str, Callable[[int, int, int], list[Post]]] = {
    "split": split,
    "round_robin": round_robin,
    "rr": round_robin,
}


def strategy(name: str) -> Callable[[int, int, int], list[Post]]:
    """The strategy called ``name`` (``split``, ``rr``, ``round_robin``, ``round-robin``)."""
    found = STRATEGIES.get(name.replace("-", "_"))
    if found is None:
        raise ValueError(f"strategy {name!r}: one of split, rr (round_robin)")
    return found


def encode_imm(message: int, chunks: int) -> int:
    """Immediate data for a post of ``message`` made of ``chunks`` posts."""
    if not 1 <= chunks <= MAX_QPS:
        raise ValueError(f"chunks={chunks!r}: must be 1..{MAX_QPS}")
    return (message % _MESSAGE_MOD) << 8 | chunks


def decode_imm(imm: int) -> tuple[int, int]:
    """(message, chunks) from immediate data made by ``encode_imm``."""
    return imm >> 8, imm & 0xFF
