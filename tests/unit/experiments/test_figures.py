"""Tests for experiments.figures: series grouped by hand, files written (PNG and SVG)."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.figures import bar_panel, line_panel, new_figure, save, series
from experiments.schema import Column, ExperimentResult, Point, Run, summarize_runs


def _result() -> ExperimentResult:
    pts = []
    for mode, q, t in (("ecmp", 1, 4.0), ("ecmp", 8, 4.1), ("eecmp", 8, 2.5), ("eecmp", 1, 4.2)):
        pts.append(summarize_runs(Point(params={"mode": mode, "qps": q}, runs=[
            Run(repeat=0, metrics={"time_s": t}), Run(repeat=1, metrics={"time_s": t + 0.2})])))
    return ExperimentResult(experiment="x", title="x", command="c", started="s",
                            target="p4switch", topology="t", topology_name="t", repeat=2,
                            params=[Column(key="mode", label="mode")],
                            metrics=[Column(key="time_s", label="t")], points=pts)


def test_series_groups_and_orders_by_x() -> None:
    """Per mode, the points in order of QPs (eecmp's were given 8 then 1)."""
    got = series(_result(), "time_s", "qps", ("mode",))
    assert {k: [x for x, _ in v] for k, v in got.items()} == {("ecmp",): [1, 8],
                                                              ("eecmp",): [1, 8]}
    assert [p.summary["time_s"].mean for _, p in got[("eecmp",)]] == pytest.approx([4.3, 2.6])


def test_series_where_filters() -> None:
    """Only the points whose parameters match `where`."""
    assert list(series(_result(), "time_s", "qps", ("mode",), where={"mode": "ecmp"})) == [
        ("ecmp",)]


def test_save_writes_png_and_svg(tmp_path: Path) -> None:
    """Both files, non-empty, PNG signature and an SVG document."""
    fig, (a, b) = new_figure(2)
    line_panel(a, _result(), "time_s", "qps", ("mode",), log2x=True)
    bar_panel(b, _result(), "time_s", lambda p: str(p.params["mode"]))
    names = save(fig, tmp_path, "plot")
    assert names == ["plot.png", "plot.svg"]
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "plot.svg").read_bytes()[:2000]
