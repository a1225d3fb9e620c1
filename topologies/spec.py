"""The topology spec: what a fabric preset (`topologies/*.yaml`) may say.

A spec describes the shape of an emulated AI backend fabric, not its
addresses (those come from `topologies.addressing`): AI zones made of racks
(one RTSW each, hosts with one or more NICs below it), CTSWs per zone that
every RTSW of the zone uplinks to, ATSWs that join the zones' CTSWs, link
shaping per tier, the switch target and the P4 program per switch role.

A one-zone fabric may list its `racks` (and `ctsws`) at the top level; a
multi-zone fabric lists `zones`, each with its own `racks` and `ctsws`. Both
forms read the same through `FabricSpec.zone_list()`.

Every model forbids unknown keys, so a typo is an error that names the key
rather than a silently ignored setting. `load_spec(path)` reads YAML and
raises `SpecError`, whose message names the file and the key path, e.g.
`topologies/bad.yaml: racks.0.hosts: value must be >= 1`.

Names defined here: `FabricSpec`, `ZoneSpec`, `RackSpec`, `LinkSpec`,
`LinksSpec`, `ProgramsSpec`, `SwitchSpec`, `RoutingSpec`, `SpecError`,
`load_spec`, `parse_spec`, `check_programs`, `ROLES`, `TARGETS`, `MODES`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

__all__ = [
    "MODES",
    "ROLES",
    "TARGETS",
    "FabricSpec",
    "LinkSpec",
    "LinksSpec",
    "ProgramsSpec",
    "RackSpec",
    "RoutingSpec",
    "SpecError",
    "SwitchSpec",
    "ZoneSpec",
    "check_programs",
    "load_spec",
    "parse_spec",
]

ROLES = ("rtsw", "ctsw", "atsw")
TARGETS = ("auto", "p4switch", "bmv2")
MODES = ("pin", "ecmp", "eecmp")


class SpecError(Exception):
    """A topology spec that cannot be read or is not valid; str() is one line per problem."""


class _Model(BaseModel):
    # Frozen: a spec is a value; forbid: a misspelt key must not pass silently.
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinkSpec(_Model):
    """Shaping of one link tier. Unset fields leave the veth unshaped."""

    bw_mbps: float | None = Field(default=None, gt=0, le=100_000)
    delay_ms: float | None = Field(default=None, ge=0, le=10_000)
    loss_pct: float | None = Field(default=None, ge=0, le=100)
    max_queue: int | None = Field(default=None, ge=1)

    @property
    def shaped(self) -> bool:
        return any(
            v is not None for v in (self.bw_mbps, self.delay_ms, self.loss_pct, self.max_queue)
        )


class LinksSpec(_Model):
    """Link shaping per tier: host NIC-RTSW, RTSW-CTSW, CTSW-ATSW."""

    host: LinkSpec = LinkSpec()
    rtsw_ctsw: LinkSpec = LinkSpec()
    ctsw_atsw: LinkSpec = LinkSpec()


class RackSpec(_Model):
    """A rack shape: `count` racks with `hosts` hosts of `nics` NICs each.

    `uplinks` is the number of parallel links from the rack's RTSW to each
    CTSW of its zone (the paper's RTSW-CTSW 1:2 ratio is a matter of CTSW
    count and uplinks, not of this field alone).
    """

    count: int = Field(default=1, ge=1, le=256)
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
    ctsws: int = Field(default=0, ge=0, le=16)
    # Parallel links from each CTSW of this zone to each ATSW.
    atsw_uplinks: int = Field(default=1, ge=1, le=16)

    def rack_list(self) -> list[RackSpec]:
        """The zone's racks, one entry per rack (shapes with count > 1 expanded)."""
        out: list[RackSpec] = []
        for shape in self.racks:
            out.extend([shape] * shape.count)
        return out


class ProgramsSpec(_Model):
    """P4 source per switch role; relative paths are relative to the spec file."""

    rtsw: Path = Path("../p4/rtsw.p4")
    ctsw: Path = Path("../p4/ctsw.p4")
    atsw: Path = Path("../p4/atsw.p4")


class SwitchSpec(_Model):
    """Switch process settings shared by every switch of the fabric."""

    device_id_base: int = Field(default=1, ge=0, le=2**32 - 1 - 4096)
    grpc_port_base: int = Field(default=50001, ge=1024, le=65535 - 1024)
    thrift_port_base: int = Field(default=9090, ge=1024, le=65535 - 1024)
    cpu_port: int = Field(default=255, ge=1, le=511)


class RoutingSpec(_Model):
    """How RTSWs spread traffic over their uplinks (DESIGN.md: pin | ecmp | eecmp)."""

    mode: Literal["pin", "ecmp", "eecmp"] = "ecmp"


class FabricSpec(_Model):
    """A whole fabric preset."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
    description: str = ""
    target: Literal["auto", "p4switch", "bmv2"] = "auto"
    programs: ProgramsSpec = ProgramsSpec()
    switches: SwitchSpec = SwitchSpec()
    routing: RoutingSpec = RoutingSpec()
    links: LinksSpec = LinksSpec()
    # One-zone shorthand ...
    racks: list[RackSpec] = Field(default_factory=list)
    ctsws: int = Field(default=0, ge=0, le=16)
    # ... or several zones.
    zones: list[ZoneSpec] = Field(default_factory=list)
    atsws: int = Field(default=0, ge=0, le=16)

    @model_validator(mode="after")
    def _one_form(self) -> FabricSpec:
        if self.zones and (self.racks or self.ctsws):
            raise ValueError("give either `zones` or top-level `racks`/`ctsws`, not both")
        if not self.zones and not self.racks:
            raise ValueError("a fabric needs `racks` (one zone) or `zones`")
        zones = self.zone_list()
        if len(zones) > 64:
            raise ValueError(f"{len(zones)} zones, at most 64")
        for i, zone in enumerate(zones):
            n = len(zone.rack_list())
            if n > 128:
                raise ValueError(f"zone {i} has {n} racks, at most 128")
            if n > 1 and zone.ctsws == 0:
                raise ValueError(f"zone {i} has {n} racks but no CTSW to join them")
        if len(zones) > 1 and self.atsws == 0:
            raise ValueError(f"{len(zones)} zones but no ATSW to join them")
        if self.atsws and any(z.ctsws == 0 for z in zones):
            raise ValueError("ATSWs join CTSWs: every zone needs ctsws >= 1")
        self._check_port_counts(zones)
        names = [z.name for z in self.zones if z.name]
        if len(names) != len(set(names)):
            raise ValueError("zone names must be unique")
        return self

    def _check_port_counts(self, zones: list[ZoneSpec]) -> None:
        # Ports 1..510 less the CPU port: what a 9-bit v1model port can address.
        limit = 509
        atsw_ports = 0
        for i, zone in enumerate(zones):
            racks = zone.rack_list()
            for rack in racks:
                n = rack.hosts * rack.nics + zone.ctsws * rack.uplinks
                if n > limit:
                    raise ValueError(f"zone {i}: an RTSW would need {n} ports, at most {limit}")
            n = sum(r.uplinks for r in racks) + self.atsws * zone.atsw_uplinks
            if zone.ctsws and n > limit:
                raise ValueError(f"zone {i}: a CTSW would need {n} ports, at most {limit}")
            atsw_ports += zone.ctsws * zone.atsw_uplinks
        if self.atsws and atsw_ports > limit:
            raise ValueError(f"an ATSW would need {atsw_ports} ports, at most {limit}")

    def zone_list(self) -> list[ZoneSpec]:
        """The zones, with the one-zone shorthand turned into a zone."""
        if self.zones:
            return list(self.zones)
        return [ZoneSpec(racks=self.racks, ctsws=self.ctsws)]


def _loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


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
            where = _loc(err["loc"])
            lines.append(f"{source}: {where + ': ' if where else ''}{_message(err)}")
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
