"""The results of an experiment as data: what the JSON file holds and the tables are made of.

An `ExperimentResult` is one experiment's run: where and how it ran
(machine, versions, target, topology file, scale, repeats, sizes), its
grid (`Point`s: the parameters and every repeat's `Run`), the summary of
each metric over a point's repeats (`experiments.stats.Spread`), the
findings set against the paper's (`Finding`), notes and the plots written.

A run that the emulator rather than the emulated fabric limited is
`cpu_bound` with the reasons; a point's summary leaves those runs out
when it has others (`summarize_runs`), and says so. The JSON is
`ExperimentResult.model_dump_json()`; `load_result(path)` reads one back
(the smoke test and `aizone experiment all` do).

Names defined here: `SCHEMA_VERSION`, `Column`, `Run`, `Point`,
`Finding`, `ExperimentResult`, `summarize_runs`, `load_result`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .stats import Spread

__all__ = ["SCHEMA_VERSION", "Column", "ExperimentResult", "Finding", "Point", "Run",
           "load_result", "summarize_runs"]

SCHEMA_VERSION = 1
Param = str | int | float | bool | None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Column(_Model):
    """A parameter or metric as a table shows it."""

    key: str
    label: str
    unit: str = ""
    digits: int = 2
    percent: bool = False  # a fraction shown as a percentage


class Run(_Model):
    """One repeat of one grid point."""

    repeat: int
    metrics: dict[str, float | None] = Field(default_factory=dict)
    cpu_bound: bool = False
    cpu_bound_reasons: list[str] = Field(default_factory=list)
    error: str | None = None
    job_id: int | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class Point(_Model):
    """One grid point: its parameters, its repeats and their summary."""

    params: dict[str, Param]
    runs: list[Run] = Field(default_factory=list)
    summary: dict[str, Spread] = Field(default_factory=dict)
    counted: int = 0  # the runs the summary is over
    cpu_bound_runs: int = 0
    failed_runs: int = 0
    note: str | None = None


class Finding(_Model):
    """One of the paper's claims, and what this run measured about it."""

    claim: str
    paper: str
    measured: str
    holds: bool | None  # None: could not be decided (no data)
    why: str = ""


class ExperimentResult(_Model):
    """One experiment's results file: how and where it ran, its points and findings."""

    schema_version: int = SCHEMA_VERSION
    experiment: str
    title: str
    command: str
    started: str  # ISO 8601, UTC
    seconds: float = 0.0
    machine: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, Any] = Field(default_factory=dict)
    target: str
    topology: str  # the file that ran (a preset or a variant written next to the results)
    topology_name: str
    scale: dict[str, Any] = Field(default_factory=dict)
    repeat: int
    quick: bool = False
    sizes: dict[str, Any] = Field(default_factory=dict)
    params: list[Column] = Field(default_factory=list)
    metrics: list[Column] = Field(default_factory=list)
    points: list[Point] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    plots: list[str] = Field(default_factory=list)  # file names, next to the JSON
    runs: int = 0
    cpu_bound_runs: int = 0
    failed_runs: int = 0
    fabric_seconds: dict[str, float] = Field(default_factory=dict)  # bring-up, tear-down
    # One flow alone after each bring-up: the share of line rate it reached (Session.calibrate).
    calibration: list[dict[str, Any]] = Field(default_factory=list)

    def point(self, **params: Param) -> Point | None:
        """The first point whose parameters include all of `params`."""
        for p in self.points:
            if all(p.params.get(k) == v for k, v in params.items()):
                return p
        return None

    def spread(self, metric: str, **params: Param) -> Spread | None:
        """The summary of `metric` at the first point matching `params`, or None."""
        p = self.point(**params)
        return p.summary.get(metric) if p is not None else None

    def tally(self) -> None:
        """Fill in the run counts from the points."""
        self.runs = sum(len(p.runs) for p in self.points)
        self.cpu_bound_runs = sum(p.cpu_bound_runs for p in self.points)
        self.failed_runs = sum(p.failed_runs for p in self.points)


def summarize_runs(point: Point) -> Point:
    """Fill a point's summary: over its runs that did not fail and were not CPU-bound.

    When every run that did not fail was CPU-bound, the summary is over
    those, and the point's note says so (the table marks it).
    """
    ok = [r for r in point.runs if r.error is None]
    clean = [r for r in ok if not r.cpu_bound]
    used = clean or ok
    keys: list[str] = []
    for r in used:
        keys += [k for k in r.metrics if k not in keys]
    summary: dict[str, Spread] = {}
    for k in keys:
        s = Spread.of(r.metrics.get(k) for r in used)
        if s is not None:
            summary[k] = s
    point.summary = summary
    point.counted = len(used)
    point.cpu_bound_runs = sum(1 for r in point.runs if r.cpu_bound)
    point.failed_runs = len(point.runs) - len(ok)
    if not ok and point.runs:
        point.note = "every run failed"
    elif not clean and ok:
        point.note = "every run was CPU-bound: summary over those"
    elif len(clean) < len(ok):
        point.note = f"{len(ok) - len(clean)} CPU-bound run(s) left out"
    else:
        point.note = None
    return point


def load_result(path: Path) -> ExperimentResult:
    """Read an experiment's JSON file back (ValueError naming the file when it does not parse)."""
    try:
        return ExperimentResult.model_validate_json(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not an experiment result: {exc}") from None
