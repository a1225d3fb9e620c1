"""Constant folding on IR expressions, with P4's wrap-around and width rules.

Values of `bit<W>` constants are kept in [0, 2**W); `int<W>` constants in
[-2**(W-1), 2**(W-1)); `int` constants are unbounded.

Names defined here: `wrap`, `fold_binop`, `fold_unop`, `fold_cast`, `const`.
"""

from __future__ import annotations

from typing import Any

from p4switch import ir


def wrap(value: int, t: Any) -> int:
    """`value` reduced to the range of type `t` (two's complement for int<W>)."""
    if isinstance(t, ir.BitsType):
        m = 1 << t.width
        v = value % m
        if t.signed and v >= m >> 1:
            v -= m
        return v
    return value


def const(value: int, t: Any, coord: ir.Coord) -> ir.Constant:
    """A Constant of type `t`, `value` wrapped to its range."""
    return ir.Constant(value=wrap(value, t), type=t, coord=coord)


def _unsigned(value: int, t: Any) -> int:
    if isinstance(t, ir.BitsType):
        return value % (1 << t.width)
    return value


def fold_binop(op: str, left: Any, right: Any, t: Any, coord: ir.Coord) -> Any:
    """Fold a binary operation on two constants; None when it cannot be folded."""
    if isinstance(left, ir.BoolLit) and isinstance(right, ir.BoolLit):
        x, y = left.value, right.value
        res = {"&&": x and y, "||": x or y, "==": x == y, "!=": x != y}.get(op)
        return None if res is None else ir.BoolLit(value=res, coord=coord)
    if not (isinstance(left, ir.Constant) and isinstance(right, ir.Constant)):
        return None
    a, b = left.value, right.value
    lt = left.type
    if op in ("==", "!=", "<", "<=", ">", ">="):
        res = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        return ir.BoolLit(value=res, coord=coord)
    if op == "+":
        v = a + b
    elif op == "-":
        v = a - b
    elif op == "*":
        v = a * b
    elif op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b)
        if (a < 0) != (b < 0):
            q = -q
        v = q if op == "/" else a - q * b
    elif op == "&":
        v = a & b
    elif op == "|":
        v = a | b
    elif op == "^":
        v = a ^ b
    elif op == "<<":
        v = a << b
    elif op == ">>":
        v = a >> b  # arithmetic for int<W> (value is signed), logical for bit<W>
    elif op in ("|+|", "|-|"):
        v = a + b if op == "|+|" else a - b
        if isinstance(t, ir.BitsType):
            if t.signed:
                lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
            else:
                lo, hi = 0, (1 << t.width) - 1
            v = max(lo, min(hi, v))
    elif op == "++":
        if not (isinstance(lt, ir.BitsType) and isinstance(right.type, ir.BitsType)):
            return None
        v = (_unsigned(a, lt) << right.type.width) | _unsigned(b, right.type)
    else:
        return None
    return const(v, t, coord)


def fold_unop(op: str, x: Any, t: Any, coord: ir.Coord) -> Any:
    """The constant `op x` (`!`, `-`, `~`, `+`), or None when `x` is not one."""
    if op == "!" and isinstance(x, ir.BoolLit):
        return ir.BoolLit(value=not x.value, coord=coord)
    if not isinstance(x, ir.Constant):
        return None
    if op == "-":
        return const(-x.value, t, coord)
    if op == "~":
        return const(~x.value, t, coord)
    if op == "+":
        return const(x.value, t, coord)
    return None


def fold_cast(x: Any, t: Any, coord: ir.Coord) -> Any:
    """The constant `(t) x`, or None when the cast does not fold."""
    if isinstance(x, ir.Constant) and isinstance(t, ir.BitsType):
        return const(_unsigned(x.value, x.type) if isinstance(x.type, ir.BitsType) else x.value, t, coord)
    if isinstance(x, ir.Constant) and isinstance(t, ir.BoolType):
        return ir.BoolLit(value=x.value != 0, coord=coord)
    if isinstance(x, ir.BoolLit) and isinstance(t, ir.BitsType):
        return const(int(x.value), t, coord)
    if isinstance(x, ir.Constant) and isinstance(t, ir.IntType):
        return ir.Constant(value=x.value, type=t, coord=coord)
    return None
