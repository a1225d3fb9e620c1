"""Statements, tables and parser states: AST -> IR inside one block instance.

`BlockLowering` extends the expression checker with statement lowering
(scopes, local variables, switch on `action_run` or on a value, exit/return
rules), table lowering (keys, actions, default action, const entries and
their priorities, size, implementation, direct counters/meters, timeouts) and
parser state lowering (transitions, select keysets incl. masks, ranges,
default and value sets).

Names defined here: `BlockLowering`, `annos_ir`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from p4switch import ir
from p4switch.frontend import ast as A
from p4switch.frontend.calls import match_args
from p4switch.frontend.errors import P4Error, unsupported, warn
from p4switch.frontend.exprs import BOOL, Ctx, ExprChecker
from p4switch.frontend.keynames import KeyNamer
from p4switch.frontend.priorities import PriorityRules, assign_priorities
from p4switch.frontend.scope import BAction, BConst, BExtern, BTable, BValueSet, BVar, Scope
from p4switch.frontend.types import newtype_name, type_str, unwrap_newtype
from p4switch.p4names import field_ids

_TABLE_PROPS = {"default_action", "size", "implementation", "counters", "meters", "support_timeout"}


def annos_ir(annos: list[A.Anno] | None) -> tuple[ir.Annotation, ...]:
    """AST annotations as IR annotations (`key=value` pairs appended as strings)."""
    out = []
    for a in annos or ():
        if a.structured:
            out.append(ir.Annotation(name=a.name, args=(*a.args, *a.kv.values()), keys=tuple(a.kv), structured=True,
                                     coord=a.coord))
            continue
        args = list(a.args)
        for k, v in a.kv.items():
            args.append(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}")
        out.append(ir.Annotation(name=a.name, args=tuple(args), tokens=a.tokens, coord=a.coord))
    return tuple(out)


class BlockLowering(ExprChecker):
    """Statement/table/parser-state lowering (see module docstring).

    `make_extern` (set by the elaborator) instantiates an extern from a
    declaration; instances constructed inside table properties are collected
    in `inline_locals` for the enclosing control's locals.
    """

    inline_locals: list[ir.ExternInstance]

    # ------------------------------------------------------------------ statements
    def block(self, b: A.SBlock, ctx: Ctx, new_scope: bool = True) -> ir.Block:
        """Lower a block, in a new scope unless `new_scope` is false."""
        inner = Ctx(scope=Scope(ctx.scope) if new_scope else ctx.scope, block=ctx.block,
                    in_action=ctx.in_action, in_parser=ctx.in_parser, return_type=ctx.return_type,
                    tvars=ctx.tvars)
        stmts: list[ir.Stmt] = []
        for s in b.stmts:
            stmts.extend(self.stmt(s, inner))
        return ir.Block(stmts=stmts, coord=b.coord)

    def stmt(self, s: Any, ctx: Ctx) -> list[ir.Stmt]:
        """Lower one statement (a local declaration may give none); raises P4Error."""
        if isinstance(s, A.SAssign):
            root = s.lhs
            while isinstance(root, (A.EMember, A.EIndex, A.ESlice)):
                root = root.expr
            if isinstance(root, A.EName) and isinstance(self.lookup(root.name, ctx, root.coord, root.dot), BConst):
                raise P4Error(s.coord, f"assignment: cannot write to constant '{root.name}'")
            lhs = self.expr(s.lhs, ctx)
            self.check_lvalue(lhs, ctx, s.coord)
            rhs = self.expr(s.rhs, ctx, lhs.type)
            rhs = self.convert(rhs, lhs.type, s.coord, "assignment")
            return [ir.Assign(lhs=lhs, rhs=rhs, coord=s.coord)]
        if isinstance(s, A.SCall):
            call = self.calls.call(s.call, ctx)
            if isinstance(call, ir.BoolLit):  # a static_assert that held: checked, nothing to run
                return []
            if not isinstance(call, ir.MethodCall):
                raise P4Error(s.coord, "this expression is not a statement")
            if _direct_resource(call) == "direct_counter" and not ctx.in_action:
                # the counter counts every hit of its table anyway (v1model, BMv2),
                # so p4c compiles this call to nothing; the pipeline does too.
                # (direct_meter.read outside an action is no such no-op: BMv2 gives
                # it the color of the table's last hit, as the pipeline does.)
                warn(call.coord, "direct_counter.count: called outside an action, where it does nothing")
            return [ir.CallStmt(call=call, coord=s.coord)]
        if isinstance(s, A.SIf):
            cond = self.expr(s.cond, ctx)
            if not isinstance(self.named(cond.type), ir.BoolType):
                raise P4Error(s.cond.coord, f"if condition must be bool, not {type_str(cond.type)}")
            then = self._as_block(s.then, ctx)
            else_ = self._as_block(s.else_, ctx) if s.else_ is not None else None
            return [ir.If(cond=cond, then=then, else_=else_, coord=s.coord)]
        if isinstance(s, A.SBlock):
            return [self.block(s, ctx)]
        if isinstance(s, A.SSwitch):
            return [self.switch(s, ctx)]
        if isinstance(s, A.SExit):
            if ctx.in_parser:
                raise P4Error(s.coord, "exit is not allowed in a parser")
            if ctx.block.kind == "function":
                raise P4Error(s.coord, "exit is not allowed in a function")
            return [ir.Exit(coord=s.coord)]
        if isinstance(s, A.SReturn):
            if ctx.in_parser:
                raise P4Error(s.coord, "return is not allowed in a parser")
            rt = ctx.return_type
            if s.value is None:
                if rt is not None and not isinstance(rt, ir.VoidType):
                    raise P4Error(s.coord, f"return without a value in a function returning {type_str(rt)}")
                return [ir.Return(coord=s.coord)]
            if rt is None or isinstance(rt, ir.VoidType):
                raise P4Error(s.coord, "return with a value outside a function returning a value")
            v = self.convert(self.expr(s.value, ctx, rt), rt, s.coord, "return")
            return [ir.Return(value=v, coord=s.coord)]
        if isinstance(s, A.SEmpty):
            return []
        if isinstance(s, A.DConst):
            self.local_const(s, ctx)
            return []
        if isinstance(s, A.DVar):
            return [self.local_var(s, ctx)]
        if isinstance(s, A.SDirectApply):
            # p4c's InstantiateDirectCalls: `C.apply(...)` instantiates C in
            # place (an instance per call, control-plane name "C").
            b = self.direct_instance(s, ctx)
            f = A.EMember(expr=A.EName(name=b.var.name, coord=s.coord), name="apply", coord=s.coord)
            call = self.calls.sub_apply(b, f, A.ECall(func=f, type_args=[], args=s.args, coord=s.coord), ctx)
            return [ir.CallStmt(call=call, coord=s.coord)]
        if isinstance(s, A.DInstance):
            raise P4Error(s.coord, "instantiations are not allowed inside a block")
        raise unsupported(getattr(s, "coord", None), f"statement {type(s).__name__}")

    def _as_block(self, s: Any, ctx: Ctx) -> ir.Block:
        if isinstance(s, A.SBlock):
            return self.block(s, ctx)
        inner = Ctx(scope=Scope(ctx.scope), block=ctx.block, in_action=ctx.in_action,
                    in_parser=ctx.in_parser, return_type=ctx.return_type, tvars=ctx.tvars)
        return ir.Block(stmts=self.stmt(s, inner), coord=s.coord)

    def local_const(self, d: A.DConst, ctx: Ctx) -> None:
        """Declare a local constant in the current scope (no IR statement)."""
        t = self.env.resolve(d.type, ctx.tvars)
        v = self.convert(self.expr(d.value, ctx, t), t, d.coord, d.name)
        ctx.scope.declare(d.name, BConst(value=v), d.coord)

    def local_var(self, d: A.DVar, ctx: Ctx) -> ir.VarDecl:
        """Declare a local variable and lower its declaration (with its initializer)."""
        t = self.env.resolve(d.type, ctx.tvars)
        if isinstance(t, (ir.IntType, ir.StringType, ir.VoidType)):
            raise P4Error(d.coord, f"{d.name}: a variable cannot have type {type_str(t)}")
        init = None
        if d.init is not None:
            init = self.convert(self.expr(d.init, ctx, t), t, d.coord, d.name)
        var = ir.Var(name=d.name, uid=ctx.block.uid(d.name), scope=ir.Scope.LOCAL, type=t, coord=d.coord)
        ctx.scope.declare(d.name, BVar(var=var), d.coord)
        return ir.VarDecl(var=var, init=init, coord=d.coord)

    def switch(self, s: A.SSwitch, ctx: Ctx) -> ir.Switch:
        """Lower a switch on a table's `action_run` or on a bit, enum or error value."""
        e = self.expr(s.expr, ctx)
        on_action_run = (
            isinstance(e, ir.Member) and e.name == "action_run"
            and isinstance(e.expr, ir.MethodCall) and e.expr.kind == ir.CallKind.TABLE_APPLY
        )
        cases: list[ir.SwitchCase] = []
        seen: set[Any] = set()
        for i, c in enumerate(s.cases):
            is_default = isinstance(c.label, A.EDefault)
            if is_default and i != len(s.cases) - 1:
                raise P4Error(c.coord, "switch: 'default' must be the last label")
            labels: list[Any] = []
            if not is_default:
                if on_action_run:
                    if not isinstance(c.label, A.EName):
                        raise P4Error(c.coord, "switch on action_run: labels must be action names")
                    b = self.lookup(c.label.name, ctx, c.coord, c.label.dot)
                    actions = self.named(e.type).members
                    if not isinstance(b, BAction) or b.cp_name not in actions:
                        raise P4Error(c.coord, f"{c.label.name}: not an action of the table")
                    key: Any = b.cp_name
                    labels = [b.cp_name]
                else:
                    v = self.convert(self.expr(c.label, ctx, e.type), e.type, c.coord, "switch label")
                    if not isinstance(v, (ir.Constant, ir.EnumMember, ir.ErrorMember, ir.BoolLit)):
                        raise P4Error(c.coord, "switch labels must be compile-time constants")
                    key = (getattr(v, "value", None), getattr(v, "member", None), getattr(v, "name", None))
                    labels = [v]
                if key in seen:
                    # p4c keeps the first case; this label can never select its
                    # body, and the if/elif chain the pipeline runs agrees
                    # (BMv2 1.15.5 refuses to load p4c's table for it: duplicate entries)
                    warn(c.coord, "switch: duplicate label (an earlier case has it; this one never matches)")
                seen.add(key)
            body = self.block(c.body, ctx) if c.body is not None else None
            cases.append(ir.SwitchCase(labels=labels, body=body, is_default=is_default, coord=c.coord))
        if not on_action_run:
            t = self.named(e.type)
            if not isinstance(t, (ir.BitsType, ir.EnumType, ir.ErrorType)):
                raise P4Error(s.expr.coord, f"switch on a value of type {type_str(e.type)} is not supported")
        return ir.Switch(expr=e, cases=cases, on_action_run=on_action_run, coord=s.coord)

    # ------------------------------------------------------------------ keysets
    def keyset(self, k: Any, t: Any, ctx: Ctx) -> ir.Keyset:
        """Lower one keyset component for a key of type `t`."""
        if isinstance(k, (A.EDefault, A.EDontCare)):
            return ir.Keyset(kind="default", coord=k.coord)
        if isinstance(k, A.EMask):
            v = self._key_value(self.expr(k.value, ctx, t), t, k.coord, "keyset")
            m = self._key_value(self.expr(k.mask, ctx, t), t, k.coord, "mask")
            return ir.Keyset(kind="mask", value=v, mask=m, coord=k.coord)
        if isinstance(k, A.ERange):
            lo = self._key_value(self.expr(k.lo, ctx, t), t, k.coord, "range")
            hi = self._key_value(self.expr(k.hi, ctx, t), t, k.coord, "range")
            return ir.Keyset(kind="range", value=lo, hi=hi, coord=k.coord)
        if isinstance(k, A.EName):
            b = self.lookup(k.name, ctx, k.coord, k.dot)
            if isinstance(b, BValueSet):
                st = self.named(b.vs.type)
                # a struct of one field of the key's type matches as that field (p4c)
                one = [f.type for f in st.fields] if isinstance(st, ir.StructType) else None
                if b.vs.type != t and one != [t]:
                    raise P4Error(k.coord, f"value_set {k.name} of type {type_str(b.vs.type)} used for a key of type {type_str(t)}")
                v = b.var
                return ir.Keyset(kind="value_set", value=ir.Var(name=v.name, uid=v.uid, scope=v.scope, type=v.type, coord=k.coord), coord=k.coord)
        v = self._key_value(self.expr(k, ctx, t), t, k.coord, "keyset")
        if not isinstance(v, (ir.Constant, ir.BoolLit, ir.EnumMember, ir.ErrorMember)):
            raise P4Error(k.coord, "keyset values must be compile-time constants")
        return ir.Keyset(kind="exact", value=v, coord=k.coord)

    def _key_value(self, x: ir.Expr, t: Any, coord: ir.Coord, what: str) -> ir.Expr:
        """A keyset value or mask for a key of type `t`: as `convert`, and for a
        serializable enum key also an integer constant (an int literal or one of
        the enum's underlying type: `Kind.B &&& 0xff00`), which p4c takes as the
        underlying bits; it stays a constant of that type."""
        et = self.named(t)
        if isinstance(et, ir.EnumType) and et.underlying is not None and isinstance(x, ir.Constant) \
                and (isinstance(x.type, ir.IntType) or x.type == et.underlying):
            return self.convert(x, et.underlying, coord, what)
        return self.convert(x, t, coord, what)

    def keysets(self, k: Any, types: list[Any], ctx: Ctx) -> list[ir.Keyset]:
        """Lower a select case's keyset into one Keyset per select key."""
        if isinstance(k, (A.EDefault, A.EDontCare)) and len(types) != 1:
            return [ir.Keyset(kind="default", coord=k.coord) for _ in types]
        if isinstance(k, A.EName) and len(types) > 1:
            # A struct value set matches the whole tuple of select keys: one
            # keyset covers every key (the pipeline packs the keys).
            b = self.lookup(k.name, ctx, k.coord, k.dot)
            if isinstance(b, BValueSet):
                st = self.named(b.vs.type)
                ftypes = [f.type for f in getattr(st, "fields", ())]
                if not isinstance(st, ir.StructType) or ftypes != list(types):
                    raise P4Error(k.coord, f"value_set {k.name} of type {type_str(b.vs.type)} does not match the {len(types)} select keys")
                v = b.var
                return [ir.Keyset(kind="value_set", value=ir.Var(name=v.name, uid=v.uid, scope=v.scope, type=v.type, coord=k.coord), coord=k.coord)]
        items = k.items if isinstance(k, A.ETuple) else [k]
        if isinstance(k, A.EList) and (len(types) > 1 or len(k.items) == 1):
            items = k.items  # `{ v }` for one key is its one component, as p4c takes it
        if len(items) != len(types):
            raise P4Error(k.coord, f"keyset has {len(items)} components, expected {len(types)}")
        return [self.keyset(it, t, ctx) for it, t in zip(items, types, strict=True)]

    # ------------------------------------------------------------------ parser states
    def parser_state(self, st: A.StateAst, ctx: Ctx, state_names: set[str]) -> ir.ParserState:
        """Lower a parser state; its transition may only name `state_names`."""
        inner = Ctx(scope=Scope(ctx.scope), block=ctx.block, in_parser=True)
        stmts: list[ir.Stmt] = []
        for s in st.stmts:
            stmts.extend(self.stmt(s, inner))
        tr = st.transition
        if tr.implicit:
            # p4c warns alike; BMv2 (and so p4switch) then takes reject for accept, parser_error unset
            warn(st.coord, f"{st.name}: implicit transition to `reject'")
        if tr.select is None:
            self._check_state(tr.state, state_names, tr.coord)
            trans = ir.Transition(state=cast(str, tr.state), coord=tr.coord)  # checked: a known name
        else:
            keys = [self.expr(e, inner) for e in tr.select]
            for kx, ke in zip(keys, tr.select, strict=True):
                if isinstance(self.named(kx.type), ir.IntType):
                    raise P4Error(ke.coord, "select key must have a known width")
            types = [kx.type for kx in keys]
            cases = []
            for c in tr.cases:
                self._check_state(c.state, state_names, c.coord)
                cases.append(ir.SelectCase(keysets=self.keysets(c.keyset, types, inner), state=c.state, coord=c.coord))
            trans = ir.Transition(select=keys, cases=cases, coord=tr.coord)
        return ir.ParserState(name=st.name, stmts=stmts, transition=trans, annotations=annos_ir(st.annos), coord=st.coord)

    @staticmethod
    def _check_state(name: str | None, names: set[str], coord: ir.Coord) -> None:
        if name not in names and name not in ("accept", "reject"):
            raise P4Error(coord, f"{name}: state not found")

    # ------------------------------------------------------------------ tables
    def _action_binding(self, name: str, dot: bool, ctx: Ctx, coord: ir.Coord) -> BAction:
        b = self.lookup(name, ctx, coord, dot)
        if not isinstance(b, BAction):
            raise P4Error(coord, f"{name}: not an action")
        return b

    def _action_ref(self, call: Any, ctx: Ctx, allowed: dict[str, BAction] | None, what: str) -> ir.ActionRef:
        """An action call in default_action / entries: all data arguments given."""
        if isinstance(call, A.EName):
            func, args = call, []
        elif isinstance(call, A.ECall) and isinstance(call.func, A.EName):
            func, args = call.func, call.args
        else:
            raise P4Error(call.coord, f"{what}: expected an action call")
        b = self._action_binding(func.name, func.dot, ctx, func.coord)
        if allowed is not None and b.cp_name not in allowed:
            raise P4Error(call.coord, f"{what}: action {func.name} is not in the table's actions list")
        data = [p for p, pa in zip(b.params, b.decl.params, strict=True) if not pa.direction]
        data_ast = [pa for pa in b.decl.params if not pa.direction]
        directional = [pa for pa in b.decl.params if pa.direction]
        if isinstance(call, A.EName) and data:
            raise P4Error(call.coord, f"{what}: action {func.name} needs {len(data)} arguments")
        if any(a.name is not None for a in args):
            # `default_action = set(port = 2, mac = 1)`: by name, in any order
            by_param = match_args(func.name, b.decl.params, args, call.coord)
            positional = [by_param[pa.name] for pa in data_ast if pa.name in by_param]
        else:
            positional = args[len(directional):] if len(args) == len(b.decl.params) else args
        if len(positional) != len(data):
            raise P4Error(call.coord, f"{what}: action {func.name} expects {len(data)} data arguments, got {len(positional)}")
        vals: list[ir.Expr] = []
        for p, a in zip(data, positional, strict=True):
            v = self.convert(self.expr(a.value, ctx, p.type), p.type, a.coord, f"{func.name}: argument '{p.name}'")
            if not isinstance(v, (ir.Constant, ir.BoolLit, ir.EnumMember)):
                raise P4Error(a.coord, f"{what}: action arguments must be compile-time constants")
            vals.append(v)
        return ir.ActionRef(action=b.cp_name, args=vals, coord=call.coord)

    def _entry_priorities(self, name: str, entries: list[ir.ConstEntry], explicit: list[int | None],
                          const: bool, keys: list[ir.KeyElement], props: dict[str, tuple[ir.Expr, ir.Coord]],
                          key_coord: ir.Coord, coord: ir.Coord) -> bool:
        """Entry priorities and their errors, as p4c's EntryPriorities pass (see `priorities`).

        Returns `largest_priority_wins`.
        """
        if const:
            first = next((e for e, x in zip(entries, explicit, strict=True) if x is not None), None)
            if first is not None:
                raise P4Error(first.coord, "Table with 'const' entries cannot have priorities")
            return True
        largest, delta = True, 1
        if "largest_priority_wins" in props:
            v, pc = props["largest_priority_wins"]
            if not isinstance(v, ir.BoolLit):
                raise P4Error(pc, "largest_priority_wins must be a boolean expression")
            largest = v.value
        if "priority_delta" in props:
            v, pc = props["priority_delta"]
            if not isinstance(v, ir.Constant):
                raise P4Error(pc, "priority_delta must be a constant numeric expression")
            if not 0 <= v.value <= (1 << 32) - 1:  # p4c: Constant::fitsUint()
                raise P4Error(pc, f"{v.value} must be a positive value")
            delta = v.value
        assign_priorities(entries, explicit, keys, PriorityRules(largest_wins=largest, delta=delta),
                          name, key_coord, coord)
        return largest

    def table(self, d: A.DTable, ctx: Ctx, b: BTable) -> ir.Table:
        """Lower a table declaration (bound as `b`) and check its properties."""
        keys: list[ir.KeyElement] = []
        actions: list[ir.ActionRef] = []
        allowed: dict[str, BAction] = {}
        default: ir.ActionRef | None = None
        default_const = False
        entries: list[ir.ConstEntry] | None = None
        entries_const = True
        explicit: list[int | None] = []  # each entry's `priority =`, if any
        prio_props: dict[str, tuple[ir.Expr, ir.Coord]] = {}
        key_coord: ir.Coord | None = None
        size = None
        impl = dcounter = dmeter = ""
        timeout = False
        seen: set[str] = set()
        props = sorted(d.props, key=lambda p: {"key": 0, "actions": 1}.get(p.kind, 2))
        tctx = Ctx(scope=ctx.scope, block=ctx.block)
        for p in props:
            pname = p.name
            if pname in seen:
                raise P4Error(p.coord, f"table {d.name}: duplicate property '{pname}'")
            seen.add(pname)
            if p.kind == "key":
                key_coord = p.coord
                for k in p.value:
                    x = self.expr(k.expr, tctx)
                    if k.match_kind not in self.g.match_kinds:
                        raise P4Error(k.coord, f"{k.match_kind}: not a match_kind")
                    kt = self.named(unwrap_newtype(x.type))
                    if not isinstance(kt, (ir.BitsType, ir.BoolType, ir.EnumType, ir.ErrorType)):
                        raise P4Error(k.coord, f"table key of type {type_str(x.type)} is not supported")
                    if isinstance(kt, ir.EnumType) and kt.underlying is None and k.match_kind != "exact":
                        raise P4Error(k.coord, "an enum key can only be matched exactly")
                    anno = A.find_anno(k.annos, "name")
                    if anno and anno.args and isinstance(anno.args[0], str):
                        name = anno.args[0]
                    else:
                        name = self._key_namer(tctx).name(k.expr)
                    keys.append(ir.KeyElement(expr=x, match_kind=k.match_kind, name=name,
                                              annotations=annos_ir(k.annos), coord=k.coord,
                                              type_name=newtype_name(x.type)))
            elif p.kind == "actions":
                for it in p.value:
                    ab = self._action_binding(it.name, it.dot, ctx, it.coord)
                    if ab.cp_name in allowed:
                        raise P4Error(it.coord, f"table {d.name}: action {it.name} listed twice")
                    dir_args: list[Any] = []
                    directional = [(pa, pt) for pa, pt in zip(ab.decl.params, ab.params, strict=True) if pa.direction]
                    given = it.args or []
                    if any(a.name is not None for a in given):
                        by_param = match_args(it.name, [pa for pa, _ in directional], given, it.coord)
                        given = [by_param[pa.name] for pa, _ in directional if pa.name in by_param]
                    if given or directional:
                        if len(given) != len(directional):
                            raise P4Error(it.coord, f"{it.name}: expected {len(directional)} arguments for its directional parameters, got {len(given)}")
                        for (pa, pt), a in zip(directional, given, strict=True):
                            v = self.expr(a.value, tctx, pt.type)
                            if pa.direction in ("out", "inout"):
                                self.check_lvalue(v, tctx, a.coord, it.name)
                            else:
                                v = self.convert(v, pt.type, a.coord, it.name)
                            dir_args.append(v)
                    allowed[ab.cp_name] = ab
                    self.used_actions.add(ab.cp_name)
                    actions.append(ir.ActionRef(action=ab.cp_name, args=dir_args,
                                                annotations=annos_ir(it.annos), coord=it.coord))
            elif p.kind == "entries":
                entries_const = p.const
                entries = []
                kts = [k.expr.type for k in keys]
                for en in p.value:
                    ks = self.keysets(en.keyset, kts, tctx)
                    ar = self._action_ref(en.action, tctx, allowed, "entry")
                    explicit.append(None if en.priority is None
                                    else self.const_int(en.priority, tctx, "entry priority"))
                    # `@priority(N)` is not a P4Runtime priority (p4c warns it is
                    # ignored there) but p4c-bm2-ss gives it to BMv2 as the
                    # entry's match order, the smallest first
                    prio_anno = A.find_anno(en.annos, "priority")
                    rank = len(entries) + 1
                    if prio_anno is not None and prio_anno.args and type(prio_anno.args[0]) is int:
                        rank = prio_anno.args[0]
                    entries.append(ir.ConstEntry(keys=ks, action=ar, is_const=en.const, coord=en.coord,
                                                 match_rank=rank if p.const else None))
            elif pname == "default_action":
                default = self._action_ref(p.value, tctx, allowed, "default_action")
                default_const = p.const
            elif pname == "size":
                size = self.const_int(p.value, tctx, "table size")
            elif pname in ("implementation", "counters", "meters"):
                target = self._extern_prop(p, tctx, b.cp_name)
                expect = {"implementation": ("action_profile", "action_selector"),
                          "counters": ("direct_counter",), "meters": ("direct_meter",)}[pname]
                if target.inst.type.name not in expect:
                    raise P4Error(p.coord, f"table {d.name}: '{pname}' must name a {' or '.join(expect)}, not a {target.inst.type.name}")
                if pname == "implementation":
                    impl = target.inst.cp_name
                elif pname == "counters":
                    dcounter = target.inst.cp_name
                else:
                    dmeter = target.inst.cp_name
            elif pname in ("largest_priority_wins", "priority_delta"):
                prio_props[pname] = (self.expr(p.value, tctx), p.coord)
            elif pname == "support_timeout":
                v = self.expr(p.value, tctx)
                if not isinstance(v, ir.BoolLit):
                    raise P4Error(p.coord, "support_timeout must be true or false")
                timeout = v.value
            else:
                # p4c warns (ignore-prop) and compiles the table without it
                warn(p.coord, f"Unknown table property: {pname}")
        if "actions" not in seen:
            raise P4Error(d.coord, f"table {d.name}: expected 'actions' property")
        if default is None:
            default = self._implicit_default(actions, allowed, ctx, d.coord)
        largest = True
        if entries is not None:
            largest = self._entry_priorities(d.name, entries, explicit, entries_const, keys, prio_props,
                                             key_coord or d.coord, d.coord)
        if not impl and any(k.match_kind == "selector" for k in keys):
            # p4c compiles it as a plain table: the selector keys feed nothing
            # (BMv2's table matches the other keys only) and P4Info omits them
            warn(d.coord, f"table {d.name}: selector keys without an action_selector implementation "
                          "are ignored")
            keys = _without_selector_keys(keys)
        return ir.Table(
            name=d.name, cp_name=b.cp_name, keys=keys, actions=actions, default_action=default,
            default_is_const=default_const, const_entries=entries, entries_const=entries_const,
            size=size, implementation=impl, direct_counter=dcounter, direct_meter=dmeter,
            support_timeout=timeout, annotations=annos_ir(d.annos), coord=d.coord,
            largest_priority_wins=largest,
        )

    def _implicit_default(self, actions: list[ir.ActionRef], allowed: dict[str, BAction], ctx: Ctx,
                          coord: ir.Coord) -> ir.ActionRef | None:
        """A table without `default_action` has `NoAction()` (P4-16 §14.2.1.3).

        As in p4c, NoAction joins the table's actions as `@defaultonly` when the
        list does not have it, so P4Info shows it and the control plane may set
        it back. Without core.p4's NoAction the default stays unset.
        """
        try:
            b = self._action_binding("NoAction", True, ctx, coord)
        except P4Error:
            return None
        if b.params:
            return None
        if b.cp_name not in allowed:
            allowed[b.cp_name] = b
            self.used_actions.add(b.cp_name)
            actions.append(ir.ActionRef(action=b.cp_name, args=[],
                                        annotations=(ir.Annotation(name="defaultonly"),), coord=coord))
        return ir.ActionRef(action=b.cp_name, args=[], coord=coord)

    def _key_namer(self, ctx: Ctx) -> KeyNamer:
        def type_of(e: Any) -> Any:
            """The resolved type of a key expression."""
            return self.named(self.expr(e, ctx).type)

        def const_value(e: A.EName) -> tuple[int, int] | None:
            """(value, literal base) of a name bound to an integer constant, else None."""
            b = self.lookup(e.name, ctx, e.coord, e.dot)
            if isinstance(b, BConst) and isinstance(b.value, ir.Constant):
                is_global = e.dot or ctx.scope.lookup(e.name) is None
                return b.value.value, self.g.const_bases.get(e.name, 10) if is_global else 10
            return None

        return KeyNamer(type_of, const_value)

    def _extern_prop(self, p: A.TableProp, ctx: Ctx, table: str = "") -> BExtern:
        if isinstance(p.value, A.ECtor):
            # p4c names an instance constructed in a table property after the
            # property's @name, taken as a global name (p4c 1.2.4.8 does not
            # prefix it with the control's), and rejects it without one:
            # P4Runtime needs a name.
            anno = A.find_anno(p.annos, "name")
            if anno is None or not anno.args or not isinstance(anno.args[0], str):
                raise P4Error(p.coord, f"table '{table}' has an anonymous table property '{p.name}' with no "
                                       "@name annotation, which is not supported by P4Runtime")
            name = anno.args[0].lstrip(".")
            annos = [a if a is not anno else A.Anno(name="name", args=["." + name], coord=a.coord) for a in p.annos]
            d = A.DInstance(type=p.value.type, args=p.value.args, name=name, annos=annos, coord=p.value.coord)
            b = self.make_extern(d, ctx)
            self.inline_locals.append(b.inst)
            return b
        if not isinstance(p.value, A.EName):
            raise P4Error(p.coord, f"'{p.name}' must name an extern instance")
        b = self.lookup(p.value.name, ctx, p.coord, p.value.dot)
        if not isinstance(b, BExtern):
            raise P4Error(p.coord, f"{p.value.name}: not an extern instance")
        return b


def _without_selector_keys(keys: list[ir.KeyElement]) -> list[ir.KeyElement]:
    """`keys` less its selector keys, each other key pinned (@id) to the match field id p4c gives it:
    p4c numbers a table's keys with its selector keys among them."""
    ids = field_ids([k.annotations for k in keys])
    out = []
    for k, fid in zip(keys, ids, strict=True):
        if k.match_kind == "selector":
            continue
        if not any(a.name == "id" for a in k.annotations):
            k = dataclasses.replace(k, annotations=(*k.annotations, ir.Annotation(name="id", args=(fid,))))
        out.append(k)
    return out


def _direct_resource(call: ir.MethodCall) -> str:
    """"direct_counter" or "direct_meter" when `call` is a method of one, else ""."""
    if call.kind != ir.CallKind.EXTERN_METHOD or call.target is None:
        return ""
    t = call.target.type
    name = t.name if isinstance(t, ir.ExternType) else ""
    return name if name in ("direct_counter", "direct_meter") else ""


__all__ = ["BlockLowering", "annos_ir", "BOOL", "BVar"]
