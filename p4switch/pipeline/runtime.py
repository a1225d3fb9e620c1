"""Run-time support shared by the generated code and the architecture.

Generated Python (see `codegen`) stores every header and struct as an
instance of a small generated class whose *class* attributes hold the zero
defaults (BMv2 reads uninitialised fields as 0), so creating one costs a bare
object allocation and a field only lands in the instance dict once written.

Names defined here: `Packet` (one packet's context as it crosses the pipeline),
`Stack` (a header stack), `ExitControl` (the P4 `exit` statement),
`PipelineError` (a run-time failure of generated code, e.g. an assert),
`ParserError` (a parser error code raised by a helper), `PACKET_TOO_SHORT`,
`deep_copy`, `copy_into`, the arithmetic helpers the generated code calls
(`sx`, `shl`, `div`, `mod`, `sat_add`, `sat_sub`, `eq`) and its other helpers
(`stack_last`, `stack_next`, `lookahead`, `pack_varbit`, `pack_groups`).
"""

from __future__ import annotations

from typing import Any


class ExitControl(Exception):
    """Raised by the P4 `exit` statement; caught at the end of a pipeline block."""


class PipelineError(Exception):
    """A packet hit something the pipeline cannot continue from (assert, bad index)."""


class Packet:
    """Everything one packet carries between blocks (BMv2's Packet + registers).

    Rarely-set attributes are class-level defaults, so a new packet costs three
    attribute stores.
    """

    pos = 0
    payload = b""
    hdr: Any = None
    meta: Any = None
    sm: Any = None
    clone_session: int | None = None
    clone_fl: int | None = None
    resubmit_fl: int | None = None
    recirc_fl: int | None = None
    digests: tuple | None = None
    truncate = 0
    skipped = 0  # bytes the parser advanced over (not extracted)
    cksum_err = 0
    meter_colors: dict | None = None
    out: list | None = None

    def __init__(self, data: bytes, in_port: int = 0) -> None:
        self.data = data
        self.length = len(data)
        self.in_port = in_port


class Stack:
    """A header stack: `h` the element headers, `n` the P4 nextIndex."""

    __slots__ = ("h", "n", "factory")

    def __init__(self, factory: Any, size: int) -> None:
        self.factory = factory
        self.h = [factory() for _ in range(size)]
        self.n = 0

    def at(self, index: int) -> Any:
        """Element `index` (a run-time index): out of range, a fresh invalid element that nothing
        keeps, so reading it gives zeros and writing it does nothing (P4-16: an unspecified value
        and no effect)."""
        h = self.h
        return h[index] if 0 <= index < len(h) else self.factory()

    def push_front(self, count: int) -> None:
        """P4 `push_front(count)`: shift the elements up, fresh invalid ones in front."""
        size = len(self.h)
        count = min(count, size)
        if count <= 0:
            return
        self.h = [self.factory() for _ in range(count)] + self.h[: size - count]
        self.n = min(self.n + count, size)

    def pop_front(self, count: int) -> None:
        """P4 `pop_front(count)`: shift the elements down, fresh invalid ones at the end."""
        size = len(self.h)
        count = min(count, size)
        if count <= 0:
            return
        self.h = self.h[count:] + [self.factory() for _ in range(count)]
        self.n = max(self.n - count, 0)


# values copied by reference (immutable); bytes: a header's extracted bytes (`_raw`)
_SCALARS = (int, bool, str, bytes)


def deep_copy(obj: Any) -> Any:
    """Copy a header/struct/stack value (scalars are immutable and shared)."""
    cls = obj.__class__
    if cls is Stack:
        s = Stack.__new__(Stack)
        s.factory = obj.factory
        s.h = [deep_copy(x) for x in obj.h]
        s.n = obj.n
        return s
    new = cls.__new__(cls)
    d = new.__dict__
    for k, v in obj.__dict__.items():
        d[k] = v if v.__class__ in _SCALARS else deep_copy(v)
    return new


def copy_into(dst: Any, src: Any) -> None:
    """P4 assignment of a composite value: dst takes src's value (deep)."""
    if dst is src:
        return
    if dst.__class__ is Stack:
        dst.h = [deep_copy(x) for x in src.h]
        dst.n = src.n
        return
    d = dst.__dict__
    d.clear()
    for k, v in src.__dict__.items():
        d[k] = v if v.__class__ in _SCALARS else deep_copy(v)


def sx(v: int, w: int) -> int:
    """Wrap an integer to int<w> (two's complement)."""
    h = 1 << (w - 1)
    return ((v + h) & ((1 << w) - 1)) - h


def shl(a: int, b: int, w: int) -> int:
    """a << b truncated to w bits, cheap for huge shift amounts."""
    if b >= w:
        return 0
    return (a << b) & ((1 << w) - 1)


def div(a: int, b: int) -> int:
    """a / b rounded down; 0 when b is 0."""
    return a // b if b else 0


def mod(a: int, b: int) -> int:
    """a % b; 0 when b is 0."""
    return a % b if b else 0


def sat_add(a: int, b: int, lo: int, hi: int) -> int:
    """a + b saturated to [lo, hi] (P4 `|+|`)."""
    return max(lo, min(hi, a + b))


def sat_sub(a: int, b: int, lo: int, hi: int) -> int:
    """a - b saturated to [lo, hi] (P4 `|-|`)."""
    return max(lo, min(hi, a - b))


def eq(a: Any, b: Any) -> bool:
    """== on composite values: headers compare validity then fields (both invalid: equal)."""
    if a.__class__ is Stack:
        return len(a.h) == len(b.h) and all(eq(x, y) for x, y in zip(a.h, b.h, strict=False))
    if hasattr(a.__class__, "_v"):
        if a._v != b._v:
            return False
        if not a._v:
            return True
    for name in a.__class__._fields:
        x, y = getattr(a, name), getattr(b, name)
        if x.__class__ in (int, bool, str):
            if x != y:
                return False
        elif not eq(x, y):
            return False
    return True


def stack_last(s: Stack) -> Any:
    """A header stack's `.last` (PipelineError when nothing was extracted)."""
    if s.n <= 0:
        raise PipelineError("header stack .last with no element extracted")
    return s.h[s.n - 1]


def stack_next(s: Stack) -> Any:
    """A header stack's `.next` (PipelineError when the stack is full)."""
    if s.n >= len(s.h):
        raise PipelineError("header stack .next out of bounds")
    return s.h[s.n]


class ParserError(Exception):
    """Raised by parser helpers (lookahead past the end...); `code` is the P4 error."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


PACKET_TOO_SHORT = 1  # error.PacketTooShort in core.p4 order


def lookahead(data: bytes, pos: int, nbytes: int, shift: int, mask: int) -> int:
    """`nbytes` from `pos`, shifted and masked (ParserError PacketTooShort past the end)."""
    end = pos + nbytes
    if end > len(data):
        raise ParserError(PACKET_TOO_SHORT)
    return (int.from_bytes(data[pos:end], "big") >> shift) & mask


def pack_varbit(h: Any, spec: tuple[tuple[str, int | None], ...]) -> bytes:
    """The fields of header `h` as bytes; a None width is the varbit's current width."""
    acc = 0
    nbits = 0
    for name, w in spec:
        if w is None:
            w = getattr(h, "_w_" + name)
        acc = (acc << w) | (getattr(h, name) & ((1 << w) - 1))
        nbits += w
    return acc.to_bytes((nbits + 7) // 8, "big")


def pack_groups(groups: tuple[tuple[int, int], ...]) -> bytes:
    """(value, width) runs packed MSB-first, zero-padded at the end to a byte."""
    acc = 0
    nbits = 0
    for v, w in groups:
        acc = (acc << w) | v
        nbits += w
    pad = (-nbits) % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")


__all__ = ["Packet", "Stack", "ExitControl", "PipelineError", "ParserError", "PACKET_TOO_SHORT",
           "deep_copy", "copy_into", "sx", "shl", "div", "mod", "sat_add", "sat_sub", "eq",
           "stack_last", "stack_next", "lookahead", "pack_varbit", "pack_groups"]
