"""Tests for experiments.stats: spread, imbalance, per-tier bytes, relative change (by hand)."""

from __future__ import annotations

import math

import pytest

from experiments.stats import (
    Spread,
    change,
    clearly_less,
    faster,
    imbalance,
    judged,
    tier_bytes,
    tier_imbalance,
)

LINKS = [
    {"id": "rtsw1-eth5--ctsw1-eth1", "tier": "rtsw_ctsw", "a": "rtsw1", "b": "ctsw1",
     "up_bytes": 300, "down_bytes": 100},
    {"id": "rtsw1-eth6--ctsw2-eth1", "tier": "rtsw_ctsw", "a": "rtsw1", "b": "ctsw2",
     "up_bytes": 100, "down_bytes": 100},
    {"id": "rtsw2-eth5--ctsw1-eth2", "tier": "rtsw_ctsw", "a": "rtsw2", "b": "ctsw1",
     "up_bytes": 0, "down_bytes": 0},
    {"id": "ctsw1-eth3--atsw1-eth1", "tier": "ctsw_atsw", "a": "ctsw1", "b": "atsw1",
     "up_bytes": 7, "down_bytes": 9},
]


def test_spread_of_three_values() -> None:
    """Mean 2, sample sd 1 (deviations -1, 0, 1: sum of squares 2 over n-1 = 2), min 1, max 3."""
    s = Spread.of([1.0, 2.0, 3.0])
    assert s == Spread(mean=2.0, sd=1.0, min=1.0, max=3.0, n=3)


def test_spread_leaves_out_missing_values() -> None:
    """None and NaN are not values; one value has sd 0."""
    assert Spread.of([None, 4.0, math.nan]) == Spread(mean=4.0, sd=0.0, min=4.0, max=4.0, n=1)
    assert Spread.of([None]) is None


def test_imbalance_is_max_over_mean() -> None:
    """[300, 100] -> mean 200, max 300: 1.5; all zero -> None."""
    assert imbalance([300, 100]) == 1.5
    assert imbalance([0, 0]) is None
    assert imbalance([]) is None


def test_tier_bytes_of_the_job_racks_only() -> None:
    """Only links whose lower end is one of the job's RTSWs count."""
    assert tier_bytes(LINKS, "rtsw_ctsw", "up", ["rtsw1"]) == {
        "rtsw1-eth5--ctsw1-eth1": 300, "rtsw1-eth6--ctsw2-eth1": 100}


def test_tier_imbalance_counts_idle_links_of_busy_switches() -> None:
    """rtsw1 and rtsw2: [300, 100, 0] -> mean 133.3, max 300: 2.25."""
    assert tier_imbalance(LINKS, "rtsw_ctsw", "up", ["rtsw1", "rtsw2"]) == pytest.approx(2.25)
    assert tier_imbalance(LINKS, "rtsw_ctsw", "down", ["rtsw1"]) == 1.0


def test_change_and_faster() -> None:
    """10 s -> 6 s is a change of -40%, i.e. 40% faster."""
    assert change(10.0, 6.0) == pytest.approx(-0.4)
    assert faster(10.0, 6.0) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="from 0"):
        change(0.0, 1.0)


def test_clearly_less_needs_the_spreads_apart() -> None:
    """5 ± 1 vs 8 ± 1 are apart (6 < 7); 5 ± 1 vs 6.5 ± 1 overlap."""
    a = Spread(mean=5, sd=1, min=4, max=6, n=3)
    assert clearly_less(a, Spread(mean=8, sd=1, min=7, max=9, n=3))
    assert not clearly_less(a, Spread(mean=6.5, sd=1, min=5, max=8, n=3))


def test_judged_needs_repeats() -> None:
    """With 2+ values per spread the verdict stands; one value leaves it undecided."""
    two = Spread(mean=1, sd=0.1, min=0.9, max=1.1, n=2)
    one = Spread(mean=1, sd=0.0, min=1, max=1, n=1)
    assert judged(False, two, two) is False
    assert judged(True, two, one) is None
    assert judged(True, None) is None
