"""The P4 abstract syntax tree: what the parser builds, before any checking.

Nodes are plain dataclasses carrying a `coord` (pycparser `c_ast` style).
Names are still strings; types are still syntax (`TypeRef` nodes); nothing
is resolved. Passes after parsing (see `check`) turn this into the IR.

Names defined here: `Anno`; type syntax (`TName`, `TBits`, `TVarbit`,
`TBase`, `TSpecialized`, `TStack`, `TTuple`); expressions (`E*`); statements
(`S*`); declarations (`D*`) and table/parser parts; `Program`; `find_anno`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.ir import NO_COORD, Coord


@dataclass(kw_only=True)
class Anno:
    """An annotation: `args` are parsed literal values/names, `text` the raw body."""

    name: str
    args: list[Any] = field(default_factory=list)
    kv: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
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


# ---------------------------------------------------------------- statements
@dataclass(kw_only=True)
class SAssign:
    """`lhs = rhs;`."""

    lhs: Any
    rhs: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SCall:
    """A call used as a statement."""

    call: ECall
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SIf:
    """`if (cond) then else else_`; `else_` is None without an else."""

    cond: Any
    then: Any
    else_: Any = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SBlock:
    """A `{ ... }` block of statements, with its annotations."""

    stmts: list[Any]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SwitchCaseAst:
    """One case of a switch statement; a None `body` falls through."""

    label: Any  # expression or EDefault
    body: SBlock | None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SSwitch:
    """`switch (expr) { cases }`."""

    expr: Any
    cases: list[SwitchCaseAst]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SExit:
    """`exit;`."""

    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SReturn:
    """`return;` or `return value;`."""

    value: Any = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SEmpty:
    """The empty statement `;`."""

    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SDirectApply:
    """`T.apply(args);`: a parser or control type applied without an instance."""

    type: Any
    args: list[Arg]
    coord: Coord = NO_COORD


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
