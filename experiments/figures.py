"""Plots of experiment results (matplotlib, Agg): PNG and SVG of each figure.

Helpers the experiments draw with, each taking an `ExperimentResult`:

- `series(result, metric, x, by, where)`: for each value of the `by`
  parameters, the points in order of parameter `x` and each one's spread
  of `metric` (what a line with error bars is made of);
- `line_panel(ax, result, metric, x, by, ...)`: those as lines with sd
  error bars (CPU-bound points drawn hollow);
- `bar_panel(ax, result, metric, label_of, ...)`: one bar per point with
  its sd and each repeat's value as a dot;
- `save(fig, out_dir, stem)`: `stem.png` and `stem.svg`; the file names.

Names defined here: `series`, `line_panel`, `bar_panel`, `save`, `new_figure`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .schema import ExperimentResult, Param, Point

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, imported when a figure is first drawn (the
    `aizone` command line loads this module without drawing anything)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt

__all__ = ["bar_panel", "line_panel", "new_figure", "save", "series"]


def new_figure(panels: int, *, width: float = 5.2, height: float = 3.8) -> tuple[Figure,
                                                                                  list[Axes]]:
    """A figure of `panels` side by side (`width` x `height` inches each) and their axes."""
    fig, axes = _pyplot().subplots(1, panels, figsize=(width * panels, height), squeeze=False)
    return fig, list(axes[0])


def series(result: ExperimentResult, metric: str, x: str, by: Sequence[str],
           where: dict[str, Param] | None = None
           ) -> dict[tuple[Param, ...], list[tuple[Param, Point]]]:
    """Points grouped by the `by` parameters, each group in order of `x` (see the module)."""
    groups: dict[tuple[Param, ...], list[tuple[Param, Point]]] = {}
    for p in result.points:
        if where and any(p.params.get(k) != v for k, v in where.items()):
            continue
        if metric not in p.summary:
            continue
        key = tuple(p.params.get(b) for b in by)
        groups.setdefault(key, []).append((p.params.get(x), p))
    for pts in groups.values():
        pts.sort(key=lambda t: (t[0] is None, t[0]))
    return groups


def line_panel(ax: Axes, result: ExperimentResult, metric: str, x: str, by: Sequence[str], *,
               where: dict[str, Param] | None = None, ylabel: str = "", title: str = "",
               label: Callable[[tuple[Param, ...]], str] | None = None,
               log2x: bool = False) -> None:
    """Lines of metric against x, one per `by` group, with sd error bars."""
    for key, pts in series(result, metric, x, by, where).items():
        xs = [float(v) for v, _ in pts]  # type: ignore[arg-type]
        means = [p.summary[metric].mean for _, p in pts]
        sds = [p.summary[metric].sd for _, p in pts]
        name = label(key) if label else " ".join(str(k) for k in key)
        line = ax.errorbar(xs, means, yerr=sds, marker="o", capsize=3, label=name)
        hollow = [(xv, m) for xv, m, (_, p) in zip(xs, means, pts, strict=True)
                  if p.cpu_bound_runs and p.cpu_bound_runs >= len(p.runs) - p.failed_runs]
        if hollow:
            ax.scatter([h[0] for h in hollow], [h[1] for h in hollow], s=90,
                       facecolors="none", edgecolors=line[0].get_color(), linewidths=1.5)
    if log2x:
        ax.set_xscale("log", base=2)
        ticks = sorted({float(p.params[x]) for p in result.points  # type: ignore[arg-type]
                        if p.params.get(x) is not None})
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or metric)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def bar_panel(ax: Axes, result: ExperimentResult, metric: str,
              label_of: Callable[[Point], str], *, points: Sequence[Point] | None = None,
              ylabel: str = "", title: str = "", colors: Sequence[Any] | None = None) -> None:
    """One bar per point (mean, sd error bar), each counted repeat as a dot."""
    pts = [p for p in (points if points is not None else result.points) if metric in p.summary]
    xs = list(range(len(pts)))
    means = [p.summary[metric].mean for p in pts]
    sds = [p.summary[metric].sd for p in pts]
    ax.bar(xs, means, yerr=sds, capsize=3, color=colors[:len(pts)] if colors else None,
           alpha=0.8)
    for i, p in enumerate(pts):
        vals = [r.metrics.get(metric) for r in p.runs if r.error is None]
        ys = [v for v in vals if v is not None]
        ax.scatter([i] * len(ys), ys, s=10, color="black", zorder=3)
        if p.cpu_bound_runs:
            ax.annotate("CPU-bound", (i, means[i]), ha="center", va="bottom", fontsize=7,
                        color="red")
    ax.set_xticks(xs, [label_of(p) for p in pts], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel or metric)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis="y")


def save(fig: Figure, out_dir: Path, stem: str) -> list[str]:
    """Write out_dir/stem.png and .svg; their file names."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    names = []
    for ext in ("png", "svg"):
        path = out_dir / f"{stem}.{ext}"
        fig.savefig(path, dpi=110 if ext == "png" else None,
                    metadata={"Date": None} if ext == "svg" else None)
        names.append(path.name)
    _pyplot().close(fig)
    return names
