"""`aizone model`: the flow-level model of a topology, for people (rich) and programs (--json).

`add_parser(subparsers)` adds the subcommand to the `aizone` parser
(`aizone.parser` calls it); `run(args) -> int` is its handler.
Exit codes: 0 done; 2 bad input (topology file, names, link ids), with
one line on stderr, `aizone model: error: ...` (or `{"error": ...}` with
--json).

Names defined here: `add_parser`, `run`, `config_from_args`, `parse_size` (the
command line's byte counts, also `aizone run`'s and `aizone demo`'s).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import TYPE_CHECKING, Any

from controller.choices import PATTERNS, STRATEGIES
from topologies.spec import MODES
from traffic.connections import QP_STRATEGIES

if TYPE_CHECKING:
    from .run import ModelConfig, ModelResult

__all__ = ["add_parser", "config_from_args", "parse_size", "run"]

EXIT_OK, EXIT_INPUT = 0, 2


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str) -> int:
    """argparse type of a byte count: '4096', '64K', '4M', '1G', '2MiB', '1.5k' -> bytes
    (binary units); `argparse.ArgumentTypeError` for anything else, a negative size or a
    fraction of a byte. The one size parser of the command line (`aizone run`, `demo`,
    `model`)."""
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = t[-1:] if t[-1:] in _UNITS else ""
    try:
        value = float(t[:-1] if unit else t) * _UNITS[unit]
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0 and value == int(value)):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size in bytes (e.g. 4096, 64K, 4M, 1G)")
    return int(value)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `model` to an argparse subparsers object; returns its parser (func = run)."""
    doc = (run.__doc__ or "").strip()
    p: argparse.ArgumentParser = subparsers.add_parser(
        "model", help=doc.splitlines()[0], description=doc)
    p.add_argument("topology", metavar="TOPO", help="topology file, e.g. topologies/meta_24k.yaml")
    p.add_argument("--pattern", choices=PATTERNS, default="ring", help="collective (default ring)")
    p.add_argument("--ranks", type=int, help="ranks of the job, one per NIC (default: every NIC)")
    p.add_argument("--placement", choices=STRATEGIES, default="packed",
                   help="where the ranks go (default packed)")
    p.add_argument("--mode", choices=MODES, default="eecmp",
                   help="routing mode (default eecmp)")
    p.add_argument("--qps", type=int, default=1, help="queue pairs per peer (default 1)")
    p.add_argument("--strategy", choices=QP_STRATEGIES, default="rr",
                   help="QP scaling: rr (whole messages in turn) or split (default rr)")
    p.add_argument("--fail", action="append", default=[], metavar="LINK",
                   help="a link down, by id (rtsw1-eth5--ctsw1-eth1); repeat for more")
    p.add_argument("--size", type=parse_size, default=2**30,
                   help="bytes of each rank's buffer (default 1G)")
    p.add_argument("--message-size", type=parse_size, default=2**20,
                   help="the collective library's message size (default 1M)")
    p.add_argument("--sport-per-qp", action="store_true",
                   help="UDP source port 49152 + QP index (default: 49152 for every QP)")
    p.add_argument("--seed", type=int, default=0, help="random placement seed (the permutation is fixed: rank r to r + N/2)")
    p.add_argument("--max-steps", type=int, default=16,
                   help="all-to-all steps evaluated; beyond, an even sample (default 16)")
    p.add_argument("--json", action="store_true", help="print JSON only")
    p.add_argument("--links", action="store_true", help="with --json: every loaded link's bytes")
    p.add_argument("--plot", metavar="FILE",
                   help="write load histograms and imbalance per mode to FILE (.png and .svg)")
    p.set_defaults(func=run)
    return p


def config_from_args(args: argparse.Namespace, mode: str | None = None) -> ModelConfig:
    """The ModelConfig the command-line arguments ask for (`mode` overrides theirs)."""
    from .run import ModelConfig

    return ModelConfig(pattern=args.pattern, ranks=args.ranks, placement=args.placement,
                       mode=mode or args.mode, qps=args.qps, strategy=args.strategy,
                       size=args.size, message_size=args.message_size,
                       sport_per_qp=args.sport_per_qp, failed=tuple(args.fail), seed=args.seed,
                       max_steps=args.max_steps)


def _human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.1f} {unit}" if unit != "B" else f"{n:,.0f} B"
        n /= 1024
    return str(n)


def _print(result: ModelResult, elapsed: float) -> None:
    from rich.console import Console
    from rich.table import Table

    c = result.config
    console = Console(highlight=False)
    steps = f"{result.steps:,} steps" + (f" (sampled {c.max_steps})" if result.sampled_steps else "")
    console.print(f"[bold]{result.topology}[/]: {c.pattern} over {result.ranks:,} ranks "
                  f"({c.placement}), {c.mode}, {c.qps} QP(s) {c.strategy}, "
                  f"{_human_bytes(c.size)} per rank, {steps}; "
                  f"{result.flows_per_step:,} flows per step"
                  + (f"; down: {', '.join(c.failed)}" if c.failed else ""))
    t = Table(title="bytes per collective step per directed link")
    for col in ("tier", "links", "max", "mean", "max/mean"):
        t.add_column(col, justify="left" if col == "tier" else "right")
    for s in result.tiers:
        if s.links:
            t.add_row(s.tier, f"{s.links:,}", _human_bytes(s.max_bytes), _human_bytes(s.mean_bytes),
                      f"{s.imbalance:.2f}")
    console.print(t)
    console.print(f"bottleneck: [bold]{result.bottleneck}[/] "
                  f"({_human_bytes(result.bottleneck_bytes)} per step, "
                  f"{result.bottleneck_utilisation_s * 1e6:,.1f} µs at its rate)")
    est = "∞ (flows dropped)" if math.isinf(result.time_s) else f"{result.time_s * 1e3:,.2f} ms"
    console.print(f"estimated collective time (max-min fair sharing): [bold]{est}[/]")
    if result.dropped_flows or result.looping_flows:
        console.print(f"[red]{result.dropped_flows} flow(s) per step dropped, "
                      f"{result.looping_flows} looping[/]")
    console.print(f"[dim]modelled in {elapsed:.2f} s[/]")


def run(args: argparse.Namespace) -> int:
    """Model a collective on a topology: per-link load, imbalance per tier, bottleneck, time.

    Flows are routed with the emulator's own routes (`controller.routegraph`)
    and the P4 programs' hash (`controller.hashing`); the time is the sum
    of each step's completion under max-min fair sharing of the links'
    represented rates. --plot also runs the other two modes for the
    imbalance-per-mode panel.
    """
    from controller.placement import PlacementError
    from topologies.addressing import plan_addresses
    from topologies.spec import SpecError, load_spec

    from .run import Model

    t0 = time.monotonic()
    try:
        spec = load_spec(args.topology)
        plan = plan_addresses(spec)
        model = Model(spec, plan, frozenset(args.fail))
        result = model.run(config_from_args(args))
    except (SpecError, PlacementError, ValueError, OSError) as exc:
        if getattr(args, "json", False):
            print(json.dumps({"error": str(exc)}))
        else:
            print(f"aizone model: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    elapsed = time.monotonic() - t0
    written = []
    if args.plot:
        others = [model.run(config_from_args(args, m)) for m in MODES if m != args.mode]
        written = [str(p) for p in plot_results_lazy([result, *others], args.plot)]
    if args.json:
        out = result.to_json(with_links=args.links)
        out["elapsed_s"] = elapsed
        if written:
            out["plots"] = written
        print(json.dumps(out))
    else:
        _print(result, elapsed)
        for p in written:
            print(f"wrote {p}")
    return EXIT_OK


def plot_results_lazy(results: list[ModelResult], path: str) -> list[Any]:
    """`model.loadplot.plot_results`, imported only when a plot is asked for (matplotlib)."""
    from .loadplot import plot_results

    return plot_results(results, path)

