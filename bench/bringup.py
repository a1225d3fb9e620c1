"""Bring-up, reconvergence and reconciliation times of the emulated fabric (root).

For each topology (default: ai_zone_small and ai_zone) and each target
(p4switch, and BMv2 when `simple_switch_grpc` and `p4c-bm2-ss` are on
PATH), in one run:

- up: seconds from `aizone up` to the fabric reported up (every switch's
  pipeline pushed and entries reconciled, agents answering), and to every
  host pair reachable (`aizone check` passing: pings and RoCEv2);
- link: one RTSW-CTSW link taken down with `aizone link down` (the daemon's
  reconvergence: every switch's writes done), and one dying silently
  (`--silent`: the probes' detection time plus the reconvergence);
- restart: a CTSW process SIGKILLed: until the daemon restarted it and
  reconciled it (its process restart and its writes, from the daemon's
  record);
- re-attach: the daemon SIGKILLed and started again: the reconcile of the
  switch that took longest (it reads everything back and writes nothing).

Usage (as root; the fabric's ports and names must be free):

    sudo .venv/bin/python bench/bringup.py [--topology T ...] [--target T ...] [--repeat N]

Figures are printed (a rich table, or --json), never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from controller.client import ApiClient
from topologies.runstate import read_state

ROOT = Path(__file__).resolve().parents[1]


def aizone(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aizone.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def must(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    if proc.returncode != 0:
        raise SystemExit(f"bringup: {' '.join(proc.args[3:])} failed: "
                         f"{(proc.stderr or proc.stdout).strip()[-400:]}")
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def wait(what: Any, timeout: float, every: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(every)
    raise SystemExit("bringup: timed out waiting")


def one(topology: Path, target: str, build: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"topology": topology.stem, "target": target}
    aizone("down")
    t0 = time.monotonic()
    must(aizone("up", str(topology), "--target", target, "--build-dir", str(build), "--json"))
    out["up_s"] = time.monotonic() - t0
    check = must(aizone("check", "--json"))
    out["reachable_s"] = time.monotonic() - t0
    out["pairs"] = check["pairs"]
    api = ApiClient()
    try:
        down = must(aizone("link", "down", "rtsw1", "ctsw1", "--json"))
        out["link_reconverge_s"] = down["reconverged_after"]
        must(aizone("link", "up", "rtsw1", "ctsw1", "--json"))
        must(aizone("link", "down", "rtsw2", "ctsw1", "--silent", "--json"))
        failure = wait(lambda: [f for f in api.get("/status")["failures"]
                                if f.get("reconverged_after") is not None], 15)[0]
        out["probe_detect_s"] = failure["detected_after"]
        out["probe_reconverge_s"] = failure["reconverged_after"]
        must(aizone("link", "up", "rtsw2", "ctsw1", "--silent", "--json"))
        wait(lambda: not api.get("/status")["failed"], 15)
        state = read_state()
        assert state is not None
        victim = next(s for s in state.switches if s["name"] == "ctsw1")["pid"]
        seen = len(api.get("/status")["restarts"])
        os.kill(victim, signal.SIGKILL)
        record = wait(lambda: api.get("/status")["restarts"][seen:], 90, every=0.2)[0]
        out["restart_total_s"] = record["total_seconds"]
        out["restart_process_s"] = record["restart_seconds"]
        out["restart_reconcile_s"] = record["reconcile_seconds"]
        out["restart_writes"] = record["writes"]
        pid = api.get("/status")["pid"]
        os.kill(pid, signal.SIGKILL)
        wait(lambda: json.loads(aizone("status", "--json").stdout).get("orphan"), 30, every=0.2)
        t1 = time.monotonic()
        must(aizone("up", "--json"))
        out["reattach_s"] = time.monotonic() - t1
        switches = api.get("/status")["switches"]
        out["reattach_reconcile_max_s"] = max(s["last_reconcile"]["seconds"] for s in switches)
        out["reattach_writes"] = sum(s["last_reconcile"]["counts"]["insert"]
                                     + s["last_reconcile"]["counts"]["modify"]
                                     + s["last_reconcile"]["counts"]["delete"] for s in switches)
    finally:
        api.close()
        aizone("down")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topology", action="append", type=Path,
                    help="topology files (default ai_zone_small and ai_zone)")
    ap.add_argument("--target", action="append", choices=("p4switch", "bmv2"),
                    help="targets (default p4switch, and bmv2 when installed)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bringup: needs root (network namespaces): sudo .venv/bin/python bench/bringup.py",
              file=sys.stderr)
        return 2
    topologies = args.topology or [ROOT / "topologies" / "ai_zone_small.yaml",
                                   ROOT / "topologies" / "ai_zone.yaml"]
    bmv2 = shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss")
    targets = args.target or (["p4switch", "bmv2"] if bmv2 else ["p4switch"])
    build = ROOT / "build" / "bench"
    rows = [one(t, target, build) for _ in range(args.repeat) for t in topologies
            for target in targets]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title="aizone bring-up, reconvergence and reconciliation (seconds)")
    cols = [("topology", "topology"), ("target", "target"), ("up", "up_s"),
            ("all pairs reachable", "reachable_s"), ("link down: reconverged", "link_reconverge_s"),
            ("silent failure: detected", "probe_detect_s"),
            ("then reconverged", "probe_reconverge_s"), ("switch SIGKILL: back", "restart_total_s"),
            ("of which reconcile", "restart_reconcile_s"), ("daemon re-attach", "reattach_s"),
            ("re-attach writes", "reattach_writes")]
    for name, _ in cols:
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(*(f"{r[k]:.3f}" if isinstance(r.get(k), float) else str(r.get(k, "-"))
                        for _, k in cols))
    Console(width=200).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
