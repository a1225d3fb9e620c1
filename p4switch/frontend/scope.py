"""Scopes and bindings: what a name means at a point of the program.

A `Scope` maps names to bindings and chains to its parent (block -> action
-> control -> globals). A `BlockCtx` is the parser/control *instance* being
lowered: it hands out `uid`s unique in that instance and knows the
control-plane name prefix of its tables, actions and externs.

Names defined here: `Scope`, `BlockCtx`, the binding classes `BVar`,
`BConst`, `BAction`, `BTable`, `BExtern`, `BSub`, `BValueSet`, `BFunction`,
and `cp_name` (control-plane name of a local declaration).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch import ir
from p4switch.frontend import ast as A
from p4switch.frontend.errors import P4Error


@dataclass(kw_only=True)
class BVar:
    """A variable or parameter; `readonly` for in/directionless parameters."""

    var: ir.Var
    readonly: bool = False
    direction: str = ""


@dataclass(kw_only=True)
class BConst:
    """A constant, bound to its value."""

    value: ir.Expr


@dataclass(kw_only=True)
class BAction:
    """An action: declaration, control-plane name, parameters and IR once lowered."""

    decl: A.DAction
    cp_name: str
    params: list[ir.Param]
    ir_action: ir.Action | None = None


@dataclass(kw_only=True)
class BTable:
    """A table: its control-plane name, and its declaration and IR once lowered."""

    var: ir.Var
    cp_name: str
    table: ir.Table | None = None
    decl: A.DTable | None = None


@dataclass(kw_only=True)
class BExtern:
    """An extern instance."""

    var: ir.Var
    inst: ir.ExternInstance


@dataclass(kw_only=True)
class BSub:
    """A parser/control instance declared inside a parser/control."""

    var: ir.Var
    kind: str  # parser | control
    inst: Any  # ir.ParserInstance | ir.ControlInstance
    # the block this instance was passed to by name (`C2(c1) c2;`), which then
    # owns it: "" while it is the declaring block's own
    passed_to: str = ""


@dataclass(kw_only=True)
class BValueSet:
    """A parser value set."""

    var: ir.Var
    vs: ir.ValueSet


@dataclass(kw_only=True)
class BFunction:
    """A top-level function."""

    decl: A.DFunction
    uid: str


class Scope:
    """Names visible in one block; `declare` rejects duplicates in the same block."""

    def __init__(self, parent: Scope | None = None) -> None:
        self.parent = parent
        self.names: dict[str, Any] = {}

    def lookup(self, name: str) -> Any:
        """The binding of `name` here or in an enclosing scope, or None."""
        s: Scope | None = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None

    def declare(self, name: str, binding: Any, coord: ir.Coord) -> None:
        """Bind `name` in this scope (P4Error when it is already declared here)."""
        if name in self.names:
            raise P4Error(coord, f"{name}: duplicate declaration")
        self.names[name] = binding


@dataclass(kw_only=True)
class BlockCtx:
    """The parser/control instance (or top-level action/function) being lowered."""

    prefix: str  # cp_name prefix, "" at top level
    kind: str  # parser | control | action | function
    used: set[str] = field(default_factory=set)
    # top-level extern instances this block uses, bound on first use
    global_externs: dict[str, Any] = field(default_factory=dict)

    def uid(self, name: str) -> str:
        """A name unique in this block, from `name` (`name`, then `name_2`, ...)."""
        cand, n = name, 1
        while cand in self.used:
            n += 1
            cand = f"{name}_{n}"
        self.used.add(cand)
        return cand


def cp_name(prefix: str, name: str, annos: list[A.Anno] | None) -> str:
    """P4Info fully-qualified name: @name("x") -> prefix.x, @name(".x") -> x."""
    anno = A.find_anno(annos, "name")
    if anno is not None and anno.args and isinstance(anno.args[0], str):
        name = anno.args[0]
        if name.startswith("."):
            return name[1:]
    return f"{prefix}.{name}" if prefix else name
