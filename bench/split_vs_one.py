"""A fabric split over two servers against the same fabric on one: per-link bytes, and the model's.

    sudo flock /tmp/aizone-net.lock .venv/bin/python bench/split_vs_one.py \\
        [--topology topologies/ai_zone.yaml] [--target p4switch] [--size 64K]

Makes one namespace server beside this machine (`tests/fabric/servers_support.py`:
its own sshd, so Mininet's cluster code runs for real), then brings the
topology up twice, on this machine alone and over this machine and that
server (`aizone up --servers`, placed by the model's loads), and on each
runs the experiments' two collectives in pin, ecmp and eecmp with 1 and 8
QPs (packed, rr): a ring AllReduce over every NIC (`aizone run allreduce
--json`) and an incast of 7 senders into one NIC, as the incast
experiment's (`aizone run incast --ranks 8 --json`). Per point it prints
whether every fabric link counted the flow model's bytes within the
bound `tests/fabric/model_support.py` states (ACKs, probes, resends), the
run's time, resends and CPU-bound flag, and the largest difference
between the two layouts' counted bytes over the link directions that
carried data. Figures only, never asserted; the two "servers" share this
machine's cores, so the times compare the layouts' overhead, not real
machines (docs/scale-out.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fabric.fabric_support import aizone  # noqa: E402
from tests.fabric.model_support import assert_counters_match_model, check_run_ok  # noqa: E402
from tests.fabric.servers_support import NamespaceServers  # noqa: E402
from topologies.addressing import AddressPlan, plan_addresses  # noqa: E402
from topologies.spec import FabricSpec, load_spec  # noqa: E402

GRID = [(pattern, mode, qps) for pattern in ("allreduce", "incast")
        for mode in ("pin", "ecmp", "eecmp") for qps in (1, 8)]
INCAST_RANKS = 8  # 7 senders and their receiver, as the incast experiment's largest point
MODEL_PATTERN = {"allreduce": "ring", "incast": "incast"}  # the flow model's names
DATA_BYTES = 10_000  # a link direction "carried data" above this (probes alone stay far below)


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def run_grid(spec: FabricSpec, plan: AddressPlan, size: int, env: dict[str, str]
             ) -> list[dict[str, Any]]:
    """Every grid point on the running fabric: its figures and per-link counted bytes."""
    rows = []
    for pattern, mode, qps in GRID:
        ranks = len(plan.nics()) if pattern == "allreduce" else INCAST_RANKS
        aizone("mode", mode, env=env)
        run = aizone("run", pattern, "--ranks", str(ranks), "--size", str(size), "--qps",
                     str(qps), "--strategy", "rr", "--placement", "packed", "--json", env=env,
                     timeout=1200)
        if run.returncode != 0:
            rows.append({"pattern": pattern, "mode": mode, "qps": qps,
                         "failed": run.stderr[-300:]})
            continue
        job = json.loads(run.stdout)
        try:
            check_run_ok(job)
            assert_counters_match_model(job, spec, plan, ranks=ranks, size=size, qps=qps,
                                        pattern=MODEL_PATTERN[pattern])
            bound = "yes"
        except AssertionError as exc:
            bound = f"no: {str(exc)[:200]}"
        rows.append({"pattern": pattern, "mode": mode, "qps": qps, "bound": bound,
                     "time_s": job["result"]["time_s"],
                     "retransmitted": job["result"]["retransmitted"],
                     "cpu_bound": job["cpu_bound"],
                     "links": {r["id"]: (r["up_bytes"], r["down_bytes"]) for r in job["links"]}})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--topology", default=str(REPO / "topologies" / "ai_zone.yaml"))
    ap.add_argument("--target", default="p4switch")
    ap.add_argument("--size", default="64K", help="bytes per rank (default 64K)")
    args = ap.parse_args()
    spec = load_spec(args.topology)
    plan = plan_addresses(spec)
    size = _size(args.size)
    results: dict[str, list[dict[str, Any]]] = {}
    with NamespaceServers(1) as server:
        env = server.env()
        for layout, extra in (("one machine", []),
                              ("two servers", ["--servers", f"localhost,{server.addresses[0]}"])):
            up = aizone("up", args.topology, "--target", args.target, "--json", *extra, env=env,
                        timeout=1200)
            if up.returncode != 0:
                raise SystemExit(f"{layout}: aizone up failed: {up.stderr[-1500:]}")
            try:
                results[layout] = run_grid(spec, plan, size, env)
            finally:
                aizone("down", env=env)
    print(f"{plan.name} ({len(plan.nics())} NICs), {args.target}: ring AllReduce over every "
          f"NIC and incast of {INCAST_RANKS - 1} senders, {args.size} per rank, packed, rr\n")
    print("| collective | mode | QPs | within the model's bound (one / two) | time s (one / two) | "
          "resent (one / two) | CPU-bound (one / two) | largest per-link difference |")
    print("|---|---|---|---|---|---|---|---|")
    for one, two in zip(results["one machine"], results["two servers"], strict=True):
        if "failed" in one or "failed" in two:
            print(f"| {one['pattern']} | {one['mode']} | {one['qps']} | failed: "
                  f"{one.get('failed') or two.get('failed')} |||||")
            continue
        worst, carried = 0.0, 0
        for link, counts in one["links"].items():
            for way in (0, 1):
                a, b = counts[way], two["links"][link][way]
                if max(a, b) > DATA_BYTES:
                    carried += 1
                    worst = max(worst, abs(a - b) / max(a, b))
        print(f"| {one['pattern']} | {one['mode']} | {one['qps']} | {one['bound']} / "
              f"{two['bound']} | "
              f"{one['time_s']:.2f} / {two['time_s']:.2f} | {one['retransmitted']} / "
              f"{two['retransmitted']} | {one['cpu_bound']} / {two['cpu_bound']} | "
              f"{worst:.2%} over {carried} link directions |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
