"""What every API route answers, as pydantic models: the OpenAPI schema tells a client what it gets.

Each route of `controller.api` declares one of these as its
`response_model`, so `GET /openapi.json` describes every answer field by
field. The models name the fields a client can rely on, with their types;
they allow more (`extra="allow"`): an answer may carry detail a later
version adds (a job's per-step times, a failure's lost packets) without
breaking a client written against these.

Names defined here: `Answer`, `StatusAnswer`, `SwitchStatus`, `HostStatus`,
`NicStatus`, `LinkStatus`, `TopologyAnswer`, `TopologyNode`, `TopologyEdge`,
`StatsAnswer`, `RoutesAnswer`, `SwitchRoutes`, `HistoryAnswer`,
`WriteRecordAnswer`, `CountersAnswer`, `CounterCell`, `ModeAnswer`,
`AclAnswer`, `AclRuleView`, `LinkAnswer`, `CheckAnswer`, `ExecAnswer`,
`TraceAnswer`, `RunAnswer`, `RunLink`, `RunTierLoad`, `JobSummary`, `ShutdownAnswer`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from traffic.report import CollectiveResult

__all__ = [
    "AclAnswer",
    "AclRuleView",
    "Answer",
    "CheckAnswer",
    "CounterCell",
    "CountersAnswer",
    "ExecAnswer",
    "HistoryAnswer",
    "HostStatus",
    "JobSummary",
    "LinkAnswer",
    "LinkStatus",
    "ModeAnswer",
    "NicStatus",
    "RoutesAnswer",
    "RunAnswer",
    "RunLink",
    "RunTierLoad",
    "ShutdownAnswer",
    "StatsAnswer",
    "StatusAnswer",
    "SwitchRoutes",
    "SwitchStatus",
    "TopologyAnswer",
    "TopologyEdge",
    "TopologyNode",
    "TraceAnswer",
    "WriteRecordAnswer",
]

Writes = dict[str, dict[str, int]]


class Answer(BaseModel):
    """The base of every answer: documented fields, more allowed."""

    model_config = ConfigDict(extra="allow")


class SwitchStatus(Answer):
    """One switch in `GET /status`: its process, P4Runtime session and last reconcile."""

    name: str
    role: str
    grpc_addr: str
    device_id: int
    alive: bool = Field(description="the switch process runs")
    ready: bool = Field(description="its P4Runtime session is primary and reconciled")
    server: str | None = Field(default=None, description="the machine it runs on, when the "
                               "fabric is spread over several (`up --servers`)")
    last_reconcile: dict[str, Any] | None = Field(
        description="reason, inserts/modifies/deletes/unchanged, seconds")


class NicStatus(Answer):
    """One NIC of a host in `GET /status`: its interface and IPv4 address."""

    intf: str
    ip: str


class HostStatus(Answer):
    """One host in `GET /status`: where it sits (zone, rack) and its NICs."""

    name: str
    zone: int | str | None = None
    rack: int | str | None = None
    server: str | None = Field(default=None, description="the machine it runs on, when the "
                               "fabric is spread over several (`up --servers`)")
    nics: list[NicStatus]


class LinkStatus(Answer):
    """One link in `GET /status`: its ends, its tier and whether routing may use it."""

    id: str = Field(description="<a_intf>--<b_intf>, the lower tier's interface first")
    tier: str
    a: str
    b: str
    up: bool


class StatusAnswer(Answer):
    """`GET /status`: the daemon's phase and, once it has a fabric, the fabric."""

    phase: str = Field(description="starting, up, failed, stopping or down")
    error: str | None = None
    pid: int
    api: dict[str, str] = Field(description="url (TCP) and unix (socket path)")
    started_at: float
    name: str | None = None
    topology: str | None = None
    target: str | None = None
    mode: str | None = None
    scale: dict[str, Any] | None = Field(
        default=None, description="per tier: the emulated rate and the line rate it stands "
        "for; line_rate_gbps, and mtu, the links' IP MTU")
    servers: list[str] = Field(default=[], description="the machines the fabric is spread "
                               "over, this one first; empty on one machine")
    clock_offsets: dict[str, float] = Field(
        default={}, description="per other server, its wall clock minus this machine's, in "
        "seconds: read at `up` (topologies.cluster.check_servers), then again every "
        "`--clock-interval` s (controller.clocks)")
    clock_off: dict[str, str] = Field(
        default={}, description="the servers whose clock is now too far from this machine's "
        "(more than topologies.cluster.MAX_CLOCK_OFFSET_S), and why; `aizone run` refuses "
        "a job while one is")
    switches: list[SwitchStatus] = []
    hosts: list[HostStatus] = []
    links: list[LinkStatus] = []
    failed: list[str] = Field(default=[], description="link ids routing avoids")
    failures: list[dict[str, Any]] = []
    restarts: list[dict[str, Any]] = []


class TopologyNode(Answer):
    """One node in `GET /topology`: a switch or a host, with its role and zone."""

    id: str
    kind: str = Field(description="switch or host")
    role: str
    zone: int | str | None = None


class TopologyEdge(Answer):
    """One link in `GET /topology`: its ends and ports, tier, rate (Mb/s), state."""

    id: str
    a: str
    b: str
    tier: str
    a_port: int
    b_port: int
    rate_mbps: float | None
    up: bool


class TopologyAnswer(Answer):
    """`GET /topology`: nodes and edges by tier, what the dashboard draws."""

    name: str
    mode: str
    nodes: list[TopologyNode]
    edges: list[TopologyEdge]


class StatsAnswer(Answer):
    """`GET /stats`: the latest snapshot (empty before the first poll); see docs/api.md."""

    links: list[dict[str, Any]] = Field(default=[], description="per link and direction: "
                                                                "bits/s, packets/s, share")
    tiers: dict[str, Any] = Field(default={}, description="per tier: max/mean of the uplinks")


class SwitchRoutes(Answer):
    """One switch in `GET /routes`: its entries as text and how they differ from the intent."""

    entries: list[str]
    matches_intent: bool
    diff: dict[str, int]


class RoutesAnswer(Answer):
    """`GET /routes`: entries read back, and whether they equal the intent."""

    mode: str
    failed: list[str]
    switches: dict[str, SwitchRoutes]


class WriteRecordAnswer(Answer):
    """One Write RPC the controller sent: when (UTC), why, how many updates, as text protobuf."""

    at: str
    reason: str
    updates: int
    text: str


class HistoryAnswer(Answer):
    """`GET /routes/history/{switch}`: the controller's writes to one switch, oldest first."""

    switch: str
    writes: list[WriteRecordAnswer]


class CounterCell(Answer):
    """One cell in `GET /counters/S/C`: its packet and byte counts."""

    packets: int
    bytes: int


class CountersAnswer(Answer):
    """`GET /counters/S/C`: cells of an indexed counter, read now."""

    switch: str
    counter: str
    cells: dict[str, CounterCell]


class ModeAnswer(Answer):
    """`POST /mode`: the switch, how long it took, the writes per switch."""

    mode: str
    previous: str
    seconds: float
    writes: Writes


class AclRuleView(Answer):
    """One rule in `GET /acl`: its action, priority, match (field -> [value, mask]), text."""

    action: str
    priority: int
    match: dict[str, list[int]]
    text: str


class AclAnswer(Answer):
    """`PUT /acl/S`: the rules now on the switch and the writes that took."""

    switch: str
    rules: int
    seconds: float
    writes: Writes


class LinkAnswer(Answer):
    """`POST /link`: what changed, the reconvergence time, the writes."""

    link: str
    up: bool
    seconds: float
    changed: bool | None = None
    silent: bool = False


class CheckAnswer(Answer):
    """`POST /check`: every pair's ping (and RoCEv2 transfer), and the failures."""

    ok: bool
    pairs: int
    failed: list[dict[str, Any]]
    pings: int
    roce: int
    ack_timeout_ms: float | None = None  # the RoCEv2 transfers' RC ACK timeout


class ExecAnswer(Answer):
    """`POST /exec` (Unix socket only): the command's exit code and output."""

    host: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str


class TraceAnswer(Answer):
    """`GET`/`POST /trace`: the predicted path (hops, links) and, when sent, the confirmation."""


class RunLink(Answer):
    """One fabric link in a run: bytes (and packets) the switches counted each way, and the
    bytes the routes predict for the job's data (`controller.jobs.predict_link_bytes`)."""

    id: str
    tier: str
    a: str = Field(description="the lower tier's end; `up` leaves it")
    b: str
    up_bytes: int
    down_bytes: int
    up_predicted_bytes: int | None = Field(
        default=None, description="frame bytes of the job's data the routes put on it going up")
    down_predicted_bytes: int | None = None


class RunTierLoad(Answer):
    """Bytes on one tier-direction's links in a run: counted, and (`predicted`) worked out."""

    links: int
    mean_bytes: float
    max_bytes: int
    min_bytes: int
    imbalance: float | None = Field(description="max / mean (None: the tier carried nothing)")
    predicted: dict[str, float | None] | None = Field(
        default=None, description="the prediction's mean_bytes, max_bytes, min_bytes, imbalance")


class RunAnswer(Answer):
    """`POST /run` and `GET /jobs/ID`: a collective's full result (see docs/api.md)."""

    id: int
    pattern: str
    result: CollectiveResult = Field(description="nccl-tests' time, algbw and busbw, and the "
                                                 "transport's counters, all hosts")
    mode: str | None = None
    cpu_bound: bool = False
    links: list[RunLink] = Field(default=[], description="every fabric link: counted and "
                                                         "predicted bytes each way")
    tiers: dict[str, RunTierLoad] = Field(default={}, description="per tier-direction: counted "
                                                                  "and predicted max/mean")
    counted_seconds: float | None = Field(
        default=None, description="from the first counter reading to the last: what the "
                                  "counters' probe and ACK bytes accumulated over")


class JobSummary(Answer):
    """One collective in `GET /jobs`: pattern, ranks, time (s), bus bandwidth (Gb/s), mode."""

    id: int
    pattern: str
    ranks: int
    time_s: float | None
    busbw_gbps: float | None
    mode: str | None


class ShutdownAnswer(Answer):
    """`POST /shutdown`: the daemon is stopping (the fabric comes down after the answer)."""

    stopping: bool
    pid: int
