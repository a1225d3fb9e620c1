"""Side-effect ordering: calls with out/inout arguments taken out of expressions.

P4-16 evaluates an expression left to right, `&&`, `||` and `?:` only as
far as they need, and a call copies its arguments in, runs, then copies
its out/inout arguments back left to right (§6.8, §8.20). p4c's front end
makes that order explicit (its SideEffectOrdering pass); this pass does the
same on the IR, so the pipeline only ever meets such a call as a statement
(`f(x);`) or as the whole right-hand side of an assignment (`t = f(x);`):

* a call with out/inout arguments (or a table apply) inside a larger
  expression is evaluated into a temporary before the statement, after the
  temporaries of everything evaluated before it; any value read to its
  left is read into a temporary first, so it is read before the call runs;
* `a && f(x)`, `a || f(x)` and `c ? f(x) : g(y)` become `if` statements
  around the calls, so a call runs only when the expression reaches it;
* an out/inout argument followed by an argument that has side effects is
  passed through a temporary, copied in where it stands and copied back to
  the l-value after the call, in parameter order; a non-constant stack
  index in such an l-value is read once, before the call.

Statements without such calls are left as they are (a table apply alone in
a condition keeps its in-line code). Temporaries are local variables named
`$seN` (uids no P4 name can take). Control-level variables initialised
with such a call get the initialisation as the first statements of the
control's apply block; a table key with one is refused.

Names defined here: `order_side_effects`, `BOOL`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from p4switch import ir
from p4switch.frontend.errors import P4Error

_CONSTS = (ir.Constant, ir.BoolLit, ir.StringLit, ir.EnumMember, ir.ErrorMember, ir.DontCare)
_CALLS_WITH_VALUES = (ir.CallKind.FUNCTION, ir.CallKind.ACTION)
BOOL = ir.BoolType()


def _writes(call: ir.MethodCall) -> bool:
    """Does the call write an argument (out/inout) or run a table?"""
    return call.kind == ir.CallKind.TABLE_APPLY or any(a.direction in ("out", "inout") for a in call.args)


def _children(e: Any) -> list[Any]:
    if isinstance(e, ir.MethodCall):
        return ([e.target] if e.target is not None else []) + [a.value for a in e.args]
    if isinstance(e, (ir.Member, ir.Slice, ir.UnOp, ir.Cast)):
        return [e.expr]
    if isinstance(e, ir.Index):
        return [e.expr, e.index]
    if isinstance(e, ir.BinOp):
        return [e.left, e.right]
    if isinstance(e, ir.Mux):
        return [e.cond, e.then, e.else_]
    if isinstance(e, ir.ListExpr):
        return list(e.items)
    if isinstance(e, ir.StructExpr):
        return [v for _, v in e.fields]
    return []


def _effect(e: Any) -> bool:
    """Does evaluating `e` write anything (a call with out/inout arguments, a table apply)?"""
    if isinstance(e, ir.MethodCall) and _writes(e):
        return True
    return any(_effect(c) for c in _children(e))


def _out_call(e: Any) -> bool:
    """Does `e` contain a call with out/inout arguments (table applies alone do not count)?"""
    if isinstance(e, ir.MethodCall) and e.kind != ir.CallKind.TABLE_APPLY and _writes(e):
        return True
    return any(_out_call(c) for c in _children(e))


def _table_result(e: Any) -> bool:
    return isinstance(e, ir.Member) and isinstance(e.expr, ir.MethodCall) and e.expr.kind == ir.CallKind.TABLE_APPLY


class _Orderer:
    def __init__(self) -> None:
        self.n = 0

    # ------------------------------------------------------------------ temporaries
    def temp(self, t: Any, coord: ir.Coord, pre: list[ir.Stmt], init: Any = None) -> ir.Var:
        """A new temporary of type `t`; its declaration (and `init`) go to `pre`."""
        self.n += 1
        v = ir.Var(name=f"se_tmp{self.n}", uid=f"$se{self.n}", scope=ir.Scope.LOCAL, type=t, coord=coord)
        pre.append(ir.VarDecl(var=v, coord=coord))
        if init is not None:
            pre.append(ir.Assign(lhs=v, rhs=init, coord=coord))
        return v

    def snap(self, e: Any, pre: list[ir.Stmt]) -> Any:
        """`e` read now: a temporary holding its value (constants stay as they are)."""
        if isinstance(e, _CONSTS) or (isinstance(e, ir.Var) and e.scope == ir.Scope.CONST):
            return e
        if isinstance(e, ir.Var) and e.scope == ir.Scope.INSTANCE:
            return e
        return self.temp(e.type, e.coord, pre, e)

    # ------------------------------------------------------------------ expressions
    def expr(self, e: Any, later: bool, pre: list[ir.Stmt]) -> Any:
        """`e` with its side effects moved into `pre` in evaluation order.

        `later`: something evaluated after `e` in the same statement has side
        effects, so what `e` reads is read into temporaries now.
        """
        if not _effect(e):
            return self.snap(e, pre) if later else e
        r = dataclasses.replace
        if _table_result(e):
            return self.temp(e.type, e.coord, pre, e)
        if isinstance(e, ir.MethodCall):
            if _writes(e):
                return self.call(e, pre, value=True)
            return r(e, args=self.args(e, pre)[0])
        if isinstance(e, ir.BinOp) and e.op in ("&&", "||") and _effect(e.right):
            t = self.temp(BOOL, e.coord, pre, self.expr(e.left, False, pre))
            inner: list[ir.Stmt] = []
            inner.append(ir.Assign(lhs=t, rhs=self.expr(e.right, False, inner), coord=e.coord))
            cond: Any = t if e.op == "&&" else ir.UnOp(op="!", expr=t, type=BOOL, coord=e.coord)
            pre.append(ir.If(cond=cond, then=ir.Block(stmts=inner, coord=e.coord), coord=e.coord))
            return t
        if isinstance(e, ir.BinOp):
            left = self.expr(e.left, later or _effect(e.right), pre)
            return r(e, left=left, right=self.expr(e.right, later, pre))
        if isinstance(e, ir.Mux):
            if not (_effect(e.then) or _effect(e.else_)):
                return r(e, cond=self.expr(e.cond, later, pre), then=self.expr(e.then, later, pre),
                         else_=self.expr(e.else_, later, pre))
            cond = self.expr(e.cond, False, pre)
            t = self.temp(e.type, e.coord, pre)
            branches = []
            for arm in (e.then, e.else_):
                stmts: list[ir.Stmt] = []
                stmts.append(ir.Assign(lhs=t, rhs=self.expr(arm, False, stmts), coord=e.coord))
                branches.append(ir.Block(stmts=stmts, coord=e.coord))
            pre.append(ir.If(cond=cond, then=branches[0], else_=branches[1], coord=e.coord))
            return t
        if isinstance(e, ir.Index):
            base = self.expr(e.expr, later or _effect(e.index), pre)
            return r(e, expr=base, index=self.expr(e.index, later, pre))
        if isinstance(e, (ir.Member, ir.Slice, ir.UnOp, ir.Cast)):
            return r(e, expr=self.expr(e.expr, later, pre))
        if isinstance(e, ir.ListExpr):
            return r(e, items=self.seq(list(e.items), later, pre))
        if isinstance(e, ir.StructExpr):
            vals = self.seq([v for _, v in e.fields], later, pre)
            return r(e, fields=[(n, v) for (n, _), v in zip(e.fields, vals, strict=True)])
        raise P4Error(e.coord, f"internal error: side effects in a {type(e).__name__}")

    def seq(self, items: list[Any], later: bool, pre: list[ir.Stmt]) -> list[Any]:
        """Expressions evaluated left to right."""
        return [self.expr(x, later or any(_effect(y) for y in items[i + 1:]), pre)
                for i, x in enumerate(items)]

    def lvalue(self, e: Any, pre: list[ir.Stmt]) -> Any:
        """An l-value with its run-time stack indices read into temporaries (saved, §6.8)."""
        r = dataclasses.replace
        if isinstance(e, ir.Index):
            idx = e.index if isinstance(e.index, _CONSTS) else self.snap(self.expr(e.index, False, pre), pre)
            return r(e, expr=self.lvalue(e.expr, pre), index=idx)
        if isinstance(e, (ir.Member, ir.Slice)):
            return r(e, expr=self.lvalue(e.expr, pre))
        return e

    def args(self, call: ir.MethodCall, pre: list[ir.Stmt]) -> tuple[list[ir.Argument], list[ir.Stmt]]:
        """Arguments evaluated left to right into `pre`; the copy-backs to run after the call."""
        out: list[ir.Argument] = []
        post: list[ir.Stmt] = []
        for i, a in enumerate(call.args):
            rest = any(_effect(b.value) for b in call.args[i + 1:])
            v = a.value
            if a.direction in ("out", "inout") and not isinstance(v, ir.DontCare):
                lv = self.lvalue(v, pre)
                if rest:
                    t = self.temp(v.type, v.coord, pre, lv if a.direction == "inout" else None)
                    post.append(ir.Assign(lhs=lv, rhs=t, coord=v.coord))
                    lv = t
                out.append(dataclasses.replace(a, value=lv))
            else:
                out.append(dataclasses.replace(a, value=self.expr(v, rest, pre)))
        return out, post

    def call(self, call: ir.MethodCall, pre: list[ir.Stmt], value: bool) -> Any:
        """A writing call run in `pre`; its value (a temporary) when `value`."""
        if call.kind == ir.CallKind.TABLE_APPLY:
            return self.temp(call.type, call.coord, pre, call)
        args, post = self.args(call, pre)
        c = dataclasses.replace(call, args=args)
        result = None
        if value:
            if call.kind not in _CALLS_WITH_VALUES:
                raise P4Error(call.coord, f"{call.method}: a call with out arguments inside an expression is "
                                          "only supported for functions")
            result = self.temp(call.type, call.coord, pre, c)
        else:
            pre.append(ir.CallStmt(call=c, coord=call.coord))
        pre.extend(post)
        return result

    # ------------------------------------------------------------------ statements
    def block(self, b: ir.Block | None) -> None:
        """Order the side effects of every statement of `b`, in place."""
        if b is None:
            return
        stmts: list[ir.Stmt] = []
        changed = False
        for s in b.stmts:
            got = self.stmt(s)
            changed = changed or len(got) != 1 or got[0] is not s
            stmts.extend(got)
        if changed:  # most blocks have no such call: their lists stay as they are
            b.stmts = stmts

    def stmt(self, s: Any) -> list[Any]:
        """Statement `s` with its side effects made explicit, as the statements replacing it."""
        pre: list[ir.Stmt] = []
        if isinstance(s, ir.Block):
            self.block(s)
            return [s]
        if isinstance(s, ir.If):
            self.block(s.then)
            self.block(s.else_)
            if _out_call(s.cond):
                s.cond = self.expr(s.cond, False, pre)
            return [*pre, s]
        if isinstance(s, ir.Switch):
            for c in s.cases:
                self.block(c.body)
            if _out_call(s.expr):
                s.expr = self.expr(s.expr, False, pre)
            return [*pre, s]
        if isinstance(s, ir.Assign):
            rhs = s.rhs
            simple = (isinstance(rhs, ir.MethodCall) and rhs.kind in _CALLS_WITH_VALUES
                      and not any(_out_call(a.value) for a in rhs.args))
            if not _out_call(s.lhs) and (simple or not _out_call(rhs)):
                return [s]  # `x = f(y);` is one the pipeline runs as it stands
            lhs = self.lvalue(s.lhs, pre) if _out_call(s.lhs) else s.lhs
            rhs = self.expr(rhs, False, pre)
            return [*pre, ir.Assign(lhs=lhs, rhs=rhs, coord=s.coord)]
        if isinstance(s, ir.CallStmt):
            if not any(_out_call(a.value) for a in s.call.args):
                return [s]
            self.call(s.call, pre, value=False)
            return pre
        if isinstance(s, ir.VarDecl):
            if s.init is not None and _out_call(s.init):
                s.init = self.expr(s.init, False, pre)
            return [*pre, s]
        if isinstance(s, ir.Return):
            if s.value is not None and _out_call(s.value):
                s.value = self.expr(s.value, False, pre)
            return [*pre, s]
        return [s]

    def parser(self, p: ir.Parser) -> None:
        """Order the side effects of a parser's states and of its sub-parsers."""
        for st in p.states:
            block = ir.Block(stmts=st.stmts, coord=st.coord)
            self.block(block)
            tr = st.transition
            if tr.select is not None and any(_out_call(k) for k in tr.select):
                block.stmts = list(block.stmts)
                tr.select = self.seq(tr.select, False, block.stmts)
            st.stmts = block.stmts
        for loc in p.locals:
            if isinstance(loc, ir.ParserInstance):
                self.parser(loc.decl)
            elif isinstance(loc, ir.VarDecl) and loc.init is not None and _out_call(loc.init):
                raise P4Error(loc.coord, f"{loc.var.name}: a parser variable initialised by a call with out "
                                         "arguments is not supported")

    def control(self, c: ir.Control) -> None:
        """Order the side effects of a control's actions, sub-controls and apply block."""
        first: list[ir.Stmt] = []
        for loc in c.locals:
            if isinstance(loc, ir.Action):
                self.block(loc.body)
            elif isinstance(loc, ir.ControlInstance):
                self.control(loc.decl)
            elif isinstance(loc, ir.Table):
                for k in loc.keys:
                    if _out_call(k.expr):
                        raise P4Error(k.coord, "a table key with a call with out arguments is not supported")
            elif isinstance(loc, ir.VarDecl) and loc.init is not None and _out_call(loc.init):
                # run at the start of apply, where the pipeline can order it
                first.extend(self.stmt(ir.Assign(lhs=loc.var, rhs=loc.init, coord=loc.coord)))
                loc.init = None
        self.block(c.apply)
        if first:
            c.apply.stmts[:0] = first


def order_side_effects(program: ir.Program) -> ir.Program:
    """Rewrite `program` in place (see module docstring) and return it."""
    o = _Orderer()
    for f in program.functions:
        o.block(f.body)
    for a in program.actions:
        o.block(a.body)
    for inst in program.pipeline.values():
        if isinstance(inst, ir.ParserInstance):
            o.parser(inst.decl)
        else:
            o.control(inst.decl)
    return program


__all__ = ["order_side_effects"]
