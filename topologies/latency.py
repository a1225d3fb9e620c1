"""Scaled latency: a topology's `latency:` section and the round trips it gives.

Rates are scaled (the host tier's `rate_mbps` stands for `line_rate_gbps`,
by the fabric's `scale`); `latency:` scales time by the same factor, so the
bandwidth-delay product (bytes in flight) is the real fabric's. It gives
real values, in microseconds: the propagation of each link tier's cable
(`propagation_us`: about 5 ns per metre of fibre) and each switch role's
forwarding latency (`switch_us`). On the running fabric every frame
leaving an interface waits `(propagation + the sending switch's latency) x
scale` (`topologies.linkdelay`, `topologies.delayline`); a host's NIC adds
no switch latency. Without the section nothing is delayed (the presets'
default).

BDP: emulated rate x emulated delay = (real rate x scale) x (real delay /
scale), so the bytes a link holds in flight are the real fabric's at any
scale.

Names defined here: `LatencySpec`, `PropagationSpec`, `SwitchLatencySpec`,
`MAX_LATENCY_US`, `MAX_HOP_DELAY_S`, `TIER_ENDS`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_HOP_DELAY_S", "MAX_LATENCY_US", "TIER_ENDS", "LatencySpec", "PropagationSpec",
           "SwitchLatencySpec"]

# A real hop of a millisecond is 200 km of fibre: past any AI zone.
MAX_LATENCY_US = 1000.0
# The longest emulated wait of one hop; the delay line holds every frame in
# flight in memory, and a probe or an ARP waiting minutes helps no one.
MAX_HOP_DELAY_S = 10.0
# The nodes at the lower and the upper end of each tier's links (None: a host NIC).
TIER_ENDS: dict[str, tuple[str | None, str]] = {
    "host": (None, "rtsw"), "rtsw_ctsw": ("rtsw", "ctsw"), "ctsw_atsw": ("ctsw", "atsw")}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PropagationSpec(_Model):
    """Real propagation per link tier (us): copper to the NICs, fibre above."""

    host: float = Field(default=0.01, ge=0, le=MAX_LATENCY_US)
    rtsw_ctsw: float = Field(default=0.5, ge=0, le=MAX_LATENCY_US)
    ctsw_atsw: float = Field(default=0.5, ge=0, le=MAX_LATENCY_US)


class SwitchLatencySpec(_Model):
    """Real forwarding latency per switch role (us), added to every frame a switch sends."""

    rtsw: float = Field(default=1.0, ge=0, le=MAX_LATENCY_US)
    ctsw: float = Field(default=1.0, ge=0, le=MAX_LATENCY_US)
    atsw: float = Field(default=1.0, ge=0, le=MAX_LATENCY_US)


class LatencySpec(_Model):
    """Real latencies (us) that the running fabric multiplies by its scale."""

    propagation_us: PropagationSpec = PropagationSpec()
    switch_us: SwitchLatencySpec = SwitchLatencySpec()

    def egress_us(self, tier: str, role: str | None) -> float:
        """Real delay of a frame leaving a `role` node (None: a host) onto a `tier` link."""
        switch = getattr(self.switch_us, role) if role else 0.0
        return float(getattr(self.propagation_us, tier)) + float(switch)

    def link_rtt_us(self, tier: str, lower: str | None, upper: str) -> float:
        """Real round trip of one `tier` link between a `lower` node and an `upper` switch."""
        return self.egress_us(tier, lower) + self.egress_us(tier, upper)

    def path_rtt_us(self, atsw: bool) -> float:
        """Real round trip between hosts of the farthest racks: through a CTSW (host link,
        RTSW, CTSW, RTSW) or, across zones, through an ATSW as well."""
        p, s = self.propagation_us, self.switch_us
        one_way = 2 * p.host + 2 * p.rtsw_ctsw + 2 * s.rtsw + s.ctsw
        if atsw:
            one_way += 2 * p.ctsw_atsw + s.ctsw + s.atsw
        return 2 * one_way
