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
    for a in annos or ():
        if a.name == name:
            return a
    return None


# ---------------------------------------------------------------- types
@dataclass(kw_only=True)
class TName:
    name: str
    dot: bool = False
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TBits:
    width: Any  # expression
    signed: bool
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TVarbit:
    width: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TBase:
    """bool, error, string, int, void, _ (don't care)."""

    name: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TSpecialized:
    base: TName
    args: list[Any]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TStack:
    elem: Any
    size: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TTuple:
    args: list[Any]
    coord: Coord = NO_COORD


# ---------------------------------------------------------------- expressions
@dataclass(kw_only=True)
class EInt:
    value: int
    width: int | None = None
    signed: bool = False
    text: str = ""
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EBool:
    value: bool
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EStr:
    value: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EName:
    name: str
    dot: bool = False  # `.name`: top-level scope
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EMember:
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
    expr: Any
    index: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ESlice:
    expr: Any
    hi: Any
    lo: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EUn:
    op: str
    expr: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EBin:
    op: str
    left: Any
    right: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EMux:
    cond: Any
    then: Any
    else_: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ECast:
    type: Any
    expr: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Arg:
    value: Any  # expression or EDontCare
    name: str | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ECall:
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
    items: list[Any]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EStruct:
    fields: list[tuple[str, Any]]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EErrorMember:
    name: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EDontCare:
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EDefault:
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EMask:
    value: Any
    mask: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ERange:
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
    lhs: Any
    rhs: Any
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SCall:
    call: ECall
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SIf:
    cond: Any
    then: Any
    else_: Any = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SBlock:
    stmts: list[Any]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SwitchCaseAst:
    label: Any  # expression or EDefault
    body: SBlock | None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SSwitch:
    expr: Any
    cases: list[SwitchCaseAst]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SExit:
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SReturn:
    value: Any = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SEmpty:
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SDirectApply:
    type: Any
    args: list[Arg]
    coord: Coord = NO_COORD


# ---------------------------------------------------------------- declarations
@dataclass(kw_only=True)
class DConst:
    type: Any
    name: str
    value: Any
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DVar:
    type: Any
    name: str
    init: Any = None
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DTypedef:
    type: Any
    name: str
    newtype: bool = False
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class FieldAst:
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
    name: str
    members: list[str]
    underlying: Any = None
    values: list[Any] = field(default_factory=list)  # expressions, for serializable enums
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DError:
    members: list[str]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DMatchKind:
    members: list[str]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ParamAst:
    direction: str
    type: Any
    name: str
    default: Any = None
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class MethodProto:
    name: str
    ret: Any  # type syntax, TBase('void')
    tparams: list[str]
    params: list[ParamAst]
    is_ctor: bool = False
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DExternObj:
    name: str
    tparams: list[str]
    methods: list[MethodProto]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DExternFunc:
    proto: MethodProto
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DFunction:
    proto: MethodProto
    body: SBlock
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DAction:
    name: str
    params: list[ParamAst]
    body: SBlock
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DInstance:
    type: Any
    args: list[Arg]
    name: str
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DValueSet:
    type: Any
    size: Any
    name: str
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class KeyElemAst:
    expr: Any
    match_kind: str
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ActionItem:
    name: str
    dot: bool
    args: list[Arg] | None
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EntryAst:
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
    name: str
    props: list[TableProp]
    annos: list[Anno] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SelectCaseAst:
    keyset: Any
    state: str
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class TransitionAst:
    state: str | None = None
    select: list[Any] | None = None
    cases: list[SelectCaseAst] = field(default_factory=list)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class StateAst:
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
    decls: list[Any]
    file: str = ""
