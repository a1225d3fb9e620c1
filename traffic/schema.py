"""What a host agent is asked to run and what it answers: jobs, status and reports (pydantic).

A ``Job`` is what one host does in one collective, as a collective library
sets it up: first its ``connections`` (RC QPs connected to a peer's QPs,
as a communicator's init creates them), then ``steps`` run in order. A
step lists the messages this host sends (``Send``: on a connection, so to
that peer through that NIC in that class, this many bytes, cut into
messages of ``message_bytes``, spread over the first ``qps`` QPs with a
QP-scaling strategy) and the bytes it expects (``Recv``: on a connection,
from its peer). Step k+1 starts when step k's sends are all acknowledged
and its receives complete. The traffic class belongs to the connection, as
a QP's traffic class is fixed when it is connected.

Both ends of a connection must agree: the same QP numbers crossed (my
``local`` is the peer's ``remote``), the same initial PSN, R_Key and UDP
source port; ``traffic.collectives.build_jobs`` makes jobs that do.

Reports: ``Counters`` (frames, transport, PFC, ECN/CNP, errors),
``StepReport`` (per step: start/end in UNIX seconds, application bytes
and messages each way, the counters' change, message completion times),
``HostReport`` (the job: status, steps, counters per NIC and in total, the
agent's CPU time and share of one core), ``Status`` (a job in progress).

Names: ``QpLink``, ``Connection``, ``Send``, ``Recv``, ``Step``,
``Transport``, ``Admission``, ``Job``, ``Counters``, ``MessageTimes``,
``StepReport``, ``HostReport``, ``Progress``, ``Status``, ``STRATEGY_ALIASES``,
``MAX_STEPS``, ``MAX_MESSAGES``.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from traffic.nic import NicCounters, PauseTimes
from traffic.rc import RcCounters
from traffic.roce import IB_MTUS

__all__ = [
    "MAX_MESSAGES",
    "MAX_STEPS",
    "STRATEGY_ALIASES",
    "Admission",
    "Connection",
    "Counters",
    "HostReport",
    "Job",
    "MessageTimes",
    "Progress",
    "QpLink",
    "Recv",
    "Send",
    "Status",
    "Step",
    "StepReport",
    "Transport",
]

# The immediate data of every WRITE says step (12 bits), message (12) and chunks (8).
MAX_STEPS = 1 << 12
MAX_MESSAGES = 1 << 12
STRATEGY_ALIASES = {"split": "split", "rr": "rr", "round_robin": "rr", "round-robin": "rr"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QpLink(_Model):
    """One QP of a connection: my QP number, the peer's, the UDP source port both use."""

    local: int = Field(ge=1, lt=1 << 24)
    remote: int = Field(ge=1, lt=1 << 24)
    sport: int = Field(default=49152, ge=0, lt=1 << 16)


class Connection(_Model):
    """RC QPs from one of my NICs to one peer address (each QP paced to `rate_limit_mbps`)."""

    id: str = Field(min_length=1)
    nic: str = Field(min_length=1)
    peer_ip: str
    peer_mac: str | None = None  # default: the kernel's neighbour entry, else ARP
    qps: list[QpLink] = Field(min_length=1, max_length=255)
    cls: Literal["data", "control", "default"] = "data"
    psn: int = Field(default=0, ge=0, lt=1 << 24)
    rkey: int = Field(default=0x1000, ge=0, lt=1 << 32)
    # Each QP's data frames at most at this rate (verbs' rate_limit); None: the line rate.
    rate_limit_mbps: float | None = Field(default=None, gt=0)

    @field_validator("peer_ip")
    @classmethod
    def _ipv4(cls, value: str) -> str:
        try:
            return str(ipaddress.IPv4Address(value))
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv4 address") from None


class Send(_Model):
    """Bytes this host writes to a connection's peer in one step."""

    conn: str
    bytes: int = Field(ge=0, lt=1 << 40)
    message_bytes: int | None = Field(default=None, gt=0, lt=1 << 31)  # None: one message
    qps: int | None = Field(default=None, ge=1, le=255)  # None: all the connection's QPs
    strategy: Literal["split", "rr"] = "rr"

    @field_validator("strategy", mode="before")
    @classmethod
    def _alias(cls, value: object) -> object:
        if isinstance(value, str) and value in STRATEGY_ALIASES:
            return STRATEGY_ALIASES[value]
        return value

    @property
    def messages(self) -> int:
        """How many messages the bytes are cut into (without admission)."""
        if self.bytes == 0:
            return 0
        size = self.message_bytes or self.bytes
        return -(-self.bytes // size)


class Recv(_Model):
    """Bytes this host expects from a connection's peer in one step."""

    conn: str
    bytes: int = Field(ge=0, lt=1 << 40)


class Step(_Model):
    """One step of a job: what this host sends and expects to receive, per connection."""

    sends: list[Send] = Field(default_factory=list)
    recvs: list[Recv] = Field(default_factory=list)


class Transport(_Model):
    """RC parameters (``traffic.rc.RcOptions``): path MTU, ACK coalescing, window, timeout."""

    path_mtu: int = 1024
    ack_every: int = Field(default=16, ge=1)
    window: int = Field(default=128, ge=1, lt=1 << 23)
    ack_timeout_ms: float = Field(default=4.096e-3 * 2**15, gt=0)
    retry_count: int = Field(default=7, ge=0, le=7)

    @field_validator("path_mtu")
    @classmethod
    def _mtu(cls, value: int) -> int:
        if value not in IB_MTUS:
            raise ValueError(f"path_mtu={value}: one of {', '.join(map(str, IB_MTUS))}")
        return value

    @model_validator(mode="after")
    def _ack_every_fits(self) -> Transport:
        if self.ack_every > self.window:
            raise ValueError(f"ack_every={self.ack_every} is larger than window={self.window}")
        return self


class Admission(_Model):
    """Receiver-driven admission (``traffic.admission``): in flight <= channels x channel_buffer."""

    channels: int = Field(default=2, ge=1, le=64)
    channel_buffer: int = Field(default=64 * 1024, ge=1)
    slots: int = Field(default=4, ge=1, le=64)
    cts_timeout_ms: float | None = Field(default=None, gt=0)  # None: the ACK timeout

    @model_validator(mode="after")
    def _slots_fit(self) -> Admission:
        if self.channel_buffer < self.slots:
            raise ValueError(f"channel_buffer={self.channel_buffer} is smaller than slots={self.slots}")
        return self


class Job(_Model):
    """One host's part of a collective."""

    name: str = "job"
    connections: list[Connection] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list, max_length=MAX_STEPS)
    transport: Transport = Transport()
    admission: Admission | None = None
    start_at: float | None = None  # UNIX time to start the first step (a barrier); None: now

    @model_validator(mode="after")
    def _consistent(self) -> Job:
        conns: dict[str, Connection] = {}
        local_qps: set[tuple[str, int]] = set()
        for conn in self.connections:
            if conn.id in conns:
                raise ValueError(f"connection id {conn.id!r} is used twice")
            conns[conn.id] = conn
            for link in conn.qps:
                if (conn.nic, link.local) in local_qps:
                    raise ValueError(
                        f"connection {conn.id!r}: QP {link.local:#x} on {conn.nic} is used twice"
                    )
                local_qps.add((conn.nic, link.local))
        for k, step in enumerate(self.steps):
            seen: set[tuple[str, str]] = set()
            for kind, items in (("send", step.sends), ("recv", step.recvs)):
                for item in items:
                    where = f"step {k} {kind} on {item.conn!r}"
                    target = conns.get(item.conn)
                    if target is None:
                        raise ValueError(f"{where}: no such connection")
                    if (kind, item.conn) in seen:
                        raise ValueError(f"{where}: one {kind} per connection per step")
                    seen.add((kind, item.conn))
                    if isinstance(item, Send):
                        if item.qps is not None and item.qps > len(target.qps):
                            raise ValueError(
                                f"{where}: qps={item.qps} but the connection has {len(target.qps)}"
                            )
                        if item.messages > MAX_MESSAGES:
                            raise ValueError(
                                f"{where}: {item.messages} messages; at most {MAX_MESSAGES} per "
                                "send (raise message_bytes)"
                            )
        return self

    def connection(self, conn_id: str) -> Connection:
        """The connection with id `conn_id` (KeyError when there is none)."""
        for conn in self.connections:
            if conn.id == conn_id:
                return conn
        raise KeyError(conn_id)


_TYPES = {"int": int, "float": float}  # the counters' annotations (strings: postponed)


def _counter_fields() -> dict[str, Any]:
    """Every counter the NIC (`NicCounters`) and its QPs (`RcCounters`) keep and the times
    its classes spent paused (`PauseTimes`), as model fields: one list of counters, written
    once, in those three."""
    return {f.name: (_TYPES[str(f.type)], f.default)
            for cls in (NicCounters, RcCounters, PauseTimes) for f in dataclasses.fields(cls)}


_CounterFields: Any = create_model("_CounterFields", __base__=_Model, **_counter_fields())


class Counters(_CounterFields):
    """Counters of one NIC, or summed over a host's NICs (a step's: the change over the step).

    The fields are `traffic.nic.NicCounters`', `traffic.rc.RcCounters`'
    (frames, transport, PFC, ECN/CNP, errors) and `traffic.nic.PauseTimes`'
    (`paused_seconds`, `control_paused_seconds`).
    """


class MessageTimes(_Model):
    """Completion times of received messages (first byte to last chunk), microseconds."""

    count: int
    min_us: float
    mean_us: float
    p50_us: float
    p99_us: float
    max_us: float


class StepReport(_Model):
    """What one step did on this host: times (UNIX seconds), bytes, messages, counters."""

    index: int
    start: float  # UNIX seconds
    end: float
    seconds: float
    bytes_sent: int  # application bytes of this step's sends, acknowledged
    bytes_received: int  # application bytes of this step's receives
    messages_sent: int
    messages_received: int
    cpu_seconds: float
    message_times: MessageTimes | None = None
    counters: Counters


class HostReport(_Model):
    """What an agent answers to ``run``."""

    host: str
    job: str
    status: Literal["ok", "failed", "timeout", "stopped"]
    error: str | None = None
    start: float  # UNIX seconds: the first step's start
    end: float
    seconds: float
    cpu_seconds: float  # the agent process's CPU time over the job (all threads)
    cpu_share: float  # cpu_seconds / seconds: near 1.0 means the agent was CPU-bound
    steps: list[StepReport]
    counters: Counters
    nics: dict[str, Counters]
    unexpected_bytes: int = 0  # received for no expected step (a job mismatch)
    grants_sent: int = 0
    grants_resent: int = 0
    grants_received: int = 0
    max_granted_in_flight: int = 0  # admission: the largest granted-not-done bytes, one peer


class Progress(_Model):
    """One send or receive of the running step."""

    kind: Literal["send", "recv"]
    conn: str
    peer: str
    nic: str
    bytes: int
    done: int  # acknowledged (send) or received (recv)


class Status(_Model):
    """What an agent answers to ``status``."""

    host: str
    state: Literal["idle", "waiting", "running"]
    job: str | None = None
    step: int | None = None
    steps: int | None = None
    elapsed: float | None = None
    progress: list[Progress] = Field(default_factory=list)
    last: str | None = None  # the last job's outcome, when idle
