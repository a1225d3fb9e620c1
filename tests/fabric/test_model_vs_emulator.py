"""The model predicts `aizone run`: per fabric link, its frame bytes are what the switches count.

ai_zone_small (4 racks x 2 hosts x 2 NICs, 2 CTSWs) comes up once; for
each point of the grid mode in {pin, ecmp, eecmp} x QPs in {1, 4} (16
ranks packed, a ring AllReduce of 64 KiB per rank, rr) the fabric is put
in that mode, `aizone run allreduce --json` runs the job on the hosts'
agents (exit status 0, every host's status ok, every byte delivered) and
every fabric link's counted bytes are held to the flow model's for the
same topology, placement, seed, mode, QPs and strategy, within the ACKs,
probes and resends it does not model (`model_support`, which states the
bound).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fabric_support import ROOT, aizone, assert_clean, leftovers
from model_support import assert_counters_match_model, check_run_ok

from topologies.addressing import AddressPlan, plan_addresses
from topologies.spec import FabricSpec, load_spec

TOPO = ROOT / "topologies" / "ai_zone_small.yaml"
RANKS, SIZE = 16, 64 * 1024
GRID = [("pin", 1), ("pin", 4), ("ecmp", 1), ("ecmp", 4), ("eecmp", 1), ("eecmp", 4)]


@pytest.fixture(scope="module")
def fab(target: str, build_dir: Path) -> Iterator[tuple[FabricSpec, AddressPlan]]:
    before = leftovers()
    up = aizone("up", str(TOPO), "--mode", GRID[0][0], "--target", target, "--build-dir",
                str(build_dir), "--json")
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        spec = load_spec(TOPO)
        yield spec, plan_addresses(spec)
    finally:
        assert aizone("down").returncode == 0
    assert_clean(before)


def run_job(mode: str, qps: int) -> dict[str, Any]:
    """Put the fabric in `mode` and run the ring there; the run's JSON, checked for success."""
    now = json.loads(aizone("status", "--json").stdout)["mode"]
    if now != mode:
        switched = aizone("mode", mode, "--json")
        assert switched.returncode == 0, switched.stdout + switched.stderr
    run = aizone("run", "allreduce", "--ranks", str(RANKS), "--size", str(SIZE), "--qps",
                 str(qps), "--strategy", "rr", "--placement", "packed", "--json")
    assert run.returncode == 0, f"aizone run: exit {run.returncode}: {run.stderr[-2000:]}"
    job: dict[str, Any] = json.loads(run.stdout)
    assert job["mode"] == mode
    check_run_ok(job)
    return job


@pytest.mark.parametrize(("mode", "qps"), GRID, ids=[f"{m}-qps{q}" for m, q in GRID])
def test_model_predicts_the_switch_counters_of_a_run(
        fab: tuple[FabricSpec, AddressPlan], mode: str, qps: int) -> None:
    """Every fabric link counts the model's bytes, plus at most its ACKs, probes and resends."""
    spec, plan = fab
    job = run_job(mode, qps)
    checked = assert_counters_match_model(job, spec, plan, ranks=RANKS, size=SIZE, qps=qps)
    assert checked >= 4  # the ring crosses the spine: some uplinks carry data
