"""Figures of the flow-level model: seconds per run and peak memory on a large topology.

    .venv/bin/python bench/flow_model.py [--topology topologies/meta_24k.yaml] [--qps 4]

Prints, for a ring AllReduce and an all-to-all over every NIC (24,576 ranks
on meta_24k) in each routing mode: the wall time of `Model.run` (flows,
routing with the program hash, loads, max-min time), the estimated
collective time and the max/mean of the RTSW uplinks; then the time to
load the spec and build the addressing plan and route graph, and the peak
resident memory of the process. Never asserted anywhere: figures only.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from model import Model, ModelConfig
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topology", default=str(ROOT / "topologies" / "meta_24k.yaml"))
    ap.add_argument("--qps", type=int, default=4)
    ap.add_argument("--strategy", default="rr", choices=("rr", "split"))
    ap.add_argument("--patterns", default="ring,alltoall")
    args = ap.parse_args()
    console = Console(highlight=False)
    t0 = time.perf_counter()
    spec = load_spec(args.topology)
    t1 = time.perf_counter()
    plan = plan_addresses(spec)
    t2 = time.perf_counter()
    model = Model(spec, plan)
    t3 = time.perf_counter()
    console.print(f"{plan.name}: {len(plan.switches):,} switches, {len(plan.links):,} links, "
                  f"{len(plan.nics()):,} NICs; load_spec {t1 - t0:.2f} s, plan_addresses "
                  f"{t2 - t1:.2f} s, route graph + links {t3 - t2:.2f} s")
    table = Table(title=f"Model.run, every NIC a rank, {args.qps} QP(s) {args.strategy}")
    for col in ("pattern", "mode", "run (s)", "flows/step", "est. collective time",
                "RTSW uplinks max/mean", "ATSW uplinks max/mean"):
        table.add_column(col, justify="left" if col in ("pattern", "mode") else "right")
    for pattern in args.patterns.split(","):
        for mode in ("pin", "ecmp", "eecmp"):
            t = time.perf_counter()
            r = model.run(ModelConfig(pattern=pattern, mode=mode, qps=args.qps,
                                      strategy=args.strategy))
            dt = time.perf_counter() - t
            table.add_row(pattern, mode, f"{dt:.2f}", f"{r.flows_per_step:,}",
                          f"{r.time_s * 1e3:,.1f} ms", f"{r.tier('rtsw_ctsw up').imbalance:.2f}",
                          f"{r.tier('ctsw_atsw up').imbalance:.2f}")
    console.print(table)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    console.print(f"peak resident memory: {peak:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
