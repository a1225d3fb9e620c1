"""The targets side by side: the same experiments' findings on p4switch and on BMv2.

`aizone experiment all` runs the five experiments on one target; the
results page shows every target whose results are saved (`experiments.page`).
This module compares them, from the results alone:

- `summary_rows(by_target)`: a row per finding (experiment, claim), then what
  each target measured and whether the claim holds there;
- `run_rows(by_target)`: a row per experiment and target saying how its runs
  went (failed, CPU-bound, the packets resent, ACK timeouts, queue drops,
  PAUSEs sent, what one flow alone reached): the evidence a disagreement is
  read against;
- `disagreements(by_target)`: the findings whose verdicts differ between
  targets, each with the measured values and the reasons the data gives
  (`Disagreement`); `disagreements_markdown` writes them for the page.

Nothing here is claimed by hand: every sentence is built from the runs'
numbers, and says which numbers.

Names defined here: `Disagreement`, `shown`, `summary_rows`, `run_rows`,
`disagreements`, `disagreements_markdown`.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .schema import ExperimentResult, Finding

__all__ = ["Disagreement", "disagreements", "disagreements_markdown", "run_rows", "shown",
           "summary_rows"]

ByTarget = Mapping[str, Sequence[ExperimentResult]]
VERDICT = {True: "yes", False: "**no**", None: "–"}
# One flow alone below this share of line rate: the target's forwarding sets part of the pace.
AT_RATE = 0.9


def shown(target: str) -> str:
    """A target's name as the page writes it."""
    return {"bmv2": "BMv2"}.get(target, target)


def _findings(results: Sequence[ExperimentResult]) -> dict[tuple[str, str], Finding]:
    return {(r.experiment, f.claim): f for r in results for f in r.findings}


def _keys(by_target: ByTarget) -> list[tuple[str, str]]:
    """Every (experiment, claim), in the order the first target gives them, others after."""
    keys: list[tuple[str, str]] = []
    for results in by_target.values():
        keys += [k for k in _findings(results) if k not in keys]
    return keys


def summary_rows(by_target: ByTarget) -> list[list[str]]:
    """A row per finding: experiment, claim, then (measured, holds) per target ("–": none)."""
    found = {t: _findings(rs) for t, rs in by_target.items()}
    rows = []
    for exp, claim in _keys(by_target):
        row = [exp, claim]
        for t in by_target:
            f = found[t].get((exp, claim))
            row += [f.measured, VERDICT[f.holds]] if f is not None else ["not run", "–"]
        rows.append(row)
    return rows


@dataclass(frozen=True, kw_only=True)
class RunStats:
    """How one experiment's runs went on one target (summed over the runs that finished)."""

    runs: int
    failed: int
    cpu_bound: int
    retransmitted: float
    timeouts: float
    queue_drops: float | None  # lossless packets lost in switches (None: not measured)
    switch_pauses: float | None
    one_flow: float | None  # what one flow alone reached, a share of line rate (mean)
    rate_mbps: float | None  # the host links' rate the runs had


def _sum(result: ExperimentResult, key: str) -> float | None:
    values = [r.metrics.get(key) for p in result.points for r in p.runs if r.error is None]
    got = [v for v in values if v is not None]
    return float(sum(got)) if got else None


def run_stats(result: ExperimentResult) -> RunStats:
    """`RunStats` of one result."""
    effs = [float(c["efficiency"]) for c in result.calibration
            if isinstance(c.get("efficiency"), int | float)]
    return RunStats(runs=result.runs, failed=result.failed_runs, cpu_bound=result.cpu_bound_runs,
                    retransmitted=_sum(result, "retransmitted") or 0.0,
                    timeouts=_sum(result, "timeouts") or 0.0,
                    queue_drops=_sum(result, "tm_dropped"),
                    switch_pauses=_sum(result, "switch_pauses"),
                    one_flow=statistics.fmean(effs) if effs else None,
                    rate_mbps=(result.scale.get("host") or {}).get("rate_mbps"))


def _n(x: float | None) -> str:
    return "–" if x is None else f"{x:,.0f}"


def run_rows(by_target: ByTarget) -> list[list[str]]:
    """A row per experiment and target: runs (failed, CPU-bound), packets retransmitted, ACK
    timeouts, queue drops and PAUSEs (summed over the runs), one flow alone."""
    names: list[str] = []
    for results in by_target.values():
        names += [r.experiment for r in results if r.experiment not in names]
    rows = []
    for name in names:
        for t, results in by_target.items():
            r = next((x for x in results if x.experiment == name), None)
            if r is None:
                continue
            s = run_stats(r)
            rows.append([name, shown(t), f"{s.runs} ({s.failed} failed, {s.cpu_bound} CPU-bound)",
                         _n(s.retransmitted), _n(s.timeouts), _n(s.queue_drops),
                         _n(s.switch_pauses),
                         "–" if s.one_flow is None else f"{s.one_flow:.0%}"])
    return rows


@dataclass(frozen=True, kw_only=True)
class Disagreement:
    """A finding whose verdict differs between targets, with what the data says about why."""

    experiment: str
    claim: str
    verdicts: dict[str, bool | None]  # target -> holds
    measured: dict[str, str]  # target -> what it measured
    reasons: list[str]  # sentences built from the runs' numbers


def _reasons(stats: Mapping[str, RunStats], verdicts: Mapping[str, bool | None]) -> list[str]:
    out = []
    rates = {t: s.rate_mbps for t, s in stats.items()}
    if len(set(rates.values())) > 1:
        out.append("the host links ran at " + ", ".join(
            f"{r:g} Mb/s on {shown(t)}" for t, r in rates.items() if r is not None)
            + " (each target's rate from its capacity)")
    for t, s in stats.items():
        others = [stats[o] for o in stats if o != t]
        if verdicts.get(t) is None:
            out.append(f"undecided on {shown(t)}: {s.failed} of {s.runs} runs failed, "
                       f"{s.cpu_bound} were CPU-bound (too few counted runs to decide)")
        elif s.failed and all(s.failed > o.failed for o in others):
            out.append(f"{s.failed} of {s.runs} runs failed on {shown(t)} (the verdict there is "
                       "over fewer runs)")
        if s.one_flow is not None and s.one_flow < AT_RATE and all(
                o.one_flow is not None and o.one_flow > s.one_flow for o in others):
            out.append(f"one flow alone reached {s.one_flow:.0%} of line rate on {shown(t)} "
                       f"(against {', '.join(f'{o.one_flow:.0%}' for o in others if o.one_flow)}"
                       f"): {shown(t)}'s forwarding, not the emulated links, sets part of its "
                       "pace, which evens out or blurs differences that the links make")
        if s.retransmitted > 0 and all(s.retransmitted > 2 * o.retransmitted for o in others):
            out.append(f"{shown(t)} resent {s.retransmitted:,.0f} packets and had "
                       f"{s.timeouts:,.0f} ACK timeouts in this experiment (against "
                       + ", ".join(f"{o.retransmitted:,.0f} and {o.timeouts:,.0f}"
                                   for o in others)
                       + f"), and counted {_n(s.queue_drops)} lossless packets lost in its "
                       "switches (against "
                       + ", ".join(_n(o.queue_drops) for o in others) + ")")
    return out or ["the runs' counters show no difference in how they went (no failed runs, "
                   "resends or slow single flow on one target only): the measured values "
                   "themselves differ"]


def _point_reasons(results: Mapping[str, ExperimentResult], limit: int = 3) -> list[str]:
    """The grid points both targets ran whose mean ACK timeouts per run differ by half a
    timeout or more, those with none on one target first: a timeout stalls a QP for the whole
    ACK timeout, where a loss the receiver NAKs is resent at once."""
    (ta, a), (tb, b) = list(results.items())[:2]
    found: list[tuple[bool, str]] = []
    for p in a.points:
        q = b.point(**p.params)
        if q is None or q.params != p.params:
            continue
        ta_to, tb_to = p.summary.get("timeouts"), q.summary.get("timeouts")
        if ta_to is None or tb_to is None or abs(float(ta_to.mean) - float(tb_to.mean)) < 0.5:
            continue
        where = ", ".join(f"{k}={v}" for k, v in p.params.items())
        times = [x.summary.get("time_s") for x in (p, q)]
        took = ("; time " + " vs ".join(f"{float(t.mean):.2f} s" for t in times if t)
                if all(times) else "")
        found.append((min(float(ta_to.mean), float(tb_to.mean)) > 0,
                      f"at {where}, ACK timeouts per run {shown(ta)} {float(ta_to.mean):.1f} vs "
                      f"{shown(tb)} {float(tb_to.mean):.1f}{took}"))
    return [text for _, text in sorted(found, key=lambda f: f[0])[:limit]]


def disagreements(by_target: ByTarget, *, decided: bool = True) -> list[Disagreement]:
    """The findings every target evaluated whose verdicts differ: with `decided`, those that
    hold on one target and not on another; else those decided on one and undecided on
    another (too few counted runs there)."""
    found = {t: _findings(rs) for t, rs in by_target.items()}
    by_name = {t: {r.experiment: r for r in rs} for t, rs in by_target.items()}
    out = []
    for exp, claim in _keys(by_target):
        got = {t: found[t][(exp, claim)] for t in by_target if (exp, claim) in found[t]}
        verdicts_seen = {f.holds for f in got.values()}
        if len(got) < 2 or len(verdicts_seen) == 1 or (None in verdicts_seen) == decided:
            continue
        stats = {t: run_stats(by_name[t][exp]) for t in got}
        verdicts = {t: f.holds for t, f in got.items()}
        points = _point_reasons({t: by_name[t][exp] for t in got})
        reasons = _reasons(stats, verdicts)
        if points and reasons[-1].startswith("the runs' counters show no difference"):
            reasons = reasons[:-1]
        out.append(Disagreement(experiment=exp, claim=claim, verdicts=verdicts,
                                measured={t: f.measured for t, f in got.items()},
                                reasons=reasons + points))
    return out


def disagreements_markdown(found: Sequence[Disagreement]) -> str:
    """The disagreements as a Markdown list (or a sentence saying there are none)."""
    if not found:
        return ("No finding evaluated on both targets holds on one and not on the other.\n")
    lines = []
    for d in found:
        verdicts = "; ".join(f"{shown(t)} {VERDICT[v].replace('**', '')}"
                             for t, v in d.verdicts.items())
        measured = "; ".join(f"{shown(t)}: {m}" for t, m in d.measured.items())
        lines.append(f"- **{d.experiment}**, {d.claim} (holds: {verdicts}). Measured: "
                     f"{measured}. Why, from the runs: {'; '.join(d.reasons)}.")
    return "\n".join(lines) + "\n"
