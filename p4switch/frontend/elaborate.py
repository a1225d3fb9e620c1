"""Elaboration: from the checked AST to the IR `Program` of one v1model switch.

Two steps, as p4c's evaluator does:

1. `collect` walks the top-level declarations in order and fills `Globals`
   (types with resolved fields, enums with values, errors, match kinds,
   externs, constants folded, parser/control declarations);
2. `elaborate` instantiates `main` (a `V1Switch`): each parser/control
   argument becomes an instance with its own copy of the declaration, named
   for the control plane as p4c does (top-level instances by their type
   name, nested instances `Outer.inst`, `@name` honoured, `@name(".x")`
   global), with its parameters, locals, actions, tables and apply body
   lowered by `BlockLowering`.

Names defined here: `Elaborator`, `PIPELINE` (the V1Switch parameter names).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from p4switch import ir
from p4switch.frontend import ast as A
from p4switch.frontend.calls import CallResolver, match_args
from p4switch.frontend.errors import P4Error, unsupported, user_extern
from p4switch.frontend.exprs import Ctx
from p4switch.frontend.fold import wrap
from p4switch.frontend.keynames import int_base
from p4switch.frontend.preprocess import P4INCLUDE
from p4switch.frontend.scope import (
    BAction,
    BConst,
    BExtern,
    BFunction,
    BlockCtx,
    BSub,
    BTable,
    BValueSet,
    BVar,
    Scope,
    cp_name,
)
from p4switch.frontend.stmts import BlockLowering, annos_ir
from p4switch.frontend.types import (
    NT,
    BlockTypeRef,
    ExternInfo,
    Globals,
    TVar,
    TypeEnv,
    erase_newtypes,
    newtype_name,
    type_str,
    unwrap_newtype,
)

PIPELINE = ("p", "vr", "ig", "eg", "ck", "dep")


class Elaborator:
    """AST program -> IR program (see module docstring)."""

    def __init__(self, prog: A.Program) -> None:
        self.prog = prog
        self.g = Globals()
        self.env = TypeEnv(self.g, self._fold_const)
        self.low = BlockLowering(self.g, self.env)
        self.low.inline_locals = []
        self.low.make_extern = lambda d, ctx: self._inline_extern(d, ctx)
        self.low.global_instance = self._global_instance
        self.low.specialize = self._specialize
        self.specialized: dict[tuple[str, tuple[Any, ...]], str] = {}
        self.low.direct_instance = self._direct_instance
        self.calls = CallResolver(self.low)
        self._passed: set[int] = set()  # id() of instances passed by name (`_block_arg_by_name`)
        self.top_actions: list[ir.Action] = []
        self.functions: list[ir.Function] = []

    def _fold_const(self, e: Any) -> int:
        x = self.low.global_expr(e)
        if not isinstance(x, ir.Constant):
            raise P4Error(getattr(e, "coord", None), "expected a compile-time integer constant")
        return x.value

    # ------------------------------------------------------------------ collect
    def _declare(self, name: str, kind: str, coord: ir.Coord) -> None:
        prev = self.g.names.get(name)
        if prev is not None and not (prev == kind == "extern_func"):
            raise P4Error(coord, f"{name}: duplicate declaration (already declared as {prev})")
        self.g.names[name] = kind

    def collect(self) -> None:
        """Fill `Globals` from the top-level declarations, in order (step 1)."""
        g = self.g
        for d in self.prog.decls:
            if isinstance(d, A.DConst):
                self._declare(d.name, "constant", d.coord)
                t = self.env.resolve(d.type)
                v = self.low.convert(self.low.global_expr(d.value, t), t, d.coord, d.name)
                g.consts[d.name] = v
                if isinstance(d.value, A.EInt):
                    g.const_bases[d.name] = int_base(d.value.text)
            elif isinstance(d, A.DTypedef):
                self._declare(d.name, "type", d.coord)
                t = self.env.resolve(d.type)
                if d.newtype:
                    nt = self.env.named(t)
                    if not isinstance(nt, (ir.BitsType, ir.BoolType, ir.EnumType, NT)) and not isinstance(t, ir.TypeName):
                        raise P4Error(d.coord, f"type {d.name}: the underlying type cannot be {type_str(t)}")
                    under = self.env.named(unwrap_newtype(t))
                    if A.find_anno(d.annos, "p4runtime_translation") is not None and not isinstance(under, ir.BitsType):
                        raise P4Error(d.coord, f"{d.name}: P4Runtime requires the underlying type of a type with @p4runtime_translation to be bit<W>, not {type_str(t)}")
                    g.newtypes[d.name] = ir.NewType(name=d.name, type=unwrap_newtype(t), annotations=annos_ir(d.annos),
                                                    coord=d.coord)
                    t = NT(name=d.name, base=t)
                g.typedefs[d.name] = t
            elif isinstance(d, A.DStruct):
                self._declare(d.name, "type", d.coord)
                g.types[d.name] = self._struct(d)
                g.type_annos[d.name] = d.annos
            elif isinstance(d, A.DEnum):
                self._declare(d.name, "type", d.coord)
                g.types[d.name] = self._enum(d)
            elif isinstance(d, A.DError):
                for m in d.members:
                    if m in g.errors:
                        raise P4Error(d.coord, f"error.{m}: duplicate declaration")
                    g.errors.append(m)
            elif isinstance(d, A.DMatchKind):
                for m in d.members:
                    if m in g.match_kinds:
                        raise P4Error(d.coord, f"{m}: duplicate match_kind")
                    g.match_kinds.append(m)
            elif isinstance(d, A.DExternObj):
                self._declare(d.name, "extern", d.coord)
                self._note_user_extern(d.name, d.coord)
                methods: dict[str, list[A.MethodProto]] = {}
                for meth in d.methods:
                    if not meth.is_ctor:
                        methods.setdefault(meth.name, []).append(meth)
                g.externs[d.name] = ExternInfo(decl=d, ctors=[m for m in d.methods if m.is_ctor], methods=methods)
            elif isinstance(d, A.DExternFunc):
                self._declare(d.proto.name, "extern_func", d.coord)
                self._note_user_extern(d.proto.name, d.coord)
                g.extern_funcs.setdefault(d.proto.name, []).append(d.proto)
            elif isinstance(d, A.DBlockType):
                self._declare(d.name, d.kind + " type", d.coord)
                g.block_types[d.name] = d
            elif isinstance(d, A.DParser):
                self._declare(d.name, "parser", d.coord)
                g.parsers[d.name] = d
            elif isinstance(d, A.DControl):
                self._declare(d.name, "control", d.coord)
                g.controls[d.name] = d
            elif isinstance(d, A.DAction):
                self._declare(d.name, "action", d.coord)
                g.actions[d.name] = d
                self._top_action(d)
            elif isinstance(d, A.DFunction):
                self._declare(d.proto.name, "function", d.coord)
                g.functions[d.proto.name] = d
                self._function(d)
            elif isinstance(d, A.DInstance):
                self._declare(d.name, "instance", d.coord)
                g.instances[d.name] = d
            else:
                raise unsupported(getattr(d, "coord", None), f"declaration {type(d).__name__}")

    def _note_user_extern(self, name: str, coord: ir.Coord) -> None:
        """Remember an extern the program declares itself (outside core.p4 and v1model.p4)."""
        if Path(coord.file).resolve().parent != P4INCLUDE:
            self.g.user_externs.setdefault(name, coord)

    def _struct(self, d: A.DStruct) -> Any:
        fields = []
        names: set[str] = set()
        varbits = 0
        for f in d.fields:
            if f.name in names:
                raise P4Error(f.coord, f"{f.name}: duplicate field in {d.name}")
            names.add(f.name)
            t = self.env.resolve(f.type)
            nt = self.env.named(t)
            if d.kind == "header":
                nt = self.env.named(unwrap_newtype(t))
                ok = isinstance(nt, (ir.BitsType, ir.VarbitType, ir.BoolType)) or (
                    isinstance(nt, ir.EnumType) and nt.underlying is not None
                ) or self._fixed_struct(nt)
                if not ok:
                    raise P4Error(f.coord, f"{f.name}: a header field cannot have type {type_str(t)}")
                varbits += isinstance(nt, ir.VarbitType)
                if varbits > 1:
                    raise P4Error(f.coord, f"{d.name}: a header may have at most one varbit field")
            elif d.kind == "header_union":
                if not isinstance(nt, ir.HeaderType):
                    raise P4Error(f.coord, f"{f.name}: header_union fields must be headers")
            elif isinstance(nt, (ir.IntType, ir.StringType, ir.VoidType, ir.ExternType)):
                raise P4Error(f.coord, f"{f.name}: a struct field cannot have type {type_str(t)}")
            fields.append(ir.Field(name=f.name, type=t, annotations=annos_ir(f.annos), type_name=newtype_name(t)))
        cls = {"header": ir.HeaderType, "header_union": ir.HeaderUnionType, "struct": ir.StructType}[d.kind]
        return cls(name=d.name, fields=tuple(fields), annotations=annos_ir(d.annos), coord=d.coord)

    def _fixed_struct(self, t: Any) -> bool:
        """A struct of fixed-width fields only (bit, int, bool, serializable enums, such structs):
        P4-16 §7.2.2 allows one as a header field; it lies on the wire in field order."""
        if not isinstance(t, ir.StructType):
            return False
        for f in t.fields:
            ft = self.env.named(unwrap_newtype(f.type))
            if not (isinstance(ft, (ir.BitsType, ir.BoolType)) or self._fixed_struct(ft)
                    or (isinstance(ft, ir.EnumType) and ft.underlying is not None)):
                return False
        return True

    def _enum(self, d: A.DEnum) -> ir.EnumType:
        if len(set(d.members)) != len(d.members):
            raise P4Error(d.coord, f"enum {d.name}: duplicate member")
        if d.underlying is None:
            return ir.EnumType(name=d.name, members=tuple(d.members), coord=d.coord)
        ut = self.env.resolve(d.underlying)
        if not isinstance(ut, ir.BitsType):
            raise P4Error(d.coord, f"enum {d.name}: underlying type must be bit<W> or int<W>, not {type_str(ut)}")
        values = tuple(wrap(self._fold_const(v), ut) for v in d.values)
        return ir.EnumType(name=d.name, members=tuple(d.members), underlying=ut, values=values, coord=d.coord)

    # ------------------------------------------------------------------ params
    def _params(self, params: list[A.ParamAst], ctx: Ctx, kind: str, tvars: dict[str, Any] | None = None) -> list[ir.Param]:
        out = []
        for p in params:
            t = self.env.resolve(p.type, tvars or ctx.tvars)
            if kind == "action" and not p.direction and not isinstance(self.env.named(t), (ir.BitsType, ir.BoolType, ir.EnumType, NT)):
                raise P4Error(p.coord, f"{p.name}: action data parameter of type {type_str(t)} is not supported (bit<W>, int<W>, bool or enum)")
            uid = ctx.block.uid(p.name)
            var = ir.Var(name=p.name, uid=uid, scope=ir.Scope.PARAM, type=t, coord=p.coord)
            readonly = p.direction in ("in", "") and not isinstance(t, ir.ExternType)
            ctx.scope.declare(p.name, BVar(var=var, readonly=readonly, direction=p.direction or "directionless"), p.coord)
            out.append(ir.Param(name=p.name, uid=uid, direction=p.direction, type=t,
                                annotations=annos_ir(p.annos), coord=p.coord, type_name=newtype_name(t)))
        return out

    # ------------------------------------------------------------------ actions & functions
    def _action(self, d: A.DAction, ctx: Ctx, prefix: str) -> tuple[ir.Action, BAction]:
        actx = Ctx(scope=Scope(ctx.scope), block=ctx.block, in_action=True, tvars=ctx.tvars)
        params = self._params(d.params, actx, "action")
        seen_data = False
        for p in d.params:
            if not p.direction:
                seen_data = True
            elif seen_data:
                raise P4Error(p.coord, f"{d.name}: directional parameters must come before action data parameters")
        name = cp_name(prefix, d.name, d.annos)
        binding = BAction(decl=d, cp_name=name, params=params)
        body = self.low.block(d.body, actx, new_scope=False)
        act = ir.Action(name=d.name, cp_name=name, params=params, body=body, annotations=annos_ir(d.annos), coord=d.coord)
        binding.ir_action = act
        return act, binding

    def _top_action(self, d: A.DAction) -> None:
        ctx = Ctx(scope=Scope(), block=BlockCtx(prefix="", kind="action"))
        act, b = self._action(d, ctx, "")
        self.low.global_actions[d.name] = b
        self.top_actions.append(act)

    def _function(self, d: A.DFunction, binding: dict[str, Any] | None = None, uid: str = "") -> None:
        """Lower a function; a generic one only once per set of type arguments (p4c's
        SpecializeGenericFunctions), when a call binds them."""
        proto = d.proto
        if proto.tparams and binding is None:
            return
        tv = {n: (binding or {}).get(n, TVar(name=n)) for n in proto.tparams}
        ctx = Ctx(scope=Scope(), block=BlockCtx(prefix="", kind="function"), tvars=tv)
        ret = self.env.resolve(proto.ret, tv)
        ctx.return_type = ret
        params = self._params(proto.params, ctx, "function")
        body = self.low.block(d.body, ctx, new_scope=False)
        if not isinstance(ret, ir.VoidType) and not _always_returns(body):
            raise P4Error(d.coord, f"{proto.name}: function does not return a value on every path")
        self.functions.append(ir.Function(name=proto.name, uid=uid or proto.name, return_type=ret, params=params,
                                          body=body, coord=d.coord))

    def _specialize(self, d: A.DFunction, binding: dict[str, Any]) -> str:
        """uid of `d` specialized for `binding` (lowered on first use)."""
        targs = tuple(binding.get(n) for n in d.proto.tparams)
        key = (d.proto.name, targs)
        uid = self.specialized.get(key)
        if uid is None:
            uid = f"{d.proto.name}<{', '.join(type_str(t) for t in targs)}>"
            self.specialized[key] = uid
            self._function(d, dict(binding), uid)
        return uid

    # ------------------------------------------------------------------ instances
    def _ctor_args(self, proto_params: list[A.ParamAst], args: list[A.Arg], ctx: Ctx, fname: str,
                   tvars: dict[str, Any], binding: dict[str, Any], coord: ir.Coord) -> list[ir.Expr]:
        bound = self.calls.bind(fname, proto_params, args, ctx, coord, tvars, binding)
        return [a.value for a in bound]

    def _inline_extern(self, d: A.DInstance, ctx: Ctx) -> BExtern:
        t = self.env.resolve(d.type, ctx.tvars)
        if not isinstance(t, ir.ExternType) or t.name in ("packet_in", "packet_out"):
            raise P4Error(d.coord, f"{type_str(t)}: not an extern that a table property can construct")
        return self.extern_instance(d, ctx, ctx.block.prefix, declare=False)

    def _global_instance(self, name: str, ctx: Ctx, coord: ir.Coord) -> Any:
        """A top-level extern instance used inside a block: bound once per block instance.

        The IR keeps instances in the blocks that use them, so the instance
        becomes a local of this block with its top-level control-plane name.
        """
        b = ctx.block.global_externs.get(name)
        if b is not None:
            return b
        d = self.g.instances[name]
        t = self.env.resolve(d.type)
        if not isinstance(t, ir.ExternType):
            raise P4Error(coord, f"{name}: a {type_str(t)} instance can only be used as an argument of main")
        if ctx.block.kind not in ("control", "parser"):
            raise unsupported(coord, f"the top-level instance '{name}' used outside a control or parser")
        b = self.extern_instance(d, Ctx(scope=Scope(), block=ctx.block), "", declare=False)
        ctx.block.global_externs[name] = b
        self.low.inline_locals.append(b.inst)
        return b

    def _direct_instance(self, s: A.SDirectApply, ctx: Ctx) -> BSub:
        t = s.type
        name = t.base.name if isinstance(t, A.TSpecialized) else t.name
        decl = self.g.controls.get(name) or self.g.parsers.get(name)
        if decl is None:
            raise P4Error(s.coord, f"{name}: only a control or parser type can be applied directly")
        kind = "control" if isinstance(decl, A.DControl) else "parser"
        if kind != ctx.block.kind:
            raise P4Error(s.coord, f"a {kind} cannot be applied inside a {ctx.block.kind}")
        if decl.ctor_params:
            raise P4Error(s.coord, f"{name}: a {kind} with constructor parameters cannot be applied directly")
        uid = ctx.block.uid(name + "_inst")
        prefix = cp_name(ctx.block.prefix, name, None)
        inst = self.instantiate(decl, prefix, uid, uid, {}, s.coord)
        var = ir.Var(name=uid, uid=uid, scope=ir.Scope.INSTANCE, type=ir.ExternType(name=name), coord=s.coord)
        self.low.inline_locals.append(inst)
        return BSub(var=var, kind=kind, inst=inst)

    def extern_instance(self, d: A.DInstance, ctx: Ctx, prefix: str, declare: bool = True) -> BExtern:
        """Instantiate an extern declared by `d`, declared in scope unless `declare` is false."""
        t = self.env.resolve(d.type, ctx.tvars)
        if t.name in self.g.user_externs:
            raise user_extern(d.coord, t.name, "extern type")
        info = self.g.externs[t.name]
        binding = {n: a for n, a in zip(info.decl.tparams, t.type_args, strict=False) if not isinstance(a, TVar)}
        tv = {n: TVar(name=n) for n in info.decl.tparams}
        if not info.ctors:
            raise P4Error(d.coord, f"{t.name}: cannot be instantiated")
        proto = self.calls._pick(t.name, info.ctors, len(d.args), d.coord)
        args = self._ctor_args(proto.params, d.args, ctx, t.name, tv, binding, d.coord)
        targs = tuple(binding.get(n, TVar(name=n)) for n in info.decl.tparams)
        if any(isinstance(a, TVar) for a in targs):
            raise P4Error(d.coord, f"{t.name}: type arguments needed ({t.name}<...>)")
        et = ir.ExternType(name=t.name, type_args=targs)
        uid = ctx.block.uid(d.name)
        # `register<N>` with N a `type`: P4Info names N (the IR erases it)
        tnames = tuple(newtype_name(a) for a in targs)
        inst = ir.ExternInstance(name=d.name, cp_name=cp_name(prefix, d.name, d.annos), uid=uid, type=et,
                                 args=args, annotations=annos_ir(d.annos),
                                 type_arg_names=tnames if any(tnames) else (), coord=d.coord)
        var = ir.Var(name=d.name, uid=uid, scope=ir.Scope.INSTANCE, type=et, coord=d.coord)
        b = BExtern(var=var, inst=inst)
        if declare:
            ctx.scope.declare(d.name, b, d.coord)
        return b

    def local_instance(self, d: A.DInstance, ctx: Ctx, prefix: str, kind: str) -> Any:
        """Instantiate an extern, parser or control declared inside a `kind` block."""
        t = self.env.resolve(d.type, ctx.tvars)
        if isinstance(t, ir.ExternType):
            if t.name in ("packet_in", "packet_out"):
                raise P4Error(d.coord, f"{t.name}: cannot be instantiated")
            return self.extern_instance(d, ctx, prefix).inst
        if isinstance(t, BlockTypeRef) and t.name in self.g.controls | self.g.parsers:
            sub_kind = "control" if t.name in self.g.controls else "parser"
            if sub_kind != kind:
                raise P4Error(d.coord, f"a {sub_kind} cannot be instantiated inside a {kind}")
            decl = self.g.controls.get(t.name) or self.g.parsers[t.name]
            sub_prefix = cp_name(prefix, d.name, d.annos)
            ctor_vals = self._block_ctor_args(decl, d.args, ctx, d.coord, sub_prefix)
            uid = ctx.block.uid(d.name)
            inst = self.instantiate(decl, sub_prefix, d.name, uid, ctor_vals, d.coord, d.annos)
            var = ir.Var(name=d.name, uid=uid, scope=ir.Scope.INSTANCE, type=ir.ExternType(name=t.name), coord=d.coord)
            ctx.scope.declare(d.name, BSub(var=var, kind=sub_kind, inst=inst), d.coord)
            return inst
        raise P4Error(d.coord, f"{type_str(t)}: cannot be instantiated here")

    def _block_ctor_args(self, decl: Any, args: list[A.Arg], ctx: Ctx, coord: ir.Coord,
                         prefix: str = "") -> dict[str, Any]:
        """Constructor argument values by parameter name: constants, or parser/control
        instances for parameters of a parser/control type (`Wrap(Sub()) w;`)."""
        by_param = match_args(decl.name, decl.ctor_params, args, coord) if len(args) <= len(decl.ctor_params) else {}
        missing = [p.name for p in decl.ctor_params if p.name not in by_param and p.default is None]
        if len(args) > len(decl.ctor_params) or missing:
            raise P4Error(coord, f"{decl.name}: expected {len(decl.ctor_params)} constructor arguments, got "
                                 f"{len(args)}" + (f" (missing '{missing[0]}')" if missing else ""))
        out: dict[str, Any] = {}
        for p in decl.ctor_params:
            t = self.env.resolve(p.type)
            a = by_param.get(p.name) or A.Arg(value=p.default, coord=coord)
            if isinstance(t, BlockTypeRef):
                out[p.name] = self._block_arg(p, t, a, ctx, cp_name(prefix, p.name, None) if prefix else p.name)
                continue
            v = self.low.convert(self.low.expr(a.value, ctx, t), t, a.coord, p.name)
            if not isinstance(v, (ir.Constant, ir.BoolLit, ir.EnumMember, ir.ErrorMember, ir.StringLit)):
                raise unsupported(a.coord, "a non-constant constructor argument")
            out[p.name] = v
        return out

    def _block_arg(self, p: A.ParamAst, t: BlockTypeRef, a: A.Arg, ctx: Ctx, prefix: str) -> Any:
        """A parser/control instance given for a constructor parameter of a parser/control type.

        The argument is constructed in place (`Sub()`); it must have the
        parameters of the type it is passed as (P4-16 §7.2.12). It becomes a
        sub-instance of the block it is passed to, named after the parameter.
        """
        v = a.value
        if isinstance(v, A.EName) and not v.dot:
            return self._block_arg_by_name(p, t, v, ctx, a.coord)
        if not (isinstance(v, A.ECtor) and isinstance(v.type, A.TName)):
            raise unsupported(a.coord, f"{p.name}: a {t.kind} argument other than a constructor call or "
                                       f"an instance's name")
        decl = self.g.controls.get(v.type.name) or self.g.parsers.get(v.type.name)
        if decl is None:
            raise P4Error(a.coord, f"{v.type.name}: not a parser or control")
        kind = "control" if isinstance(decl, A.DControl) else "parser"
        if kind != t.kind:
            raise P4Error(a.coord, f"{p.name}: expects a {t.kind}, {v.type.name} is a {kind}")
        proto = self.g.block_types.get(t.name)
        if proto is not None:
            self._check_signature(decl, proto, {}, a.coord)
        elif t.name != decl.name:
            raise P4Error(a.coord, f"{p.name}: expects a {t.name}, not a {decl.name}")
        ctor_vals = self._block_ctor_args(decl, v.args, ctx, a.coord, prefix)
        uid = f"{p.name}$arg"
        return self.instantiate(decl, prefix, p.name, uid, ctor_vals, a.coord)

    def _block_arg_by_name(self, p: A.ParamAst, t: BlockTypeRef, v: A.EName, ctx: Ctx, coord: ir.Coord) -> Any:
        """An instance declared earlier in this block, passed by name (`C1() c1; C2(c1) c2;`).

        The block it is passed to takes it over: it becomes that block's
        sub-instance (known there by the parameter's name) and leaves the
        declaring block's locals, keeping its control-plane names (p4c names
        its tables after where it is declared, `I.c1.t`). Applying it in the
        declaring block too, or passing it twice, would make two blocks share
        one instance's state: refused (`BSub.passed_to`, `CallResolver.sub_apply`).
        """
        b = ctx.scope.lookup(v.name)
        if not isinstance(b, BSub):
            raise P4Error(coord, f"{p.name}: {v.name} is not a {t.kind} instance of this block")
        if b.kind != t.kind:
            raise P4Error(coord, f"{p.name}: expects a {t.kind}, {v.name} is a {b.kind} instance")
        decl = self.g.controls.get(b.inst.decl.name) or self.g.parsers[b.inst.decl.name]
        proto = self.g.block_types.get(t.name)
        if proto is not None:
            self._check_signature(decl, proto, {}, coord)
        elif t.name != decl.name:
            raise P4Error(coord, f"{p.name}: expects a {t.name}, not a {decl.name}")
        if b.passed_to:
            raise unsupported(coord, f"{v.name}: passing a {b.kind} instance to a second block ({b.passed_to} "
                                     "has it already)")
        b.passed_to = p.name
        self._passed.add(id(b.inst))
        return b.inst

    def instantiate(self, decl: Any, prefix: str, name: str, uid: str, ctor_vals: dict[str, ir.Expr],
                    coord: ir.Coord, annos: list[A.Anno] | None = None) -> Any:
        """A lowered instance of parser/control `decl` with these constructor values."""
        saved, self.low.inline_locals = self.low.inline_locals, []
        root = self.low.root_prefix
        self.low.root_prefix = root or prefix  # a sub-instance's is its top-level block's
        try:
            return self._instantiate(decl, prefix, name, uid, ctor_vals, coord)
        finally:
            self.low.inline_locals, self.low.root_prefix = saved, root

    def _instantiate(self, decl: Any, prefix: str, name: str, uid: str, ctor_vals: dict[str, ir.Expr],
                     coord: ir.Coord) -> Any:
        kind = "control" if isinstance(decl, A.DControl) else "parser"
        block = BlockCtx(prefix=prefix, kind=kind)
        ctx = Ctx(scope=Scope(), block=block, in_parser=kind == "parser")
        params = self._params(decl.params, ctx, kind)
        ctor_params = []
        locals_: list[Any] = []
        for p in decl.ctor_params:
            t = self.env.resolve(p.type)
            val = ctor_vals[p.name]
            if isinstance(val, (ir.ControlInstance, ir.ParserInstance)):
                # a parser/control passed in: a sub-instance known by the parameter's name
                sub_kind = "control" if isinstance(val, ir.ControlInstance) else "parser"
                var = ir.Var(name=p.name, uid=val.uid, scope=ir.Scope.INSTANCE,
                             type=ir.ExternType(name=val.decl.name), coord=p.coord)
                ctx.scope.declare(p.name, BSub(var=var, kind=sub_kind, inst=val), p.coord)
                locals_.append(val)
                continue
            ctx.scope.declare(p.name, BConst(value=val), p.coord)
            ctor_params.append(ir.Param(name=p.name, uid=block.uid(p.name), direction="", type=t,
                                        default=val, coord=p.coord))
        declared: set[int] = set()  # id() of the instances declared in this block
        for d in decl.locals:
            if isinstance(d, A.DConst):
                self.low.local_const(d, ctx)
            elif isinstance(d, A.DVar):
                locals_.append(self.low.local_var(d, ctx))
            elif isinstance(d, A.DInstance):
                locals_.append(self.local_instance(d, ctx, prefix, kind))
                declared.add(id(locals_[-1]))
            elif isinstance(d, A.DAction) and kind == "control":
                act, b = self._action(d, ctx, prefix)
                ctx.scope.declare(d.name, b, d.coord)
                locals_.append(act)
            elif isinstance(d, A.DTable) and kind == "control":
                uid_t = block.uid(d.name)
                var = ir.Var(name=d.name, uid=uid_t, scope=ir.Scope.INSTANCE, type=ir.ExternType(name="table"), coord=d.coord)
                bt = BTable(var=var, cp_name=cp_name(prefix, d.name, d.annos), decl=d)
                bt.table = self.low.table(d, ctx, bt)
                ctx.scope.declare(d.name, bt, d.coord)
                locals_.extend(self.low.inline_locals)  # externs constructed in its properties
                self.low.inline_locals.clear()
                locals_.append(bt.table)
            elif isinstance(d, A.DValueSet) and kind == "parser":
                locals_.append(self._value_set(d, ctx, prefix))
            elif isinstance(d, A.DFunction):
                raise unsupported(d.coord, "a function declared inside a control or parser")
            else:
                raise P4Error(getattr(d, "coord", None), f"{type(d).__name__[1:].lower()} not allowed in a {kind}")
        # instances declared here and passed by name to a sibling are the sibling's now
        locals_ = [x for x in locals_ if id(x) not in declared or id(x) not in self._passed]
        if kind == "control":
            body = self.low.block(decl.apply, ctx)
            locals_.extend(self.low.inline_locals)  # direct applications, top-level externs
            ctl = ir.Control(name=decl.name, params=params, ctor_params=ctor_params, locals=locals_, apply=body,
                             annotations=annos_ir(decl.annos), coord=decl.coord)
            return ir.ControlInstance(name=name, uid=uid, cp_name=prefix, decl=ctl, coord=coord)
        names = [s.name for s in decl.states]
        seen: set[str] = set()
        for s in decl.states:
            if s.name in seen:
                raise P4Error(s.coord, f"{s.name}: duplicate state")
            if s.name in ("accept", "reject"):
                raise P4Error(s.coord, f"{s.name}: a parser cannot declare state {s.name}")
            seen.add(s.name)
        if "start" not in seen:
            raise P4Error(decl.coord, f"parser {decl.name}: no 'start' state")
        states = [self.low.parser_state(s, ctx, set(names)) for s in decl.states]
        locals_.extend(self.low.inline_locals)  # direct applications, top-level externs
        prs = ir.Parser(name=decl.name, params=params, ctor_params=ctor_params, locals=locals_, states=states,
                        annotations=annos_ir(decl.annos), coord=decl.coord)
        return ir.ParserInstance(name=name, uid=uid, cp_name=prefix, decl=prs, coord=coord)

    def _value_set(self, d: A.DValueSet, ctx: Ctx, prefix: str) -> ir.ValueSet:
        t = self.env.resolve(d.type, ctx.tvars)
        size = self.low.const_int(d.size, ctx, "value_set size")
        uid = ctx.block.uid(d.name)
        vs = ir.ValueSet(name=d.name, cp_name=cp_name(prefix, d.name, d.annos), uid=uid, type=t, size=size,
                         annotations=annos_ir(d.annos), coord=d.coord)
        var = ir.Var(name=d.name, uid=uid, scope=ir.Scope.INSTANCE, type=ir.ExternType(name="value_set", type_args=(t,)), coord=d.coord)
        ctx.scope.declare(d.name, BValueSet(var=var, vs=vs), d.coord)
        return vs

    # ------------------------------------------------------------------ main
    def elaborate(self) -> ir.Program:
        """The IR program: collect, then instantiate `main` (a V1Switch) (step 2)."""
        self.collect()
        main = self.g.instances.get("main")
        if main is None:
            raise P4Error(ir.Coord(file=self.prog.file, line=1, col=1), "program has no 'main' instance (V1Switch(...) main;)")
        pt = self.env.resolve(main.type)
        if not isinstance(pt, BlockTypeRef) or pt.name != "V1Switch":
            raise unsupported(main.coord, f"package {type_str(pt)} (only v1model's V1Switch)")
        pkg = self.g.block_types["V1Switch"]
        if len(main.args) != len(pkg.params):
            raise P4Error(main.coord, f"V1Switch: expected {len(pkg.params)} arguments, got {len(main.args)}")
        # `V1Switch(p = P(), ig = I(), ...)`: named arguments in any order
        # (as many arguments as parameters, each bound once: every parameter has one)
        by_param = match_args("V1Switch", pkg.params, main.args, main.coord)
        for name, inst in self.g.instances.items():
            tname = inst.type.base.name if isinstance(inst.type, A.TSpecialized) else getattr(inst.type, "name", "")
            if tname in self.g.controls or tname in self.g.parsers:
                # P4-16 §11.3 (and p4c): parsers and controls are instantiated
                # only inside other blocks or in main's arguments
                raise P4Error(inst.coord, f"{name}: cannot instantiate at top-level")
        pipeline: dict[str, Any] = {}
        gctx = Ctx(scope=Scope(), block=BlockCtx(prefix="", kind="global"))
        hm: dict[str, Any] = {}
        declared = list(self.g.instances)
        rank: dict[str, tuple[int, int]] = {}
        for i, p in enumerate(pkg.params):
            # p4c visits the top-level block first, its children in declaration
            # order: named instances come before those constructed in main's
            # arguments (these in parameter order, as p4c's OrderArguments puts them)
            a = by_param[p.name]
            v = a.value
            named = isinstance(v, A.EName) and v.name in declared
            rank[p.name] = (declared.index(v.name), i) if named else (len(declared), i)
            decl, ctor_args, annos, coord = self._main_arg(a)
            proto = self.g.block_types[p.type.base.name if isinstance(p.type, A.TSpecialized) else p.type.name]
            want = "control" if proto.kind == "control" else "parser"
            if (want == "control") != isinstance(decl, A.DControl):
                raise P4Error(coord, f"V1Switch argument '{p.name}' must be a {want}, not {decl.name}")
            self._check_signature(decl, proto, hm, coord)
            ctor_vals = self._block_ctor_args(decl, ctor_args, gctx, coord, decl.name)
            # p4c names a block by its instance, here the anonymous one in
            # main's arguments: the type's name, whatever @name the type has
            prefix = decl.name
            pipeline[p.name] = self.instantiate(decl, prefix, decl.name, p.name, ctor_vals, coord, annos)
        global_externs = []
        gblock = BlockCtx(prefix="", kind="global")
        for name, inst in self.g.instances.items():
            t = self.env.resolve(inst.type)
            if name != "main" and not isinstance(t, ir.ExternType):
                raise unsupported(inst.coord, f"a top-level {type_str(t)} instance not passed to main")
            if name != "main":
                global_externs.append(self.extern_instance(inst, Ctx(scope=Scope(), block=gblock), "", declare=False).inst)
        headers = []
        for tname, t in self.g.types.items():
            if isinstance(t, ir.HeaderType):
                anno = A.find_anno(self.g.type_annos.get(tname), "controller_header")
                if anno is not None:
                    if not anno.args or anno.args[0] not in ("packet_in", "packet_out"):
                        raise P4Error(anno.coord, '@controller_header must be "packet_in" or "packet_out"')
                    headers.append(ir.ControllerHeader(kind=anno.args[0], header=tname))
        program = ir.Program(
            arch="v1model", source=self.prog.file, types=dict(self.g.types), errors=list(self.g.errors),
            match_kinds=list(self.g.match_kinds), constants=dict(self.g.consts), functions=self.functions,
            actions=self.top_actions + [b.ir_action for b in self.low.localized.values() if b.ir_action],
            pipeline=pipeline, controller_headers=headers,
            digests=list(self.low.digests.values()), annotations=annos_ir(main.annos),
            new_types=dict(self.g.newtypes), global_externs=global_externs,
            block_order=sorted(pipeline, key=rank.__getitem__),
        )
        if self.g.newtypes:
            erase_newtypes(program)
        return program

    def _main_arg(self, a: A.Arg) -> tuple[Any, list[A.Arg], list[A.Anno], ir.Coord]:
        v = a.value
        if isinstance(v, A.ECtor) and isinstance(v.type, A.TName):
            name = v.type.name
            decl = self.g.controls.get(name) or self.g.parsers.get(name)
            if decl is None:
                raise P4Error(v.coord, f"{name}: not a parser or control")
            return decl, v.args, [], v.coord
        if isinstance(v, A.EName) and v.name in self.g.instances:
            inst = self.g.instances.pop(v.name)
            t = inst.type
            name = t.name if isinstance(t, A.TName) else ""
            decl = self.g.controls.get(name) or self.g.parsers.get(name)
            if decl is None:
                raise P4Error(inst.coord, f"{name}: not a parser or control")
            return decl, inst.args, inst.annos, inst.coord
        raise P4Error(getattr(v, "coord", a.coord), "V1Switch arguments must be parser/control instances")

    def _check_signature(self, decl: Any, proto: A.DBlockType, hm: dict[str, Any], coord: ir.Coord) -> None:
        if len(decl.params) != len(proto.params):
            raise P4Error(decl.coord, f"{decl.name}: expected {len(proto.params)} parameters like {proto.name}, has {len(decl.params)}")
        for dp, pp in zip(decl.params, proto.params, strict=True):
            if (dp.direction or "") != (pp.direction or ""):
                raise P4Error(dp.coord, f"{decl.name}: parameter '{dp.name}' must be '{pp.direction or 'directionless'}' like {proto.name}'s '{pp.name}'")
            dt = self.env.resolve(dp.type)
            if isinstance(pp.type, A.TName) and pp.type.name in proto.tparams:
                prev = hm.get(pp.type.name)
                if prev is None:
                    hm[pp.type.name] = dt
                elif prev != dt:
                    raise P4Error(dp.coord, f"{decl.name}: parameter '{dp.name}' has type {type_str(dt)}, but other blocks use {type_str(prev)}")
            else:
                pt = self.env.resolve(pp.type)
                if pt != dt:
                    raise P4Error(dp.coord, f"{decl.name}: parameter '{dp.name}' must have type {type_str(pt)}")


def _always_returns(b: ir.Block) -> bool:
    for s in b.stmts:
        if isinstance(s, (ir.Return, ir.Exit)):
            return True
        if isinstance(s, ir.If) and s.else_ is not None and _always_returns(s.then) and _always_returns(s.else_):
            return True
        if isinstance(s, ir.Block) and _always_returns(s):
            return True
    return False


__all__ = ["Elaborator", "PIPELINE", "BFunction", "BValueSet"]
