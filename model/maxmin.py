"""Max-min fair sharing of link rates (progressive filling) and the fluid completion time of a step.

`maxmin_rates(flow_of, link_of, n_flows, capacity, active)`: every active
flow's rate grows at the same pace until a link is full; the flows through
a full link are frozen at their rate; the others grow on until every flow
is frozen (Bertsekas & Gallager's progressive filling, one numpy pass per
saturation level, not per flow).

`completion_time(...)`: the step as a fluid: all its flows start together
at their max-min rates; when the first ones finish, the rest are given the
capacity they leave (rates recomputed), and so on until the last byte
arrives. After `max_events` recomputations the remaining flows finish at
their last rates (an upper bound on the fluid time: the last waves would
speed up a little more).

Names defined here: `maxmin_rates`, `completion_time`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["completion_time", "maxmin_rates"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
_EPS = 1e-9


def maxmin_rates(flow_of: Ints, link_of: Ints, n_flows: int, capacity: Floats,
                 active: npt.NDArray[np.bool_] | None = None, rel_tol: float = 0.0) -> Floats:
    """Max-min fair rate (bits/s) of each flow over links of `capacity`; inactive flows get 0.

    With `rel_tol` > 0, links whose fair share is within that fraction of the
    smallest one saturate in the same round (every rate within `rel_tol` of
    the exact allocation, far fewer rounds on large, uneven steps).
    """
    frozen = np.zeros(n_flows, dtype=bool) if active is None else ~active
    rate = np.zeros(n_flows, dtype=np.float64)
    # A flow that crosses no link would grow without bound: it is not limited here.
    crossing = np.bincount(flow_of, minlength=n_flows) > 0
    frozen = frozen | ~crossing
    keep = ~frozen[flow_of]
    fo, lo = flow_of[keep], link_of[keep]
    residual = capacity.astype(np.float64).copy()
    n_links = len(capacity)
    level = 0.0  # the rate every unfrozen flow has reached
    while len(fo):
        count = np.bincount(lo, minlength=n_links)
        used = np.flatnonzero(count)
        share = residual[used] / count[used]
        inc = max(float(share.min()), 0.0)
        level += inc
        residual[used] -= inc * count[used]
        full = np.zeros(n_links, dtype=bool)
        # Saturated: nothing left, or (rel_tol) a rate within rel_tol of this level.
        full[used] = share <= inc + level * rel_tol + _EPS * np.maximum(capacity[used], 1.0) / count[used]
        hit = full[lo]
        newly = np.unique(fo[hit])
        rate[newly] = level
        frozen[newly] = True
        keep = ~frozen[fo]
        fo, lo = fo[keep], lo[keep]
    return rate


def completion_time(flow_of: Ints, link_of: Ints, size_bytes: Floats, capacity: Floats,
                    max_events: int = 8, rel_tol: float = 0.0) -> tuple[float, Floats]:
    """(seconds until every flow of the step is done, each flow's initial max-min rate)."""
    n = len(size_bytes)
    left = size_bytes.astype(np.float64) * 8
    active = left > 0
    first: Floats | None = None
    t = 0.0
    for _ in range(max_events):
        if not active.any():
            break
        rate = maxmin_rates(flow_of, link_of, n, capacity, active, rel_tol)
        if first is None:
            first = rate
        moving = active & (rate > 0)
        if not moving.any():
            return float("inf"), first
        dt = float(np.min(left[moving] / rate[moving]))
        t += dt
        left[moving] -= rate[moving] * dt
        active &= left > _EPS * np.maximum(size_bytes * 8, 1.0)
    else:
        if active.any():
            rate = maxmin_rates(flow_of, link_of, n, capacity, active, rel_tol)
            moving = active & (rate > 0)
            t += float(np.max(left[moving] / rate[moving])) if moving.any() else float("inf")
    return t, first if first is not None else np.zeros(n)
