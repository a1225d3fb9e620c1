"""The arithmetic of experiment results: spread over repeats, imbalance, relative change.

- `Spread.of(values)`: mean, sample standard deviation, min, max and n of
  a metric over a point's repeats (sd 0 for one value).
- `imbalance(values)`: max / mean (None when the mean is 0), the paper's
  and the daemon's measure of how unevenly links carry load.
- `tier_bytes(links, tier, way, nodes)` / `tier_imbalance(...)`: the bytes
  each link of a tier carried in one direction during a job, from the
  daemon's per-link rows (the switches' `tx_port` counters), over the links
  whose lower end is one of `nodes` (the RTSWs whose racks the job uses:
  an idle uplink of a busy RTSW counts, the links of racks the job does not
  touch do not).
- `change(base, new)`: (new - base) / base, e.g. -0.4 is "40% less".
- `faster(base, new)`: how much less time `new` took, (base - new) / base.
- `clearly_less(a, b)`: a's mean below b's by more than their spreads
  (mean_a + sd_a < mean_b - sd_b), how a finding says "lower" honestly;
- `judged(holds, *spreads)`: `holds`, or None (undecided) when a spread
  has fewer than 2 values (one repeat says nothing about noise).

Names defined here: `Spread`, `imbalance`, `tier_bytes`, `tier_imbalance`,
`change`, `faster`, `clearly_less`, `judged`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["Spread", "change", "clearly_less", "faster", "imbalance", "judged", "tier_bytes",
           "tier_imbalance"]


class Spread(BaseModel):
    """A metric over a point's repeats."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    sd: float
    min: float
    max: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Spread | None:
        """The spread of the values that are not None or NaN; None when there are none."""
        got = [float(v) for v in values if v is not None and not math.isnan(float(v))]
        if not got:
            return None
        sd = statistics.stdev(got) if len(got) > 1 else 0.0
        return cls(mean=statistics.fmean(got), sd=sd, min=min(got), max=max(got), n=len(got))


def imbalance(values: Sequence[float]) -> float | None:
    """max / mean of the values; None when there are none or they are all 0."""
    if not values:
        return None
    mean = sum(values) / len(values)
    return max(values) / mean if mean > 0 else None


def tier_bytes(links: Sequence[Mapping[str, Any]], tier: str, way: str,
               nodes: Iterable[str] | None = None) -> dict[str, int]:
    """Bytes per link id of `tier` in direction `way` ("up" or "down") whose end `a` is in nodes."""
    wanted = set(nodes) if nodes is not None else None
    return {str(row["id"]): int(row[f"{way}_bytes"]) for row in links
            if row["tier"] == tier and (wanted is None or row["a"] in wanted)}


def tier_imbalance(links: Sequence[Mapping[str, Any]], tier: str, way: str,
                   nodes: Iterable[str] | None = None) -> float | None:
    """max/mean of `tier_bytes` (None when those links carried nothing)."""
    return imbalance(list(tier_bytes(links, tier, way, nodes).values()))


def change(base: float, new: float) -> float:
    """(new - base) / base."""
    if base == 0:
        raise ValueError("change from 0 is undefined")
    return (new - base) / base


def faster(base: float, new: float) -> float:
    """How much less time `new` took than `base`, as a fraction of base."""
    return -change(base, new)


def clearly_less(a: Spread, b: Spread) -> bool:
    """a's mean is below b's by more than both spreads (one sd each)."""
    return a.mean + a.sd < b.mean - b.sd


def judged(holds: bool, *spreads: Spread | None) -> bool | None:
    """`holds` when every spread has 2+ values; None (undecided) otherwise."""
    if any(s is None or s.n < 2 for s in spreads):
        return None
    return holds
