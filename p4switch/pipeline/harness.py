"""In-memory ports for driving a `Switch` in tests (no root, no interfaces).

`PortHarness(program, **switch_options)` builds a Switch whose transmit
callback records frames; `send(port, frame)` injects one and returns what
came out (in order) once the switch is idle; `packet_ins` collects
packets sent to the CPU port when a packet-in handler is wanted.
`stale_headers(switch)` makes a switch's headers start each packet holding
the last packet's field values (still invalid), as BMv2's do: a program
whose output changes with it reads fields of invalid headers, whose values
P4-16 leaves unspecified.

Names defined here: `PortHarness`, `masked_equal`, `stale_headers`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .. import ir
from .runtime import Stack
from .switch import Switch


def masked_equal(got: bytes, want: bytes, dont_care: Sequence[tuple[int, int]] = ()) -> bool:
    """Frames equal except in the (offset, length) byte ranges listed as don't-care."""
    if len(got) != len(want):
        return False
    g, w = bytearray(got), bytearray(want)
    for off, n in dont_care:
        g[off:off + n] = b"\x00" * len(g[off:off + n])
        w[off:off + n] = b"\x00" * len(w[off:off + n])
    return g == w


class PortHarness:
    """A switch on in-memory ports: every transmitted frame lands in `out` as (port, bytes)."""

    def __init__(self, program: ir.Program, *, packet_in: bool = False, **options: Any) -> None:
        self.out: list[tuple[int, bytes]] = []
        self.packet_ins: list[tuple[bytes, dict[str, int]]] = []
        self.digests: list[tuple[str, tuple]] = []
        self._lock = threading.Lock()
        self.switch = Switch(program, self._transmit, **options)
        if packet_in:
            self.switch.set_packet_in_handler(lambda p, m: self.packet_ins.append((p, m)))
        self.switch.set_digest_handler(lambda n, v: self.digests.append((n, v)))

    def _transmit(self, port: int, data: bytes) -> None:
        with self._lock:
            self.out.append((port, bytes(data)))

    def send(self, port: int, frame: bytes, timeout: float = 5.0) -> list[tuple[int, bytes]]:
        """Inject a frame; return the frames sent because of it (and anything pending)."""
        self.switch.process(port, frame)
        self.switch.drain(timeout)
        return self.take()

    def take(self) -> list[tuple[int, bytes]]:
        """The frames transmitted since the last take, emptying `out`."""
        with self._lock:
            got, self.out = self.out, []
        return got

    def close(self) -> None:
        """Close the switch (stops its traffic manager)."""
        self.switch.close()

    def __enter__(self) -> PortHarness:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _carry(dst: Any, src: Any) -> None:
    """Every field value of `src` (a header struct) into `dst`, validity aside."""
    for name in dst._fields:
        old, new = getattr(src, name), getattr(dst, name)
        if isinstance(old, Stack):
            for n, o in zip(new.h, old.h, strict=True):
                _carry(n, o)
        elif hasattr(old, "_fields"):
            _carry(new, old)
        else:
            setattr(dst, name, old)


def stale_headers(switch: Switch) -> None:
    """From now on, the headers of each packet `switch` parses start invalid but holding the
    field values of the last packet's (see the module docstring); for tests only."""
    cp = switch.cp
    fresh, last = cp.new_hdr, None

    def new_hdr() -> Any:
        nonlocal last
        hdr = fresh()
        if last is not None:
            _carry(hdr, last)
        last = hdr
        return hdr

    cp.new_hdr = new_hdr


__all__ = ["PortHarness", "masked_equal", "stale_headers"]
