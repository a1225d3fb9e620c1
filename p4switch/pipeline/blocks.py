"""IR -> Python for statements and blocks: controls, actions and functions.

Each control instance becomes ``ctl_N(_pk, <params>)``; each action it uses
``act_N(_pk, <control params>, _L, <action params>)`` where `_L` holds the
control-level variables (shared with actions) and the control's scalar
parameters; each table ``tbl_N(_pk, <control params>, _L)`` looks the key up
and runs the action, returning the table's result tuple (`tablegen`).
Parsers and deparsers come from `parsergen`, extern calls and instances from
`externgen`, calls from `callgen`. Scalar out/inout parameters are returned as a tuple and written
back by the caller; composite values go by reference unless P4-16
copy-in/copy-out could be observed (`callgen.args_for`).

What the generators share (`Fn`, `ControlCtx`, the `BlockGenerator` protocol
`BlockGen` implements for them) is in `genbase`.

Names defined here: `BlockGen`.
"""

from __future__ import annotations

from typing import Any, cast

from .. import ir
from . import callgen, externgen, fieldwrites, parsergen, tablegen
from .actionprofile import ActionProfile
from .codegen import Env, ExprGen, ModuleBuilder, _fail, int_lit, py_name
from .externs import ValueSet
from .genbase import ControlCtx, Fn, TableSpec, is_packet_param, may_exit


class BlockGen:
    """Generates the functions of a program into a ModuleBuilder."""

    def __init__(self, mb: ModuleBuilder) -> None:
        self.mb = mb
        self.ti = mb.ti
        self.copy_outs: list[tuple[str, str]] = []  # set by callgen.args_for, emitted after the call
        self.xg = ExprGen(mb, self.call_expr)
        self.fn_stack: list[Fn] = []
        self.top_actions = {a.cp_name: a for a in mb.program.actions}
        self.functions = {f.uid: f for f in mb.program.functions}
        self.function_fns: dict[str, str] = {}
        self.tables: list[TableSpec] = []
        self.externs: dict[str, Any] = {}  # cp_name -> runtime object
        self.extern_decls: dict[str, ir.ExternInstance] = {}
        self.profiles: dict[str, ActionProfile] = {}
        self.value_sets: dict[str, ValueSet] = {}
        self.direct_counters: set[str] = set()
        self.direct_meters: dict[str, bool] = {}  # cp_name -> counts bytes
        self.validity_changes = False  # set when a control can change header validity
        self.extra_field_lists: dict[int, list[tuple[str, ...]]] = {}  # deprecated data forms
        self.instances: dict[str, tuple[str, Any]] = {}  # instance key -> (function, decl)
        self.inlinable: dict[str, tuple[ControlCtx, list[str]]] = {}
        self.extern_globals: dict[str, str] = {}  # extern cp_name -> global name
        mb.header_writes = fieldwrites.header_writes(mb.program, self.ti.resolve)
        mb.raw_headers = {name for name, t in mb.program.types.items()
                          if isinstance(t, ir.HeaderType) and not mb.header_writes.get(name)
                          and not any(isinstance(self.ti.resolve(f.type), ir.VarbitType) for f in t.fields)}
        self.global_env = Env()
        for name, c in mb.program.constants.items():
            self.global_env.bind(name, "(" + self.xg.ex(c, self.global_env) + ")")

    def meta_type_name(self) -> str | None:
        """The user-metadata struct type's name (the parser's third parameter)."""
        p = self.mb.program.pipeline.get("p")
        params = [x for x in p.decl.params if not is_packet_param(x)] if p is not None else []
        return getattr(self.ti.resolve(params[1].type), "name", None) if len(params) > 1 else None

    @property
    def fn(self) -> Fn:
        """The function being written."""
        return self.fn_stack[-1]

    def ex(self, e: Any) -> str:
        """An IR expression as Python, in the current function's scope."""
        return self.xg.ex(e, self.fn.env)

    def finish(self, header: str, fn: Fn) -> None:
        """Add a finished function to the module."""
        self.mb.emit(header)
        self.mb.lines.extend(fn.lines or ["    pass"])
        self.mb.emit("")

    def tmp(self) -> str:
        """A fresh temporary name."""
        return self.mb.fresh("_t").lstrip("_").join(("_", ""))

    # ------------------------------------------------------------ externs
    def instantiate(self, inst: ir.ExternInstance, env: Env) -> None:
        """Create the run-time object of an extern instance and bind its uid (see `externgen`)."""
        externgen.instantiate(self, inst, env)

    def extern_kind(self, target: Any) -> tuple[str, str]:
        """(extern type name, global name) of a method call target."""
        if isinstance(target, ir.Var):
            g = self.fn.env.lookup(target.uid) or self.fn.env.lookup(target.name)
            kind = self.fn.env.lookup("@extern:" + target.uid) or self.fn.env.lookup("@extern:" + target.name)
            if g is not None and kind is not None:
                return kind, g
        raise _fail(target, "this extern call target")

    # ------------------------------------------------------------ statements
    def block(self, b: ir.Block | None) -> None:
        """Emit a block's statements (`pass` when empty)."""
        fn = self.fn
        start = len(fn.lines)
        if b is not None:
            for s in b.stmts:
                self.stmt(s)
        if len(fn.lines) == start:
            fn.w("pass")

    def stmt(self, s: Any) -> None:
        """Emit one statement (dispatched on its IR class to `_s_<Class>`)."""
        m = getattr(self, "_s_" + type(s).__name__, None)
        if m is None:
            raise _fail(s, f"statement {type(s).__name__}")
        m(s)

    def _s_Block(self, s: ir.Block) -> None:
        self.block(s)

    def _s_VarDecl(self, s: ir.VarDecl) -> None:
        fn = self.fn
        v = s.var
        name = self.mb.fresh("v_" + v.name)
        fn.env.bind(v.uid, name, v.type)
        if self.ti.is_composite(v.type):
            fn.w(f"{name} = {self.mb.new_expr(v.type)}")
            if s.init is not None:
                self.assign(v, s.init)
        else:
            fn.w(f"{name} = {self.ex(s.init) if s.init is not None else self.ti.zero(v.type)}")

    def _s_Assign(self, s: ir.Assign) -> None:
        rhs = s.rhs
        if isinstance(rhs, ir.MethodCall) and rhs.kind == ir.CallKind.FUNCTION:
            # `x = f(y)` with out/inout arguments (the front end's side-effect
            # ordering leaves calls inside expressions only in this form): the
            # copy-outs happen when f returns, before x is written (P4-16 §6.8)
            value = self.call_stmt(rhs, result=True)
            if value is not None:
                if self.ti.is_composite(s.lhs.type):
                    self.fn.w(f"copy_into({self.ex(s.lhs)}, {value})")
                    self.validity_changes = self.validity_changes or self.fn.kind != "parser"
                else:
                    self.store(s.lhs, value)
                return
        self.assign(s.lhs, s.rhs)

    def assign(self, lhs: Any, rhs: Any) -> None:
        """Emit `lhs = rhs`, composites copied in place and struct expressions field by field."""
        if self.ti.is_composite(lhs.type):
            rt = self.ti.resolve(lhs.type)
            if isinstance(rhs, ir.ListExpr) and isinstance(rt, (ir.HeaderType, ir.StructType)):
                # `{a, b}` assigned to a struct/header: fields in declaration order
                rhs = ir.StructExpr(fields=[(f.name, v) for f, v in zip(rt.fields, rhs.items, strict=False)],
                                    type=lhs.type, coord=rhs.coord)
            if isinstance(rhs, ir.StructExpr) and isinstance(rt, (ir.HeaderType, ir.StructType)):
                # every value is read before any field is written ({b, a} swaps)
                t = self.tmp()
                self.fn.w(f"{t} = {self.ex(lhs)}")
                targets, values, copies = [], [], []
                for n, v in rhs.fields:
                    ft = next(f.type for f in rt.fields if f.name == n)
                    if self.ti.is_composite(ft):
                        c = self.tmp()
                        self.fn.w(f"{c} = deep_copy({self.ex(v)})")
                        copies.append((n, c))
                    else:
                        targets.append(f"{t}.{py_name(n)}")
                        values.append(self.ex(v))
                if targets:
                    self.fn.w(f"{', '.join(targets)}, = {', '.join(values)},")
                for n, c in copies:
                    self.fn.w(f"copy_into({t}.{py_name(n)}, {c})")
                if isinstance(rt, ir.HeaderType):
                    self.fn.w(f"{t}._v = True")
                    self.validity_changes = True
                return
            if self.fn.kind != "parser":
                self.validity_changes = True
            self.fn.w(f"copy_into({self.ex(lhs)}, {self.ex(rhs)})")
            if isinstance(rt, ir.HeaderType):
                self.union_siblings_invalid(lhs, when=f"if {self.ex(lhs)}._v: ")
            return
        self.store(lhs, self.ex(rhs))

    def union_siblings_invalid(self, target: Any, when: str = "") -> None:
        """A header made valid in a header union leaves the union's other members invalid (P4-16 §8.20)."""
        if not isinstance(target, ir.Member):
            return
        ut = self.ti.resolve(target.expr.type)
        if not isinstance(ut, ir.HeaderUnionType):
            return
        parent = self.ex(target.expr)
        for f in ut.fields:
            if f.name != target.name:
                self.fn.w(f"{when}{parent}.{py_name(f.name)}._v = False")

    def store(self, lhs: Any, code: str) -> None:
        """Write the Python value `code` into the scalar lvalue `lhs`."""
        fn = self.fn
        if isinstance(lhs, ir.DontCare):
            return
        if isinstance(lhs, ir.Slice):
            target = lhs.expr
            m = (1 << (lhs.hi - lhs.lo + 1)) - 1
            cur = self.ex(target)
            new = f"(({cur}) & {hex(~(m << lhs.lo) & ((1 << self.ti.width(target.type)) - 1))}) | ((({code}) & {hex(m)}) << {int_lit(lhs.lo)})"
            if self.ti.is_signed(target.type):
                new = f"sx({new}, {self.ti.width(target.type)})"
            self.store(target, new)
            return
        if isinstance(lhs, ir.Var):
            fn.w(f"{self.ex(lhs)} = {code}")
            return
        if isinstance(lhs, (ir.Member, ir.Index)):
            fn.w(f"{self.ex(lhs)} = {code}")
            return
        raise _fail(lhs, "this assignment target")

    def _s_If(self, s: ir.If) -> None:
        fn = self.fn
        c = s.cond
        neg = isinstance(c, ir.UnOp) and c.op == "!"
        m = c.expr if isinstance(c, ir.UnOp) and neg else c
        r = None
        want = False
        if isinstance(m, ir.Member) and m.name in ("hit", "miss") and isinstance(m.expr, ir.MethodCall):
            r = self.apply_inline(m.expr)
            want = (m.name == "hit") != neg
        if r is not None:
            fn.w(f"if {'' if want else 'not '}{r}[2]:")
        else:
            fn.w(f"if {self.ex(s.cond)}:")
        fn.ind += 1
        self.block(s.then)
        fn.ind -= 1
        if s.else_ is not None and s.else_.stmts:
            # elif chains keep the indentation flat
            if len(s.else_.stmts) == 1 and isinstance(s.else_.stmts[0], ir.If):
                inner = s.else_.stmts[0]
                fn.w("else:")
                fn.ind += 1
                self._s_If(inner)
                fn.ind -= 1
            else:
                fn.w("else:")
                fn.ind += 1
                self.block(s.else_)
                fn.ind -= 1

    def _s_Switch(self, s: ir.Switch) -> None:
        fn = self.fn
        t = self.tmp()
        if s.on_action_run:
            # on_action_run: the front end saw `t.apply().action_run`
            call = cast(ir.MethodCall, s.expr.expr if isinstance(s.expr, ir.Member) else s.expr)
            r = self.apply_inline(call)
            fn.w(f"{t} = {r if r else self.ex(call)}[3]")
        else:
            fn.w(f"{t} = {self.ex(s.expr)}")
        pending: list[Any] = []
        first = True
        default_body: ir.Block | None = None
        has_default = False
        for case in s.cases:
            if case.is_default or not case.labels:
                has_default = True
                default_body = case.body
                if case.body is None:
                    continue
                if pending:  # labels falling through into default: default covers them
                    pending = []
                continue
            pending.extend(case.labels)
            if case.body is None:
                continue
            conds = []
            for lab in pending:
                if s.on_action_run:
                    conds.append(f"{t} == {self.mb.action_id(lab if isinstance(lab, str) else getattr(lab, 'action', str(lab)))}")
                else:
                    conds.append(f"{t} == {self.ex(lab)}")
            pending = []
            fn.w(("if " if first else "elif ") + " or ".join(conds) + ":")
            first = False
            fn.ind += 1
            self.block(case.body)
            fn.ind -= 1
        if has_default and default_body is not None:
            if first:
                self.block(default_body)
            else:
                fn.w("else:")
                fn.ind += 1
                self.block(default_body)
                fn.ind -= 1

    def _s_Exit(self, s: ir.Exit) -> None:
        if self.fn.kind == "action" or self.fn.kind == "control":
            self.fn.w("raise ExitControl()")
        else:
            raise _fail(s, "exit outside a control")

    def _s_Return(self, s: ir.Return) -> None:
        fn = self.fn
        if fn.kind == "parser":
            raise _fail(s, "return in a parser")
        if fn.inline:
            fn.w("break")
            return
        fn.w(fn.ret(self.ex(s.value) if s.value is not None else None))

    def _s_CallStmt(self, s: ir.CallStmt) -> None:
        self.call_stmt(s.call)

    # ------------------------------------------------------------ calls (`callgen`)
    def emit_copy_outs(self, copies: list[tuple[str, str]]) -> None:
        """Copy composite out/inout arguments back after a call."""
        callgen.emit_copy_outs(self, copies)

    def write_back(self, result: str, outs: list[tuple[Any, int]], offset: int = 0) -> None:
        """Store a call's scalar outs from its result tuple."""
        callgen.write_back(self, result, outs, offset)

    def call_stmt(self, call: ir.MethodCall, result: bool = False) -> str | None:
        """Emit a call as a statement; with `result`, also return the code of its value."""
        return callgen.call_stmt(self, call, result)

    def invoke(self, call: ir.MethodCall) -> tuple[str, list[tuple[Any, int]], int]:
        """(python call code, write-backs, index offset of the outs in the result)."""
        return callgen.invoke(self, call)

    def call_expr(self, call: ir.MethodCall, env: Env) -> str:
        """A call as a Python expression (tables, actions, functions, externs)."""
        return callgen.call_expr(self, call, env)

    def apply_inline(self, call: ir.MethodCall) -> str | None:
        """Emit a table apply in line (saves a call); returns the result variable, or None."""
        return tablegen.apply_inline(self, call)

    def _wrap_exit(self, fn: Fn, start: int) -> None:
        """Wrap fn's lines from `start` so that an `exit` carries its scalar outs up (`_x.outs`)."""
        if not fn.outs:
            return
        body = fn.lines[start:]
        del fn.lines[start:]
        fn.w("try:")
        fn.lines.extend("    " + line for line in body or ["    " * fn.ind + "pass"])
        fn.w("except ExitControl as _x:")
        fn.w("    _x.outs = (" + "".join(o + ", " for o in fn.outs) + ")")
        fn.w("    raise")

    # ------------------------------------------------------------ callables
    def function_fn(self, decl: ir.Function) -> str:
        """The generated function of a P4 function (generated on first use)."""
        name = self.function_fns.get(decl.uid)
        if name is not None:
            return name
        name = self.function_fns[decl.uid] = self.mb.fresh("fn_" + decl.name)
        env = Env(self.global_env)
        params, outs = [], []
        for p in decl.params:
            pn = self.mb.fresh("p_" + p.name)
            env.bind(p.uid, pn, p.type)
            params.append(pn)
            if p.direction in ("out", "inout") and not self.ti.is_composite(p.type):
                outs.append(pn)
        ret = not isinstance(self.ti.resolve(decl.return_type), ir.VoidType)
        fn = Fn("function", env, None, outs, ret_value=ret)
        fn.ctl = self.fn.ctl if self.fn_stack else None
        self.fn_stack.append(fn)
        try:
            self.block(decl.body)
            if not ret:
                fn.w(fn.ret())
        finally:
            self.fn_stack.pop()
        self.finish(f"def {name}({', '.join(['_pk'] + params)}):", fn)
        return name

    def action_fn(self, ctl: ControlCtx, decl: ir.Action) -> str:
        """The generated function of an action of a control (generated on first use)."""
        name = ctl.actions.get(decl.cp_name)
        if name is not None:
            return name
        name = ctl.actions[decl.cp_name] = self.mb.fresh("act_" + decl.name)
        self.mb.action_id(decl.cp_name)
        env = Env(ctl.env)
        params, outs = [], []
        for p in decl.params:
            pn = self.mb.fresh("a_" + p.name)
            env.bind(p.uid, pn, p.type)
            params.append(pn)
            if p.direction in ("out", "inout") and not self.ti.is_composite(p.type):
                outs.append(pn)
        fn = Fn("action", env, ctl, outs)
        self.fn_stack.append(fn)
        try:
            self.block(decl.body)
            if outs and may_exit(decl.body):
                self._wrap_exit(fn, 0)
            if outs:
                fn.w(fn.ret())
        finally:
            self.fn_stack.pop()
        self.finish(f"def {name}({', '.join([ctl.pass_args] + params)}):", fn)
        return name

    # ------------------------------------------------------------ controls

    def control(self, inst: ir.ControlInstance) -> str:
        """Generate a control instance; returns its function name."""

        decl = inst.decl
        fname = self.mb.fresh("ctl_" + inst.name)
        env = Env(self.global_env)
        param_names: list[str] = []
        scalar_params: list[tuple[str, ir.Param]] = []
        sig: list[str] = []
        for p in decl.params:
            if is_packet_param(p):
                continue
            pn = self.mb.fresh("c_" + p.name)
            sig.append(pn)
            if self.ti.is_composite(p.type):
                env.bind(p.uid, pn, p.type)
                param_names.append(pn)
            else:
                attr = self.mb.fresh("p_" + p.name)
                env.bind(p.uid, f"_L.{attr}", p.type)
                scalar_params.append((attr, p))
        var_locals = [x for x in decl.locals if isinstance(x, ir.VarDecl)]
        has_l = bool(var_locals or scalar_params)
        ctl = ControlCtx(decl=decl, cp_name=inst.cp_name, param_names=param_names, env=env,
                         has_locals=has_l)
        if not has_l:
            # no state of its own: callers may inline its body (see call_stmt)
            self.inlinable[fname] = (ctl, sig)
        for loc in decl.locals:
            if isinstance(loc, ir.Action):
                ctl.action_decls[loc.cp_name] = loc
        lcls = None
        composite_locals: list[tuple[str, Any]] = []
        if has_l:
            lcls = self.mb.fresh("L_" + inst.name)
            body = []
            for vd in var_locals:
                attr = self.mb.fresh("l_" + vd.var.name)
                env.bind(vd.var.uid, f"_L.{attr}", vd.var.type)
                if self.ti.is_composite(vd.var.type):
                    composite_locals.append((attr, vd))
                else:
                    body.append(f"    {attr} = {self.ti.zero(vd.var.type)}")
            self.mb.emit(f"class {lcls}:")
            self.mb.lines.extend(body or ["    pass"])
            self.mb.emit("")
        for loc in decl.locals:
            if isinstance(loc, ir.ExternInstance):
                self.instantiate(loc, env)
            elif isinstance(loc, ir.ControlInstance):
                sub = self.control(loc)
                self.instances[loc.uid + "@" + fname] = (sub, loc.decl)
                env.bind("@inst:" + loc.uid, loc.uid + "@" + fname)
                env.bind("@inst:" + loc.name, loc.uid + "@" + fname)
        fn = Fn("control", env, ctl, [f"_L.{a}" for a, p in scalar_params
                                      if p.direction in ("out", "inout")])
        self.fn_stack.append(fn)
        try:
            if lcls is not None:
                fn.w(f"_L = {lcls}()")
                real = [p for p in decl.params if not is_packet_param(p)]
                for attr, p in scalar_params:
                    fn.w(f"_L.{attr} = {sig[real.index(p)]}")
                for attr, vd in composite_locals:
                    fn.w(f"_L.{attr} = {self.mb.new_expr(vd.var.type)}")
            else:
                fn.w("_L = None")
            for vd in var_locals:
                if vd.init is not None:
                    self.assign(vd.var, vd.init)
            for loc in decl.locals:
                if isinstance(loc, ir.Table):
                    self.table(ctl, loc)
            start = len(fn.lines)
            self.block(decl.apply)
            if fn.outs and may_exit(decl.apply):
                self._wrap_exit(fn, start)
            if fn.outs:
                fn.w(fn.ret())
        finally:
            self.fn_stack.pop()
        self.finish(f"def {fname}({', '.join(['_pk'] + sig)}):", fn)
        return fname

    def table(self, ctl: ControlCtx, t: ir.Table) -> None:
        """Generate tbl_N for a table and its in-line body (see `tablegen`)."""
        tablegen.table(self, ctl, t)

    # ------------------------------------------------------------ parsers
    def parser(self, inst: ir.ParserInstance) -> str:
        """Generate a parser instance; returns its function name (see `parsergen`)."""
        return parsergen.parser(self, inst)

    def deparser(self, inst: ir.ControlInstance) -> str:
        """Generate a deparser instance; returns its function name (see `parsergen`)."""
        return parsergen.deparser(self, inst)



__all__ = ["BlockGen"]
