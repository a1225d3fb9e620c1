"""v1model stateful externs as BMv2 implements them.

Names defined here: `CounterArray` (indexed counter: packets and bytes),
`RegisterArray`, `MeterArray` and `TrTcm` (the two-rate three-colour
marker BMv2 meters run), `ValueSet` (parser
value_set), `check_meter_config`, and the colour constants `GREEN`, `YELLOW`, `RED`.

In the data plane, out-of-range indexes do nothing (BMv2 logs an error and
leaves the destination untouched); a control-plane read or write of one
raises `StateError` (OUT_OF_RANGE). Counters count `Packet.length` bytes
(BMv2's packet length register).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .state import Code, StateError

GREEN, YELLOW, RED = 0, 1, 2


def check_meter_config(name: str, config: tuple[int, int, int, int] | None) -> None:
    """BMv2 refuses a peak rate below the committed rate (and negative values)."""
    if config is None:
        return
    cir, cburst, pir, pburst = config
    if min(config) < 0 or pir < cir:
        raise StateError(Code.INVALID_ARGUMENT,
                         f"meter '{name}': need 0 <= cir <= pir and bursts >= 0, got {config}")


def _check_index(kind: str, name: str, index: int, size: int) -> None:
    if not 0 <= index < size:
        raise StateError(Code.OUT_OF_RANGE, f"{kind} '{name}': index {index} out of range [0, {size})")


class CounterArray:
    """`counter(size, type)`: per index a [packets, bytes] pair."""

    __slots__ = ("name", "size", "packets", "bytes")

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size
        self.packets = [0] * size
        self.bytes = [0] * size

    def count(self, index: int, pk: Any) -> None:
        """Count one packet of `pk.length` bytes at `index` (out of range: nothing)."""
        if 0 <= index < self.size:
            self.packets[index] += 1
            self.bytes[index] += pk.length

    def read(self, index: int) -> tuple[int, int]:
        """(packets, bytes) at `index` (StateError when out of range)."""
        _check_index("counter", self.name, index, self.size)
        return self.packets[index], self.bytes[index]

    def write(self, index: int, packets: int, bytes_: int) -> None:
        """Set (packets, bytes) at `index` (StateError when out of range)."""
        _check_index("counter", self.name, index, self.size)
        self.packets[index] = packets
        self.bytes[index] = bytes_


class RegisterArray:
    """`register<T>(size)`: values wrap to the element width."""

    __slots__ = ("name", "size", "width", "values")

    def __init__(self, name: str, size: int, width: int) -> None:
        self.name = name
        self.size = size
        self.width = width
        self.values = [0] * size

    def read(self, index: int, old: int) -> int:
        """The value at index, or `old` (the destination unchanged) when out of range."""
        if 0 <= index < self.size:
            return self.values[index]
        return old

    def write(self, index: int, value: int) -> None:
        """Store `value` at `index`, wrapped to the element width (out of range: nothing)."""
        if 0 <= index < self.size:
            self.values[index] = value & ((1 << self.width) - 1) if self.width else value

    def cp_read(self, index: int) -> int:
        """The value at `index` for the control plane (StateError when out of range)."""
        _check_index("register", self.name, index, self.size)
        return self.values[index]

    def cp_write(self, index: int, value: int) -> None:
        """Store `value` at `index` for the control plane (StateError when out of range)."""
        _check_index("register", self.name, index, self.size)
        self.write(index, value)


class TrTcm:
    """A two-rate three-colour meter as BMv2 runs it; rates in units/s, bursts in units.

    BMv2 (`Meter::execute`) keeps the committed and the peak bucket, both
    starting full, and checks them in that order: a packet that does not fit
    the committed bucket is YELLOW (nothing debited); else the committed
    bucket is debited and a packet that does not fit the peak bucket is RED;
    else the peak bucket is debited too and the packet is GREEN. (RFC 2698
    checks the peak bucket first; BMv2's order is kept.)
    """

    __slots__ = ("cir", "cburst", "pir", "pburst", "tc", "tp", "last", "clock")

    def __init__(self, config: tuple[int, int, int, int],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cir, self.cburst, self.pir, self.pburst = config
        self.tc = float(self.cburst)
        self.tp = float(self.pburst)
        self.clock = clock
        self.last = clock()

    def execute(self, amount: int) -> int:
        """Meter `amount` units now and return the colour (GREEN, YELLOW or RED)."""
        now = self.clock()
        dt = now - self.last
        self.last = now
        self.tc = min(self.cburst, self.tc + dt * self.cir)
        self.tp = min(self.pburst, self.tp + dt * self.pir)
        if self.tc < amount:
            return YELLOW
        self.tc -= amount
        if self.tp < amount:
            return RED
        self.tp -= amount
        return GREEN


class MeterArray:
    """`meter(size, type)`: an unconfigured index marks everything GREEN."""

    __slots__ = ("name", "size", "bytes_", "meters")

    def __init__(self, name: str, size: int, bytes_: bool) -> None:
        self.name = name
        self.size = size
        self.bytes_ = bytes_
        self.meters: list[TrTcm | None] = [None] * size

    def execute(self, index: int, pk: Any, old: int) -> int:
        """The colour of `pk` at `index` (bytes or packets); `old` when out of range."""
        if not 0 <= index < self.size:
            return old
        m = self.meters[index]
        if m is None:
            return GREEN
        return m.execute(pk.length if self.bytes_ else 1)

    def set(self, index: int, config: tuple[int, int, int, int] | None) -> None:
        """Configure `index` (None: unconfigured); StateError for a bad index or config."""
        _check_index("meter", self.name, index, self.size)
        check_meter_config(self.name, config)
        self.meters[index] = None if config is None else TrTcm(config)

    def get(self, index: int) -> tuple[int, int, int, int] | None:
        """The (cir, cburst, pir, pburst) at `index`, or None when unconfigured."""
        _check_index("meter", self.name, index, self.size)
        m = self.meters[index]
        return None if m is None else (m.cir, m.cburst, m.pir, m.pburst)


class ValueSet:
    """A parser `value_set`: matched like a select keyset list (value, mask) pairs."""

    __slots__ = ("name", "size", "members")

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size
        self.members: list[tuple[int, int]] = []  # (value, mask); mask -1 = exact

    def match(self, key: int) -> bool:
        """Whether `key` matches any (value, mask) member."""
        for value, mask in self.members:
            if key & mask == value & mask:
                return True
        return False

    def set_members(self, members: list[tuple[int, int]]) -> None:
        """Replace the members (StateError when there are more than `size`)."""
        if len(members) > self.size:
            raise StateError(Code.RESOURCE_EXHAUSTED,
                             f"value_set '{self.name}' holds at most {self.size} members")
        self.members = list(members)


__all__ = ["CounterArray", "RegisterArray", "MeterArray", "TrTcm", "ValueSet",
           "check_meter_config", "GREEN", "YELLOW", "RED"]
