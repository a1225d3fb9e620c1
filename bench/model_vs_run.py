"""The flow model next to `aizone run`: per grid point, predicted and counted bytes on every fabric link.

    flock /tmp/aizone-net.lock .venv/bin/python bench/model_vs_run.py \\
        [--topology topologies/ai_zone_small.yaml] [--target auto] [--size 1M] \\
        [--modes pin,ecmp,eecmp] [--qps 1,4,8] [--placements packed,random] [--seed 1]

Brings the fabric up (`aizone up`), and for every placement x mode x QPs
runs a ring AllReduce over every NIC (`aizone run allreduce --json`, rr)
and the model on the same topology, placement, seed, mode, QPs and
strategy (`model.run`, message size None: one message per step, as the
run). Prints one markdown row per point: the RTSW uplinks' max/mean as the
model predicts it and as the switches counted it, whether the model's
frame bytes per link equal the run's own prediction, the links that
counted less than the model (0 when every flow went where the model put
it) and the largest excess of a link over the model (ACKs, probes,
resends: see tests/fabric/test_model_vs_emulator.py for the bound), and
the run's time. Takes the fabric lock's holder's word that nothing else
runs. Figures only, never asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from model.run import ModelConfig, run_model
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]


def aizone(*args: str, timeout: float = 1200) -> dict[str, Any]:
    """Run the aizone CLI with --json; its answer, or SystemExit with its error."""
    proc = subprocess.run([sys.executable, "-m", "aizone.cli", *args, "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"aizone {' '.join(args)}: exit {proc.returncode}: "
                         f"{(proc.stderr or proc.stdout)[-1500:]}")
    out: dict[str, Any] = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return out


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def point(spec: Any, plan: Any, *, mode: str, qps: int, placement: str, seed: int,
          size: int, ranks: int) -> dict[str, Any]:
    """One grid point: run it on the fabric and in the model; the row's figures."""
    if aizone("status")["mode"] != mode:
        aizone("mode", mode)
    where = placement if placement != "random" else f"random seed {seed}"
    try:
        job = aizone("run", "allreduce", "--ranks", str(ranks), "--size", str(size), "--qps",
                     str(qps), "--strategy", "rr", "--placement", placement, "--seed",
                     str(seed))
    except SystemExit as exc:  # the run failed: a row that says so, and on to the next
        return {"placement": where, "mode": mode, "qps": qps, "failed": str(exc)[-200:]}
    model = run_model(spec, plan, ModelConfig(
        pattern="ring", ranks=ranks, placement=placement, seed=seed, mode=mode, qps=qps,
        strategy="rr", size=size, message_size=None, timing=False))
    totals = model.link_totals()
    below, excess, same = 0, 0.0, True
    for row in job["links"]:
        for way in ("up", "down"):
            want = round(totals.get((row["id"], way), 0))
            same &= row.get(f"{way}_predicted_bytes") == want
            got = row[f"{way}_bytes"]
            below += got < want
            if want:
                excess = max(excess, (got - want) / want)
    tier = job["tiers"].get("rtsw up", {})
    return {"placement": where, "mode": mode, "qps": qps,
            "model": (tier.get("predicted") or {}).get("imbalance"),
            "run": tier.get("imbalance"), "same": same, "below": below, "excess": excess,
            "time_ms": job["result"]["time_s"] * 1e3,
            "retransmitted": job["result"]["retransmitted"], "status": job["result"]["status"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--topology", default=str(ROOT / "topologies" / "ai_zone_small.yaml"))
    ap.add_argument("--target", default="auto")
    ap.add_argument("--size", default="1M", help="bytes per rank (default 1M)")
    ap.add_argument("--modes", default="pin,ecmp,eecmp")
    ap.add_argument("--qps", default="1,4,8")
    ap.add_argument("--placements", default="packed,random")
    ap.add_argument("--seed", type=int, default=1, help="the random placement's seed")
    args = ap.parse_args()
    spec = load_spec(args.topology)
    plan = plan_addresses(spec)
    ranks = len(plan.nics())
    modes = args.modes.split(",")
    aizone("up", args.topology, "--mode", modes[0], "--target", args.target)
    rows = []
    try:
        for placement in args.placements.split(","):
            for mode in modes:
                for qps in (int(q) for q in args.qps.split(",")):
                    rows.append(point(spec, plan, mode=mode, qps=qps, placement=placement,
                                      seed=args.seed if placement == "random" else 0,
                                      size=_size(args.size), ranks=ranks))
                    print(rows[-1], file=sys.stderr, flush=True)
    finally:
        subprocess.run([sys.executable, "-m", "aizone.cli", "down"], cwd=ROOT,
                       capture_output=True, timeout=300)
    print(f"{plan.name}, target {args.target}: ring AllReduce over {ranks} ranks, "
          f"{args.size} per rank, rr\n")
    print("| placement | mode | QPs | RTSW up max/mean, model | counted | model = run's "
          "prediction | links below the model | largest excess | time | retransmitted |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "failed" in r:
            print(f"| {r['placement']} | {r['mode']} | {r['qps']} | run failed: "
                  f"{r['failed']} |||||||")
            continue
        fmt = (lambda v: "-" if v is None else f"{v:.2f}")  # noqa: E731
        print(f"| {r['placement']} | {r['mode']} | {r['qps']} | {fmt(r['model'])} | "
              f"{fmt(r['run'])} | {'yes' if r['same'] else 'no'} | {r['below']} | "
              f"{r['excess']:.1%} | {r['time_ms']:,.0f} ms | {r['retransmitted']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
