"""The IR's types: `Coord` (a source position) and the type nodes, with `Annotation`.

Names defined here: `Coord`, `NO_COORD`, `BitsType`, `BoolType`, `IntType`,
`VarbitType`, `StringType`, `ErrorType`, `MatchKindType`, `VoidType`,
`TypeName`, `StackType`, `TupleType`, `ExternType`, `Field`, `HeaderType`,
`HeaderUnionType`, `StructType`, `EnumType`, the union `Type`, and `Annotation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Coord:
    """A position in the user's source (after mapping back through #line)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_COORD = Coord(file="<builtin>", line=0, col=0)


@dataclass(frozen=True, kw_only=True)
class BitsType:
    """`bit<W>` (signed=False) or `int<W>` (signed=True)."""

    width: int
    signed: bool = False


@dataclass(frozen=True, kw_only=True)
class BoolType:
    """`bool`."""


@dataclass(frozen=True, kw_only=True)
class IntType:
    """Arbitrary-precision compile-time integer (`int`)."""


@dataclass(frozen=True, kw_only=True)
class VarbitType:
    """`varbit<max_width>`."""

    max_width: int


@dataclass(frozen=True, kw_only=True)
class StringType:
    """A string literal's type (log_msg only)."""


@dataclass(frozen=True, kw_only=True)
class ErrorType:
    """`error` (values: indexes into `Program.errors`)."""


@dataclass(frozen=True, kw_only=True)
class MatchKindType:
    """`match_kind`."""


@dataclass(frozen=True, kw_only=True)
class VoidType:
    """The type of a call that returns nothing."""


@dataclass(frozen=True, kw_only=True)
class TypeName:
    """A reference to a named type in `Program.types` (header, struct, enum...)."""

    name: str


@dataclass(frozen=True, kw_only=True)
class StackType:
    """A header stack `elem[size]`."""

    elem: Type
    size: int


@dataclass(frozen=True, kw_only=True)
class TupleType:
    """`tuple<...>` (also the type of a list expression)."""

    elems: tuple[Type, ...]


@dataclass(frozen=True, kw_only=True)
class ExternType:
    """An extern object type with its type arguments, e.g. register<bit<32>>."""

    name: str
    type_args: tuple[Type, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Field:
    """One field of a header, struct or union, in declaration order."""

    name: str
    type: Type
    annotations: tuple[Annotation, ...] = ()
    type_name: str = ""  # the `type` (NewType) it was declared with, if any (P4Info type_name)


@dataclass(frozen=True, kw_only=True)
class HeaderType:
    """A `header` type; its fields in wire order, most significant bit first."""

    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(frozen=True, kw_only=True)
class HeaderUnionType:
    """A `header_union` type: at most one member header valid."""

    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(frozen=True, kw_only=True)
class StructType:
    """A `struct` type."""

    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    coord: Coord = NO_COORD


@dataclass(frozen=True, kw_only=True)
class EnumType:
    """`enum` (underlying None) or serializable `enum bit<W>` (values given)."""

    name: str
    members: tuple[str, ...]
    underlying: BitsType | None = None
    values: tuple[int, ...] = ()
    coord: Coord = NO_COORD


Type = (
    BitsType | BoolType | IntType | VarbitType | StringType | ErrorType | MatchKindType
    | VoidType | TypeName | StackType | TupleType | ExternType | HeaderType | HeaderUnionType
    | StructType | EnumType
)


@dataclass(frozen=True, kw_only=True)
class Annotation:
    """`@name(...)`: body is the list of constant expressions, or raw tokens text."""

    name: str
    args: tuple[Any, ...] = ()  # ints / strs / bools after folding
    # the body's tokens joined by single spaces, as p4c prints an annotation it
    # does not parse into expressions (free-form bodies: any token, `'` too)
    tokens: str = ""
    # `@name[...]` (P4-16 structured annotation): `args` its values, `keys` their
    # keys for the `key=value` form; P4Info lists it under structured_annotations
    structured: bool = False
    keys: tuple[str, ...] = ()
    coord: Coord = NO_COORD


__all__ = ["Coord", "NO_COORD", "BitsType", "BoolType", "IntType", "VarbitType", "StringType", "ErrorType", "MatchKindType", "VoidType", "TypeName", "StackType", "TupleType", "ExternType", "Field", "HeaderType", "HeaderUnionType", "StructType", "EnumType", "Annotation", "Type"]
