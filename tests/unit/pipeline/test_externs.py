"""Stateful externs: the BMv2 two-rate three-colour meter, registers, counters."""

from __future__ import annotations

import pytest

from p4switch.pipeline.externs import GREEN, RED, YELLOW, CounterArray, RegisterArray, TrTcm
from p4switch.pipeline.runtime import Packet
from p4switch.pipeline.state import Code, StateError


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize("config,want", [
    ((0, 2, 0, 5), [GREEN, GREEN, YELLOW, YELLOW]),
    ((0, 5, 0, 1), [GREEN, RED, RED, RED]),
], ids=["committed-exhausted", "peak-exhausted"])
def test_meter_checks_committed_then_peak(config, want):
    """Short of committed tokens: YELLOW; else short of peak tokens: RED; else GREEN."""
    m = TrTcm(config, clock=Clock())
    assert [m.execute(1) for _ in want] == want


def test_meter_refills_at_its_rates():
    """Tokens come back at cir/pir per second, up to the bursts."""
    clk = Clock()
    m = TrTcm((1, 1, 10, 10), clock=clk)
    assert m.execute(1) == GREEN
    assert m.execute(1) == YELLOW
    clk.t = 1.0
    assert m.execute(1) == GREEN


def test_register_wraps_to_width_and_checks_control_plane_index():
    """Values wrap to the element width; control-plane access out of range is OUT_OF_RANGE."""
    r = RegisterArray("r", 4, 8)
    r.write(1, 0x1FF)
    assert r.read(1, 0) == 0xFF
    assert r.read(9, 7) == 7
    with pytest.raises(StateError) as ei:
        r.cp_read(4)
    assert ei.value.code == Code.OUT_OF_RANGE


def test_counter_ignores_out_of_range_index():
    """count() past the end does nothing."""
    c = CounterArray("c", 2)
    c.count(5, Packet(b"abc"))
    c.count(1, Packet(b"abc"))
    assert c.read(1) == (1, 3)
