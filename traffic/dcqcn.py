"""DCQCN's reaction point: a QP's sending rate cut on CNPs and recovered by timers (optional).

Meta runs its training fabric with DCQCN off (PFC and receiver-driven
admission instead), so the NICs here do not react to CNPs unless a
``NicConfig`` asks for ``dcqcn``. When on, each QP's requester is paced at
its own rate ``rc`` on top of the link's pacing, following the reaction
point of Zhu et al., "Congestion Control for Large-Scale RDMA Deployments"
(SIGCOMM 2015), without its byte counter (timer-driven increase only):

- a CNP: target ``rt = rc``, ``rc = rc x (1 - alpha / 2)``,
  ``alpha = (1 - g) alpha + g``; at most one cut per ``alpha_interval``
  (a NIC's rate-reduce monitor period);
- every ``alpha_interval`` without a CNP: ``alpha = (1 - g) alpha``;
- every ``increase_interval`` without a CNP: the first ``fast_recovery``
  times ``rc = (rt + rc) / 2``, then additive increase ``rt += R_AI``,
  ``rc = (rt + rc) / 2``, never above the line rate.

Times are the paper's (55 us) multiplied by the emulation's scale (line
rate / emulated rate), as the NIC's CNP interval is; rates are fractions of
the emulated line rate (R_AI = 40 Mb/s of 40 Gb/s: 1/1000).

Names: ``DcqcnParams``, ``Dcqcn``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Dcqcn", "DcqcnParams"]


@dataclass(frozen=True, kw_only=True)
class DcqcnParams:
    """The reaction point's constants (times at the real line rate, before scaling)."""

    g: float = 1 / 256
    alpha_interval: float = 55e-6
    increase_interval: float = 55e-6
    fast_recovery: int = 5
    additive_fraction: float = 1 / 1000
    min_fraction: float = 1 / 1000


class Dcqcn:
    """One QP's DCQCN rate (bits/s)."""

    def __init__(self, line_bps: float, *, scale: float, params: DcqcnParams | None = None) -> None:
        p = params or DcqcnParams()
        self.params = p
        self.line_bps = line_bps
        self.rate = line_bps  # rc
        self.target = line_bps  # rt
        self.alpha = 1.0
        self.cuts = 0
        self._alpha_every = p.alpha_interval * scale
        self._increase_every = p.increase_interval * scale
        self._min = line_bps * p.min_fraction
        self._ai = line_bps * p.additive_fraction
        self._last_cut = -float("inf")
        # The timers start with the first cut: before it the QP runs at line rate.
        self._alpha_at = float("inf")
        self._increase_at = float("inf")
        self._rounds = 0

    def on_cnp(self, now: float) -> None:
        """A CNP for this QP: cut the rate (at most once per alpha interval)."""
        if now - self._last_cut < self._alpha_every:
            return
        self._last_cut = now
        self.cuts += 1
        self.target = self.rate
        self.rate = max(self._min, self.rate * (1 - self.alpha / 2))
        self.alpha = (1 - self.params.g) * self.alpha + self.params.g
        self._alpha_at = now + self._alpha_every
        self._increase_at = now + self._increase_every
        self._rounds = 0

    def next_event(self) -> float:
        """When a timer next fires (inf before the first CNP)."""
        return min(self._alpha_at, self._increase_at)

    def poll(self, now: float) -> None:
        """Run the alpha and rate-increase timers up to ``now``."""
        g = self.params.g
        while self._alpha_at <= now:
            self.alpha *= 1 - g
            self._alpha_at += self._alpha_every
        while self._increase_at <= now:
            self._increase_at += self._increase_every
            if self.rate >= self.line_bps:
                continue
            if self._rounds >= self.params.fast_recovery:
                self.target = min(self.line_bps, self.target + self._ai)
            self._rounds += 1
            self.rate = min(self.line_bps, (self.target + self.rate) / 2)
