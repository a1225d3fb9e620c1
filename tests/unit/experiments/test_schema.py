"""Tests for experiments.schema: a point's summary over its repeats, the JSON round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.schema import (
    Column,
    ExperimentResult,
    Finding,
    Point,
    Run,
    load_result,
    summarize_runs,
)


def _result(points: list[Point]) -> ExperimentResult:
    return ExperimentResult(experiment="qp-scaling", title="t", command="aizone experiment x",
                            started="2026-12-01T00:00:00+00:00", target="p4switch",
                            topology="topologies/ai_zone_small.yaml",
                            topology_name="ai_zone_small", repeat=3,
                            params=[Column(key="mode", label="mode")],
                            metrics=[Column(key="time_s", label="time", unit="s")],
                            points=points)


def test_summary_leaves_cpu_bound_runs_out() -> None:
    """Runs 2 s and 4 s count (mean 3); the CPU-bound 10 s one is left out and noted."""
    p = Point(params={"mode": "ecmp"}, runs=[
        Run(repeat=0, metrics={"time_s": 2.0}),
        Run(repeat=1, metrics={"time_s": 10.0}, cpu_bound=True, cpu_bound_reasons=["x"]),
        Run(repeat=2, metrics={"time_s": 4.0})])
    summarize_runs(p)
    assert p.summary["time_s"].mean == 3.0
    assert (p.counted, p.cpu_bound_runs, p.failed_runs) == (2, 1, 0)
    assert p.note == "1 CPU-bound run(s) left out"


def test_summary_over_cpu_bound_runs_when_there_are_no_others() -> None:
    """Both runs CPU-bound: the summary is over them (mean 5), and the note says so."""
    p = Point(params={}, runs=[Run(repeat=0, metrics={"time_s": 4.0}, cpu_bound=True),
                               Run(repeat=1, metrics={"time_s": 6.0}, cpu_bound=True)])
    summarize_runs(p)
    assert p.summary["time_s"].mean == 5.0
    assert p.note == "every run was CPU-bound: summary over those"


def test_failed_runs_are_counted_not_summarised() -> None:
    """A failed run has no metrics; it is counted as failed."""
    p = Point(params={}, runs=[Run(repeat=0, error="the collective failed"),
                               Run(repeat=1, metrics={"time_s": 1.0})])
    summarize_runs(p)
    assert (p.counted, p.failed_runs, p.summary["time_s"].n) == (1, 1, 1)


def test_result_round_trips_through_json(tmp_path: Path) -> None:
    """What is written reads back equal; a point is found by its parameters."""
    p = summarize_runs(Point(params={"mode": "eecmp", "qps": 8},
                             runs=[Run(repeat=0, metrics={"time_s": 1.5})]))
    r = _result([p])
    r.findings = [Finding(claim="c", paper="p", measured="m", holds=True)]
    r.tally()
    path = tmp_path / "r.json"
    path.write_text(r.model_dump_json())
    back = load_result(path)
    assert back == r
    assert back.spread("time_s", mode="eecmp", qps=8).mean == 1.5
    assert back.point(mode="pin") is None
    assert (back.runs, back.cpu_bound_runs) == (1, 0)


def test_load_result_names_the_file(tmp_path: Path) -> None:
    """A file that is not a result: ValueError naming it."""
    path = tmp_path / "bad.json"
    path.write_text('{"experiment": 1}')
    with pytest.raises(ValueError, match="bad.json: not an experiment result"):
        load_result(path)
