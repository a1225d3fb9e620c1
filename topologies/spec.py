"""The topology spec: what a fabric preset (`topologies/*.yaml`) may say.

A spec describes the shape of an emulated AI backend fabric, not its
addresses (those come from `topologies.addressing`): AI zones made of racks
(one RTSW each, hosts with one or more NICs below it), CTSWs per zone that
every RTSW of the zone uplinks to, ATSWs that join the zones' CTSWs, the
links of each tier (emulated rate, switch queue, PFC, ECN), the traffic
classes, the switch target and the P4 program per switch role. Every key,
its default and its unit: `docs/topologies.md`.

A one-zone fabric may list its `racks` (and `ctsws`) at the top level; a
multi-zone fabric lists `zones`, each with its own `racks` and `ctsws`. Both
forms read the same through `FabricSpec.zone_list()`.

Rates: a link tier's `rate_mbps` is the emulated rate; the host tier's rate
stands for the NIC line rate `line_rate_gbps` (400 by default), so every
link represents `rate_mbps * FabricSpec.scale` Mb/s, with
`scale = line_rate_gbps * 1000 / links.host.rate_mbps`. A tier emulated at a
lower rate than the host tier (the cross-zone layer of `two_zones.yaml`)
is oversubscribed by that factor, in the running fabric as on paper.

Every model forbids unknown keys, so a typo is an error that names the key
rather than a silently ignored setting. `load_spec(path)` reads YAML and
raises `SpecError`, whose message names the file and the key path, e.g.
`topologies/bad.yaml: racks.0.hosts: value must be >= 1`; cross-field
checks name the innermost key that holds both fields
(`links.host.pfc: xon 30 must be below xoff 24`).

Names defined here: `FabricSpec`, `ServersSpec`, `ZoneSpec`, `RackSpec`, `LinkSpec`,
`PfcSpec`, `BufferSpec`, `LinksSpec`, `QosSpec`, `TrafficClass`, `ProgramsSpec`,
`SwitchSpec`, `RoutingSpec`, `SpecError`, `load_spec`, `parse_spec`,
`check_programs`, `ROLES`, `TARGETS`, `MODES`, `TIERS`, `DEFAULT_CLASSES`,
`MAX_RATE_MBPS`, `MAX_PORTS`.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from .latency import MAX_HOP_DELAY_S, TIER_ENDS, LatencySpec
from .mtu import DEFAULT_MTU, IB_MTUS, MAX_MTU, roce_ip_packet

__all__ = [
    "DEFAULT_CLASSES",
    "MAX_PORTS",
    "MAX_RATE_MBPS",
    "MODES",
    "ROLES",
    "Mode",
    "Target",
    "TARGETS",
    "TIERS",
    "BufferSpec",
    "FabricSpec",
    "LinkSpec",
    "LinksSpec",
    "PfcSpec",
    "ProgramsSpec",
    "QosSpec",
    "RackSpec",
    "RoutingSpec",
    "ServersSpec",
    "SpecError",
    "SwitchSpec",
    "TrafficClass",
    "ZoneSpec",
    "check_programs",
    "load_spec",
    "parse_spec",
]

ROLES = ("rtsw", "ctsw", "atsw")


class Target(StrEnum):
    """The switch target: `auto` is BMv2 when p4c and BMv2 are on PATH, else p4switch."""

    AUTO = "auto"
    P4SWITCH = "p4switch"
    BMV2 = "bmv2"


class Mode(StrEnum):
    """The routing mode: destination-slice pinning, 5-tuple ECMP, or E-ECMP (+ BTH dest QP)."""

    PIN = "pin"
    ECMP = "ecmp"
    EECMP = "eecmp"


TARGETS = tuple(t.value for t in Target)
MODES = tuple(m.value for m in Mode)
TIERS = ("host", "rtsw_ctsw", "ctsw_atsw")

# Mininet's TCLink shapes up to 1000 Mb/s (TCIntf.bwParamMax) and ignores
# anything above; a 2-core machine carries a few tens of Mb/s per link anyway.
MAX_RATE_MBPS = 1000
# Front-panel ports a 9-bit v1model port number can address: 1..510 (511 is
# the drop port) less the CPU port.
MAX_PORTS = 509
# Switch names are `<role><n>` and ports `<role><n>-eth<port>`: Linux allows
# 15 characters in an interface name ("rtsw9999-eth510" is 15).
MAX_SWITCHES_PER_ROLE = 9999
# A switch's index is 16 bits of its port MACs (see addressing).
MAX_SWITCHES = 0xFFFF
# 10.z.r.0/24: zone and rack indexes are one octet each.
MAX_ZONES = 256
MAX_RACKS_PER_ZONE = 256

# The traffic classes every fabric has unless its spec changes them: RoCE
# data lossless in class 3 (DSCP 26, as RoCE NICs mark it by default), CNPs
# and clear-to-send in class 7 (the programs put CNPs there whatever their
# DSCP: TC_CONTROL in p4/include/define.p4); anything else is class 0.
DEFAULT_CLASSES: dict[str, dict[str, Any]] = {
    "data": {"tc": 3, "dscp": [26], "lossless": True},
    "control": {"tc": 7, "dscp": [48], "lossless": False},
}


class SpecError(Exception):
    """A topology spec that cannot be read or is not valid; str() is one line per problem."""


class _Model(BaseModel):
    # Frozen: a spec is a value; forbid: a misspelt key must not pass silently.
    model_config = ConfigDict(extra="forbid", frozen=True)


class PfcSpec(_Model):
    """PFC (IEEE 802.1Qbb) on a tier's ports, for the lossless classes; thresholds in packets.

    A switch sends PAUSE upstream for a lossless class when the packets it
    holds from one ingress port in that class reach `xoff`, and resumes it
    when they fall to `xon`.
    """

    enabled: bool = True
    xoff: int = Field(default=24, ge=1)
    xon: int = Field(default=12, ge=0)

    @model_validator(mode="after")
    def _xon_below_xoff(self) -> PfcSpec:
        if self.enabled and not self.xon < self.xoff:
            raise ValueError(f"xon {self.xon} must be below xoff {self.xoff}")
        return self


def _renamed(old: str, new: str) -> Any:
    # A key of earlier specs: refused with the name to use instead.
    def check(cls: type, value: Any) -> Any:
        """Refuse the old key, naming the new one."""
        raise ValueError(f"no longer read, use {new}")

    return field_validator(old, mode="before")(check)


class LinkSpec(_Model):
    """One link tier: emulated rate, switch egress queue, PFC and ECN (queue sizes in packets).

    `rate_mbps` shapes both ends of every link of the tier (tc) and sets the
    switch ports' own speed, so queues build in the switch, where PFC and ECN
    act. `queue` is each switch egress queue's length; `ecn_threshold` the
    queue depth above which ECN-capable packets are marked (controller QoS
    entries); `delay_ms` / `loss_pct` add netem delay or loss (optional).
    """

    rate_mbps: float = Field(default=10, gt=0, le=MAX_RATE_MBPS)
    queue: int = Field(default=64, ge=1, le=65535)
    pfc: PfcSpec = PfcSpec()
    ecn_threshold: int = Field(default=16, ge=0, le=2**19 - 1)
    delay_ms: float | None = Field(default=None, ge=0, le=10_000)
    loss_pct: float | None = Field(default=None, ge=0, le=100)
    # Keys of earlier specs, refused with what replaces them.
    bw_mbps: None = Field(default=None, exclude=True, repr=False)
    max_queue: None = Field(default=None, exclude=True, repr=False)

    _bw = _renamed("bw_mbps", "rate_mbps (the emulated rate in Mb/s)")
    _max_queue = _renamed("max_queue", "queue (the switch egress queue in packets)")

    @model_validator(mode="after")
    def _thresholds_fit_the_queue(self) -> LinkSpec:
        if self.pfc.enabled and self.pfc.xoff > self.queue:
            raise ValueError(
                f"pfc.xoff {self.pfc.xoff} is above queue {self.queue}: "
                f"the queue would drop before PFC pauses"
            )
        if self.ecn_threshold > self.queue:
            raise ValueError(
                f"ecn_threshold {self.ecn_threshold} is above queue {self.queue}: nothing would be marked"
            )
        return self


class BufferSpec(_Model):
    """How p4switch's traffic manager counts its buffer, and its shared pool (native PFC).

    `accounting: packets` (the default): every queued packet counts 1, as
    BMv2's queues do. `bytes`: a packet counts its frame's bytes, as a
    switch's MMU does; a tier's `queue`, `pfc.xoff` and `pfc.xon` are then
    that many RoCE frames' worth of bytes (1,082 B each, so a queue of small
    ACKs holds as many bytes as one of data frames, not as many packets),
    and every lossless priority group gets headroom beyond XOFF: what its
    queue holds above XOFF, and at least the link's rate x the slowest
    tier's round trip plus a full frame (`topologies.ports.pfc_thresholds`,
    whose XOFF/XON the programs' PFC counts too). `shared_mb`: a pool of that many megabytes
    (10^6 B) every queue of a switch draws from (needs `bytes`); `alpha`:
    dynamic thresholds on it, a queue holds at most alpha x the pool still
    free (needs `shared_mb`). BMv2's queues count packets whatever this says.
    """

    accounting: Literal["packets", "bytes"] = "packets"
    shared_mb: float | None = Field(default=None, gt=0, le=1024)
    alpha: float | None = Field(default=None, gt=0, le=64)

    @model_validator(mode="after")
    def _pool_needs_bytes(self) -> BufferSpec:
        if self.shared_mb is not None and self.accounting != "bytes":
            raise ValueError("shared_mb needs accounting: bytes (the pool is counted in bytes)")
        if self.alpha is not None and self.shared_mb is None:
            raise ValueError("alpha needs shared_mb (dynamic thresholds share a pool)")
        return self

    @property
    def shared_bytes(self) -> int | None:
        """The shared pool in bytes (None: none)."""
        return None if self.shared_mb is None else round(self.shared_mb * 1e6)


class LinksSpec(_Model):
    """The link tiers: host NIC-RTSW, RTSW-CTSW, CTSW-ATSW."""

    host: LinkSpec = LinkSpec()
    rtsw_ctsw: LinkSpec = LinkSpec()
    ctsw_atsw: LinkSpec = LinkSpec()

    def tier(self, name: str) -> LinkSpec:
        """The LinkSpec of a tier by name (one of `TIERS`)."""
        if name not in TIERS:
            raise KeyError(f"no link tier {name!r} (one of {', '.join(TIERS)})")
        spec: LinkSpec = getattr(self, name)
        return spec


ClassName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,15}$")]
Dscp = Annotated[int, Field(ge=0, le=63)]


class TrafficClass(_Model):
    """A traffic class: its number (`tc`, also its egress queue), the DSCPs it takes, lossless."""

    tc: int = Field(ge=0, le=7)
    dscp: list[Dscp] = Field(default_factory=list)
    lossless: bool = False


class QosSpec(_Model):
    """Priority queues per port and the named traffic classes (class c waits in queue c).

    `classes` is merged over `DEFAULT_CLASSES` key by key, so a spec that
    says `data: {dscp: [26, 24]}` keeps data's class 3 and lossless, and the
    control class stays. DSCPs no class lists go to class 0.
    """

    queues: int = Field(default=8, ge=1, le=8)
    classes: dict[ClassName, TrafficClass] = Field(
        default_factory=lambda: {k: TrafficClass(**v) for k, v in DEFAULT_CLASSES.items()})

    @field_validator("classes", mode="before")
    @classmethod
    def _merge_defaults(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        merged: dict[Any, Any] = {k: dict(v) for k, v in DEFAULT_CLASSES.items()}
        for name, given in value.items():
            if name in merged and isinstance(given, dict):
                merged[name] = {**merged[name], **given}
            else:
                merged[name] = given
        return merged

    @model_validator(mode="after")
    def _classes_fit(self) -> QosSpec:
        owner_of_tc: dict[int, str] = {}
        owner_of_dscp: dict[int, str] = {}
        for name, c in self.classes.items():
            if c.tc >= self.queues:
                raise ValueError(
                    f"classes.{name}.tc: class {c.tc} waits in queue {c.tc}, but there are "
                    f"{self.queues} queues (tc must be 0..{self.queues - 1})"
                )
            if c.tc in owner_of_tc:
                raise ValueError(f"classes.{name}.tc: tc {c.tc} is also class "
                                 f"{owner_of_tc[c.tc]}'s")
            owner_of_tc[c.tc] = name
            for d in c.dscp:
                if d in owner_of_dscp:
                    where = "twice" if owner_of_dscp[d] == name else f"also in {owner_of_dscp[d]}"
                    raise ValueError(f"classes.{name}.dscp: DSCP {d} is listed {where}")
                owner_of_dscp[d] = name
        return self

    @property
    def lossless_tcs(self) -> tuple[int, ...]:
        """The classes PFC covers, ascending."""
        return tuple(sorted(c.tc for c in self.classes.values() if c.lossless))


class RackSpec(_Model):
    """A rack shape: `count` racks with `hosts` hosts of `nics` NICs each.

    `uplinks` is the number of parallel links from the rack's RTSW to each
    CTSW of its zone.
    """

    count: int = Field(default=1, ge=1, le=MAX_RACKS_PER_ZONE)
    hosts: int = Field(default=2, ge=1, le=64)
    nics: int = Field(default=1, ge=1, le=16)
    uplinks: int = Field(default=1, ge=1, le=16)

    @model_validator(mode="after")
    def _fits_in_a_slash_24(self) -> RackSpec:
        # Each NIC takes a /31 out of the rack's /24 (see addressing).
        if self.hosts * self.nics > 128:
            raise ValueError(
                f"hosts * nics is {self.hosts * self.nics}, a rack holds at most 128 NICs"
            )
        return self


class ZoneSpec(_Model):
    """An AI zone: its racks and the CTSWs that all of its RTSWs uplink to."""

    name: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_-]{0,15}$")
    racks: list[RackSpec] = Field(min_length=1)
    ctsws: int = Field(default=0, ge=0, le=255)
    # Parallel links from each CTSW of this zone to each ATSW.
    atsw_uplinks: int = Field(default=1, ge=1, le=16)

    def rack_list(self) -> list[RackSpec]:
        """The zone's racks, one entry per rack (shapes with count > 1 expanded)."""
        out: list[RackSpec] = []
        for shape in self.racks:
            out.extend([shape] * shape.count)
        return out

    @property
    def rack_count(self) -> int:
        """The number of racks in the zone (shapes' counts summed)."""
        return sum(shape.count for shape in self.racks)


class ProgramsSpec(_Model):
    """P4 source per switch role; relative paths are relative to the spec file."""

    rtsw: Path = Path("../p4/rtsw.p4")
    ctsw: Path = Path("../p4/ctsw.p4")
    atsw: Path = Path("../p4/atsw.p4")


class SwitchSpec(_Model):
    """Switch process settings shared by every switch of the fabric.

    Switch i (see addressing) gets device id `device_id_base + i` and
    listens on `grpc_port_base + i` (P4Runtime), `thrift_port_base + i`
    (BMv2's runtime CLI) and `ctl_port_base + i` (p4switch's control API),
    all on 127.0.0.1; the ranges must not overlap. The gRPC default, 20001
    on, lies below Linux's ephemeral range (32768-60999) with room for
    meta_24k's 1,689 switches, so no outgoing connection on this machine
    can be holding one as its own local port when `up` checks them.
    """

    device_id_base: int = Field(default=1, ge=0, le=2**32 - 1 - 4096)
    grpc_port_base: int = Field(default=20001, ge=1024, le=65535)
    thrift_port_base: int = Field(default=9090, ge=1024, le=65535)
    ctl_port_base: int = Field(default=52001, ge=1024, le=65535)
    cpu_port: int = Field(default=255, ge=1, le=511)

    def check_ranges(self, n: int) -> None:
        """Raise ValueError unless `n` switches fit every port range without overlap."""
        ranges = {key: getattr(self, key) for key in
                  ("grpc_port_base", "thrift_port_base", "ctl_port_base")}
        for key, base in ranges.items():
            if base + n - 1 > 65535:
                raise ValueError(f"{key}: {n} switch(es) need ports {base}..{base + n - 1}, "
                                 f"past 65535")
        items = sorted(ranges.items(), key=lambda kv: kv[1])
        for (k1, b1), (k2, b2) in zip(items, items[1:], strict=False):
            if b1 + n > b2:
                raise ValueError(f"{k2}: {n} switch(es) need ports {b2}..{b2 + n - 1}, which "
                                 f"overlap {k1}'s {b1}..{b1 + n - 1}")
        if self.device_id_base + n - 1 > 2**32 - 1:
            raise ValueError(f"device_id_base: {n} switch(es) overflow 32-bit device ids")


class RoutingSpec(_Model):
    """How RTSWs spread traffic over their uplinks (DESIGN.md: pin | ecmp | eecmp)."""

    mode: Literal["pin", "ecmp", "eecmp"] = "ecmp"



class ServersSpec(_Model):
    """The machines one fabric runs on (`aizone up --servers` overrides `names`).

    The first is the machine `aizone up` runs on (the controller's); the others are
    reached over ssh by address or name (docs/scale-out.md). `placement` pins nodes
    (switch or host name -> server name); the rest is placed to cut the fewest links
    (`topologies.serverplacement`).
    """

    names: list[str] = Field(min_length=1)
    placement: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_servers(self) -> ServersSpec:
        dup = sorted({n for n in self.names if self.names.count(n) > 1})
        if dup:
            raise ValueError(f"names: server {dup[0]} is named twice")
        for node, server in sorted(self.placement.items()):
            if server not in self.names:
                raise ValueError(f"placement: {node} is on {server!r}, which is not in names "
                                 f"({', '.join(self.names)})")
        return self


class FabricSpec(_Model):
    """A whole fabric preset."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
    description: str = ""
    target: Literal["auto", "p4switch", "bmv2"] = "auto"
    programs: ProgramsSpec = ProgramsSpec()
    switches: SwitchSpec = SwitchSpec()
    routing: RoutingSpec = RoutingSpec()
    # The NIC line rate the host tier's emulated rate stands for (Gb/s).
    line_rate_gbps: float = Field(default=400, gt=0, le=3200)
    links: LinksSpec = LinksSpec()
    # How p4switch's queues and PFC count (packets or bytes) and its shared pool.
    buffer: BufferSpec = BufferSpec()
    # Real propagation and switch latency, scaled like the rates (None: none).
    latency: LatencySpec | None = None
    # The IP MTU of every link (veths, the hosts' NICs); the NICs' RoCE path MTU is the
    # largest that fits (1,024 at 1,500; 4,096 from 4,160 up, e.g. jumbo 9,000).
    mtu: int = Field(default=DEFAULT_MTU, ge=roce_ip_packet(IB_MTUS[0]), le=MAX_MTU)
    qos: QosSpec = QosSpec()
    # One-zone shorthand ...
    racks: list[RackSpec] = Field(default_factory=list)
    ctsws: int = Field(default=0, ge=0, le=255)
    # ... or several zones.
    zones: list[ZoneSpec] = Field(default_factory=list)
    atsws: int = Field(default=0, ge=0, le=255)
    # Several machines (None: this one only).
    servers: ServersSpec | None = None

    @model_validator(mode="after")
    def _one_form(self) -> FabricSpec:
        if self.zones and (self.racks or self.ctsws):
            raise ValueError("give either `zones` or top-level `racks`/`ctsws`, not both")
        if not self.zones and not self.racks:
            raise ValueError("a fabric needs `racks` (one zone) or `zones`")
        zones = self.zone_list()
        if len(zones) > MAX_ZONES:
            raise ValueError(f"{len(zones)} zones, at most {MAX_ZONES} (zone z is 10.z.0.0/16)")
        for i, zone in enumerate(zones):
            n = zone.rack_count
            if n > MAX_RACKS_PER_ZONE:
                raise ValueError(f"zone {i} has {n} racks, at most {MAX_RACKS_PER_ZONE} "
                                 f"(rack r is 10.z.r.0/24)")
            if n > 1 and zone.ctsws == 0:
                raise ValueError(f"zone {i} has {n} racks but no CTSW to join them")
        if len(zones) > 1 and self.atsws == 0:
            raise ValueError(f"{len(zones)} zones but no ATSW to join them")
        if self.atsws and any(z.ctsws == 0 for z in zones):
            raise ValueError("ATSWs join CTSWs: every zone needs ctsws >= 1")
        self._check_port_counts(zones)
        self._check_counts(zones)
        self._check_latency()
        names = [z.name for z in self.zones if z.name]
        if len(names) != len(set(names)):
            raise ValueError("zone names must be unique")
        return self

    def _check_port_counts(self, zones: list[ZoneSpec]) -> None:
        limit = MAX_PORTS
        atsw_ports = 0
        for i, zone in enumerate(zones):
            for rack in zone.racks:
                n = rack.hosts * rack.nics + zone.ctsws * rack.uplinks
                if n > limit:
                    raise ValueError(f"zone {i}: an RTSW would need {n} ports, at most {limit}")
            n = sum(r.uplinks * r.count for r in zone.racks) + self.atsws * zone.atsw_uplinks
            if zone.ctsws and n > limit:
                raise ValueError(f"zone {i}: a CTSW would need {n} ports, at most {limit}")
            atsw_ports += zone.ctsws * zone.atsw_uplinks
        if self.atsws and atsw_ports > limit:
            raise ValueError(f"an ATSW would need {atsw_ports} ports, at most {limit}")

    def _check_counts(self, zones: list[ZoneSpec]) -> None:
        counts = {"rtsw": sum(z.rack_count for z in zones),
                  "ctsw": sum(z.ctsws for z in zones), "atsw": self.atsws}
        for role, n in counts.items():
            if n > MAX_SWITCHES_PER_ROLE:
                raise ValueError(f"{n} {role.upper()}s, at most {MAX_SWITCHES_PER_ROLE} "
                                 f"(interface names must fit 15 characters)")
        total = sum(counts.values())
        if total > MAX_SWITCHES:
            raise ValueError(f"{total} switches, at most {MAX_SWITCHES}")
        try:
            self.switches.check_ranges(total)
        except ValueError as exc:
            raise ValueError(f"switches.{exc}") from None

    def _check_latency(self) -> None:
        if self.latency is None:
            return
        for tier in TIERS:
            if self.links.tier(tier).delay_ms is not None:
                raise ValueError(f"links.{tier}.delay_ms: netem delay and `latency` both delay "
                                 f"the links: give one")
            for role in TIER_ENDS[tier]:
                hop_s = self.latency.egress_us(tier, role) * 1e-6 * self.scale
                if hop_s > MAX_HOP_DELAY_S:
                    key = f"switch_us.{role}" if role else f"propagation_us.{tier}"
                    raise ValueError(
                        f"latency.{key}: a frame leaving {role or 'a host'} onto {tier} would "
                        f"wait {hop_s:g} s (real us x scale {self.scale:g}), at most "
                        f"{MAX_HOP_DELAY_S:g} s")

    def zone_list(self) -> list[ZoneSpec]:
        """The zones, with the one-zone shorthand turned into a zone."""
        if self.zones:
            return list(self.zones)
        return [ZoneSpec(racks=self.racks, ctsws=self.ctsws)]

    @property
    def scale(self) -> float:
        """How many times faster the represented fabric is than the emulated one."""
        return self.line_rate_gbps * 1000 / self.links.host.rate_mbps


def _loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


# A check on a model that names the key inside it begins its message with
# that key path ("classes.data.dscp: ..."); the path joins the location.
_KEY_PREFIX = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+): (.*)$", re.S)


def _where_and_message(err: ErrorDetails) -> tuple[str, str]:
    where, message = _loc(err["loc"]), _message(err)
    m = _KEY_PREFIX.match(message)
    if err.get("type") == "value_error" and m:
        where = f"{where}.{m.group(1)}" if where else m.group(1)
        message = m.group(2)
    return where, message


def _message(err: ErrorDetails) -> str:
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind == "greater_than_equal":
        return f"value must be >= {ctx.get('ge')}"
    if kind == "greater_than":
        return f"value must be > {ctx.get('gt')}"
    if kind == "less_than_equal":
        return f"value must be <= {ctx.get('le')}"
    if kind == "less_than":
        return f"value must be < {ctx.get('lt')}"
    if kind == "literal_error":
        return f"value must be one of {ctx.get('expected')}"
    if kind == "too_short":
        return f"needs at least {ctx.get('min_length')} item(s)"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx.get('pattern')}"
    if kind == "value_error":
        # pydantic prefixes "Value error, " to our own ValueErrors.
        return str(ctx.get("error", err.get("msg", "")))
    return str(err.get("msg", kind))


def parse_spec(data: Any, *, source: str = "<spec>", base_dir: Path | None = None) -> FabricSpec:
    """Validate already-parsed YAML data; `source` names it in errors.

    With `base_dir`, relative program paths are resolved against it.
    """
    if isinstance(data, dict) and "name" not in data:
        # A preset is named after its file unless it says otherwise.
        stem = re.sub(r"[^A-Za-z0-9_.-]", "-", Path(source).stem).strip("-.") or "fabric"
        data = {"name": stem[:32], **data}
    if not isinstance(data, dict):
        raise SpecError(f"{source}: the top level must be a mapping of keys, not {type(data).__name__}")
    try:
        spec = FabricSpec.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            where, message = _where_and_message(err)
            lines.append(f"{source}: {where + ': ' if where else ''}{message}")
        raise SpecError("\n".join(lines)) from None
    if base_dir is not None:
        progs = {
            role: (p if p.is_absolute() else (base_dir / p).resolve())
            for role, p in spec.programs.model_dump().items()
        }
        spec = spec.model_copy(update={"programs": ProgramsSpec(**progs)})
    return spec


def load_spec(path: str | Path) -> FabricSpec:
    """Read and validate a topology YAML file.

    Raises `SpecError` naming the file (and the line for YAML syntax errors,
    the key path for invalid values). Program paths come back resolved
    against the file's folder; whether they exist is checked by
    `check_programs`, since a spec is valid before its programs are built.
    """
    p = Path(path)
    source = str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"{source}: no such topology file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise SpecError(f"{source}: cannot read: {exc.__class__.__name__}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if mark is not None:
            raise SpecError(
                f"{source}:{mark.line + 1}:{mark.column + 1}: YAML syntax error: {problem}"
            ) from None
        raise SpecError(f"{source}: YAML syntax error: {problem}") from None
    if data is None:
        raise SpecError(f"{source}: the file is empty")
    return parse_spec(data, source=source, base_dir=p.resolve().parent)


def check_programs(spec: FabricSpec, roles: list[str], *, source: str = "<spec>") -> dict[str, Path]:
    """The P4 source of each role in `roles`; raises `SpecError` for a missing file."""
    out: dict[str, Path] = {}
    for role in roles:
        path = getattr(spec.programs, role)
        if not path.is_file():
            raise SpecError(
                f"{source}: programs.{role}: P4 file {path} not found "
                f"(fix the path in the topology file)"
            )
        out[role] = path
    return out
