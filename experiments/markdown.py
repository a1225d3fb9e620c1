"""Results as markdown: tables of a grid's points, a result's page, its JSON file.

- `fmt_value(x, column)` / `fmt_spread(spread, column)`: one cell
  ("12.3", "12.3 ± 0.4", "41%", "–" for nothing);
- `markdown_table(headers, rows)`: a GitHub table (cells with `|` escaped);
- `points_table(result)`: one row per grid point: its parameters, each
  metric's mean ± sd over the repeats counted, the runs counted and how
  many were CPU-bound or failed;
- `result_markdown(result, heading)`: an experiment's section (what it
  shows, the command, where and how it ran, the table, every CPU-bound or
  failed run with its reasons, the findings, the notes, the plots linked);
- `write_result(result, out_dir)`: `<name>.json` and `<name>.md` there.

Names defined here: `fmt_value`, `fmt_spread`, `markdown_table`,
`points_table`, `result_markdown`, `findings_markdown`, `write_result`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from .schema import Column, ExperimentResult, Finding, Param
from .stats import Spread

__all__ = ["findings_markdown", "fmt_spread", "fmt_value", "markdown_table", "points_table",
           "result_markdown", "write_result"]

NOTHING = "–"


def fmt_value(x: Param | float, column: Column | None = None) -> str:
    """One value as a table shows it (numbers with the column's digits, thousands separated)."""
    if x is None:
        return NOTHING
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) and (column is None or not column.percent):
        return f"{x:,}"
    if isinstance(x, float):
        if math.isnan(x):
            return NOTHING
        digits = column.digits if column is not None else 2
        if column is not None and column.percent:
            return f"{x * 100:.{max(digits - 2, 0)}f}%"
        return f"{x:,.{digits}f}"
    if isinstance(x, int):  # a percent column given an int
        return f"{x * 100}%"
    return str(x)


def fmt_spread(s: Spread | None, column: Column) -> str:
    """mean ± sd (just the mean for one run); "–" for no value."""
    if s is None:
        return NOTHING
    mean = fmt_value(float(s.mean), column)
    if s.n < 2:
        return mean
    return f"{mean} ± {fmt_value(float(s.sd), column)}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                   right: Sequence[bool] | None = None) -> str:
    """A GitHub markdown table; `right[i]` right-aligns column i (numbers)."""
    right = list(right) if right is not None else [False] * len(headers)
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"a row has {len(row)} cells for {len(headers)} columns: {row!r}")
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def _label(c: Column) -> str:
    return f"{c.label} ({c.unit})" if c.unit else c.label


def points_table(result: ExperimentResult) -> str:
    """One row per point: parameters, metrics (mean ± sd), runs counted / CPU-bound / failed."""
    headers = [_label(c) for c in result.params] + [_label(c) for c in result.metrics] + ["runs"]
    right = [False] * len(result.params) + [True] * len(result.metrics) + [False]
    rows = []
    for p in result.points:
        runs = f"{p.counted}/{len(p.runs)}"
        if p.cpu_bound_runs:
            runs += f", {p.cpu_bound_runs} CPU-bound"
        if p.failed_runs:
            runs += f", {p.failed_runs} failed"
        rows.append([fmt_value(p.params.get(c.key), c) for c in result.params]
                    + [fmt_spread(p.summary.get(c.key), c) for c in result.metrics] + [runs])
    return markdown_table(headers, rows, right)


def findings_markdown(findings: Sequence[Finding]) -> str:
    """The findings as a Markdown list: holds / does not hold / undecided, with why."""
    lines = []
    for f in findings:
        mark = {True: "**holds**", False: "**does not hold**", None: "**undecided**"}[f.holds]
        line = f"- {mark}: {f.claim}. Paper: {f.paper}. Measured: {f.measured}."
        if f.why:
            line += f" {f.why}"
        lines.append(line)
    return "\n".join(lines) + "\n" if lines else ""


def _where(result: ExperimentResult) -> str:
    m, v = result.machine, result.versions
    scale = result.scale.get("host", {}).get("scale") if isinstance(result.scale.get("host"),
                                                                      dict) else None
    parts = [f"target `{result.target}`", f"topology `{result.topology}`"]
    if scale:
        parts.append(f"scale {scale:,.0f} (1 emulated Mb/s stands for {scale / 1000:,.0f} Gb/s)")
    parts.append(f"{result.repeat} repeat(s)" + (" (quick)" if result.quick else ""))
    if m:
        parts.append(f"{m.get('cores')} cores ({m.get('cpu', '?')}), load "
                     f"{m.get('load_start', '?')} at start")
    if v:
        parts.append(f"aizone {v.get('aizone', '?')} ({v.get('commit', '?')}"
                     + (", uncommitted changes" if v.get("dirty") else "") + ")")
    parts.append(f"{result.runs} runs in {result.seconds:,.0f} s, {result.cpu_bound_runs} "
                 f"CPU-bound, {result.failed_runs} failed")
    return "; ".join(parts) + "."


def _flagged_runs(result: ExperimentResult) -> str:
    """One line per CPU-bound or failed run: its point, repeat and why."""
    lines = []
    for p in result.points:
        where = ", ".join(f"{k}={v}" for k, v in p.params.items())
        for r in p.runs:
            if r.error:
                lines.append(f"- {where} #{r.repeat + 1}: failed: {r.error}")
            elif r.cpu_bound:
                lines.append(f"- {where} #{r.repeat + 1}: CPU-bound: "
                             + "; ".join(r.cpu_bound_reasons))
    return "\n".join(lines) + "\n" if lines else ""


def result_markdown(result: ExperimentResult, heading: str = "#",
                    plot_dir: str = "", suffix: str = "") -> str:
    """An experiment's results as a markdown section (plots linked from `plot_dir`; `suffix`
    after its title, the target's name on a page of several)."""
    out = [f"{heading} {result.experiment}: {result.title}{suffix}\n",
           f"Made by `{result.command}`. {_where(result)}\n"]
    if result.sizes:
        out.append("Sizes: " + ", ".join(f"{k} {v}" for k, v in result.sizes.items()) + ".\n")
    out.append(points_table(result))
    if any(p.note for p in result.points):
        out.append("\n" + "\n".join(
            f"- {', '.join(f'{k}={v}' for k, v in p.params.items())}: {p.note}"
            for p in result.points if p.note) + "\n")
    flagged = _flagged_runs(result)
    if flagged:
        out.append("\nRuns left out of the means (CPU-bound: the emulator set the pace) or "
                   "failed:\n\n" + flagged)
    if result.findings:
        out.append(f"\n{heading}# What it shows\n\n" + findings_markdown(result.findings))
    if result.notes:
        out.append("\n" + "\n".join(f"- {n}" for n in result.notes) + "\n")
    pngs = [p for p in result.plots if p.endswith(".png")]
    for png in pngs:
        svg = png[:-4] + ".svg"
        link = f"{plot_dir}{png}"
        out.append(f"\n![{result.experiment}]({link}) ([SVG]({plot_dir}{svg}))\n")
    return "\n".join(out)


def write_result(result: ExperimentResult, out_dir: Path) -> list[Path]:
    """Write `<experiment>.json` and `<experiment>.md` into out_dir; the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = result.experiment
    js = out_dir / f"{stem}.json"
    js.write_text(result.model_dump_json(indent=1) + "\n")
    md = out_dir / f"{stem}.md"
    md.write_text(result_markdown(result))
    return [js, md]
