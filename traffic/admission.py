"""Receiver-driven admission: clear-to-send grants, as Meta's collective library does it.

Meta's paper (SIGCOMM 2024, section on congestion control) replaces DCQCN
with admission in the collective library: the sender's proxy may post an
RDMA WRITE only after the receiver sent it a clear-to-send (CTS) carrying
the size and the memory location to write to; the receiver issues a CTS
whenever one of its channel buffers is free again, so the bytes in flight
between two GPUs are at most channels x channel buffer, and the CTS
packets ride a high-priority queue.

Here a connection's receiver owns ``channels x slots`` buffer slots of
``channel_buffer / slots`` bytes each (NCCL splits each channel's buffer
into NCCL_STEPS slots the same way). For each step it expects bytes on a
connection it grants free slots, each grant one message of at most a slot;
a message that completes (all its chunks) frees its slot, and the next
grant goes out. A grant is a small UD SEND Only in the control class
(``traffic.frames.Flow.ud_send``) to the sender's first QP of the connection,
payload ``CTS`` (``encode_cts``/``decode_cts``): step, slot, sequence
number, size, virtual address, R_Key. Grants are not acknowledged: one not
used within ``cts_timeout`` is sent again with the same sequence number,
and the sender ignores sequence numbers it has seen.

Defaults (``Admission`` in ``traffic.schema``): 2 channels of 64 KiB in 4
slots: grants of 16 KiB (16 packets at the default 1 KiB MTU) and at most
128 KiB in flight per pair. NCCL's default is a 4 MiB buffer per channel
in 8 slots; the emulated links are 10^3-10^4 times slower than 400 Gb/s,
and the emulated messages 10^2-10^3 times smaller than production ones, so
the budget keeps NCCL's proportion to the message (a few slots per message)
while covering the round trip of a fabric of Python switches (milliseconds
at 100 Mb/s: 12.5 KB per ms) so that one pair alone still runs at line rate.

Names: ``Cts``, ``CTS_QKEY``, ``encode_cts``, ``decode_cts``, ``Granter``,
``GrantBook``.
"""

from __future__ import annotations

import math
import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["CTS_QKEY", "Cts", "GrantBook", "Granter", "decode_cts", "encode_cts"]

CTS_QKEY = 0x43545300  # "CTS\0": the Q_Key of grant datagrams
_MAGIC = b"CTS1"
_CTS = struct.Struct("!4sHHIIQI")
GRANT_VA_BASE = 0x7F00_0000_0000  # where the receiver's slots live (any address works)


@dataclass(frozen=True, slots=True)
class Cts:
    """One clear-to-send grant: write ``size`` bytes of step ``step`` at ``va``."""

    step: int
    slot: int
    seq: int
    size: int
    va: int
    rkey: int


def encode_cts(cts: Cts) -> bytes:
    """The payload of a grant datagram."""
    return _CTS.pack(_MAGIC, cts.step, cts.slot, cts.seq & 0xFFFFFFFF, cts.size, cts.va, cts.rkey)


def decode_cts(payload: bytes | memoryview) -> Cts | None:
    """A grant from a datagram payload, or None if it is not one."""
    if len(payload) < _CTS.size:
        return None
    magic, step, slot, seq, size, va, rkey = _CTS.unpack_from(payload)
    if magic != _MAGIC:
        return None
    return Cts(step=step, slot=slot, seq=seq, size=size, va=va, rkey=rkey)


@dataclass(slots=True)
class _Outstanding:
    cts: Cts
    sent: float
    resends: int = 0


class Granter:
    """The receiver side of one connection: slots, grants per step, re-sends."""

    def __init__(
        self,
        *,
        channels: int,
        channel_buffer: int,
        slots: int,
        rkey: int,
        cts_timeout: float,
        send: Callable[[Cts], None],
    ) -> None:
        if channels < 1 or slots < 1 or channel_buffer < slots:
            raise ValueError("admission needs channels >= 1, slots >= 1, channel_buffer >= slots")
        self.slot_size = channel_buffer // slots
        self._free: deque[int] = deque(range(channels * slots))
        self._rkey = rkey
        self._timeout = cts_timeout
        self._send = send
        self._seq = 0
        self._step = -1
        self._left = 0  # bytes of the current step not granted yet
        self._out: dict[int, _Outstanding] = {}  # slot -> grant in use
        self.grants_sent = 0
        self.grants_resent = 0
        self.max_in_flight = 0  # largest sum of outstanding grant sizes seen

    def open_step(self, step: int, expected: int, now: float) -> None:
        """Start granting ``expected`` bytes for ``step``."""
        self._step = step
        self._left = expected
        self._grant(now)

    def slot_of(self, va: int) -> int:
        """The receive slot a grant's virtual address `va` points into."""
        return (va - GRANT_VA_BASE) // self.slot_size

    def completed(self, step: int, va: int, now: float) -> None:
        """A message of ``step`` that started at ``va`` arrived whole: its slot is free."""
        slot = self.slot_of(va)
        grant = self._out.get(slot)
        if grant is None or grant.cts.step != step:
            return
        del self._out[slot]
        self._free.append(slot)
        self._grant(now)

    def _grant(self, now: float) -> None:
        while self._left > 0 and self._free:
            slot = self._free.popleft()
            size = min(self.slot_size, self._left)
            self._left -= size
            cts = Cts(
                step=self._step,
                slot=slot,
                seq=self._seq,
                size=size,
                va=GRANT_VA_BASE + slot * self.slot_size,
                rkey=self._rkey,
            )
            self._seq += 1
            self._out[slot] = _Outstanding(cts=cts, sent=now)
            self.grants_sent += 1
            self._send(cts)
        in_flight = sum(g.cts.size for g in self._out.values())
        self.max_in_flight = max(self.max_in_flight, in_flight)

    def next_event(self) -> float:
        """When the oldest outstanding grant times out (inf: none outstanding)."""
        return min((g.sent + self._timeout for g in self._out.values()), default=math.inf)

    def poll(self, now: float) -> None:
        """Send again the grants that no message used within the timeout."""
        for grant in self._out.values():
            if now >= grant.sent + self._timeout:
                grant.sent = now
                grant.resends += 1
                self.grants_resent += 1
                self._send(grant.cts)


class GrantBook:
    """The sender side of one connection: grants received, by step, each used once."""

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self._by_step: dict[int, deque[Cts]] = {}
        self.received = 0
        self.duplicates = 0

    def add(self, cts: Cts) -> bool:
        """Record a grant; False if its sequence number was seen already."""
        if cts.seq in self._seen:
            self.duplicates += 1
            return False
        self._seen.add(cts.seq)
        self.received += 1
        self._by_step.setdefault(cts.step, deque()).append(cts)
        return True

    def take(self, step: int) -> Cts | None:
        """The oldest unused grant for ``step``, or None."""
        queue = self._by_step.get(step)
        if not queue:
            return None
        return queue.popleft()
