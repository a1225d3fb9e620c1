"""Run one host's ``Job`` on its NICs: connections to QPs, steps in order, admission, the report.

``JobRun`` is driven like a NIC: ``poll(now)`` and ``next_event(now)``,
no sockets, no clock of its own, so the same code runs under the agent's
event loop (``traffic.engine``) and in memory (``traffic.memnet``).

- Construction creates every connection's QPs on its NIC (both directions
  start at the connection's PSN). The QPs outlive the job: the next job
  replaces them, so a peer still retransmitting to this host after it
  finished is still answered.
- Step k starts at once (or at the job's ``start_at``): each ``Send`` cuts
  its bytes into messages of ``message_bytes`` (without admission) and
  posts them with its strategy: ``rr`` posts message m whole on the next QP
  of the connection (the turn carries over from step to step), ``split``
  posts each message as one RDMA WRITE per QP (``traffic.qpscale``). With
  admission, messages are posted as the peer's grants arrive, one per
  grant, at the granted address and size; and the host grants its own
  ``Recv`` bytes (``traffic.admission.Granter``).
- Every WRITE carries immediate data: step (12 bits), message (12),
  chunks (8): so the receiver counts each step's bytes apart even when a
  fast peer already sends the next step, and times whole messages.
- Step k ends when its sends are all acknowledged and its receives have
  all their bytes; its report holds the change of every counter over it.
- A QP in error (retries exhausted, a fatal NAK) fails the job; a deadline
  (the caller's timeout) ends it with status ``timeout``, saying which
  step and which peers were still owed what.

Names: ``JobRun``, ``JobError``, ``encode_tag``, ``decode_tag``, ``summary``.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from traffic.admission import CTS_QKEY, Cts, GrantBook, Granter, decode_cts, encode_cts
from traffic.errors import TrafficError
from traffic.frames import Rx
from traffic.nic import Nic, Qp
from traffic.qpscale import split
from traffic.rc import RcOptions, Wqe, WriteDone
from traffic.schema import (
    Connection,
    Counters,
    HostReport,
    Job,
    MessageTimes,
    Progress,
    Send,
    Status,
    StepReport,
)

__all__ = ["JobError", "JobRun", "decode_tag", "encode_tag", "summary"]

_VA_BASE = 0x1000_0000_0000
_STEP_STRIDE = 1 << 32


class JobError(TrafficError):
    """A job cannot be set up on this host (unknown NIC, no MAC for a peer...)."""


def encode_tag(step: int, message: int, chunks: int) -> int:
    """Immediate data of a WRITE: step (12 bits), message (12 bits), chunks (8 bits)."""
    return (step & 0xFFF) << 20 | (message & 0xFFF) << 8 | (chunks & 0xFF)


def decode_tag(imm: int) -> tuple[int, int, int]:
    """(step, message, chunks) from immediate data made by ``encode_tag``."""
    return imm >> 20, imm >> 8 & 0xFFF, imm & 0xFF


def summary(seconds: list[float]) -> MessageTimes | None:
    """Min/mean/p50/p99/max in microseconds of a list of durations."""
    if not seconds:
        return None
    us = sorted(s * 1e6 for s in seconds)

    def pct(p: float) -> float:
        """The `p` quantile of the sorted durations, in microseconds."""
        return round(us[min(len(us) - 1, int(p * len(us)))], 1)

    return MessageTimes(
        count=len(us),
        min_us=round(us[0], 1),
        mean_us=round(sum(us) / len(us), 1),
        p50_us=pct(0.5),
        p99_us=pct(0.99),
        max_us=round(us[-1], 1),
    )


@dataclass
class _SendState:
    """One ``Send`` of the running step."""

    spec: Send
    conn: Connection
    nic: Nic
    qps: list[Qp]
    to_post: int  # bytes not posted yet
    wqes_left: int = 0
    acked: int = 0
    messages: int = 0

    @property
    def done(self) -> bool:
        """Whether every byte is posted and every WQE completed."""
        return self.to_post == 0 and self.wqes_left == 0


@dataclass
class _Msg:
    chunks_left: int
    va: int
    start: float
    end: float


@dataclass
class _StepLog:
    index: int
    start: float
    cpu: float
    counters: dict[str, dict[str, float]]  # per NIC, at the step's start


@dataclass
class _Received:
    """Whole messages received for one step (they may arrive before this host reaches it)."""

    messages: int = 0
    times: list[float] = field(default_factory=list)


class JobRun:
    """One job on one host's NICs (see the module docstring)."""

    def __init__(
        self,
        job: Job,
        nics: Mapping[str, Nic],
        *,
        host: str,
        macs: Mapping[tuple[str, str], str],
        now: float,
        wall: float,
        deadline: float | None = None,
        cpu: Callable[[], float] = time.process_time,
    ) -> None:
        self.job = job
        self.host = host
        self.nics = dict(nics)
        self.state = "waiting"
        self.outcome: str | None = None
        self.error: str | None = None
        self._cpu = cpu
        self._mono0, self._wall0 = now, wall
        self._t0 = now if job.start_at is None else now + max(0.0, job.start_at - wall)
        self._deadline = deadline
        self._options = RcOptions(
            path_mtu=job.transport.path_mtu,
            ack_every=job.transport.ack_every,
            window=job.transport.window,
            ack_timeout=job.transport.ack_timeout_ms / 1e3,
            retry_count=job.transport.retry_count,
        )
        self._qps: dict[str, list[Qp]] = {}
        self._rr: dict[str, int] = defaultdict(int)
        self._k = -1
        self._sends: list[_SendState] = []
        self._got: dict[tuple[str, int], int] = defaultdict(int)
        self._expected = {
            (r.conn, k): r.bytes for k, step in enumerate(job.steps) for r in step.recvs
        }
        self._sent_msgs: dict[tuple[str, int], int] = defaultdict(int)
        self._msgs: dict[tuple[str, int, int], _Msg] = {}
        self._received: dict[int, _Received] = defaultdict(_Received)
        self._logs: list[StepReport] = []
        self._cur: _StepLog | None = None
        self._start_counters: dict[str, dict[str, float]] = {}
        self._start_cpu = 0.0
        self._end = now
        self.unexpected_bytes = 0
        self._dirty = True  # a completion arrived since the step's end was last checked
        self._granters: dict[str, Granter] = {}
        self._books: dict[str, GrantBook] = {}
        self._setup(macs)
        # Counters count from the set-up: a peer that starts a moment earlier
        # sends packets before this host's first step, and they are this job's.
        self._start_counters = self._snapshot(now)

    # -- set-up

    def _setup(self, macs: Mapping[tuple[str, str], str]) -> None:
        job = self.job
        missing = sorted({c.nic for c in job.connections} - set(self.nics))
        if missing:
            raise JobError(
                f"{self.host}: job {job.name!r} uses NIC(s) {', '.join(missing)}; this host has "
                f"{', '.join(sorted(self.nics)) or 'none'}"
            )
        for nic in self.nics.values():
            nic.clear_qps()
            nic.on_datagram = self._on_datagram
        for conn in job.connections:
            nic = self.nics[conn.nic]
            mac = conn.peer_mac or macs.get((conn.nic, conn.peer_ip))
            if mac is None:
                raise JobError(f"{self.host}: no MAC address for {conn.peer_ip} on {conn.nic}")
            cls = nic.config.classes.get(conn.cls)
            qps = []
            for link in conn.qps:
                qps.append(
                    nic.add_qp(
                        conn=conn.id,
                        local=link.local,
                        remote=link.remote,
                        peer_ip=conn.peer_ip,
                        peer_mac=mac,
                        src_port=link.sport,
                        cls=cls,
                        psn=conn.psn,
                        options=self._options,
                        on_complete=self._on_complete,
                        on_write=self._on_write,
                        rkey=conn.rkey,
                        rate_limit_bps=None if conn.rate_limit_mbps is None
                        else conn.rate_limit_mbps * 1e6,
                    )
                )
            self._qps[conn.id] = qps
            if job.admission is not None:
                adm = job.admission
                timeout = (adm.cts_timeout_ms or job.transport.ack_timeout_ms) / 1e3
                self._granters[conn.id] = Granter(
                    channels=adm.channels,
                    channel_buffer=adm.channel_buffer,
                    slots=adm.slots,
                    rkey=conn.rkey,
                    cts_timeout=timeout,
                    send=self._grant_sender(conn),
                )
                self._books[conn.id] = GrantBook()

    def _grant_sender(self, conn: Connection) -> Callable[[Cts], None]:
        """Grants go to the peer's first QP of the connection, from mine."""
        nic = self.nics[conn.nic]
        qp = self._qps[conn.id][0]

        def send(cts: Cts) -> None:
            """Send grant `cts` to the peer as a UD SEND on the control flow."""
            frame = qp.ctrl_flow.ud_send(
                cts.seq & 0xFFFFFF, qkey=CTS_QKEY, src_qp=qp.local, payload=encode_cts(cts)
            )
            nic.send_control(qp, frame)

        return send

    # -- clock

    def wall(self, t: float) -> float:
        """UNIX time of monotonic time ``t``."""
        return self._wall0 + (t - self._mono0)

    def next_event(self, now: float) -> float:
        """The monotonic time the job next needs a `poll` (inf: none pending)."""
        if self.state == "waiting":
            return self._t0
        if self.state != "running":
            return math.inf
        when = self._deadline if self._deadline is not None else math.inf
        for granter in self._granters.values():
            when = min(when, granter.next_event())
        return when

    # -- running

    def poll(self, now: float) -> None:
        """Start, advance or end the job as time and completions allow."""
        if self.state == "waiting":
            if now < self._t0:
                return
            self.state = "running"
            self._start_cpu = self._cpu()
            self._t0 = now
            if not self.job.steps:
                self._finish(now, "ok")
                return
            self._begin_step(0, now)
        if self.state != "running":
            return
        for nic in self.nics.values():
            if nic.errors:
                _qp, reason = nic.errors[0]
                self._finish(now, "failed", f"step {self._k}: {reason}")
                return
        for granter in self._granters.values():
            granter.poll(now)
        while self.state == "running" and self._dirty and self._step_done():
            self._end_step(now)
            if self._k + 1 < len(self.job.steps):
                self._begin_step(self._k + 1, now)
            else:
                self._finish(now, "ok")
        if self.state == "running" and self._deadline is not None and now >= self._deadline:
            self._finish(now, "timeout", self._waiting_for(now))

    def stop(self, now: float) -> None:
        """End the job now (status ``stopped``)."""
        if self.state in ("waiting", "running"):
            if self.state == "waiting":
                self._start_cpu = self._cpu()
                self._t0 = now
            self._finish(now, "stopped", "stopped on request")

    @property
    def done(self) -> bool:
        """Whether the job has ended (its report is ready)."""
        return self.state == "done"

    def _begin_step(self, k: int, now: float) -> None:
        self._k = k
        self._dirty = True  # an empty step, or one whose bytes all arrived early, ends at once
        step = self.job.steps[k]
        # Step 0's counters start with the job's (see __init__); later steps' where the last ended.
        counters = self._start_counters if k == 0 else self._snapshot(now)
        self._cur = _StepLog(index=k, start=now, cpu=self._cpu(), counters=counters)
        self._sends = []
        for spec in step.sends:
            conn = self.job.connection(spec.conn)
            qps = self._qps[conn.id][: spec.qps or len(conn.qps)]
            self._sends.append(
                _SendState(spec=spec, conn=conn, nic=self.nics[conn.nic], qps=qps,
                           to_post=spec.bytes)
            )
        for recv in step.recvs:
            granter = self._granters.get(recv.conn)
            if granter is not None:
                granter.open_step(k, recv.bytes, now)
        for st in self._sends:
            if self.job.admission is None:
                self._post_all(st, k, now)
            else:
                self._post_granted(st, k, now)

    def _post_all(self, st: _SendState, k: int, now: float) -> None:
        size = st.spec.message_bytes or st.spec.bytes
        offset = 0
        while st.to_post > 0:
            length = min(size, st.to_post)
            self._post_message(st, k, _VA_BASE + k * _STEP_STRIDE + offset, length, now)
            offset += length

    def _post_granted(self, st: _SendState, k: int, now: float) -> None:
        book = self._books[st.conn.id]
        while st.to_post > 0:
            cts = book.take(k)
            if cts is None:
                return
            self._post_message(st, k, cts.va, min(cts.size, st.to_post), now)

    def _post_message(self, st: _SendState, k: int, va: int, length: int, now: float) -> None:
        """Post one message of the step: whole on the next QP (rr) or one chunk per QP (split)."""
        msg = st.messages
        st.messages += 1
        st.to_post -= length
        self._sent_msgs[(st.conn.id, k)] += 1
        if st.spec.strategy == "split":
            posts = [(p.qp_index, p.offset, p.length) for p in split(1, length, len(st.qps))]
        else:
            turn = self._rr[st.conn.id]
            self._rr[st.conn.id] = turn + 1
            posts = [(turn % len(st.qps), 0, length)]
        imm_chunks = len(posts)
        for qp_index, offset, chunk in posts:
            wqe = Wqe(
                tag=(k, st),
                va=va + offset,
                rkey=st.conn.rkey,
                length=chunk,
                imm=encode_tag(k, msg, imm_chunks),
                path_mtu=self._options.path_mtu,
            )
            st.wqes_left += 1
            st.nic.post(st.qps[qp_index], wqe, now)

    def _step_done(self) -> bool:
        self._dirty = False
        if not all(st.done for st in self._sends):
            return False
        k = self._k
        return all(self._got[(r.conn, k)] >= r.bytes for r in self.job.steps[k].recvs)

    def _end_step(self, now: float) -> None:
        log = self._cur
        assert log is not None
        k = log.index
        after = self._snapshot(now)
        counters = _sum([_delta(after[name], log.counters[name]) for name in self.nics])
        step = self.job.steps[k]
        received = self._received[k]
        self._logs.append(
            StepReport(
                index=k,
                start=self.wall(log.start),
                end=self.wall(now),
                seconds=now - log.start,
                bytes_sent=sum(st.acked for st in self._sends),
                bytes_received=sum(self._got[(r.conn, k)] for r in step.recvs),
                messages_sent=sum(st.messages for st in self._sends),
                messages_received=received.messages,
                cpu_seconds=self._cpu() - log.cpu,
                message_times=summary(received.times),
                counters=Counters.model_validate(counters),
            )
        )
        self._cur = None

    def _finish(self, now: float, status: str, error: str | None = None) -> None:
        self.state = "done"
        self.outcome = status
        self.error = error
        self._end = now
        self._end_cpu = self._cpu()
        self._end_counters = self._snapshot(now)

    # -- callbacks from the NICs

    def _on_complete(self, wqe: Wqe, now: float) -> None:
        self._dirty = True
        k, st = wqe.tag
        st.wqes_left -= 1
        st.acked += wqe.length

    def _on_write(self, qp: Qp, done: WriteDone) -> None:
        self._dirty = True
        if done.imm is None:
            self.unexpected_bytes += done.length
            return
        k, msg, chunks = decode_tag(done.imm)
        key = (qp.conn, k)
        self._got[key] += done.length
        if key not in self._expected or self._got[key] > self._expected[key]:
            # bytes no receive of the job asked for (a job that does not match its peer's)
            self.unexpected_bytes += done.length
        mkey = (qp.conn, k, msg)
        m = self._msgs.get(mkey)
        if m is None:
            m = self._msgs[mkey] = _Msg(chunks_left=chunks, va=done.va, start=done.start,
                                        end=done.end)
        else:
            m.va = min(m.va, done.va)
            m.start = min(m.start, done.start)
            m.end = max(m.end, done.end)
        m.chunks_left -= 1
        if m.chunks_left <= 0:
            del self._msgs[mkey]
            received = self._received[k]
            received.messages += 1
            received.times.append(m.end - m.start)
            granter = self._granters.get(qp.conn)
            if granter is not None:
                granter.completed(k, m.va, m.end)

    def _on_datagram(self, qp: Qp, rx: Rx, now: float) -> None:
        cts = decode_cts(rx.payload)
        book = self._books.get(qp.conn)
        if cts is None or book is None or not book.add(cts):
            return
        if self.state == "running":
            for st in self._sends:
                if st.conn.id == qp.conn and cts.step == self._k:
                    self._post_granted(st, self._k, now)

    # -- counters, status, report

    def _snapshot(self, now: float) -> dict[str, dict[str, float]]:
        return {name: nic.totals(now) for name, nic in self.nics.items()}

    def _waiting_for(self, now: float) -> str:
        k = self._k
        owed = []
        for item in self.progress():
            if item.done < item.bytes:
                verb = "acknowledged" if item.kind == "send" else "received"
                direction = "to" if item.kind == "send" else "from"
                owed.append(
                    f"{item.kind} {direction} {item.peer} on {item.conn} ({item.nic}): "
                    f"{item.done} of {item.bytes} bytes {verb}"
                )
        return (
            f"step {k} of {len(self.job.steps)} not complete {now - self._t0:.3g} s after the "
            f"job started: {'; '.join(owed) or 'nothing owed (a completion was lost)'}"
        )

    def progress(self) -> list[Progress]:
        """The running step's sends and receives and how far each has got."""
        if self._k < 0 or self._k >= len(self.job.steps):
            return []
        out = []
        for st in self._sends:
            out.append(
                Progress(kind="send", conn=st.conn.id, peer=st.conn.peer_ip, nic=st.conn.nic,
                         bytes=st.spec.bytes, done=st.acked)
            )
        for r in self.job.steps[self._k].recvs:
            conn = self.job.connection(r.conn)
            out.append(
                Progress(kind="recv", conn=r.conn, peer=conn.peer_ip, nic=conn.nic,
                         bytes=r.bytes, done=self._got[(r.conn, self._k)])
            )
        return out

    def status(self, now: float) -> Status:
        """The job's status at `now`: step, elapsed time and progress."""
        state: Literal["running", "waiting"] = "running" if self.state == "running" else "waiting"
        return Status(
            host=self.host,
            state=state,
            job=self.job.name,
            step=self._k if self._k >= 0 else None,
            steps=len(self.job.steps),
            elapsed=max(0.0, now - self._t0) if self.state == "running" else None,
            progress=self.progress(),
        )

    def report(self) -> HostReport:
        """The job's report (once ``done``)."""
        if self.state != "done":
            raise RuntimeError("the job has not ended")
        assert self.outcome in ("ok", "failed", "timeout", "stopped")
        per_nic = {
            name: Counters.model_validate(_delta(self._end_counters[name], self._start_counters[name]))
            for name in self.nics
        }
        total = _sum([c.model_dump() for c in per_nic.values()])
        seconds = self._end - self._t0
        cpu = self._end_cpu - self._start_cpu
        return HostReport(
            host=self.host,
            job=self.job.name,
            status=self.outcome,  # type: ignore[arg-type]
            error=self.error,
            start=self.wall(self._t0),
            end=self.wall(self._end),
            seconds=seconds,
            cpu_seconds=cpu,
            cpu_share=cpu / seconds if seconds > 0 else 0.0,
            steps=list(self._logs),
            counters=Counters.model_validate(total),
            nics=per_nic,
            unexpected_bytes=self.unexpected_bytes,
            grants_sent=sum(g.grants_sent for g in self._granters.values()),
            grants_resent=sum(g.grants_resent for g in self._granters.values()),
            grants_received=sum(b.received for b in self._books.values()),
            max_granted_in_flight=max((g.max_in_flight for g in self._granters.values()),
                                      default=0),
        )


def _delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    """Counter by counter, after - before."""
    return {name: value - before.get(name, 0) for name, value in after.items()}


def _sum(rows: list[dict[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for row in rows:
        for name, value in row.items():
            out[name] = out.get(name, 0) + value
    return out
