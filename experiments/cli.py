"""`aizone experiment NAME`: bring a fabric up, run an experiment's grid, write its results.

`add_parser(subparsers)` adds the subcommand to the `aizone` parser
(`aizone.parser` calls it); `run(args) -> int` is its handler;
`python -m experiments NAME ...` runs it without the `aizone` entry point.

    aizone experiment qp-scaling|pinning|incast|failure|placement|all
        [--repeat K] [--target p4switch|bmv2] [--quick] [--json] [--out DIR]
        [--doc FILE] [--build-dir DIR] [--rewrite] [--buffer packets|bytes]
        [--latency] [--servers A,B,...]

Each experiment writes `<dir>/<name>.json` (`experiments.schema`),
`<dir>/<name>.md` and its plots (`.png` and `.svg`) and prints a summary
(or, with --json, the result). Each target has its own folder, so one
target's results never overwrite another's: `<dir>` is `--out` for
p4switch and `--out`/bmv2 for BMv2 (`results_dir`). The host links run at
the target's rate from the measured capacity (`experiments.sizes.target_rate`).
`all` runs every experiment into `--out` (default `docs/results`) and
writes `--doc` (default `docs/results.md`) from every target's saved
results (this target's just measured, the others' as saved).
`--rewrite` runs nothing and writes those files again from the JSON
already there (the findings and plots recomputed from the measured runs:
for a change in how results are explained, never in what was measured);
`all --rewrite` does it for every target with results saved.

Exit codes: 0 done (also when a finding does not hold: that is a result);
1 the fabric or a run failed at run time; 2 bad input; 130 interrupted.

Names defined here: `add_parser`, `run`, `main`, `results_dir`, `EXPERIMENTS` (name ->
module), `experiment_module`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.errors import ControllerError
from p4switch.tmconfig import UNITS
from topologies.errors import NetworkError
from topologies.servernames import servers_argument
from topologies.targets import target_missing

from .capacity import DEFAULT_TARGET, TARGETS, CapacityError, load_capacity

if TYPE_CHECKING:
    from types import ModuleType

    from .schema import ExperimentResult

__all__ = ["EXPERIMENTS", "add_parser", "experiment_module", "main", "results_dir", "run"]

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
# Each experiment's name -> its module (experiments.<module>, whose NAME it is), loaded when
# it runs: building the `aizone` parser loads no experiment, nor the fabric and agents
# they drive.
EXPERIMENTS: dict[str, str] = {"qp-scaling": "qp_scaling", "pinning": "pinning",
                               "incast": "incast", "failure": "failure",
                               "placement": "placement"}
DEFAULT_OUT = Path("out/experiments")
ALL_OUT = Path("docs/results")
ALL_DOC = Path("docs/results.md")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `experiment` to an argparse subparsers object; returns its parser (func = run)."""
    doc = (run.__doc__ or "").strip()
    p: argparse.ArgumentParser = subparsers.add_parser(
        "experiment", help=doc.splitlines()[0], description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", choices=(*EXPERIMENTS, "all"), metavar="NAME",
                   help=f"one of {', '.join(EXPERIMENTS)}, or all")
    p.add_argument("--repeat", type=int, default=None, metavar="K",
                   help="repeats of every grid point (default: the experiment's, 3)")
    p.add_argument("--target", choices=TARGETS, default=DEFAULT_TARGET,
                   help="switch target (default p4switch); BMv2's results go to a folder of "
                        "their own under --out (bmv2/), its host rate from its capacity")
    p.add_argument("--quick", action="store_true",
                   help="the smallest grid and sizes, one repeat (a smoke test)")
    p.add_argument("--json", action="store_true", help="print the result(s) as JSON")
    p.add_argument("--out", type=Path, default=None,
                   help=f"where results go (default {DEFAULT_OUT}; all: {ALL_OUT}); "
                        "BMv2's in its bmv2/ folder")
    p.add_argument("--doc", type=Path, default=ALL_DOC,
                   help=f"all: the page written (default {ALL_DOC})")
    p.add_argument("--rewrite", action="store_true",
                   help="run nothing: write the tables, findings, plots (and, for all, the "
                        "page) again from the JSON results already in --out")
    p.add_argument("--build-dir", type=Path, default=None,
                   help="compiled programs and switch logs (default ./build)")
    p.add_argument("--buffer", choices=UNITS, default="packets",
                   help="what p4switch's queues and PFC count: packets (the default) or bytes, "
                        "as a switch's MMU (the topology's buffer.accounting; p4switch only)")
    p.add_argument("--latency", action="store_true",
                   help="delay every hop by the real fabric's propagation and switch latency "
                        "times the scale, so links hold the real bytes in flight (a topology "
                        "latency: section with its defaults)")
    p.add_argument("--servers", type=servers_argument, default=(), metavar="A,B,...",
                   help="spread every fabric over these machines, this one first, as `aizone "
                        "up --servers` does (docs/scale-out.md); the CPU-bound flags see this "
                        "machine's CPU only")
    p.set_defaults(func=run)
    return p


def experiment_module(name: str) -> ModuleType:
    """The module that runs experiment `name` (its `run`, `TITLE`, `findings`, `plot`)."""
    return importlib.import_module(f".{EXPERIMENTS[name]}", __package__)


def results_dir(base: Path, target: str) -> Path:
    """Where `target`'s results go under `base`: base itself for the default target (the
    committed p4switch results stay where they were), base/<target> for another."""
    return base if target == DEFAULT_TARGET else base / target


def _summary(result: ExperimentResult, written: Sequence[Path]) -> None:
    from rich.console import Console

    from .markdown import findings_markdown

    console = Console(highlight=False)
    console.print(f"[bold]{result.experiment}[/]: {result.runs} runs in {result.seconds:.0f} s "
                  f"({result.cpu_bound_runs} CPU-bound, {result.failed_runs} failed)")
    for line in findings_markdown(result.findings).splitlines():
        console.print(line.replace("**", ""), markup=False)
    folder = written[0].parent if written else Path(".")
    for path in [*written, *(folder / p for p in result.plots)]:
        console.print(f"wrote {path}")


def _command(args: argparse.Namespace, name: str | None = None) -> str:
    """The command line that makes these results (what the tables and the page quote)."""
    parts = ["aizone", "experiment", name or args.name]
    if args.repeat is not None:
        parts += ["--repeat", str(args.repeat)]
    if args.target != DEFAULT_TARGET:
        parts += ["--target", args.target]
    if args.quick:
        parts.append("--quick")
    if args.buffer != "packets":
        parts += ["--buffer", args.buffer]
    if args.latency:
        parts.append("--latency")
    if args.servers:
        parts += ["--servers", ",".join(args.servers)]
    if args.out is not None:
        parts += ["--out", str(args.out)]
    elif name is not None and args.name == "all":
        parts += ["--out", str(ALL_OUT)]
    if (name or args.name) == "all" and args.doc != ALL_DOC:
        parts += ["--doc", str(args.doc)]
    return " ".join(shlex.quote(p) for p in parts)


def run(args: argparse.Namespace) -> int:
    """Run an experiment on a fabric it brings up (and down): grid, repeats, tables, plots.

    qp-scaling: ECMP vs E-ECMP x 1-8 QPs x rr/split (ai_zone_small).
    pinning: path pinning with whole racks, part of several racks, a failed
    uplink; ECMP and E-ECMP alongside. incast: N->1, PFC on vs off, with and
    without admission. failure: a link fails during an AllReduce, in each
    mode. placement: a job across two_zones placed mincut, packed, random,
    next to the flow-level model's prediction. all: every one, and the
    results page. Numbers come from the switches' counters and the traffic
    agents; runs the emulator limited (CPU-bound) are flagged and left out
    of the means.
    """
    if args.repeat is not None and not 1 <= args.repeat <= 50:
        print("aizone experiment: error: --repeat must be 1..50", file=sys.stderr)
        return EXIT_INPUT
    base = args.out or (ALL_OUT if args.name == "all" else DEFAULT_OUT)
    command = _command(args)
    names = list(EXPERIMENTS) if args.name == "all" else [args.name]
    if args.rewrite:
        return _rewrite(args, names, base, command)
    if args.buffer != "packets" and args.target != "p4switch":
        print(f"aizone experiment: error: --buffer {args.buffer}: only p4switch's traffic "
              f"manager counts its buffer in bytes ({args.target}'s queues count packets; the "
              f"programs' PFC counts bytes on every target)", file=sys.stderr)
        return EXIT_INPUT
    if args.latency and args.servers:
        print("aizone experiment: error: --latency with --servers: scaled latency runs on one "
              "machine only (its delay line serves every switch port from this machine)",
              file=sys.stderr)
        return EXIT_INPUT
    missing = target_missing(args.target)
    if missing:
        print(f"aizone experiment: error: target {args.target} needs {', '.join(missing)} on "
              f"PATH", file=sys.stderr)
        return EXIT_INPUT
    from .sizes import target_rate

    try:  # the rate and the page's sizes come from it: said now, not after an hour of runs
        load_capacity()
        rate = target_rate(args.target)
    except CapacityError as exc:
        print(f"aizone experiment: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    from .markdown import write_result
    from .session import Options

    out = results_dir(base, args.target)
    results: list[ExperimentResult] = []
    try:
        for name in names:
            options = Options(out=out, target=args.target, host_mbps=rate.rate_mbps,
                              buffer=args.buffer, latency=args.latency,
                              servers=tuple(args.servers), repeat=args.repeat,
                              quick=args.quick, build_dir=args.build_dir,
                              quiet=args.json,
                              command=_command(args, name if args.name != "all" else None))
            result = experiment_module(name).run(options)
            written = write_result(result, out)
            results.append(result)
            if not args.json:
                _summary(result, written)
        if args.name == "all":
            page = _page(args, base, command, {args.target: results})
            if not args.json:
                print(f"wrote {page}")
    except KeyboardInterrupt:
        print("aizone experiment: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ControllerError, NetworkError, OSError) as exc:
        print(f"aizone experiment: error: {str(exc).splitlines()[0] if str(exc) else exc!r}",
              file=sys.stderr)
        return EXIT_FAIL
    if args.json:
        data = [r.model_dump() for r in results]
        print(json.dumps(data[0] if len(data) == 1 else data))
    return EXIT_OK


def _saved_names(folder: Path) -> list[str]:
    """The experiments whose results are saved in `folder` (an `all` cut short saves some)."""
    return [n for n in EXPERIMENTS if (folder / f"{n}.json").is_file()]


def _saved(folder: Path) -> list[ExperimentResult]:
    """The experiments' saved results in `folder` (those there are)."""
    from .schema import load_result

    return [load_result(folder / f"{n}.json") for n in _saved_names(folder)]


def _page(args: argparse.Namespace, base: Path, command: str,
          have: dict[str, list[ExperimentResult]], rewritten: bool = False) -> Path:
    """The results page from `have` and every other target's results saved under `base`."""
    from .page import write_page

    by_target: dict[str, list[ExperimentResult]] = {}
    for t in TARGETS:
        got = have.get(t) or _saved(results_dir(base, t))
        if got:
            by_target[t] = got
    return write_page(by_target, args.doc, {t: results_dir(base, t) for t in by_target},
                      command=command, rewritten=rewritten)


def _rewrite(args: argparse.Namespace, names: Sequence[str], base: Path, command: str) -> int:
    """--rewrite: the results' files again from their JSON (findings and plots recomputed);
    for all, every target's saved (the other targets' as far as they are), then the page."""
    from .markdown import write_result
    from .schema import load_result

    have: dict[str, list[ExperimentResult]] = {}
    try:
        for target in TARGETS:
            out = results_dir(base, target)
            if target != args.target and (args.name != "all" or not _saved_names(out)):
                continue
            have[target] = []
            for name in names if target == args.target else _saved_names(out):
                result = load_result(out / f"{name}.json")
                module = experiment_module(name)
                result.findings = module.findings(result)
                result.plots = module.plot(result, out)
                written = write_result(result, out)
                have[target].append(result)
                if not args.json:
                    _summary(result, written)
        if args.name == "all":
            page = _page(args, base, command, have, rewritten=True)
            if not args.json:
                print(f"wrote {page}")
    except (OSError, ValueError) as exc:
        print(f"aizone experiment: error: --rewrite: {exc}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """`aizone experiment ...` without the `aizone` entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="aizone")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    given = list(sys.argv[1:] if argv is None else argv)
    if given and given[0] != "experiment":
        given = ["experiment", *given]
    args = parser.parse_args(given)
    return int(args.func(args))
