"""The IR's statements.

Names defined here: `Assign`, `CallStmt`, `If`, `Block`, `SwitchCase`,
`Switch`, `Exit`, `Return`, `VarDecl`, and the union `Stmt`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .exprnodes import Expr, MethodCall, Var
from .typenodes import NO_COORD, Coord


@dataclass(kw_only=True)
class Assign:
    """`lhs = rhs;`."""

    lhs: Expr
    rhs: Expr
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class CallStmt:
    """A call used as a statement."""

    call: MethodCall
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class If:
    """`if (cond) then else else_`."""

    cond: Expr
    then: Block
    else_: Block | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Block:
    """`{ stmts }`."""

    stmts: list[Stmt]
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class SwitchCase:
    """labels: action cp_names (table switch) or constant Exprs; [] means default.

    body None means fall through to the next case's body.
    """

    labels: list[Any]
    body: Block | None
    is_default: bool = False
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Switch:
    """`switch (t.apply().action_run)` (on_action_run=True) or on an expression."""

    expr: Expr
    cases: list[SwitchCase]
    on_action_run: bool = False
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Exit:
    """`exit;`."""

    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class Return:
    """`return;` or `return value;`."""

    value: Expr | None = None
    coord: Coord = NO_COORD


@dataclass(kw_only=True)
class VarDecl:
    """A local variable. Without `init` it is uninitialised (BMv2: zero / invalid header)."""

    var: Var
    init: Expr | None = None
    coord: Coord = NO_COORD


Stmt = (
    Assign | CallStmt | If | Block | Switch | Exit | Return | VarDecl
)


__all__ = ["Assign", "CallStmt", "If", "Block", "SwitchCase", "Switch", "Exit", "Return", "VarDecl", "Stmt"]
