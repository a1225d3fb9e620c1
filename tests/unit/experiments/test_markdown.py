"""Tests for experiments.markdown: cells, markdown tables, a result's section and files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.markdown import (
    findings_markdown,
    fmt_spread,
    fmt_value,
    markdown_table,
    points_table,
    result_markdown,
    write_result,
)
from experiments.schema import Column, ExperimentResult, Finding, Point, Run, summarize_runs
from experiments.stats import Spread

TIME = Column(key="time_s", label="time", unit="s", digits=2)
SHARE = Column(key="slowdown", label="vs none", percent=True, digits=2)


def _result() -> ExperimentResult:
    pts = [summarize_runs(Point(params={"mode": "ecmp", "qps": 1}, runs=[
               Run(repeat=0, metrics={"time_s": 4.0}), Run(repeat=1, metrics={"time_s": 6.0})])),
           summarize_runs(Point(params={"mode": "eecmp", "qps": 8}, runs=[
               Run(repeat=0, metrics={"time_s": 3.0}, cpu_bound=True,
                   cpu_bound_reasons=["the machine's cores were 97% busy"]),
               Run(repeat=1, error="failed")]))]
    r = ExperimentResult(experiment="qp-scaling", title="QPs", command="aizone experiment "
                         "qp-scaling", started="2026-12-01T00:00:00+00:00", target="p4switch",
                         topology="topologies/ai_zone_small.yaml", topology_name="ai_zone_small",
                         repeat=2, params=[Column(key="mode", label="mode"),
                                           Column(key="qps", label="QPs")],
                         metrics=[TIME], points=pts, plots=["qp-scaling.png", "qp-scaling.svg"],
                         findings=[Finding(claim="a claim", paper="40%", measured="35%",
                                           holds=False, why="because")])
    r.tally()
    return r


@pytest.mark.parametrize(("value", "column", "text"), [
    (None, None, "–"), (True, None, "yes"), (12345, None, "12,345"), (1.23456, TIME, "1.23"),
    (0.4, SHARE, "40%"), ("rr", None, "rr"), (float("nan"), TIME, "–")],
    ids=["none", "bool", "int", "float", "percent", "text", "nan"])
def test_fmt_value(value: object, column: Column | None, text: str) -> None:
    """Each kind of value as a cell."""
    assert fmt_value(value, column) == text  # type: ignore[arg-type]


def test_fmt_spread_shows_sd_only_for_repeats() -> None:
    """n=3: mean ± sd; n=1: the mean alone."""
    assert fmt_spread(Spread(mean=5.0, sd=0.25, min=4.8, max=5.3, n=3), TIME) == "5.00 ± 0.25"
    assert fmt_spread(Spread(mean=5.0, sd=0.0, min=5, max=5, n=1), TIME) == "5.00"
    assert fmt_spread(None, TIME) == "–"


def test_markdown_table_escapes_pipes_and_aligns() -> None:
    """Header, alignment row, a row with its pipe escaped."""
    assert markdown_table(["a", "b"], [["x|y", "2"]], [False, True]) == (
        "| a | b |\n|---|---:|\n| x\\|y | 2 |\n")


def test_markdown_table_refuses_a_short_row() -> None:
    """A row with the wrong number of cells is an error naming it."""
    with pytest.raises(ValueError, match="1 cells for 2 columns"):
        markdown_table(["a", "b"], [["x"]])


def test_points_table_rows() -> None:
    """One row per point: params, mean ± sd, runs counted/CPU-bound/failed."""
    lines = points_table(_result()).splitlines()
    assert lines[0] == "| mode | QPs | time (s) | runs |"
    assert lines[2] == "| ecmp | 1 | 5.00 ± 1.41 | 2/2 |"
    assert lines[3] == "| eecmp | 8 | 3.00 | 1/2, 1 CPU-bound, 1 failed |"


def test_result_section_lists_cpu_bound_and_failed_runs() -> None:
    """Each run left out of the means: its point, repeat and the reason."""
    text = result_markdown(_result())
    assert "- mode=eecmp, qps=8 #1: CPU-bound: the machine's cores were 97% busy\n" in text
    assert "- mode=eecmp, qps=8 #2: failed: failed\n" in text
    assert "mode=ecmp, qps=1 #" not in text


def test_findings_say_whether_they_hold() -> None:
    """A finding that does not hold says so, with the paper's and the measured figure."""
    assert findings_markdown(_result().findings) == (
        "- **does not hold**: a claim. Paper: 40%. Measured: 35%. because\n")


def test_result_section_links_its_plots() -> None:
    """The section names the command, holds the table and links PNG and SVG."""
    text = result_markdown(_result(), heading="##", plot_dir="results/")
    assert text.startswith("## qp-scaling: QPs\n")
    assert "Made by `aizone experiment qp-scaling`." in text
    assert "![qp-scaling](results/qp-scaling.png) ([SVG](results/qp-scaling.svg))" in text
    assert "- mode=eecmp, qps=8: every run was CPU-bound: summary over those" in text


def test_write_result_writes_json_and_markdown(tmp_path: Path) -> None:
    """<name>.json parses back to the same numbers; <name>.md holds the table."""
    paths = write_result(_result(), tmp_path)
    assert [p.name for p in paths] == ["qp-scaling.json", "qp-scaling.md"]
    data = json.loads(paths[0].read_text())
    assert data["points"][0]["summary"]["time_s"]["mean"] == 5.0
    assert "| ecmp | 1 | 5.00 ± 1.41 | 2/2 |" in paths[1].read_text()
