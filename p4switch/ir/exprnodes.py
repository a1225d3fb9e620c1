"""The IR's expressions: each node carries its `type` and `coord`; `MethodCall` is every call.

Names defined here: `Constant`, `BoolLit`, `StringLit`, `Scope`, `Var`,
`Member`, `Index`, `Slice`, `UnOp`, `BinOp`, `Cast`, `Mux`, `ListExpr`,
`StructExpr`, `EnumMember`, `ErrorMember`, `DontCare`, `CallKind`,
`Argument`, `MethodCall`, and the union `Expr`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .typenodes import NO_COORD, BoolType, Coord, ErrorType, StringType, Type, VoidType


@dataclass(kw_only=True)
class Constant:
    """An integer literal or folded constant of a given type."""

    value: int
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class BoolLit:
    """`true` / `false`."""

    value: bool
    type: Type = field(default_factory=BoolType)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class StringLit:
    """A string literal."""

    value: str
    type: Type = field(default_factory=StringType)
    coord: Coord = NO_COORD


class Scope(str, enum.Enum):  # noqa: UP042 (value semantics kept for the file format)
    """Where the storage for a `Var` lives."""

    PARAM = "param"  # parameter of the enclosing parser/control/action/function
    LOCAL = "local"  # local variable (incl. parser/control-level variables)
    INSTANCE = "instance"  # extern/table/parser/control instance of the block
    CONST = "const"  # compile-time constant that could not be folded away


@dataclass(kw_only=True)
class Var:
    """A resolved name. `uid` is unique in the enclosing block (parser/control/action/function)."""

    name: str
    uid: str
    scope: Scope
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Member:
    """`expr.name`: struct/header field, or stack `.next`/`.last`/`.lastIndex`/`.size`."""

    expr: Expr
    name: str
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Index:
    """`stack[index]`."""

    expr: Expr
    index: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Slice:
    """`expr[hi:lo]`, bits hi..lo inclusive; result bit<hi-lo+1>."""

    expr: Expr
    hi: int
    lo: int
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class UnOp:
    """op in {'-', '~', '!'}."""

    op: str
    expr: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class BinOp:
    """op spelled as in P4: + - * / % << >> & | ^ ++ |+| |-| == != < <= > >= && ||."""

    op: str
    left: Expr
    right: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Cast:
    """`(type) expr`."""

    expr: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Mux:
    """`cond ? then : else_`."""

    cond: Expr
    then: Expr
    else_: Expr
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ListExpr:
    """`{a, b, c}` as a tuple/list value (also used for field lists)."""

    items: list[Expr]
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class StructExpr:
    """`{f1 = a, f2 = b}` or `(T){...}`; `type` names the struct/header."""

    fields: list[tuple[str, Expr]]
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class EnumMember:
    """`E.member`; for serializable enums the pipeline uses the member's value."""

    enum: str
    member: str
    type: Type
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class ErrorMember:
    """`error.NoError` etc."""

    name: str
    type: Type = field(default_factory=ErrorType)
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class DontCare:
    """`_` as an argument (out argument whose value is discarded)."""

    type: Type = field(default_factory=VoidType)
    coord: Coord = NO_COORD


class CallKind(str, enum.Enum):  # noqa: UP042 (value semantics kept for the file format)
    """What a `MethodCall` calls."""

    BUILTIN = "builtin"  # method on a value: isValid setValid setInvalid push_front pop_front minSizeInBits ...
    PACKET = "packet"  # packet_in.extract/lookahead/advance/length, packet_out.emit
    EXTERN_METHOD = "extern_method"  # method of an extern instance: counter.count, register.read ...
    EXTERN_FUNCTION = "extern_function"  # v1model/core free functions: mark_to_drop, hash, verify ...
    ACTION = "action"  # direct action call
    FUNCTION = "function"  # user function
    TABLE_APPLY = "table_apply"  # t.apply()
    CONTROL_APPLY = "control_apply"  # sub-control instance .apply(args)
    PARSER_APPLY = "parser_apply"  # sub-parser instance .apply(args)


@dataclass(kw_only=True)
class Argument:
    """An actual argument, bound to the callee's parameter `name` (after named/default args)."""

    name: str
    direction: str  # "in" | "out" | "inout" | "" (directionless)
    value: Expr


@dataclass(kw_only=True)
class MethodCall:
    """Any call. `target` is the object (value, packet, extern/table/control instance) or None.

    For ACTION/FUNCTION, `callee` is the cp_name / uid of the callee declaration.
    For EXTERN_FUNCTION/BUILTIN/PACKET/EXTERN_METHOD, `method` is the P4 name.
    For TABLE_APPLY the result type is the table's apply-result struct: use
    `Member(call, 'hit'|'miss'|'action_run')`.
    """

    kind: CallKind
    method: str
    target: Expr | None
    args: list[Argument]
    type: Type
    callee: str = ""
    type_args: list[Type] = field(default_factory=list)
    coord: Coord = NO_COORD


Expr = (
    Constant | BoolLit | StringLit | Var | Member | Index | Slice | UnOp | BinOp | Cast | Mux
    | ListExpr | StructExpr | EnumMember | ErrorMember | DontCare | MethodCall
)


__all__ = ["Constant", "BoolLit", "StringLit", "Scope", "Var", "Member", "Index", "Slice", "UnOp", "BinOp", "Cast", "Mux", "ListExpr", "StructExpr", "EnumMember", "ErrorMember", "DontCare", "CallKind", "Argument", "MethodCall", "Expr"]
