"""Reliable Connection for RDMA WRITE (IBTA vol 1 §9.7): the requester and responder of one QP.

No sockets and no clock of their own: the NIC (``traffic.nic``) feeds them
decoded packets and the time, asks the requester for its next packet when
the link may carry one, and sends what the responder answers. So the whole
protocol runs the same over raw sockets and in memory (the tests).

Requester (the send side of a QP):

- Work requests (``Wqe``: one RDMA WRITE, with or without immediate) get
  consecutive PSNs: ``ceil(length / path MTU)`` packets each (one for an
  empty WRITE), First/Middle.../Last or Only. PSNs are 24-bit
  and wrap; inside, sequence numbers are unbounded integers and the PSN is
  ``(initial PSN + seq) mod 2**24``.
- At most ``window`` packets are outstanding (not yet acknowledged), as a
  NIC bounds its retransmission state: 128, the soft-RoCE driver's
  ``RXE_MAX_UNACKED_PSNS``.
- AckReq is set on the last packet of every WRITE, on every ``ack_every``-th
  PSN, on the packet that fills the window and on the first packet after a
  rewind; the responder answers those with one cumulative ACK. ``ack_every``
  is 16 by default: one small ACK per 16 data packets (~6% more packets, for
  a Python receiver the cost that matters) keeps eight ACKs in flight per
  window, so a late ACK never drains the pipe; the soft-RoCE driver asks
  every 64 (``RXE_MAX_PKT_PER_ACK``) with the same window.
- An ACK acknowledges its PSN and all before it; ACKs for PSNs already
  acknowledged or never sent are ignored ("ghost" ACKs).
- A NAK-PSN-sequence-error for PSN p acknowledges everything before p and
  rewinds transmission to p: go-back-N, everything after p is sent again.
  NAK invalid request / remote access / remote operational error are fatal
  for the QP (it moves to the error state).
- The local ACK timeout runs while packets are outstanding and
  restarts on every ACK that acknowledges something new; when it expires
  the requester rewinds to the oldest unacknowledged PSN and retries, at
  most ``retry_count`` (7, as NCCL_IB_RETRY_CNT) times without progress,
  then the QP fails ("retry exceeded"). The default timeout is
  4.096 us x 2**15 = 134 ms: an emulated fabric of Python switches has
  round trips of milliseconds, and a spurious timeout costs a full
  go-back-N.

Responder (the receive side):

- Expected PSN (ePSN) and message sequence number (MSN). A packet with the
  ePSN is checked (opcode order: First/Only when no message is open,
  Middle/Last inside one; payload exactly the path MTU on First/Middle,
  1..MTU on Last, 0..MTU on Only; total = the RETH DMA length; R_Key),
  its bytes compared with the pattern that belongs at its address
  (``traffic.frames.pattern``), and the ePSN advances. A Last/Only completes
  the WRITE: MSN + 1 and ``on_write``.
- A PSN ahead of the ePSN (a packet was lost) is dropped and answered with
  one NAK-PSN-sequence-error carrying the ePSN; no further NAK until the
  ePSN arrives (one NAK per sequence error).
- A PSN behind the ePSN (within 2**23: the duplicate region) is a
  duplicate: not placed again; acknowledged if it asks for it, so that a
  requester whose ACK was lost learns where the responder is.
- ACKs are coalesced: a packet with AckReq marks an ACK due; the NIC sends
  one ACK (the last in-order PSN, the MSN) per batch of received frames.
- Protocol errors are answered with NAK invalid request (0x61) or remote
  access error (0x62) and counted; the packet is dropped.

Names: ``RcOptions``, ``Wqe``, ``Requester``, ``Responder``, ``WriteDone``,
``RcCounters``, ``QpError``, ``PSN_MOD``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from traffic.errors import TrafficError
from traffic.frames import (
    WRITE_FIRST,
    WRITE_LAST,
    WRITE_LAST_IMM,
    WRITE_MIDDLE,
    WRITE_ONLY,
    WRITE_ONLY_IMM,
    Flow,
    Rx,
    immdt,
    pattern,
    reth,
)
from traffic.roce import IB_MTUS, Syndrome

__all__ = [
    "PSN_MOD",
    "QpError",
    "RcCounters",
    "RcOptions",
    "Requester",
    "Responder",
    "Wqe",
    "WriteDone",
]

PSN_MOD = 1 << 24
_HALF = 1 << 23
_FIRST_OR_ONLY = frozenset({WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM})
_MIDDLE_OR_LAST = frozenset({WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM})
_ENDS = frozenset({WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM})
_NAK_NAMES = {
    Syndrome.NAK_INVALID_REQUEST: "invalid request",
    Syndrome.NAK_REMOTE_ACCESS_ERROR: "remote access error",
    Syndrome.NAK_REMOTE_OPERATIONAL_ERROR: "remote operational error",
    Syndrome.NAK_INVALID_RD_REQUEST: "invalid RD request",
}


class QpError(TrafficError):
    """A QP went to the error state (retries exhausted, a fatal NAK)."""


def _diff(a: int, b: int) -> int:
    """Signed distance a - b between two PSNs, in [-2**23, 2**23)."""
    return (a - b + _HALF) % PSN_MOD - _HALF


@dataclass(frozen=True, kw_only=True)
class RcOptions:
    """Transport parameters shared by both ends of every QP (see the module docstring)."""

    path_mtu: int = 1024
    ack_every: int = 16
    window: int = 128
    ack_timeout: float = 4.096e-6 * 2**15  # seconds: IB "local ACK timeout" exponent 15
    retry_count: int = 7

    def __post_init__(self) -> None:
        if self.path_mtu not in IB_MTUS:
            raise ValueError(f"path_mtu={self.path_mtu!r}: one of {IB_MTUS}")
        if not 1 <= self.ack_every <= self.window:
            raise ValueError(f"ack_every={self.ack_every!r}: must be 1..window ({self.window})")
        if not 1 <= self.window < _HALF:
            raise ValueError(f"window={self.window!r}: must be 1..2**23-1")
        if self.ack_timeout <= 0:
            raise ValueError(f"ack_timeout={self.ack_timeout!r}: must be positive")
        if self.retry_count < 0:
            raise ValueError(f"retry_count={self.retry_count!r}: must be >= 0")


@dataclass(slots=True)
class RcCounters:
    """Per-QP transport counters (the NIC sums them)."""

    packets_sent: int = 0  # data packets, first transmissions and retransmissions
    payload_bytes_sent: int = 0
    retransmitted: int = 0
    acks_received: int = 0
    stale_acks: int = 0  # ACKs/NAKs for PSNs acknowledged already or never sent
    naks_received: int = 0
    timeouts: int = 0
    writes_completed: int = 0  # requester: WRITEs fully acknowledged
    packets_received: int = 0  # in-order data packets placed
    payload_bytes_received: int = 0
    duplicates: int = 0
    out_of_sequence: int = 0
    naks_sent: int = 0
    acks_sent: int = 0
    protocol_errors: int = 0  # NAKed: opcode order, lengths, R_Key
    data_errors: int = 0  # placed bytes that differ from the pattern for their address
    writes_received: int = 0


class Wqe:
    """One posted RDMA WRITE: ``length`` bytes to remote ``va`` (``tag`` is the caller's)."""

    __slots__ = ("first", "imm", "length", "npkts", "posted", "rkey", "tag", "va")

    def __init__(
        self, *, tag: Any, va: int, rkey: int, length: int, imm: int | None, path_mtu: int
    ) -> None:
        if length < 0 or length >= 1 << 31:
            raise ValueError(f"length={length!r}: must be 0..2**31-1")
        self.tag = tag
        self.va = va
        self.rkey = rkey
        self.length = length
        self.imm = imm
        self.npkts = max(1, -(-length // path_mtu))
        self.first = 0
        self.posted = 0.0


class Requester:
    """The send queue of one RC QP: RDMA WRITEs out, ACK/NAK in, go-back-N on loss."""

    def __init__(
        self,
        flow: Flow,
        *,
        psn: int,
        options: RcOptions,
        on_complete: Callable[[Wqe, float], None],
        name: str = "",
    ) -> None:
        self.flow = flow
        self.options = options
        self.name = name or f"QP to {flow.dest_qp:#x}"
        self.counters = RcCounters()
        self.error: str | None = None
        self._on_complete = on_complete
        self._psn0 = psn % PSN_MOD
        self._mtu = options.path_mtu
        self._window = options.window
        self._ack_every = options.ack_every
        self._timeout = options.ack_timeout
        self._wqes: deque[Wqe] = deque()  # posted and not fully acknowledged, in PSN order
        self._cur = 0  # index in _wqes of the WQE holding _next
        self._hi = 0  # next sequence number a new WQE gets
        self._next = 0  # next sequence number to transmit
        self._una = 0  # oldest unacknowledged
        self._sent_hi = 0  # one past the highest ever transmitted
        self._deadline: float | None = None
        self._retries = 0
        self._ackreq_next = False

    # -- posting and transmitting

    def post(self, wqe: Wqe, now: float) -> None:
        """Queue one WRITE; its packets get the next PSNs."""
        if self.error is not None:
            raise QpError(f"{self.name}: cannot post on a QP in error: {self.error}")
        wqe.first = self._hi
        wqe.posted = now
        self._hi += wqe.npkts
        self._wqes.append(wqe)

    @property
    def outstanding(self) -> int:
        """Packets sent and not yet acknowledged."""
        return self._sent_hi - self._una

    @property
    def idle(self) -> bool:
        """Nothing posted is left unacknowledged."""
        return self._una == self._hi

    def has_work(self) -> bool:
        """Whether a packet may be transmitted now (work left, window open, QP healthy)."""
        return (
            self._next < self._hi and self._next - self._una < self._window and self.error is None
        )

    def next_frame(self, now: float) -> bytes | None:
        """The next packet to transmit (a first transmission or a retransmission), or None."""
        seq = self._next
        if seq >= self._hi or seq - self._una >= self._window or self.error is not None:
            return None
        wqes = self._wqes
        w = wqes[self._cur]
        while seq >= w.first + w.npkts:
            self._cur += 1
            w = wqes[self._cur]
        i = seq - w.first
        last = i == w.npkts - 1
        offset = i * self._mtu
        n = min(self._mtu, w.length - offset)
        ext = b""
        if i == 0:
            ext = reth(w.va, w.rkey, w.length)
            if last:
                opcode = WRITE_ONLY if w.imm is None else WRITE_ONLY_IMM
            else:
                opcode = WRITE_FIRST
        elif last:
            opcode = WRITE_LAST if w.imm is None else WRITE_LAST_IMM
        else:
            opcode = WRITE_MIDDLE
        if last and w.imm is not None:
            ext += immdt(w.imm)
        ackreq = (
            last
            or self._ackreq_next
            or (seq + 1) % self._ack_every == 0
            or seq + 1 - self._una >= self._window
        )
        self._ackreq_next = False
        frame = self.flow.frame(
            opcode,
            (self._psn0 + seq) % PSN_MOD,
            ackreq=ackreq,
            ext=ext,
            payload=pattern(w.va + offset, n) if n > 0 else b"",
        )
        c = self.counters
        c.packets_sent += 1
        c.payload_bytes_sent += max(n, 0)
        if seq < self._sent_hi:
            c.retransmitted += 1
        else:
            self._sent_hi = seq + 1
        if self._deadline is None:
            self._deadline = now + self._timeout
        self._next = seq + 1
        return frame

    # -- acknowledgements

    def on_ack(self, rx: Rx, now: float) -> None:
        """Handle an ACKNOWLEDGE (ACK, NAK or RNR NAK) addressed to this QP."""
        if self.error is not None:
            return
        syndrome = rx.syndrome
        kind = syndrome & 0x60
        d = _diff(rx.psn, (self._psn0 + self._una) % PSN_MOD)
        c = self.counters
        if kind == Syndrome.ACK:
            acked = self._una + d  # the last PSN this ACK covers
            if d < 0 or acked >= self._sent_hi:
                c.stale_acks += 1
                return
            c.acks_received += 1
            self._advance(acked + 1, now)
        elif syndrome == Syndrome.NAK_PSN_SEQUENCE_ERROR or kind == Syndrome.RNR_NAK:
            expected = self._una + d  # the PSN the responder waits for
            if d < 0 or expected >= self._sent_hi:
                c.stale_acks += 1
                return
            c.naks_received += 1
            self._advance(expected, now)
            if self._next > expected:
                self._rewind(expected)
            self._deadline = now + self._timeout
        elif kind == Syndrome.NAK:
            c.naks_received += 1
            what = _NAK_NAMES.get(syndrome, f"NAK {syndrome:#04x}")
            self._fail(f"{self.name}: the responder answered PSN {rx.psn:#x} with {what}")

    def _advance(self, una: int, now: float) -> None:
        """Everything before ``una`` is acknowledged: complete WRITEs, restart the timer."""
        if una <= self._una:
            return
        self._una = una
        self._retries = 0
        wqes = self._wqes
        while wqes and wqes[0].first + wqes[0].npkts <= una:
            w = wqes.popleft()
            self._cur = max(0, self._cur - 1)
            self.counters.writes_completed += 1
            self._on_complete(w, now)
        if self._next < una:
            self._rewind(una)
        self._deadline = now + self._timeout if self._una < self._sent_hi else None

    def _rewind(self, seq: int) -> None:
        """Transmit again from ``seq`` (go-back-N)."""
        self._next = seq
        self._ackreq_next = True
        self._cur = 0
        for i, w in enumerate(self._wqes):
            if w.first <= seq < w.first + w.npkts:
                self._cur = i
                break

    # -- timers

    def next_deadline(self) -> float | None:
        """When the local ACK timer expires, if it runs."""
        return self._deadline if self.error is None else None

    def poll(self, now: float) -> None:
        """Expire the local ACK timer: rewind to the oldest unacknowledged PSN, or fail."""
        if self._deadline is None or now < self._deadline or self.error is not None:
            return
        if self._una >= self._sent_hi:
            self._deadline = None
            return
        self.counters.timeouts += 1
        self._retries += 1
        if self._retries > self.options.retry_count:
            psn = (self._psn0 + self._una) % PSN_MOD
            self._fail(
                f"{self.name}: transport retry count exceeded: {self.options.retry_count} "
                f"local ACK timeouts of {self._timeout * 1e3:g} ms without progress at PSN {psn:#x}"
            )
            return
        self._rewind(self._una)
        self._deadline = now + self._timeout

    def _fail(self, reason: str) -> None:
        self.error = reason
        self._deadline = None


@dataclass(frozen=True, slots=True)
class WriteDone:
    """One RDMA WRITE the responder placed completely."""

    va: int
    length: int
    imm: int | None
    start: float  # arrival of its first packet
    end: float  # arrival of its last packet


class Responder:
    """The receive side of one RC QP: place WRITEs in PSN order, answer with ACK/NAK."""

    def __init__(
        self,
        flow: Flow,
        *,
        psn: int,
        options: RcOptions,
        on_write: Callable[[WriteDone], None],
        emit: Callable[[bytes], None],
        rkey: int | None = None,
    ) -> None:
        self.flow = flow  # towards the requester's QP: ACKs and NAKs
        self.counters = RcCounters()
        self.ack_due = False
        self._emit = emit
        self._on_write = on_write
        self._mtu = options.path_mtu
        self._rkey = rkey
        self._epsn = psn % PSN_MOD
        self._msn = 0
        self._nak_sent = False
        self._open = False  # a WRITE's First arrived, its Last not yet
        self._va = 0
        self._dlen = 0
        self._got = 0
        self._start = 0.0

    @property
    def expected_psn(self) -> int:
        """The PSN the responder expects next."""
        return self._epsn

    @property
    def msn(self) -> int:
        """The message sequence number: WRITEs received whole, mod 2**24."""
        return self._msn

    def receive(self, rx: Rx, now: float) -> None:
        """Handle one RDMA WRITE packet addressed to this QP (ICRC already checked)."""
        c = self.counters
        d = _diff(rx.psn, self._epsn)
        if d > 0:
            c.out_of_sequence += 1
            if not self._nak_sent:
                self._nak_sent = True
                self._nak(Syndrome.NAK_PSN_SEQUENCE_ERROR)
            return
        if d < 0:
            c.duplicates += 1
            if rx.ackreq:
                self.ack_due = True
            return
        op = rx.opcode
        n = len(rx.payload)
        if self._open:
            ok = op in _MIDDLE_OR_LAST
        else:
            ok = op in _FIRST_OR_ONLY
        if ok:
            if op == WRITE_FIRST or op == WRITE_MIDDLE:
                ok = n == self._mtu
            elif op in _ENDS:
                ok = (0 if op in _FIRST_OR_ONLY else 1) <= n <= self._mtu
        if ok and op in _FIRST_OR_ONLY:
            if self._rkey is not None and rx.rkey != self._rkey:
                c.protocol_errors += 1
                self._nak(Syndrome.NAK_REMOTE_ACCESS_ERROR)
                return
            self._va, self._dlen, self._got, self._start = rx.va, rx.dlen, 0, now
        if ok and op in _ENDS:
            ok = self._got + n == self._dlen
        elif ok:
            ok = self._got + n < self._dlen
        if not ok:
            c.protocol_errors += 1
            self._open = False
            self._nak(Syndrome.NAK_INVALID_REQUEST)
            return
        if n and rx.payload != pattern(self._va + self._got, n):
            c.data_errors += 1
        self._got += n
        self._epsn = (self._epsn + 1) % PSN_MOD
        self._nak_sent = False
        c.packets_received += 1
        c.payload_bytes_received += n
        if op in _ENDS:
            self._open = False
            self._msn = (self._msn + 1) % PSN_MOD
            c.writes_received += 1
            self._on_write(WriteDone(self._va, self._dlen, rx.imm, self._start, now))
        else:
            self._open = True
        if rx.ackreq:
            self.ack_due = True

    def send_ack(self) -> bool:
        """Send the coalesced ACK if one is due (the last in-order PSN and the MSN)."""
        if not self.ack_due:
            return False
        self.ack_due = False
        self.counters.acks_sent += 1
        self._emit(self.flow.ack((self._epsn - 1) % PSN_MOD, Syndrome.ACK_UNLIMITED, self._msn))
        return True

    def _nak(self, syndrome: int) -> None:
        self.counters.naks_sent += 1
        self._emit(self.flow.ack(self._epsn, syndrome, self._msn))
