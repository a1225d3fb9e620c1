"""P4 statement syntax, as the parser builds it.

Names defined here: the statements (`S*`) and `SwitchCaseAst`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.ir import NO_COORD, Coord

from .typeexpr import Anno, Arg, ECall

__all__ = ["SAssign", "SBlock", "SCall", "SDirectApply", "SEmpty", "SExit", "SIf", "SReturn",
           "SSwitch", "SwitchCaseAst"]


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
