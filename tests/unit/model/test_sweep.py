"""Tests for model.sweep: a small grid run serially and on a local Ray gives the same results."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from model import ModelConfig
from model.sweep import run_sweep, sweep_points

ROOT = Path(__file__).resolve().parents[3]
TOPO = ROOT / "topologies" / "two_zones.yaml"


def points():
    base = ModelConfig(pattern="alltoall", size=2**24)
    return sweep_points(base, ["pin", "eecmp"], [1, 4], ["packed", "random"],
                        [(), ("ctsw1-eth3--atsw1-eth1",)])


def test_grid_order_and_size() -> None:
    """2 modes x 2 QPs x 2 placements x 2 failure sets = 16 points, failure sets fastest."""
    p = points()
    assert len(p) == 16
    assert [(c.mode, c.qps, c.placement, c.failed) for c in p[:2]] == [
        ("pin", 1, "packed", ()), ("pin", 1, "packed", ("ctsw1-eth3--atsw1-eth1",))]


@pytest.mark.skipif(not TOPO.exists(), reason="topologies/two_zones.yaml is not there")
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray (the [scale] extra) "
                    "is not installed")
@pytest.mark.timeout(600)
def test_ray_sweep_equals_the_serial_one() -> None:
    """`aizone sweep --ray` over the 16 points prints exactly the serial results, in order.

    Ray runs in a fresh `aizone` process, as a user starts it: Ray forks its
    servers from the process that calls `ray.init`, and a fork taken while
    an earlier test's gRPC threads are alive in this one can abort in
    grpcio's fork handler.
    """
    serial = run_sweep(str(TOPO), points(), progress=False)
    argv = [sys.executable, "-m", "aizone", "sweep", str(TOPO), "--pattern", "alltoall",
            "--size", str(2**24), "--modes", "pin,eecmp", "--qps", "1,4",
            "--placements", "packed,random", "--fail", "ctsw1-eth3--atsw1-eth1", "--ray", "--json"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stderr[-2000:]
    parallel = json.loads(done.stdout)
    assert len(parallel) == 16
    assert parallel == json.loads(json.dumps(serial))  # JSON keeps every float exactly
    assert len({r["time_s"] for r in serial}) > 1  # the points differ
