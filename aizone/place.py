"""`aizone place`: where a job's ranks would go, and the cross-zone bytes of each strategy.

`add_parser(subparsers)` adds the subcommand (`aizone.parser.build_parser`
calls it); its handler `run(args) -> int` prints, for each strategy
(or the one given), the bytes per collective step that cross the ATSW
layer, and with `--json` the chosen NICs too. Exit codes: 0 done, 2 bad
input (topology, ranks, names), with one line on stderr.

Names defined here: `add_parser`, `run`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from controller.choices import PATTERNS, STRATEGIES

__all__ = ["add_parser", "run"]

EXIT_OK, EXIT_INPUT = 0, 2


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `place` to an argparse subparsers object; returns its parser (func = run)."""
    doc = (run.__doc__ or "").strip()
    p: argparse.ArgumentParser = subparsers.add_parser(
        "place", help=doc.splitlines()[0], description=doc)
    p.add_argument("--ranks", type=int, required=True, help="ranks of the job (one per NIC)")
    p.add_argument("--pattern", choices=("ring", "alltoall"), default="ring",
                   help="the job's collective (default ring)")
    p.add_argument("--strategy", choices=STRATEGIES, help="only this strategy (default: all)")
    p.add_argument("--topology", default="topologies/two_zones.yaml", help="topology file")
    p.add_argument("--size", type=float, default=float(2**30),
                   help="bytes per rank's buffer (default 1 GiB)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random strategy (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON only")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Place a job's ranks (mincut | packed | random) and print the bytes that cross AI zones.

    For each strategy: bytes per collective step crossing the ATSW layer,
    how many zones the job spans, and the share of its traffic that
    crosses. --json adds the chosen NICs in rank order.
    """
    from controller.placement import PlacementError, cross_zone_bytes, place
    from topologies.addressing import plan_addresses
    from topologies.spec import SpecError, load_spec

    try:
        plan = plan_addresses(load_spec(args.topology))
        if args.pattern not in PATTERNS:
            raise PlacementError(f"unknown pattern {args.pattern!r}")
        rows: list[dict[str, Any]] = []
        hosts = {h.name: h.zone for h in plan.hosts}
        for strategy in [args.strategy] if args.strategy else list(STRATEGIES):
            nics = place(plan, args.ranks, args.pattern, strategy, args.seed)
            cross = cross_zone_bytes(plan, nics, args.pattern, args.size, args.seed)
            # ring and all-to-all both move one buffer's worth per step in all (N x size/N)
            per_step = args.size if args.ranks > 1 else 0.0
            rows.append({"strategy": strategy, "cross_zone_bytes_per_step": cross,
                         "cross_zone_share": cross / per_step if per_step else 0.0,
                         "zones": len({hosts[x.host] for x in nics}),
                         "nics": [x.intf for x in nics]})
    except (SpecError, PlacementError, OSError) as exc:
        print(f"aizone place: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if args.json:
        print(json.dumps({"topology": plan.name, "ranks": args.ranks, "pattern": args.pattern,
                          "size": args.size, "seed": args.seed, "strategies": rows}))
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{args.pattern} of {args.ranks} ranks on {plan.name} "
                    f"({args.size:,.0f} B per rank)")
    for col in ("strategy", "zones", "cross-zone bytes / step", "share of the step's bytes"):
        t.add_column(col, justify="left" if col == "strategy" else "right")
    for r in rows:
        t.add_row(r["strategy"], str(r["zones"]), f"{r['cross_zone_bytes_per_step']:,.0f}",
                  f"{100 * r['cross_zone_share']:.1f} %")
    Console(highlight=False).print(t)
    return EXIT_OK
