"""What the code generators share: the function being written, a control's context, IR questions.

`blocks.BlockGen` generates statements and controls; `callgen`, `parsergen`,
`tablegen` and `externgen` generate calls, parsers, tables and extern calls
for it. They need the block generator's work (a parser runs statements, a
statement calls an extern, a control applies a table), so, as in p4c where
each pass depends on the IR and not on its siblings, none of them imports
`blocks` for it: they meet here.
`BlockGenerator` is the part of `BlockGen` the other generators use, as a
protocol, so the block generator is passed to them typed and checked. Among
themselves the imports point one way: `callgen` and `tablegen` use
`externgen`, and `callgen` and `externgen` use `parsergen`.

Names defined here: `Fn`, `ControlCtx`, `TableSpec`, `BlockGenerator`,
`is_packet_param`, `has_return`, `may_exit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import ir
from .actionprofile import ActionProfile
from .codegen import Env, ModuleBuilder, TypeInfo
from .externs import ValueSet


class Fn:
    """One generated Python function being written."""

    def __init__(self, kind: str, env: Env, ctl: ControlCtx | None = None,
                 outs: list[str] | None = None, ret_value: bool = False) -> None:
        self.kind = kind  # control | action | function | parser | deparser | table
        self.env = env
        self.ctl = ctl
        self.outs = outs or []
        self.ret_value = ret_value
        self.lines: list[str] = []
        self.ind = 1
        self.inline = False  # a sub-control's body inlined in its caller: return -> break
        # a parser generated straight-line: state name -> state, emitted at each transition to it
        self.parser_states: dict[str, ir.ParserState] | None = None

    def w(self, line: str) -> None:
        """Append one line at the current indentation."""
        self.lines.append("    " * self.ind + line)

    def ret(self, value: str | None = None) -> str:
        """The `return` statement of this function, with its value and scalar outs."""
        # value is given exactly when ret_value is set (the front end checks `return`s)
        items = ([value] if self.ret_value and value is not None else []) + self.outs
        if not items:
            return "return"
        if len(items) == 1 and self.ret_value:
            return f"return {items[0]}"
        return "return (" + "".join(i + ", " for i in items) + ")"


@dataclass(kw_only=True)
class ControlCtx:
    """One control (or parser) being generated: its names, actions, tables and their in-line bodies."""

    decl: ir.Control | ir.Parser
    cp_name: str
    param_names: list[str]  # python names of the composite params as passed to actions/tables
    env: Env
    has_locals: bool = False
    actions: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)  # table name/cp_name -> tbl fn
    action_decls: dict[str, ir.Action] = field(default_factory=dict)
    inline: dict[str, list[str]] = field(default_factory=dict)  # tbl fn -> body lines (result in r)

    @property
    def pass_args(self) -> str:
        """The arguments a control passes to its actions and tables."""
        return ", ".join(["_pk"] + self.param_names + ["_L"])


@dataclass(kw_only=True)
class TableSpec:
    """What the switch needs to build a table after the module is compiled."""

    table: ir.Table
    global_name: str
    actions: dict[str, str]  # action cp_name -> generated function name
    key_widths: list[int]


class BlockGenerator(Protocol):
    """What `callgen`, `parsergen`, `tablegen` and `externgen` use of the block generator (`blocks.BlockGen`)."""

    mb: ModuleBuilder
    ti: TypeInfo
    global_env: Env
    fn_stack: list[Fn]
    copy_outs: list[tuple[str, str]]
    top_actions: dict[str, ir.Action]
    functions: dict[str, ir.Function]
    inlinable: dict[str, tuple[ControlCtx, list[str]]]
    tables: list[TableSpec]
    instances: dict[str, tuple[str, Any]]
    externs: dict[str, Any]
    extern_decls: dict[str, ir.ExternInstance]
    extern_globals: dict[str, str]
    profiles: dict[str, ActionProfile]
    value_sets: dict[str, ValueSet]
    direct_counters: set[str]
    direct_meters: dict[str, bool]
    validity_changes: bool
    extra_field_lists: dict[int, list[tuple[str, ...]]]

    @property
    def fn(self) -> Fn:
        """The function being written."""
        ...

    def ex(self, e: Any) -> str:
        """An IR expression as Python, in the current function's scope."""
        ...

    def tmp(self) -> str:
        """A fresh temporary name."""
        ...

    def finish(self, header: str, fn: Fn) -> None:
        """Add a finished function to the module."""
        ...

    def stmt(self, s: Any) -> None:
        """Emit one statement."""
        ...

    def block(self, b: ir.Block | None) -> None:
        """Emit a block's statements (`pass` when empty)."""
        ...

    def store(self, lhs: Any, code: str) -> None:
        """Write a Python value into a scalar lvalue."""
        ...

    def union_siblings_invalid(self, target: Any, when: str = "") -> None:
        """Make the other members of a header's union invalid."""
        ...

    def instantiate(self, inst: ir.ExternInstance, env: Env) -> None:
        """Create an extern instance's run-time object and bind it."""
        ...

    def extern_kind(self, target: Any) -> tuple[str, str]:
        """(extern type name, global name) of a method call target."""
        ...

    def meta_type_name(self) -> str | None:
        """The user-metadata struct type's name."""
        ...

    def invoke(self, call: ir.MethodCall) -> tuple[str, list[tuple[Any, int]], int]:
        """(call code, write-backs, offset of the outs in the result) of a call."""
        ...

    def emit_copy_outs(self, copies: list[tuple[str, str]]) -> None:
        """Copy composite out/inout arguments back after a call."""
        ...

    def write_back(self, result: str, outs: list[tuple[Any, int]], offset: int = 0) -> None:
        """Store a call's scalar outs from its result tuple."""
        ...

    def call_expr(self, call: ir.MethodCall, env: Env) -> str:
        """A call as a Python expression."""
        ...

    def call_stmt(self, call: ir.MethodCall, result: bool = False) -> str | None:
        """Emit a call as a statement (with `result`, return the code of its value)."""
        ...

    def action_fn(self, ctl: ControlCtx, decl: ir.Action) -> str:
        """The generated function of an action of a control."""
        ...

    def function_fn(self, decl: ir.Function) -> str:
        """The generated function of a P4 function."""
        ...

    def apply_inline(self, call: ir.MethodCall) -> str | None:
        """Emit a table apply in line; returns the result variable, or None."""
        ...


def is_packet_param(p: ir.Param) -> bool:
    """Is `p` the packet_in or packet_out of a parser or deparser (no Python argument)?"""
    t = p.type
    name = t.name if isinstance(t, (ir.TypeName, ir.ExternType)) else ""
    return name in ("packet_in", "packet_out")


def may_exit(node: Any) -> bool:
    """Can running `node` end in `exit` (an `exit`, or a call of an action, table or control)?"""
    if isinstance(node, ir.Exit):
        return True
    if isinstance(node, ir.Block):
        return any(may_exit(x) for x in node.stmts)
    if isinstance(node, ir.If):
        return may_exit(node.then) or (node.else_ is not None and may_exit(node.else_))
    if isinstance(node, ir.Switch):
        return True if node.on_action_run else any(c.body is not None and may_exit(c.body) for c in node.cases)
    if isinstance(node, ir.CallStmt):
        return node.call.kind in (ir.CallKind.ACTION, ir.CallKind.TABLE_APPLY, ir.CallKind.CONTROL_APPLY)
    return False


def has_return(node: Any) -> bool:
    """Does a block contain a `return` (not counting called actions)?"""
    if isinstance(node, ir.Return):
        return True
    if isinstance(node, ir.Block):
        return any(has_return(x) for x in node.stmts)
    if isinstance(node, ir.If):
        return has_return(node.then) or (node.else_ is not None and has_return(node.else_))
    if isinstance(node, ir.Switch):
        return any(c.body is not None and has_return(c.body) for c in node.cases)
    return False


__all__ = ["Fn", "ControlCtx", "TableSpec", "BlockGenerator", "is_packet_param", "has_return",
           "may_exit"]
