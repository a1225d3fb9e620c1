"""Tests for model.maxmin: max-min rates and fluid times worked out by hand.

Three flows on two links, A (10 b/s) and B (4 b/s): f0 on A, f1 on A and B,
f2 on B. Filling: at rate 2 B is full (f1 + f2 = 4), f1 and f2 freeze; A
has 10 - 2 = 8 left for f0 alone, so f0 = 8. Rates (8, 2, 2).
Fluid, sizes 2, 0.5, 1 bytes (16, 4, 8 bits): f0 and f1 finish at t = 2 s;
f2 has 4 bits left and B to itself (4 b/s): done at t = 3 s.
"""

from __future__ import annotations

import numpy as np
import pytest

from model.maxmin import completion_time, maxmin_rates

FLOW = np.array([0, 1, 1, 2])
LINK = np.array([0, 0, 1, 1])
CAP = np.array([10.0, 4.0])


def test_progressive_filling_by_hand() -> None:
    """Rates (8, 2, 2) b/s."""
    assert maxmin_rates(FLOW, LINK, 3, CAP).tolist() == [8.0, 2.0, 2.0]


def test_inactive_flows_leave_their_share() -> None:
    """Without f1: f0 takes all of A (10), f2 all of B (4)."""
    active = np.array([True, False, True])
    assert maxmin_rates(FLOW, LINK, 3, CAP, active).tolist() == [10.0, 0.0, 4.0]


def test_fluid_completion_time_by_hand() -> None:
    """Done at 3 s; initial rates (8, 2, 2)."""
    t, first = completion_time(FLOW, LINK, np.array([2.0, 0.5, 1.0]), CAP, max_events=8)
    assert t == pytest.approx(3.0) and first.tolist() == [8.0, 2.0, 2.0]


def test_rel_tol_merges_close_levels_within_the_tolerance() -> None:
    """Two bottlenecks at 2 and 2.02 b/s: with rel_tol 0.05 both flows stop at 2 (within 5 %)."""
    flow, link = np.array([0, 1]), np.array([0, 1])
    exact = maxmin_rates(flow, link, 2, np.array([2.0, 2.02]))
    merged = maxmin_rates(flow, link, 2, np.array([2.0, 2.02]), rel_tol=0.05)
    assert exact.tolist() == [2.0, 2.02] and merged.tolist() == [2.0, 2.0]
