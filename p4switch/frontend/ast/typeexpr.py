"""P4 syntax of annotations, types and expressions, as the parser builds them.

Names defined here: `Anno`, `find_anno`; type syntax (`TName`, `TBits`,
`TVarbit`, `TBase`, `TSpecialized`, `TStack`, `TTuple`); expressions (`E*`),
`Arg`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.ir import NO_COORD, Coord

__all__ = ["Anno", "Arg", "EBin", "EBool", "ECall", "ECast", "ECtor", "EDefault", "EDontCare",
           "EErrorMember", "EIndex", "EInt", "EList", "EMask", "EMember", "EMux", "EName",
           "ERange", "ESlice", "EStr", "EStruct", "ETuple", "ETypeMember", "EUn", "TBase",
           "TBits", "TName", "TSpecialized", "TStack", "TTuple", "TVarbit", "find_anno"]


@dataclass(kw_only=True)
class Anno:
    """An annotation: `args` are parsed literal values/names, `text` the raw body."""

    name: str
    args: list[Any] = field(default_factory=list)
    kv: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
    tokens: str = ""  # the body's tokens joined by single spaces (p4c's form of a free-form body)
    structured: bool = False  # `@name[...]`: `args` (or `kv`) hold its folded values
    coord: Coord = NO_COORD


def find_anno(annos: list[Anno] | None, name: str) -> Anno | None:
    """The first annotation in `annos` called `name`, or None."""
    for a in annos or ():
        if a.name == name:
            return a
    return None


# ---------------------------------------------------------------- types
@dataclass(kw_only=True)
class TName:
    """A type named in the source (`T`, or `.T` for the top-level scope)."""

    name: str
    dot: bool = False
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TBits:
    """`bit<W>` or `int<W>` (`signed`); `width` is still an expression."""

    width: Any  # expression
    signed: bool
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TVarbit:
    """`varbit<W>`; `width` is still an expression."""

    width: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TBase:
    """bool, error, string, int, void, _ (don't care)."""

    name: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TSpecialized:
    """A generic type with type arguments, `T<A, B>`."""

    base: TName
    args: list[Any]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TStack:
    """A header stack `elem[size]`; `size` is still an expression."""

    elem: Any
    size: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TTuple:
    """`tuple<A, B>`."""

    args: list[Any]
    coord: Coord = NO_COORD


# ---------------------------------------------------------------- expressions
@dataclass(kw_only=True)
class EInt:
    """An integer literal: its value, width and signedness if given, and source `text`."""

    value: int
    width: int | None = None
    signed: bool = False
    text: str = ""
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EBool:
    """`true` or `false`."""

    value: bool
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EStr:
    """A string literal (the value, quotes removed)."""

    value: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EName:
    """A name used as an expression."""

    name: str
    dot: bool = False  # `.name`: top-level scope
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EMember:
    """`expr.name`: a field, method or member of a value."""

    expr: Any
    name: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ETypeMember:
    """`T.member` where T is a type (enum member, error, T.minSizeInBits)."""

    type: Any
    name: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EIndex:
    """`expr[index]`."""

    expr: Any
    index: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ESlice:
    """`expr[hi:lo]`: a bit slice."""

    expr: Any
    hi: Any
    lo: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EUn:
    """A unary operator applied to `expr`."""

    op: str
    expr: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EBin:
    """A binary operator (`op` as written) between `left` and `right`."""

    op: str
    left: Any
    right: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EMux:
    """`cond ? then : else_`."""

    cond: Any
    then: Any
    else_: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ECast:
    """`(type) expr`."""

    type: Any
    expr: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Arg:
    """One argument of a call, positional or `name = value`."""

    value: Any  # expression or EDontCare
    name: str | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ECall:
    """A call `func<type_args>(args)` of a function, method, action or extern."""

    func: Any
    type_args: list[Any]
    args: list[Arg]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ECtor:
    """`T(args)`: constructor call (instance created in place)."""

    type: Any
    args: list[Arg]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EList:
    """A list expression `{a, b}`."""

    items: list[Any]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EStruct:
    """A struct expression `{a = 1, b = 2}` as (name, value) pairs."""

    fields: list[tuple[str, Any]]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EErrorMember:
    """`error.name`."""

    name: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EDontCare:
    """`_`: a don't-care argument or keyset."""

    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EDefault:
    """The `default` keyset (matches anything)."""

    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EMask:
    """A masked keyset `value &&& mask`."""

    value: Any
    mask: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ERange:
    """A range keyset `lo .. hi`."""

    lo: Any
    hi: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ETuple:
    """A tuple keyset `(k1, k2)` in select cases and table entries."""

    items: list[Any]
    coord: Coord = NO_COORD
