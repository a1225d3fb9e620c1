"""The model predicts `aizone run`: per fabric link, its frame bytes are what the switches count.

ai_zone_small (4 racks x 2 hosts x 2 NICs, 2 CTSWs) comes up once; for
each point of the grid placement in {packed, random seed 1} x mode in
{pin, ecmp, eecmp} x QPs in {1, 4, 8} (16 ranks, a ring AllReduce of 64
KiB per rank, rr) the fabric is put in that mode, `aizone run allreduce --json` runs the job on the hosts'
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
RANKS, SIZE, SEED = 16, 64 * 1024, 1
# Placement outermost, then mode: a mode change per point at most, as a user's sweep.
GRID = [(placement, mode, qps) for placement in ("packed", "random")
        for mode in ("pin", "ecmp", "eecmp") for qps in (1, 4, 8)]


@pytest.fixture(scope="module")
def fab(target: str, build_dir: Path) -> Iterator[tuple[FabricSpec, AddressPlan]]:
    before = leftovers()
    up = aizone("up", str(TOPO), "--mode", GRID[0][1], "--target", target, "--build-dir",
                str(build_dir), "--json")
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        spec = load_spec(TOPO)
        yield spec, plan_addresses(spec)
    finally:
        assert aizone("down").returncode == 0
    assert_clean(before)


def run_job(placement: str, mode: str, qps: int) -> dict[str, Any]:
    """Put the fabric in `mode` and run the ring there, placed by `placement` (random: seed
    SEED); the run's JSON, checked for success."""
    now = json.loads(aizone("status", "--json").stdout)["mode"]
    if now != mode:
        switched = aizone("mode", mode, "--json")
        assert switched.returncode == 0, switched.stdout + switched.stderr
    run = aizone("run", "allreduce", "--ranks", str(RANKS), "--size", str(SIZE), "--qps",
                 str(qps), "--strategy", "rr", "--placement", placement, "--seed", str(SEED),
                 "--json")
    assert run.returncode == 0, f"aizone run: exit {run.returncode}: {run.stderr[-2000:]}"
    job: dict[str, Any] = json.loads(run.stdout)
    assert job["mode"] == mode
    check_run_ok(job)
    return job


# The random placement's points check the model's placement against the daemon's, the same
# on every target: `make test` runs them on the built-in target only (one_target).
@pytest.mark.parametrize(("placement", "mode", "qps"), [
    pytest.param(p, m, q, id=f"{p}-{m}-qps{q}",
                 marks=[pytest.mark.one_target] if p == "random" else [])
    for p, m, q in GRID])
def test_model_predicts_the_switch_counters_of_a_run(
        fab: tuple[FabricSpec, AddressPlan], placement: str, mode: str, qps: int) -> None:
    """Every fabric link counts the model's bytes, plus at most its ACKs, probes and resends."""
    spec, plan = fab
    job = run_job(placement, mode, qps)
    assert job["request"]["placement"] == placement
    checked = assert_counters_match_model(job, spec, plan, ranks=RANKS, size=SIZE, qps=qps,
                                          placement=placement, seed=SEED)
    assert checked >= 4  # the ring crosses the spine: some uplinks carry data
