"""`cluster.clock_too_far`: a server's clock reading against the 0.1 s bound, worked by hand.

The bound is on the offset beyond the reading's own uncertainty (half the
round trip of the exchange it comes from): 0.15 s read with +-0.06 s may be
0.09 s, within 0.1 s; 0.15 s read with +-0.04 s is at least 0.11 s, beyond.
"""

from __future__ import annotations

import pytest

from topologies.cluster import MAX_CLOCK_OFFSET_S, clock_too_far
from topologies.sshcmd import ClockReading


def test_the_bound_is_a_tenth_of_a_second() -> None:
    assert MAX_CLOCK_OFFSET_S == 0.1


@pytest.mark.parametrize(("offset", "uncertainty"), [
    (0.0, 0.001), (0.099, 0.0), (-0.099, 0.0), (0.15, 0.06), (-0.15, 0.06)])
def test_within_the_bound_beyond_the_uncertainty_is_fine(offset: float,
                                                         uncertainty: float) -> None:
    assert clock_too_far("b", ClockReading(offset_s=offset, uncertainty_s=uncertainty)) == ""


@pytest.mark.parametrize(("offset", "uncertainty", "shown"), [
    (0.15, 0.04, "+0.150 s"), (-0.25, 0.01, "-0.250 s"), (5.0, 0.002, "+5.000 s")])
def test_beyond_it_names_the_server_the_offset_and_the_fix(offset: float, uncertainty: float,
                                                          shown: str) -> None:
    why = clock_too_far("10.0.0.2", ClockReading(offset_s=offset, uncertainty_s=uncertainty))
    assert why.startswith(f"server 10.0.0.2: its clock is {shown} from this machine's "
                          f"(+-{uncertainty:.3f} s), more than 0.1 s"), why
    assert "synchronise the servers' clocks" in why
