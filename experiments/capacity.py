"""The fabric capacity this machine emulates, as data: what `bench/fabric_capacity.py` measured.

The bench writes each run as a `Measurement` into `docs/results/capacity.json`
(`CAPACITY_FILE`, committed with the results): the command, the date, the
machine, and per target every load level it tried (`Level`: host rate,
NICs, load carried, switch frames/s, loss, queue drops, machine CPU,
lossless, at rate) and the two capacities it found (`Summary`: the highest
lossless load, and the highest lossless load at line rate). The
experiments' sizes are derived from these figures (`experiments.sizes`),
and the results page shows them (`capacity_lines`, `rate_reason`); no
figure is written twice as a literal.

`load_capacity(path)` reads the file (`CapacityError`, naming the file and
the key, when it is missing or malformed); `add_measurement(path,
measurement)` appends a run, as the bench's `--write` does.
`host_rate(data, target)` is the host rate a target's experiments run at
(`HostRate`): the fastest rate at which the target carried all 16 NICs of
ai_zone_small lossless and at rate with the machine at most `BUSY_LIMIT`
busy, or, when no rate did, the slowest one tried, said so.

Names defined here: `CAPACITY_FILE`, `TARGETS`, `DEFAULT_TARGET`, `CapacityError`, `Level`,
`Summary`, `TargetCapacity`, `Measurement`, `CapacityFile`, `HostRate`, `BUSY_LIMIT`,
`load_capacity`, `add_measurement`, `host_rate`, `capacity_lines`,
`rate_reason`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from topologies.mtu import DEFAULT_MTU

__all__ = ["BUSY_LIMIT", "CAPACITY_FILE", "DEFAULT_TARGET", "TARGETS", "CapacityError", "CapacityFile", "HostRate", "Level",
           "Measurement", "Summary", "TargetCapacity", "add_measurement", "capacity_lines",
           "host_rate", "load_capacity", "rate_reason"]

CAPACITY_FILE = Path(__file__).resolve().parents[1] / "docs" / "results" / "capacity.json"
TARGETS = ("p4switch", "bmv2")
# The target the committed results were first measured on, and the one that carries the whole
# fabric at rate on this machine (CAPACITY_FILE); `--target bmv2` runs the same grids on the
# reference target (the P4 programs' PFC is the same on both).
DEFAULT_TARGET = TARGETS[0]
_SHOWN = {"p4switch": "p4switch", "bmv2": "BMv2"}


class CapacityError(ValueError):
    """The capacity file is missing or does not hold what the bench writes."""


class _Model(BaseModel):
    # The bench keeps more figures per level than the page shows (host packets/s, retransmits,
    # CPU per process): those are kept in the file and ignored here.
    model_config = ConfigDict(extra="ignore", frozen=True)


class Level(_Model):
    """One load level the bench tried: `nics` NICs each sending at `rate_mbps`."""

    rate_mbps: float = Field(gt=0)
    nics: int = Field(ge=1)
    carried_mbps: float | None = None  # goodput in frame bytes over the job's span
    switch_pps: int | None = None  # frames/s forwarded by all switches
    loss: float | None = None  # frames lost on cables (not at a switch queue), a fraction
    tm_dropped: int | None = None  # tail drops at switch queues
    machine_cpu: float | None = None  # the machine's busy share, 0..1
    lossless: bool
    at_rate: bool
    error: str | None = None  # the level did not run to the end


class Summary(_Model):
    """A capacity: the level with the highest load carried among those that qualify."""

    carried_mbps: float
    switch_pps: int
    nics: int
    rate_mbps: float
    machine_cpu: float


class TargetCapacity(_Model):
    """One target's levels and capacities in one run of the bench."""

    capacity: Summary | None = None  # lossless
    capacity_at_rate: Summary | None = None  # lossless and carrying >= 90% of the offer
    levels: list[Level] = Field(default_factory=list)
    note: str | None = None  # what the figures mean, written by whoever ran the bench


class Measurement(_Model):
    """One run of `bench/fabric_capacity.py`."""

    command: str
    date: str  # YYYY-MM-DD, UTC
    seconds_total: float | None = None
    machine: dict[str, float | int | str | None] = Field(default_factory=dict)
    why: str | None = None  # why it was run again (shown beside a later measurement)
    # The links' IP MTU it ran at (runs from before the bench said it ran at the default 1,500).
    mtu: int = DEFAULT_MTU
    targets: dict[str, TargetCapacity]


class CapacityFile(_Model):
    """`docs/results/capacity.json`: every run of the bench, the oldest first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    what: str = ""
    provenance: str = ""
    measurements: list[Measurement] = Field(min_length=1)

    def latest_levels(self, target: str, mtu: int | None = None) -> list[Level]:
        """The levels of `target` in the newest measurement that kept them (at links of IP MTU
        `mtu`, when given)."""
        for m in reversed(self.measurements):
            got = m.targets.get(target)
            if got is not None and got.levels and mtu in (None, m.mtu):
                return got.levels
        return []


def load_capacity(path: Path = CAPACITY_FILE) -> CapacityFile:
    """The capacity file at `path`; `CapacityError` naming the file (and the key) otherwise."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise CapacityError(f"{path}: cannot read the fabric capacity ({exc.strerror}); run "
                            "bench/fabric_capacity.py --write to measure it") from None
    try:
        return CapacityFile.model_validate_json(text)
    except ValidationError as exc:
        raise CapacityError(f"{path}: {_first_error(exc)}"
                            + (f" (and {exc.error_count() - 1} more)"
                               if exc.error_count() > 1 else "")) from None


def _first_error(exc: ValidationError) -> str:
    """Where the first error of `exc` is (its keys, dotted) and what it says."""
    first = exc.errors()[0]
    where = ".".join(str(k) for k in first["loc"]) or "the top level"
    return f"{where}: {first['msg']}"


# Every NIC of ai_zone_small: the experiments' largest collectives use them all.
FABRIC_NICS = 16
# The busiest the machine may have been at a level the experiments take their rate from: their
# heavier points send more frames than the bench's permutation (a ring with split messages over
# 8 QPs, twice round-robin's), so a level that needed more of the 2 cores leaves them none.
BUSY_LIMIT = 0.8


@dataclass(frozen=True, kw_only=True)
class HostRate:
    """The host rate a target's experiments run at, and the capacity level it comes from."""

    target: str
    rate_mbps: float
    level: Level  # the FABRIC_NICS level measured at that rate
    at_rate: bool  # False: no rate tried carried every NIC at rate; the slowest is taken
    mtu: int | None = None  # the links' IP MTU of the measurement it comes from (None: any)


def host_rate(data: CapacityFile, target: str, mtu: int | None = None) -> HostRate:
    """The fastest host rate at which `target` carried every NIC of ai_zone_small lossless and
    at rate with the machine at most `BUSY_LIMIT` busy (the newest levels kept, at links of IP
    MTU `mtu` when given); when none did, the slowest rate tried, `at_rate` False
    (a slower one was never measured, so nothing says it would be at rate either).
    `CapacityError` when the target has no such level at all."""
    full = [r for r in data.latest_levels(target, mtu)
            if r.error is None and r.nics == FABRIC_NICS and r.carried_mbps is not None]
    if not full:
        at = f" at MTU {mtu}" if mtu is not None else ""
        raise CapacityError(f"{CAPACITY_FILE.name}: {target}: no level with all {FABRIC_NICS} "
                            f"NICs measured{at}; run bench/fabric_capacity.py --targets "
                            f"{target} --write")
    good = [r for r in full if r.lossless and r.at_rate and _roomy(r)]
    if good:
        best = max(good, key=lambda r: r.rate_mbps)
        return HostRate(target=target, rate_mbps=best.rate_mbps, level=best, at_rate=True,
                        mtu=mtu)
    slowest = min(full, key=lambda r: r.rate_mbps)
    return HostRate(target=target, rate_mbps=slowest.rate_mbps, level=slowest, at_rate=False,
                    mtu=mtu)


def _roomy(level: Level) -> bool:
    """Whether the machine was at most `BUSY_LIMIT` busy at `level` (unmeasured: taken so)."""
    return level.machine_cpu is None or level.machine_cpu <= BUSY_LIMIT


def add_measurement(path: Path, measurement: dict[str, Any]) -> CapacityFile:
    """Append `measurement` (a `Measurement` as JSON data, every figure the bench keeps) to
    the file at `path`, made when missing; the file as written. `CapacityError` when the
    measurement or the file there is malformed (nothing is written then)."""
    try:
        Measurement.model_validate(measurement)
    except ValidationError as exc:
        raise CapacityError(f"the new measurement: {_first_error(exc)}") from None
    if path.exists():
        load_capacity(path)  # a malformed file is said, not overwritten
        data = json.loads(path.read_text())
        data["measurements"].append(measurement)
    else:
        data = {"what": "The fabric capacity bench/fabric_capacity.py measured here.",
                "provenance": "Written by bench/fabric_capacity.py --write.",
                "measurements": [measurement]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return load_capacity(path)


def _parts(got: TargetCapacity) -> str:
    parts = []
    for cap, what in ((got.capacity, "lossless"), (got.capacity_at_rate, "lossless and at rate")):
        if cap is None:
            parts.append(f"{what}: no level")
            continue
        parts.append(f"{what}: **{cap.carried_mbps:.1f} emulated Mb/s** "
                     f"({cap.switch_pps:,} switch frames/s; {cap.nics} NICs at "
                     f"{cap.rate_mbps:g} Mb/s, machine CPU {cap.machine_cpu:.0%})")
    return "; ".join(parts) + "." + (f" {got.note}" if got.note else "")


def _when(m: Measurement) -> str:
    names = [_SHOWN.get(t, t) for t in m.targets]
    text = m.date
    if m.seconds_total is not None:
        text += f", {m.seconds_total:.0f} s"
    load = m.machine.get("load_start")
    if isinstance(load, int | float):
        text += f", load {load:g} at start"
    if len(names) > 1:
        text += f" ({' then '.join(names)} in one run)"
    return text


def _row(target: str, mtu: int, r: Level) -> str:
    offered = f"{r.rate_mbps * r.nics:g}"
    if r.error is not None or r.carried_mbps is None:
        return (f"| {target} | {mtu} | {r.rate_mbps:g} | {r.nics} | {offered} | – | – | – | – | "
                f"– | **no** ({r.error or 'not measured'}) | no |")
    return (f"| {target} | {mtu} | {r.rate_mbps:g} | {r.nics} | {offered} | "
            f"{r.carried_mbps:.1f} | "
            f"{r.switch_pps or 0:,} | {r.loss or 0.0:.3%} | {r.tm_dropped or 0} | "
            f"{r.machine_cpu or 0.0:.0%} | {'yes' if r.lossless else '**no**'} | "
            f"{'yes' if r.at_rate else 'no'} |")


def capacity_lines(data: CapacityFile) -> list[str]:
    """The capacity as the results page shows it: a bullet per target and run, then every
    level measured as a table."""
    first, *later = data.measurements
    lines = []
    for target in TARGETS:
        got = first.targets.get(target)
        lines.append(f"- {target}: " + _parts(got) if got is not None else
                     f"- {target}: not measured for this page (run `{first.command}`).")
    for m in later:
        for target, got in m.targets.items():
            lines.append(f"- {target}" + (f", {m.why}" if m.why else ", measured again")
                         + f" (`{m.command}`, links at MTU {m.mtu:,}"
                         + (f", {m.seconds_total:.0f} s" if m.seconds_total is not None else "")
                         + "): " + _parts(got))
    lines.append(f"- Measured by `{first.command}`, {_when(first)}; each level is a "
                 "permutation whose every flow crosses the spine, uplinks at 4x the host rate "
                 "(no emulated link is the bottleneck), 2 s of data per flow.")
    rows = [_row(target, m.mtu, r) for m in data.measurements
            for target in TARGETS if target in m.targets for r in m.targets[target].levels]
    if rows:
        lines += ["", "| target | link MTU | host Mb/s | NICs | offered Mb/s | carried Mb/s | "
                  "switch frames/s | loss on cables | queue drops | machine CPU | lossless | at "
                  "rate (>= 90%) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
                  *rows]
    return lines


def rate_reason(data: CapacityFile, chosen: HostRate) -> str:
    """Why a target's experiments run their host links at `chosen.rate_mbps`, from its levels."""
    shown = _SHOWN.get(chosen.target, chosen.target)
    full = chosen.level
    offered = FABRIC_NICS * chosen.rate_mbps
    levels = data.latest_levels(chosen.target, chosen.mtu)
    faster = [r for r in levels
              if r.error is None and r.rate_mbps > chosen.rate_mbps and not r.at_rate]
    text = (f"`bench/fabric_capacity.py` (below) found {shown} carrying all {FABRIC_NICS} NICs "
            f"of ai_zone_small at {chosen.rate_mbps:g} Mb/s "
            + ("at rate" if chosen.at_rate else "**below rate**")
            + f" ({full.carried_mbps or 0.0:.1f} of {offered:g} Mb/s, "
            f"{full.switch_pps or 0:,} switch frames/s, machine CPU {full.machine_cpu or 0.0:.0%})")
    busy = [r for r in levels
            if r.error is None and r.nics == FABRIC_NICS and r.rate_mbps > chosen.rate_mbps
            and r.at_rate and r.lossless and not _roomy(r)]
    if chosen.at_rate and busy:
        r = min(busy, key=lambda x: x.rate_mbps)
        text += (f"; at {r.rate_mbps:g} Mb/s too ({r.carried_mbps or 0.0:.1f} of "
                 f"{r.rate_mbps * r.nics:g} Mb/s), but with the machine {r.machine_cpu or 0.0:.0%}"
                 f" busy, over the {BUSY_LIMIT:.0%} that leaves the experiments' heavier points "
                 "(split messages over 8 QPs send twice the frames) room")
    elif chosen.at_rate and faster:
        r = min(faster, key=lambda x: (x.rate_mbps, x.nics))
        text += (f", but not {r.nics} NICs at {r.rate_mbps:g} Mb/s ({r.carried_mbps or 0.0:.1f} "
                 f"of {r.rate_mbps * r.nics:g} Mb/s, machine CPU {r.machine_cpu or 0.0:.0%})")
    if not chosen.at_rate:
        return (text + f": no rate tried runs the whole fabric at line rate on {shown}, so its "
                f"experiments run at the slowest tried, {chosen.rate_mbps:g} Mb/s, and their "
                f"times measure {shown}'s forwarding as well as the emulated fabric (each "
                "experiment's calibration says what one flow alone reached).")
    return (text + f": {chosen.rate_mbps:g} Mb/s is the fastest host rate tried at which the "
            f"whole fabric runs at line rate on {shown} with the machine at most "
            f"{BUSY_LIMIT:.0%} busy, so its experiments run at it, and their "
            "heaviest collectives sit close to what this machine can emulate (the per-run checks "
            "below say when one did not keep up).")
