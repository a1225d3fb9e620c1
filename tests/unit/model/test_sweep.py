"""Tests for model.sweep: a small grid run serially and on a local Ray gives the same results."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from model import ModelConfig
from model.sweep import run_sweep, sweep_points

TOPO = Path(__file__).resolve().parents[3] / "topologies" / "two_zones.yaml"


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
    """The 16 points on a local Ray instance return exactly the serial results, in order."""
    p = points()
    serial = run_sweep(str(TOPO), p, progress=False)
    parallel = run_sweep(str(TOPO), p, ray=True, progress=False)
    assert parallel == serial
    assert len({r["time_s"] for r in serial}) > 1  # the points differ
