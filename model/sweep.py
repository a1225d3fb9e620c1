"""Sweeps of the model: modes x QPs x placements x failure sets, serially or in parallel on Ray.

`sweep_points(base, modes, qps, placements, failure_sets)` lists the
`ModelConfig`s of a grid; `run_sweep(topology, points, ray=..., address=...)`
runs them and returns one summary per point (`ModelResult.to_json` without
per-link loads), in the order of `points`, with a rich progress bar.

On Ray (`pip install -e '.[scale]'`) every point is a task; each worker
loads the topology and builds its route graph once (cached per process
and failure set), so a grid of thousands of points costs one plan per
worker, not per point. `address=None` starts a local Ray instance;
`address="auto"` or `"ray://host:10001"` joins an existing cluster, which
spreads the sweep over its machines. The model is deterministic, so
serial and parallel runs return the same results (a test holds it).

`add_parser(subparsers)` / `run(args)`: `aizone sweep TOPO --modes ...
--qps 1,4,16 --placements packed,random --fail 'L1,L2' ... [--ray]
[--address A] [--json]`.

Names defined here: `sweep_points`, `run_sweep`, `add_parser`, `run`.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from controller.choices import PATTERNS
from topologies.spec import MODES
from traffic.connections import QP_STRATEGIES

from .cli import parse_size

if TYPE_CHECKING:
    from .run import Model, ModelConfig

__all__ = ["add_parser", "run", "run_sweep", "sweep_points"]

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


def sweep_points(base: ModelConfig, modes: Iterable[str], qps: Iterable[int],
                 placements: Iterable[str], failure_sets: Iterable[Sequence[str]] = ((),)
                 ) -> list[ModelConfig]:
    """The grid's configurations, modes varying slowest, failure sets fastest."""
    return [dataclasses.replace(base, mode=m, qps=q, placement=p, failed=tuple(f))
            for m, q, p, f in itertools.product(modes, qps, placements, failure_sets)]


@functools.lru_cache(maxsize=8)
def _model(topology: str, failed: tuple[str, ...]) -> Model:
    from topologies.addressing import plan_addresses
    from topologies.spec import load_spec

    from .run import Model

    spec = load_spec(topology)
    return Model(spec, plan_addresses(spec), frozenset(failed))


def run_point(topology: str, config: ModelConfig) -> dict[str, Any]:
    """One point's summary (the unit of work, also a Ray task)."""
    result = _model(topology, tuple(sorted(config.failed))).run(config)
    return result.to_json(with_links=False)


def run_sweep(topology: str, points: Sequence[ModelConfig], *, ray: bool = False,
              address: str | None = None, progress: bool = True) -> list[dict[str, Any]]:
    """Summaries of every point, in order (module docstring)."""
    from rich.progress import Progress

    out: list[dict[str, Any] | None] = [None] * len(points)
    with Progress(disable=not progress, transient=False) as bar:
        task = bar.add_task(f"{len(points)} model points" + (" on Ray" if ray else ""),
                            total=len(points))
        if not ray:
            for i, c in enumerate(points):
                out[i] = run_point(topology, c)
                bar.advance(task)
        else:
            import ray as ray_mod

            started = False
            if not ray_mod.is_initialized():
                ray_mod.init(address=address, include_dashboard=False, log_to_driver=False,
                             configure_logging=False)
                started = True
            try:
                remote = ray_mod.remote(run_point)
                pending = {remote.remote(topology, c): i for i, c in enumerate(points)}
                while pending:
                    done, _ = ray_mod.wait(list(pending), num_returns=1)
                    for ref in done:
                        out[pending.pop(ref)] = ray_mod.get(ref)
                        bar.advance(task)
            finally:
                if started:
                    ray_mod.shutdown()
    return [x for x in out if x is not None]


def _list(kind: type, text: str) -> list[Any]:
    try:
        return [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a comma-separated list") from None


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `sweep` to an argparse subparsers object; returns its parser (func = run)."""
    doc = (run.__doc__ or "").strip()
    p: argparse.ArgumentParser = subparsers.add_parser(
        "sweep", help=doc.splitlines()[0], description=doc)
    p.add_argument("topology", metavar="TOPO")
    p.add_argument("--pattern", default="ring", choices=PATTERNS)
    p.add_argument("--ranks", type=int)
    p.add_argument("--modes", type=lambda t: _list(str, t), default=list(MODES))
    p.add_argument("--qps", type=lambda t: _list(int, t), default=[1, 4, 16])
    p.add_argument("--placements", type=lambda t: _list(str, t), default=["packed"])
    p.add_argument("--strategy", choices=QP_STRATEGIES, default="rr")
    p.add_argument("--fail", action="append", default=[], metavar="L1,L2",
                   help="a failure set (comma-separated link ids); repeat for more; "
                        "the no-failure point is always included")
    p.add_argument("--size", type=parse_size, default=2**30, help="bytes per rank (4M, 1G, ...)")
    p.add_argument("--message-size", type=parse_size, default=2**20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ray", action="store_true", help="run the points in parallel on Ray")
    p.add_argument("--address", help="join this Ray cluster (e.g. auto); default: a local one")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run a grid of model points (modes x QPs x placements x failure sets), optionally on Ray."""
    from topologies.spec import SpecError, load_spec

    from .run import ModelConfig

    try:
        load_spec(args.topology)
        base = ModelConfig(pattern=args.pattern, ranks=args.ranks, strategy=args.strategy,
                           size=args.size, message_size=args.message_size, seed=args.seed)
        fails = [()] + [tuple(x for x in f.split(",") if x) for f in args.fail]
        points = sweep_points(base, args.modes, args.qps, args.placements, fails)
        for c in points:
            c.check()
        results = run_sweep(args.topology, points, ray=args.ray or bool(args.address),
                            address=args.address, progress=not args.json)
    except (SpecError, ValueError, OSError) as exc:
        print(f"aizone sweep: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except ImportError as exc:
        print(f"aizone sweep: error: {exc} (install the [scale] extra for --ray)", file=sys.stderr)
        return EXIT_FAIL
    if args.json:
        print(json.dumps(results))
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{args.pattern} on {args.topology}")
    for col in ("mode", "QPs", "placement", "failed", "RTSW up max/mean", "ATSW up max/mean",
                "time (ms)"):
        t.add_column(col)
    for r in results:
        c = r["config"]
        tiers = {x["tier"]: x for x in r["tiers"]}
        t.add_row(c["mode"], str(c["qps"]), c["placement"], str(len(c["failed"])),
                  f"{tiers['rtsw_ctsw up']['imbalance']:.2f}",
                  f"{tiers['ctsw_atsw up']['imbalance']:.2f}", f"{r['time_s'] * 1e3:,.2f}")
    Console(highlight=False).print(t)
    return EXIT_OK
