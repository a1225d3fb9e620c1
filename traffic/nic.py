"""One emulated RoCE NIC: its QPs, transmit scheduling, line-rate pacing, PFC, CNPs.

A ``Nic`` is what an RDMA NIC does between the QPs (``traffic.rc``) and the
wire, without the wire: the caller hands it received frames with the time
(``receive``), takes frames to transmit when it says one may go
(``next_frame``), and wakes it at ``next_event``. ``traffic.engine`` runs
NICs on raw sockets; ``traffic.memnet`` joins them in memory for tests.

- Transmit order: strict priority by 802.1p priority for the frames the NIC
  makes itself (CNPs and clear-to-send grants in the control class, ACKs and
  NAKs in their QP's class), before data; data packets from the QPs with
  work, one packet per QP in turn (round-robin), as a NIC's send scheduler.
- Pacing at the emulated line rate: a frame of L bytes holds the link for
  L x 8 / rate (the switches count frame bytes the same way), a token
  bucket of ``burst_bytes``: data waits until half the bucket is back and
  then goes as a few frames at once (a wake-up of the agent's loop costs
  more than a frame), a late wake-up catches up what it owes, an idle link
  banks no more than the bucket.
- PFC (IEEE 802.1Qbb): a received PAUSE stops the priorities it names for
  quanta x 512 bit-times at the link rate, a refresh replaces the deadline,
  quanta 0 resumes (``traffic.pfc.PauseState``); paused frames wait, none
  is dropped, and no catching up at a burst once the pause ends.
- Receive: PAUSE frames, then RoCEv2 frames to the NIC's address: bad ICRC
  -> dropped and counted (as a NIC does; the PSN gap that follows makes the
  responder NAK), unknown destination QP or a source address that is not
  the QP's peer -> dropped and counted, RDMA WRITE -> the QP's responder,
  ACKNOWLEDGE -> its requester, CNP -> counted, UD SEND -> ``on_datagram``
  (the clear-to-send grants of ``traffic.admission``).
- CNPs (the notification point of RoCEv2 congestion control, annex A17.9):
  a data packet that arrives CE-marked (ECN 11) makes the NIC send a CNP to
  the requester's QP in the control class, at most one per QP per
  ``cnp_interval``. NVIDIA's NICs default ``min_time_between_cnps`` to 4 us
  at 100-400 Gb/s; the emulated link is ``line_rate / rate`` times slower,
  so the default here is 4 us x that scale, the same number of packet
  times between two CNPs.
- DCQCN (optional, ``NicConfig.dcqcn``; off by default, as at Meta): the
  reaction point of ``traffic.dcqcn`` paces each QP at its own rate, cut by
  the CNPs it receives and recovered by timers.
- A QP's rate limit (``add_qp(rate_limit_bps=...)``, as verbs'
  ``ibv_qp_attr.rate_limit``): the QP's data frames leave at most at that
  rate, frame bits counted as for the line rate; with DCQCN the lower of
  the two rates holds.

Names: ``TrafficClass``, ``QosClasses``, ``NicConfig``, ``Nic``, ``Qp``,
``NicCounters``, ``PauseTimes``, ``DEFAULT_CLASSES``.
"""

from __future__ import annotations

import math
import socket
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

from traffic.dcqcn import Dcqcn, DcqcnParams
from traffic.endpoint import Endpoint
from traffic.frames import (
    ACKNOWLEDGE,
    CNP,
    UD_SEND_ONLY,
    WRITE_FIRST,
    WRITE_ONLY_IMM,
    Flow,
    FrameError,
    Rx,
    decode,
)
from traffic.pfc import PauseState, parse_pfc
from traffic.rc import RcCounters, RcOptions, Requester, Responder, Wqe, WriteDone

__all__ = [
    "DEFAULT_CLASSES",
    "Nic",
    "NicConfig",
    "NicCounters",
    "PauseTimes",
    "QosClasses",
    "Qp",
    "TrafficClass",
]

_ETH_MAC_CONTROL = b"\x88\x08"
_ECN_CE = 3
_REAL_CNP_INTERVAL = 4e-6  # NVIDIA ConnectX min_time_between_cnps default, seconds


@dataclass(frozen=True, kw_only=True)
class TrafficClass:
    """A traffic class as the hosts mark it: DSCP and ECN in the IP header, the PFC priority."""

    name: str
    dscp: int
    priority: int
    ecn: int = 0  # 0 not-ECT, 2 ECT(0), 1 ECT(1)

    def __post_init__(self) -> None:
        if not 0 <= self.dscp <= 63:
            raise ValueError(f"class {self.name}: dscp={self.dscp!r} must be 0..63")
        if not 0 <= self.priority <= 7:
            raise ValueError(f"class {self.name}: priority={self.priority!r} must be 0..7")
        if self.ecn not in (0, 1, 2):
            raise ValueError(f"class {self.name}: ecn={self.ecn!r} must be 0, 1 (ECT(1)) or 2 (ECT(0))")


@dataclass(frozen=True, kw_only=True)
class QosClasses:
    """The topology's ``qos`` classes: RoCE data, control (CNP, clear-to-send), the rest."""

    data: TrafficClass = TrafficClass(name="data", dscp=26, priority=3, ecn=2)
    control: TrafficClass = TrafficClass(name="control", dscp=48, priority=7)
    default: TrafficClass = TrafficClass(name="default", dscp=0, priority=0)

    def get(self, name: str) -> TrafficClass:
        """The class called ``name`` (data, control or default)."""
        if name not in ("data", "control", "default"):
            raise ValueError(f"traffic class {name!r}: one of data, control, default")
        cls: TrafficClass = getattr(self, name)
        return cls


DEFAULT_CLASSES = QosClasses()


@dataclass(frozen=True, kw_only=True)
class NicConfig:
    """One NIC of a host: its addresses, its emulated link, its classes."""

    name: str
    mac: str
    ip: str
    rate_mbps: float
    classes: QosClasses = DEFAULT_CLASSES
    line_rate_gbps: float = 400.0  # what the emulated rate stands for (the topology's)
    cnp_interval: float | None = None  # seconds; None: 4 us x (line rate / rate)
    # The pacing bucket. 8 KiB: a wake-up of the agent's loop sends ~4 frames of 1 KiB;
    # bench/traffic_cpu.py measured ~20% less CPU than 4 KiB at 25-200 Mb/s.
    burst_bytes: int = 8192
    dcqcn: DcqcnParams | None = None  # None: CNPs are counted, rates never change (as at Meta)

    def __post_init__(self) -> None:
        if not self.rate_mbps > 0:
            raise ValueError(f"{self.name}: rate_mbps={self.rate_mbps!r} must be positive")
        if not self.line_rate_gbps > 0:
            raise ValueError(f"{self.name}: line_rate_gbps={self.line_rate_gbps!r} must be positive")
        if self.cnp_interval is not None and self.cnp_interval < 0:
            raise ValueError(f"{self.name}: cnp_interval={self.cnp_interval!r} must be >= 0")
        if self.burst_bytes < 0:
            raise ValueError(f"{self.name}: burst_bytes={self.burst_bytes!r} must be >= 0")

    @property
    def scale(self) -> float:
        """How many times slower than the real line rate the emulated link runs."""
        return self.line_rate_gbps * 1e3 / self.rate_mbps

    @property
    def cnp_seconds(self) -> float:
        """The least time between two CNPs per QP: `cnp_interval`, or 4 us scaled."""
        if self.cnp_interval is not None:
            return self.cnp_interval
        return _REAL_CNP_INTERVAL * self.scale


@dataclass(slots=True)
class NicCounters:
    """What a NIC counts itself (the QPs count the transport; ``Nic.totals`` adds both)."""

    frames_sent: int = 0
    bytes_sent: int = 0
    frames_received: int = 0
    bytes_received: int = 0
    pause_frames: int = 0
    ce_received: int = 0
    cnps_sent: int = 0
    cnps_received: int = 0
    icrc_errors: int = 0
    malformed: int = 0
    unknown_qp: int = 0
    other_frames: int = 0  # not RoCEv2 to this NIC: ARP, IPv6, other traffic
    other_opcodes: int = 0
    datagrams_sent: int = 0
    datagrams_received: int = 0
    kernel_drops: int = 0  # frames the kernel dropped: the receive socket was full (engine)
    send_retries: int = 0  # transmissions retried: the device queue was full (engine)


@dataclass(frozen=True, kw_only=True)
class PauseTimes:
    """Seconds a NIC's classes spent paused by PFC (``Nic.totals`` adds them to the counters)."""

    paused_seconds: float = 0.0  # the data class's priority
    control_paused_seconds: float = 0.0


class Qp:
    """One local QP connected to a remote one: its requester, its responder, its class."""

    __slots__ = (
        "cc",
        "conn",
        "ctrl_flow",
        "error_reported",
        "last_cnp",
        "local",
        "peer_ip",
        "priority",
        "rate_limit",
        "remote",
        "requester",
        "responder",
        "send_at",
    )

    def __init__(
        self,
        *,
        conn: str,
        local: int,
        remote: int,
        peer_ip: bytes,
        priority: int,
        requester: Requester,
        responder: Responder,
        ctrl_flow: Flow,
        rate_limit: float | None = None,
    ) -> None:
        self.conn = conn
        self.local = local
        self.remote = remote
        self.peer_ip = peer_ip
        self.priority = priority
        self.requester = requester
        self.responder = responder
        self.ctrl_flow = ctrl_flow  # control class, to the remote QP: CNPs and grants
        self.last_cnp = -math.inf
        self.error_reported = False
        self.cc: Dcqcn | None = None  # the QP's DCQCN rate, when the NIC reacts to CNPs
        self.rate_limit = rate_limit  # bits/s of data frames at most (None: the line rate)
        self.send_at = 0.0  # when the QP's own rate (DCQCN, rate limit) lets it send next

    def rate(self) -> float | None:
        """The QP's own rate in bits/s, the lower of DCQCN's and the limit (None: neither)."""
        cc, limit = self.cc, self.rate_limit
        if cc is None:
            return limit
        return cc.rate if limit is None else min(cc.rate, limit)


class Nic:
    """One emulated RoCE NIC (see the module docstring)."""

    def __init__(self, config: NicConfig) -> None:
        self.config = config
        self.name = config.name
        self.counters = NicCounters()
        self.pause = PauseState(config.rate_mbps * 1e6)
        self.qps: dict[int, Qp] = {}
        self.errors: list[tuple[Qp, str]] = []  # QPs that failed, for the job runner
        self.on_datagram: Callable[[Qp, Rx, float], None] | None = None
        self._ip = socket.inet_aton(config.ip)
        self._bit_time = 8 / (config.rate_mbps * 1e6)
        self._slack = config.burst_bytes / 2 * self._bit_time  # bursts of at most burst_bytes
        self._cnp_interval = config.cnp_seconds
        self._queues: list[deque[bytes]] = [deque() for _ in range(8)]
        self._queued = 0
        self._order: list[Qp] = []  # every QP, in creation order
        self._active: list[Qp] = []  # QPs whose requester has posted work not yet acknowledged
        self._rr = 0
        self._next_tx = 0.0
        self._ack_dirty: dict[int, Responder] = {}
        self._retired = RcCounters()
        # A lower bound of the QPs' ACK deadlines: a deadline only moves earlier than
        # this when a QP with nothing outstanding transmits (next_frame lowers it).
        self._poll_at = math.inf

    # -- QPs

    def add_qp(
        self,
        *,
        conn: str,
        local: int,
        remote: int,
        peer_ip: str,
        peer_mac: str,
        src_port: int,
        cls: TrafficClass,
        psn: int,
        options: RcOptions,
        on_complete: Callable[[Wqe, float], None],
        on_write: Callable[[Qp, WriteDone], None],
        rkey: int | None = None,
        rate_limit_bps: float | None = None,
    ) -> Qp:
        """Create local QP ``local`` connected to ``remote`` at ``peer_ip``; both start at ``psn``.

        ``rate_limit_bps`` paces the QP's data frames (None: only the line rate).
        """
        if local in self.qps:
            raise ValueError(f"{self.name}: QP {local:#x} exists already")
        if rate_limit_bps is not None and not rate_limit_bps > 0:
            raise ValueError(f"{self.name}: QP {local:#x}: rate_limit_bps={rate_limit_bps!r} "
                             "must be positive")
        me = Endpoint(mac=self.config.mac, ip=self.config.ip, port=src_port, qpn=local)
        peer = Endpoint(mac=peer_mac, ip=peer_ip, qpn=remote)
        data = Flow(src=me, dst=peer, dscp=cls.dscp, ecn=cls.ecn)
        ctrl = self.config.classes.control
        ctrl_flow = Flow(src=me, dst=peer, dscp=ctrl.dscp, ecn=ctrl.ecn)
        name = f"{self.name} QP {local:#x} -> {peer_ip} QP {remote:#x}"
        requester = Requester(data, psn=psn, options=options, on_complete=on_complete, name=name)
        prio = cls.priority
        queue = self._queues[prio]

        def emit(frame: bytes) -> None:
            """Queue `frame` on the QP's priority queue."""
            queue.append(frame)
            self._queued += 1

        holder: list[Qp] = []
        responder = Responder(
            data,
            psn=psn,
            options=options,
            on_write=lambda done: on_write(holder[0], done),
            emit=emit,
            rkey=rkey,
        )
        qp = Qp(
            conn=conn,
            local=local,
            remote=remote,
            peer_ip=socket.inet_aton(peer_ip),
            priority=prio,
            requester=requester,
            responder=responder,
            ctrl_flow=ctrl_flow,
            rate_limit=rate_limit_bps,
        )
        holder.append(qp)
        if self.config.dcqcn is not None:
            qp.cc = Dcqcn(self.config.rate_mbps * 1e6, scale=self.config.scale,
                          params=self.config.dcqcn)
        self.qps[local] = qp
        self._order.append(qp)
        return qp

    def clear_qps(self) -> None:
        """Destroy every QP (their counters stay in the totals); queued frames are kept."""
        for qp in self._order:
            for c in (qp.requester.counters, qp.responder.counters):
                for f in fields(RcCounters):
                    setattr(self._retired, f.name, getattr(self._retired, f.name) + getattr(c, f.name))
        self.qps.clear()
        self._order.clear()
        self._active.clear()
        self._poll_at = math.inf
        self._ack_dirty.clear()
        self.errors.clear()
        self._rr = 0

    def post(self, qp: Qp, wqe: Wqe, now: float) -> None:
        """Post a WRITE on ``qp`` (through the NIC, which schedules the QPs that have work)."""
        qp.requester.post(wqe, now)
        if qp not in self._active:
            self._active.append(qp)

    def send_control(self, qp: Qp, frame: bytes) -> None:
        """Queue a frame the NIC makes itself in the control class (a grant, say)."""
        self._queues[self.config.classes.control.priority].append(frame)
        self._queued += 1
        self.counters.datagrams_sent += 1

    # -- receive

    def receive(self, frame: bytes, now: float) -> None:
        """Handle one received Ethernet frame."""
        c = self.counters
        c.frames_received += 1
        c.bytes_received += len(frame)
        if frame[12:14] == _ETH_MAC_CONTROL:
            pauses = parse_pfc(frame)
            if pauses is not None:
                c.pause_frames += 1
                self.pause.apply(pauses, now)
            else:
                c.other_frames += 1
            return
        try:
            rx = decode(frame, self._ip)
        except FrameError:
            c.malformed += 1
            return
        if rx is None:
            c.other_frames += 1
            return
        if not rx.icrc_ok:
            c.icrc_errors += 1
            return
        qp = self.qps.get(rx.dqpn)
        if qp is None or rx.src_ip != qp.peer_ip:
            c.unknown_qp += 1
            return
        op = rx.opcode
        if WRITE_FIRST <= op <= WRITE_ONLY_IMM:
            responder = qp.responder
            responder.receive(rx, now)
            if responder.ack_due:
                self._ack_dirty[qp.local] = responder
            if rx.ecn == _ECN_CE:
                c.ce_received += 1
                if now - qp.last_cnp >= self._cnp_interval:
                    qp.last_cnp = now
                    c.cnps_sent += 1
                    self._queues[self.config.classes.control.priority].append(qp.ctrl_flow.cnp())
                    self._queued += 1
        elif op == ACKNOWLEDGE:
            qp.requester.on_ack(rx, now)
            self._check(qp)
        elif op == CNP:
            c.cnps_received += 1
            if qp.cc is not None:
                qp.cc.on_cnp(now)
                self._poll_at = min(self._poll_at, qp.cc.next_event())
        elif op == UD_SEND_ONLY:
            c.datagrams_received += 1
            if self.on_datagram is not None:
                self.on_datagram(qp, rx, now)
        else:
            c.other_opcodes += 1

    def _check(self, qp: Qp) -> None:
        error = qp.requester.error
        if error is not None and not qp.error_reported:
            qp.error_reported = True
            self.errors.append((qp, error))

    # -- transmit

    def _flush_acks(self) -> None:
        # One ACK per QP for all the AckReq packets of a receive batch.
        for responder in self._ack_dirty.values():
            responder.send_ack()
        self._ack_dirty.clear()

    def next_frame(self, now: float) -> bytes | None:
        """The next frame to put on the wire now, or None (nothing to send, paced, paused)."""
        if self._ack_dirty:
            self._flush_acks()
        if self._next_tx - self._slack > now:  # the same expression as next_event's
            return None
        frame = None
        if self._queued:
            pause = self.pause
            for prio in range(7, -1, -1):
                queue = self._queues[prio]
                if queue and not pause.is_paused(prio, now):
                    frame = queue.popleft()
                    self._queued -= 1
                    break
        if frame is None:
            order = self._active
            n = len(order)
            for k in range(n):
                i = (self._rr + k) % n
                qp = order[i]
                requester = qp.requester
                if not requester.has_work() or self.pause.is_paused(qp.priority, now):
                    continue
                rate = qp.rate()
                if rate is not None and qp.send_at > now:
                    continue
                frame = requester.next_frame(now)
                if frame is not None:
                    self._rr = (i + 1) % n
                    if rate is not None:
                        qp.send_at = max(qp.send_at, now) + len(frame) * 8 / rate
                    deadline = requester.next_deadline()
                    if deadline is not None and deadline < self._poll_at:
                        self._poll_at = deadline
                    break
        if frame is None:
            return None
        # A token bucket: a late wake-up spends the credit it has (up to the
        # burst), an idle link does not bank more than that.
        self._next_tx = max(self._next_tx, now - self._slack) + len(frame) * self._bit_time
        c = self.counters
        c.frames_sent += 1
        c.bytes_sent += len(frame)
        return frame

    def next_event(self, now: float) -> float:
        """When ``next_frame`` or ``poll`` may next have something to do (inf: nothing pending)."""
        if self._ack_dirty:
            return now
        when = self._poll_at
        pause = self.pause
        if self._queued:
            # ACKs, NAKs, CNPs, grants: as soon as the link may carry one
            tx_at = max(now, self._next_tx - self._slack)
            for prio in range(8):
                if self._queues[prio]:
                    when = min(when, max(tx_at, pause.paused_until(prio)))
        if self._active:
            # Data: once half the bucket has come back, so that one wake-up sends a
            # few frames (the rate is the same; wake-ups cost a Python loop most).
            data_at = max(now, self._next_tx)
            for qp in self._active:
                if qp.requester.has_work():
                    when = min(when, max(data_at, pause.paused_until(qp.priority), qp.send_at))
        return when

    def poll(self, now: float) -> None:
        """Run the QPs' timers (local ACK timeouts); forget QPs with nothing left to send."""
        if now < self._poll_at:
            return
        idle = False
        earliest = math.inf
        for qp in self._active:
            requester = qp.requester
            deadline = requester.next_deadline()
            if deadline is not None and deadline <= now:
                requester.poll(now)
                self._check(qp)
                deadline = requester.next_deadline()
            if deadline is not None and deadline < earliest:
                earliest = deadline
            if qp.cc is not None:
                qp.cc.poll(now)
                earliest = min(earliest, qp.cc.next_event())
            idle = idle or requester.idle or requester.error is not None
        self._poll_at = earliest
        if idle:
            self._active = [
                qp for qp in self._active if not (qp.requester.idle or qp.requester.error)
            ]
            self._rr = 0

    def backlog(self) -> bool:
        """Whether frames are waiting to be sent (queued, or data the QPs may send)."""
        return bool(self._queued or self._ack_dirty) or any(
            qp.requester.has_work() for qp in self._active
        )

    # -- counters

    def totals(self, now: float) -> dict[str, float]:
        """Every counter of this NIC and its QPs (past and present), plus the time paused."""
        out: dict[str, float] = {}
        for f in fields(NicCounters):
            out[f.name] = getattr(self.counters, f.name)
        rc = {f.name: getattr(self._retired, f.name) for f in fields(RcCounters)}
        for qp in self._order:
            for c in (qp.requester.counters, qp.responder.counters):
                for name in rc:
                    rc[name] += getattr(c, name)
        out.update(rc)
        classes = self.config.classes
        paused = PauseTimes(
            paused_seconds=self.pause.paused_seconds(classes.data.priority, now),
            control_paused_seconds=self.pause.paused_seconds(classes.control.priority, now),
        )
        out.update(asdict(paused))
        return out
