"""`docs/results.md`: every experiment's table, findings and plots on one page, per target.

`write_page(by_target, doc, out_dirs, command, rewritten)` writes the page that
`aizone experiment all` regenerates from every target whose results are
saved (`out_dirs`: p4switch's in `docs/results`, BMv2's in
`docs/results/bmv2`): how each was made (the command, the machine, the
total time; and, above results measured with the experiments' former
ACK-timeout rule, a note saying so and what the fabric's rule gives
instead), a summary of what each experiment shows against the paper with a
column per target, where the targets disagree and what the runs say about
why (`experiments.compare`), the findings of runs made with scaled latency
beside the same experiments' (when the first target's results have a
`latency/` folder), the fabric-capacity figures and the sizes
derived from them for each target (`experiments.sizes`), then each
experiment's section per target (`experiments.markdown.result_markdown`)
with its plots linked relative to the page, and the model's full-scale
section when `docs/model.md` has one. The headline plot (`qp-scaling.png`
of the first target) is what the README shows.

Names defined here: `write_page`, `HEADLINE`, `LATENCY_DIR`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .compare import disagreements, disagreements_markdown, run_rows, shown, summary_rows
from .markdown import markdown_table, result_markdown
from .schema import ExperimentResult, load_result
from .sizes import (
    LINK_MTU,
    delayed_round_trip,
    derivation_markdown,
    former_ack_note,
    ran_bytes,
    ran_mtu,
    sizes_for,
    target_rate,
)

__all__ = ["HEADLINE", "LATENCY_DIR", "write_page"]

HEADLINE = "qp-scaling.png"
# Where, under the first target's results, runs made with `--latency` are kept.
LATENCY_DIR = "latency"


def _former_ack_rule(results: Sequence[ExperimentResult]) -> bool:
    """Whether some run was made before runs recorded their ACK timeout: with the
    experiments' former rule, not the fabric's they take now."""
    return any(r.error is None and not isinstance(r.details.get("ack_timeout_ms"), int | float)
               for res in results for p in res.points for r in p.runs)


def _model_section(root: Path) -> str:
    doc = root / "docs" / "model.md"
    try:
        text = doc.read_text()
    except OSError:
        return ""
    marker = "## Full-scale results (section for docs/results.md)"
    if marker not in text:
        return ""
    body = text.split(marker, 1)[1].strip()
    return ("## Beyond one machine: the flow-level model at 24K GPUs\n\n"
            "From `docs/model.md` (the model's own commands; not re-run by "
            "`aizone experiment all`).\n\n" + body.replace("\n### ", "\n### ") + "\n")


def _rate_notes(by_target: Mapping[str, Sequence[ExperimentResult]],
                targets: Sequence[str]) -> list[str]:
    """A note for each target whose runs had another host rate than its capacity gives now
    (the capacity was measured again after them), other links' MTU than the experiments'
    `LINK_MTU`, or other bytes than `experiments.sizes` gives now."""
    notes = []
    for t in targets:
        now = target_rate(t).rate_mbps
        ran = sorted({float(r.scale["host"]["rate_mbps"]) for r in by_target[t]
                      if isinstance(r.scale.get("host"), dict)
                      and r.scale["host"].get("rate_mbps")} - {now})
        mtus = sorted({ran_mtu(r) for r in by_target[t]} - {LINK_MTU})
        sized = [r.experiment for r in by_target[t]
                 if ran_bytes(r) not in (None, sizes_for(r.experiment, r.quick)["size"])]
        said = []
        if ran:
            said.append(f"host links at {', '.join(f'{x:g}' for x in ran)} Mb/s (the capacity "
                        f"above gives {now:g} Mb/s now, measured again after them)")
        if mtus:
            said.append(f"links of IP MTU {', '.join(f'{m:,}' for m in mtus)} (the experiments "
                        f"run at {LINK_MTU:,} now)")
        if sized:
            said.append(f"other bytes than the sizes below ({', '.join(sized)})")
        if said:
            notes.append(f"\n**{shown(t)}'s runs** had {'; '.join(said)}: their tables say "
                         "what ran.\n")
    return notes


def _latency_section(results: Sequence[ExperimentResult], out_dir: Path, doc: Path
                     ) -> list[str]:
    """The findings of the runs kept in `out_dir/latency` (`--latency`: every hop delayed by the
    real fabric's latency times the scale) beside the same experiments' runs on the page."""
    folder = out_dir / LATENCY_DIR
    delayed = [load_result(folder / f"{r.experiment}.json") for r in results
               if (folder / f"{r.experiment}.json").is_file()]
    if not delayed:
        return []
    names = {r.experiment for r in delayed}
    host = delayed[0].scale.get("host") or {}
    rate, scale = float(host.get("rate_mbps", 0)), float(host.get("scale", 0))
    mtu = ran_mtu(delayed[0])
    rtt_s, frames, window = delayed_round_trip(rate, mtu)
    d = _plot_dir(folder, doc)
    page_host = results[0].scale.get("host") or {}
    page_rate, page_mtu = float(page_host.get("rate_mbps", 0)), ran_mtu(results[0])
    other = ("" if (rate, mtu) == (page_rate, page_mtu) else
             f"These runs had host links at {rate:g} Mb/s on links of IP MTU "
             f"{mtu:,}, the page's runs {page_rate:g} Mb/s at {page_mtu:,} "
             "(each run's sizes are in its table): their verdicts compare, their times do "
             "not. ")
    return ["\n## With the real fabric's bytes in flight (scaled latency)\n",
            "The runs above delay nothing: the emulator's own round trip (a few ms) stands for "
            "what would be seconds at their scale, so links hold almost nothing in flight. With "
            "`--latency` every hop waits its real propagation and switch latency times the "
            f"scale: at {rate:g} Mb/s for 400 Gb/s (scale {scale:,.0f}) the farthest hosts of "
            f"ai_zone_small are {rtt_s:.2f} s apart there and back, {frames:,} full frames in "
            f"flight at a NIC's rate, against an RC window of {window} packets (docs/model.md, "
            "\"Time at scale\", says what follows from it). "
            + ("They count the switches' buffer in bytes, which gives each lossless class a "
               "round trip's bytes of headroom (the same experiments counted in bytes without "
               "delay: docs/results/bytes/). "
               if all(r.sizes.get("buffer") == "bytes" for r in delayed) else "")
            + other + "Runs: "
            + ", ".join(f"`{r.command}`" for r in delayed) + "; "
            + ", ".join(f"[{r.experiment}]({d}{r.experiment}.md) ({r.runs} runs, "
                        f"{r.cpu_bound_runs} CPU-bound, {r.failed_runs} failed)"
                        for r in delayed) + ". The same findings without and with it:\n",
            markdown_table(["experiment", "the paper's claim", "measured (no delay)", "holds",
                            "measured (scaled latency)", "holds"],
                           summary_rows({"page": [r for r in results if r.experiment in names],
                                         LATENCY_DIR: delayed}))]


def _plot_dir(out_dir: Path, doc: Path) -> str:
    rel = os.path.relpath(out_dir.resolve(), doc.parent.resolve())
    return "" if rel == "." else rel.rstrip("/") + "/"


def _made(target: str, results: Sequence[ExperimentResult]) -> str:
    """One target's provenance: its command, machine, version, runs and minutes."""
    first = results[0]
    seconds = sum(r.seconds for r in results)
    # `all` made them (its runs record `all`, or, before, one command per experiment), or
    # the experiments were run one by one: their own commands then.
    commands = list(dict.fromkeys(r.command for r in results))
    if len(results) >= 5 or any(" all" in c for c in commands):
        made = "`aizone experiment all" + ("" if target == "p4switch" else
                                           f" --target {target}") + "`"
    else:
        made = ", ".join(f"`{c}`" for c in commands)
    return (f"**{shown(target)}**: {made}, {first.machine.get('cores')} cores "
            f"({first.machine.get('cpu')}), aizone {first.versions.get('aizone')} "
            f"({first.versions.get('commit')}"
            + (", uncommitted changes" if any(r.versions.get("dirty") for r in results) else "")
            + f"), started {first.started}; {sum(r.runs for r in results)} runs "
            f"({sum(r.cpu_bound_runs for r in results)} CPU-bound, "
            f"{sum(r.failed_runs for r in results)} failed) in {seconds / 60:.1f} minutes ("
            + ", ".join(f"{r.experiment} {r.seconds / 60:.1f} min" for r in results) + ").")


def write_page(by_target: Mapping[str, Sequence[ExperimentResult]], doc: Path,
               out_dirs: Mapping[str, Path], *, command: str, rewritten: bool = False) -> Path:
    """Write the results page (see the module docstring) from each target's results (in
    `by_target`'s order, the first the headline's); returns its path."""
    targets = [t for t, rs in by_target.items() if rs]
    if not targets:
        raise ValueError("no results to write a page from")
    dirs = {t: _plot_dir(out_dirs[t], doc) for t in targets}
    every = [r for t in targets for r in by_target[t]]
    former = [t for t in targets if _former_ack_rule(by_target[t])]
    several = len(targets) > 1
    headers = ["experiment", "the paper's claim"]
    for t in targets:
        headers += [f"measured ({shown(t)})", f"holds ({shown(t)})"] if several else [
            "measured", "holds"]
    parts = ["# Results\n",
             f"Generated by `{command}` (do not edit: run it again), from each target's runs:\n",
             "\n".join(f"- {_made(t, by_target[t])}" for t in targets) + "\n",
             *([f"Tables, findings and plots written again from these runs' JSON by `{command} "
                "--rewrite` (nothing re-measured).\n"] if rewritten else []),
             *([f"**The ACK timeout ({', '.join(shown(t) for t in former)}).** "
                f"{former_ack_note()}\n"] if former else []),
             "Every number comes from the switches' counters (read over P4Runtime by the "
             "controller) and the hosts' traffic agents; each grid point is repeated and shown "
             "as mean ± standard deviation; runs the emulator rather than the emulated fabric "
             "limited are flagged CPU-bound, listed, and left out of the means.\n",
             f"![headline]({dirs[targets[0]]}{HEADLINE})\n",
             "## What the experiments show\n",
             markdown_table(headers, summary_rows({t: by_target[t] for t in targets}))]
    if several:
        parts += ["\n## Where the targets disagree, and why\n",
                  "Computed from the runs (`experiments.compare`): each finding whose verdict "
                  "differs between the targets, what each measured, and what the runs' "
                  "counters say about it. How each experiment's runs went on each target "
                  "(resends, ACK timeouts, queue drops and PAUSEs summed over its runs; one "
                  "flow alone: the share of line rate a single flow reached after each "
                  "bring-up):\n",
                  markdown_table(["experiment", "target", "runs", "retransmitted",
                                  "ACK timeouts", "queue drops", "PAUSEs sent", "one flow alone"],
                                 run_rows({t: by_target[t] for t in targets}),
                                 [False, False, False, True, True, True, True, True]),
                  "\n" + disagreements_markdown(
                      disagreements({t: by_target[t] for t in targets}))]
        undecided = disagreements({t: by_target[t] for t in targets}, decided=False)
        if undecided:
            parts += ["\nDecided on one target, undecided on the other (too few runs counted "
                      "there, or no data):\n", disagreements_markdown(undecided)]
    parts += _latency_section(by_target[targets[0]], out_dirs[targets[0]], doc)
    parts += ["\n## Fabric capacity and the sizes derived from it\n",
              derivation_markdown(tuple(targets)), *_rate_notes(by_target, targets)]
    names: list[str] = []
    for r in every:
        names += [] if r.experiment in names else [r.experiment]
    for name in names:
        for t in targets:
            res = next((x for x in by_target[t] if x.experiment == name), None)
            if res is None:
                continue
            d = dirs[t]
            parts.append("\n" + result_markdown(res, heading="##", plot_dir=d,
                                                 suffix=f" ({shown(t)})" if several else ""))
            parts.append(f"\nFiles: [{name}.json]({d}{name}.json), [{name}.md]({d}{name}.md).\n")
    model = _model_section(Path(__file__).resolve().parents[1])
    if model:
        parts.append("\n" + model)
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text("\n".join(parts))
    return doc
