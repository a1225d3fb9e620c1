"""Control-plane names of table keys, as p4c's TableKeyNames pass makes them.

A key without `@name` is named after its expression, p4c's way
(frontends/p4/tableKeyNames.cpp, read for behaviour):

* a name prints as written (`meta.x`, `.glob`), a member as `base.member`,
  using the field's `@name` when it has one (a leading dot drops the base);
* `h.isValid()` on a header or header union is `h.$valid$` (P4Runtime's
  spelling);
* `a[i]` is `a[i]`, `e[h:l]` is `e[h:l]`, `a & b` is `a & b`;
* integers print in the base they were written in (`0x` lowercase, `0b`,
  `0o`, decimal), without their width: `8w0xFF` is `0xff`; a constant's name
  is replaced by its value first (p4c folds constants before naming keys);
* anything else (casts, other calls, arithmetic ...) has no name: p4c
  rejects it with "Complex key expression requires a @name annotation".

Names defined here: `KeyNamer`, `int_base`, `format_int`, `source_text`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from p4switch import ir
from p4switch.frontend import ast as A
from p4switch.frontend.errors import P4Error

_WIDTH_PREFIX = re.compile(r"^\d+[ws]")


def int_base(text: str) -> int:
    """The base an integer literal was written in (10 when unknown)."""
    t = _WIDTH_PREFIX.sub("", text.replace("_", "")).lstrip("-").lower()
    if t.startswith("0x"):
        return 16
    if t.startswith("0b"):
        return 2
    if t.startswith("0o"):
        return 8
    return 10


def format_int(value: int, base: int) -> str:
    """p4c's Util::toString(value, 0, false, base): sign, base prefix, lowercase digits."""
    sign = "-" if value < 0 else ""
    v = abs(value)
    if base == 16:
        return f"{sign}0x{v:x}"
    if base == 2:
        return f"{sign}0b{v:b}"
    if base == 8:
        return f"{sign}0o{v:o}"
    return f"{sign}{v}"


def source_text(e: Any) -> str:
    """Source-like text of an expression, for messages."""
    if isinstance(e, A.EName):
        return ("." if e.dot else "") + e.name
    if isinstance(e, A.EMember):
        return f"{source_text(e.expr)}.{e.name}"
    if isinstance(e, A.EIndex):
        return f"{source_text(e.expr)}[{source_text(e.index)}]"
    if isinstance(e, A.ESlice):
        return f"{source_text(e.expr)}[{source_text(e.hi)}:{source_text(e.lo)}]"
    if isinstance(e, A.EInt):
        return e.text or str(e.value)
    if isinstance(e, A.EBool):
        return "true" if e.value else "false"
    if isinstance(e, A.ECall):
        return f"{source_text(e.func)}({', '.join(source_text(a.value) for a in e.args)})"
    if isinstance(e, A.EBin):
        return f"{source_text(e.left)} {e.op} {source_text(e.right)}"
    if isinstance(e, A.EUn):
        return f"{e.op}{source_text(e.expr)}"
    if isinstance(e, A.ECast):
        return f"({_type_text(e.type)}){source_text(e.expr)}"
    if isinstance(e, A.ETypeMember):
        return f"{_type_text(e.type)}.{e.name}"
    if isinstance(e, A.EMux):
        return f"{source_text(e.cond)} ? {source_text(e.then)} : {source_text(e.else_)}"
    return "expression"


def _type_text(t: Any) -> str:
    if isinstance(t, A.TBits):
        return f"{'int' if t.signed else 'bit'}<{source_text(t.width)}>"
    if isinstance(t, (A.TName, A.TBase)):
        return t.name
    if isinstance(t, A.TSpecialized):
        return f"{t.base.name}<{', '.join(_type_text(a) for a in t.args)}>"
    return "type"


class KeyNamer:
    """Names one key expression.

    `type_of(ast)` gives the checked type of a sub-expression (a header,
    union or struct type for members); `const_value(name)` the folded value
    and literal base of a constant, or None.
    """

    def __init__(self, type_of: Callable[[Any], Any],
                 const_value: Callable[[A.EName], tuple[int, int] | None]) -> None:
        self.type_of = type_of
        self.const_value = const_value

    def name(self, key: Any) -> str:
        """The key's name; `P4Error` if p4c would require a @name."""
        n = self._name(key)
        if n is None:
            raise P4Error(key.coord, f"{source_text(key)}: Complex key expression requires a @name annotation")
        return n

    def _name(self, e: Any) -> str | None:
        if isinstance(e, A.EName):
            c = self.const_value(e)
            if c is not None:
                return format_int(*c)
            return ("." if e.dot else "") + e.name
        if isinstance(e, A.EInt):
            return format_int(e.value, int_base(e.text))
        if isinstance(e, A.EMember):
            fname = self._member_name(e)
            if fname.startswith("."):
                return fname[1:]
            base = self._name(e.expr)
            return None if base is None else f"{base}.{fname}"
        if isinstance(e, A.EIndex):
            left, right = self._name(e.expr), self._name(e.index)
            return None if left is None or right is None else f"{left}[{right}]"
        if isinstance(e, A.ESlice):
            parts = [self._name(x) for x in (e.expr, e.hi, e.lo)]
            return None if None in parts else f"{parts[0]}[{parts[1]}:{parts[2]}]"
        if isinstance(e, A.EBin) and e.op == "&":
            left, right = self._name(e.left), self._name(e.right)
            return None if left is None or right is None else f"{left} & {right}"
        if isinstance(e, A.ECall) and isinstance(e.func, A.EMember) and not e.args and not e.type_args:
            m = self._name(e.func)
            # p4c's heuristic: only isValid() (already spelled $valid$) names a call
            if m is not None and m.endswith("$valid$"):
                return m
        return None

    def _member_name(self, e: A.EMember) -> str:
        if isinstance(e.expr, (A.EName, A.EMember, A.EIndex)):
            t = self.type_of(e.expr)
            if isinstance(t, (ir.HeaderType, ir.HeaderUnionType)) and e.name == "isValid":
                return "$valid$"
            if isinstance(t, (ir.HeaderType, ir.HeaderUnionType, ir.StructType)):
                for f in t.fields:
                    if f.name == e.name:
                        for a in f.annotations:
                            if a.name == "name" and a.args and isinstance(a.args[0], str):
                                return a.args[0]
        return e.name


__all__ = ["KeyNamer", "format_int", "int_base", "source_text"]
