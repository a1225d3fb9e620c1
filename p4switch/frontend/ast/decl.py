"""P4 declaration syntax, as the parser builds it: constants, types, externs,
actions, tables, parsers, controls and the `Program` that holds them.

Names defined here: the declarations (`D*`), their parts (`FieldAst`,
`ParamAst`, `MethodProto`, `KeyElemAst`, `ActionItem`, `EntryAst`,
`TableProp`, `SelectCaseAst`, `TransitionAst`, `StateAst`) and `Program`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.ir import NO_COORD, Coord

from .stmt import SBlock
from .typeexpr import Anno, Arg

__all__ = ["ActionItem", "DAction", "DBlockType", "DConst", "DControl", "DEnum", "DError",
           "DExternFunc", "DExternObj", "DFunction", "DInstance", "DMatchKind", "DParser",
           "DStruct", "DTable", "DTypedef", "DValueSet", "DVar", "EntryAst", "FieldAst",
           "KeyElemAst", "MethodProto", "ParamAst", "Program", "SelectCaseAst", "StateAst",
           "TableProp", "TransitionAst"]


# ---------------------------------------------------------------- declarations
@dataclass(kw_only=True)
class DConst:
    """`const type name = value;`."""

    type: Any
    name: str
    value: Any
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DVar:
    """A variable declaration, with its initializer if any."""

    type: Any
    name: str
    init: Any = None
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DTypedef:
    """`typedef` (or `type`, when `newtype`) naming a type."""

    type: Any
    name: str
    newtype: bool = False
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class FieldAst:
    """One field of a header, header union or struct."""

    type: Any
    name: str
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DStruct:
    """header / header_union / struct."""

    kind: str
    name: str
    fields: list[FieldAst]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DEnum:
    """An enum; with `underlying` and `values` it is a serializable enum."""

    name: str
    members: list[str]
    underlying: Any = None
    values: list[Any] = field(default_factory=list)  # expressions, for serializable enums
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DError:
    """An `error { ... }` declaration adding members to `error`."""

    members: list[str]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DMatchKind:
    """A `match_kind { ... }` declaration."""

    members: list[str]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ParamAst:
    """One parameter: direction (empty if none), type, name and default."""

    direction: str
    type: Any
    name: str
    default: Any = None
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class MethodProto:
    """A function, method or constructor prototype (`ret` is None for a constructor)."""

    name: str
    ret: Any  # type syntax, TBase('void')
    tparams: list[str]
    params: list[ParamAst]
    is_ctor: bool = False
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DExternObj:
    """An extern object type: its type parameters and method prototypes."""

    name: str
    tparams: list[str]
    methods: list[MethodProto]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DExternFunc:
    """An extern function declaration."""

    proto: MethodProto
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DFunction:
    """A function declaration with its body."""

    proto: MethodProto
    body: SBlock
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DAction:
    """An action declaration."""

    name: str
    params: list[ParamAst]
    body: SBlock
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DInstance:
    """An instantiation `T(args) name;`."""

    type: Any
    args: list[Arg]
    name: str
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DValueSet:
    """A parser value set `value_set<type>(size) name;`."""

    type: Any
    size: Any
    name: str
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class KeyElemAst:
    """One table key element: `expr : match_kind`."""

    expr: Any
    match_kind: str
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ActionItem:
    """One entry of a table's `actions` list, with bound arguments if given."""

    name: str
    dot: bool
    args: list[Arg] | None
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EntryAst:
    """One entry of a table's `entries` list: keyset, action and priority."""

    keyset: Any
    action: Any
    priority: Any = None
    const: bool = False  # `const` on this entry (P4 1.2.4)
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TableProp:
    """kind: key | actions | entries | prop (name = value)."""

    kind: str
    name: str
    value: Any
    const: bool = False
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DTable:
    """A table declaration and its properties."""

    name: str
    props: list[TableProp]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SelectCaseAst:
    """One case of a `select`: keyset and next state."""

    keyset: Any
    state: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TransitionAst:
    """`transition state;` or `transition select (...) { cases }`."""

    state: str | None = None
    select: list[Any] | None = None
    cases: list[SelectCaseAst] = field(default_factory=list)
    implicit: bool = False  # the state has no transition statement: `transition reject;` supplied
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class StateAst:
    """A parser state: its statements and transition."""

    name: str
    stmts: list[Any]
    transition: TransitionAst
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DBlockType:
    """A parser/control/package *type* (prototype), e.g. v1model's Ingress<H, M>."""

    kind: str  # parser | control | package
    name: str
    tparams: list[str]
    params: list[ParamAst]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DParser:
    """A parser declaration: parameters, locals and states."""

    name: str
    tparams: list[str]
    params: list[ParamAst]
    ctor_params: list[ParamAst]
    locals: list[Any]
    states: list[StateAst]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DControl:
    """A control declaration: parameters, locals and apply block."""

    name: str
    tparams: list[str]
    params: list[ParamAst]
    ctor_params: list[ParamAst]
    locals: list[Any]
    apply: SBlock
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Program:
    """A whole parsed program: top-level declarations in order, and its main file."""

    decls: list[Any]
    file: str = ""
