"""Questions every pass asks of a program: a type's width, a program's control locals and tables.

`bit_width` is the one width of a type every pass uses (each with its own
`resolve` and width for `error` and plain enums); `leaf_fields` a header's
fields with its struct-typed ones opened up; `control_locals` and
`tables_of` are the walks over a program's controls.

Names defined here: `bit_width`, `leaf_fields`, `control_locals`, `tables_of`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .declnodes import Control, ControlInstance, Program, Table
from .typenodes import (
    BitsType,
    BoolType,
    EnumType,
    ErrorType,
    Field,
    HeaderType,
    HeaderUnionType,
    StackType,
    StructType,
    TupleType,
    VarbitType,
)


def _as_declared(t: Any) -> Any:
    return t


def bit_width(t: Any, resolve: Callable[[Any], Any] = _as_declared, *,
              opaque: int | None = None) -> int | None:
    """The width in bits of a value of type `t`; None when it has none.

    bit<W> and int<W>: W; bool: 1; a serializable enum: its underlying
    type's; `error` and plain enums: `opaque` (P4 gives them no width, the
    pipeline stores them in 32 bits); a header or struct: the sum of its
    fields', varbit fields left out; a header union: its widest member's; a
    stack: its size times its element's; a tuple: the sum of its elements'.
    Anything else (varbit, int, string, externs) has none, and so has an
    aggregate with a part that has none. `resolve` maps a named type to what
    it names.
    """
    t = resolve(t)
    if isinstance(t, BitsType):
        return t.width
    if isinstance(t, BoolType):
        return 1
    if isinstance(t, EnumType):
        return t.underlying.width if t.underlying is not None else opaque
    if isinstance(t, ErrorType):
        return opaque
    parts: list[int | None]
    if isinstance(t, (HeaderType, StructType)):
        parts = [bit_width(f.type, resolve, opaque=opaque) for f in t.fields
                 if not isinstance(resolve(f.type), VarbitType)]
    elif isinstance(t, HeaderUnionType):
        parts = [bit_width(f.type, resolve, opaque=opaque) for f in t.fields]
        return None if None in parts else max((p for p in parts if p is not None), default=0)
    elif isinstance(t, StackType):
        w = bit_width(t.elem, resolve, opaque=opaque)
        return None if w is None else t.size * w
    elif isinstance(t, TupleType):
        parts = [bit_width(e, resolve, opaque=opaque) for e in t.elems]
    else:
        return None
    return None if None in parts else sum(p for p in parts if p is not None)


def leaf_fields(t: Any, resolve: Callable[[Any], Any] = _as_declared) -> Iterator[tuple[Field, ...]]:
    """The fields of header or struct `t`, in order, a struct-typed one replaced by its own
    (P4-16 lets a header hold a struct of bit fields; p4c's FlattenHeaders opens it up, and a
    controller header's metadata are these leaves, named by their path: `b.b`). Each is its
    path from `t`, outermost field first. `resolve` maps a named type to what it names."""
    for f in resolve(t).fields:
        ft = resolve(f.type)
        if isinstance(ft, StructType):
            for path in leaf_fields(ft, resolve):
                yield (f, *path)
        else:
            yield (f,)


def control_locals(blocks: Iterable[object]) -> Iterator[Any]:
    """The locals of the control instances among `blocks` and, in place, of their sub-controls.

    Depth first, in declaration order: a sub-control's `ControlInstance` is
    followed by the locals of its declaration, then by the rest of its
    parent's locals. Parser instances are passed over.
    """
    def walk(ctl: Control) -> Iterator[Any]:
        """The locals of `ctl`, each sub-control's own locals right after it."""
        for loc in ctl.locals:
            yield loc
            if isinstance(loc, ControlInstance):
                yield from walk(loc.decl)

    for inst in blocks:
        if isinstance(inst, ControlInstance):
            yield from walk(inst.decl)


def tables_of(program: Program) -> Iterator[Table]:
    """Every table of the program's controls and their sub-controls (in `control_locals` order)."""
    return (loc for loc in control_locals(program.pipeline.values()) if isinstance(loc, Table))


__all__ = ["bit_width", "control_locals", "leaf_fields", "tables_of"]
