"""Call resolution: what a call calls, and its arguments bound to parameters.

Covers actions, user functions, extern functions, extern object methods
(counters, registers, packet_in/packet_out...), table `apply()`, sub-parser
and sub-control `apply(...)`, and the built-in methods of headers, unions
and stacks. Generic type parameters are inferred from argument types
(or taken from explicit type arguments). Overloads (`extract` with 1 or 2
arguments, `mark_to_drop`, `log_msg`) are chosen by argument count.

Names defined here: `CallResolver`, `match_args` (arguments by parameter name).
"""

from __future__ import annotations

from typing import Any

from p4switch import ir
from p4switch.frontend import ast as A
from p4switch.frontend.errors import P4Error, unsupported, user_extern
from p4switch.frontend.exprs import BIT32, BOOL, INT, VOID, Ctx, ExprChecker
from p4switch.frontend.keynames import source_text
from p4switch.frontend.scope import BAction, BExtern, BFunction, BSub, BTable, BValueSet, BVar
from p4switch.frontend.types import TVar, has_tvars, is_header_like, substitute, type_str

_PACKET_EXTERNS = ("packet_in", "packet_out")
_SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")


def _unify(pt: Any, at: Any, binding: dict[str, Any]) -> None:
    if isinstance(pt, TVar):
        if pt.name not in binding and not isinstance(at, ir.IntType):
            binding[pt.name] = at
        return
    if isinstance(pt, ir.TupleType) and isinstance(at, ir.TupleType) and len(pt.elems) == len(at.elems):
        for p, a in zip(pt.elems, at.elems, strict=True):
            _unify(p, a, binding)
    if isinstance(pt, ir.ExternType) and isinstance(at, ir.ExternType) and pt.name == at.name:
        for p, a in zip(pt.type_args, at.type_args, strict=False):
            _unify(p, a, binding)


def match_args(fname: str, params: list[A.ParamAst], args: list[A.Arg], coord: ir.Coord) -> dict[str, A.Arg]:
    """The arguments by the name of the parameter each is for: positional ones in order, or
    `name = value` ones in any order (P4-16 §8.21: all arguments named or none).

    Parameters left without an argument are the caller's to check (a default, `@optional`).
    """
    named = [a for a in args if a.name is not None]
    if not named:
        if len(args) > len(params):
            raise P4Error(coord, f"{fname}: expected {len(params)} arguments, got {len(args)}")
        return {p.name: a for p, a in zip(params, args, strict=False)}
    if len(named) != len(args):
        raise P4Error(coord, f"{fname}: either all arguments are named or none is")
    pnames = {p.name for p in params}
    out: dict[str, A.Arg] = {}
    for a in args:
        if a.name not in pnames:
            raise P4Error(a.coord, f"{fname}: no parameter named '{a.name}'")
        if a.name in out:
            raise P4Error(a.coord, f"{fname}: parameter '{a.name}' given twice")
        out[a.name] = a
    return out


class CallResolver:
    """Resolves `ast.ECall`s into `ir.MethodCall`s (see module docstring)."""

    def __init__(self, x: ExprChecker) -> None:
        self.x = x
        self.g = x.g
        x.calls = self

    # ------------------------------------------------------------------ entry
    def call(self, e: A.ECall, ctx: Ctx) -> ir.Expr:
        """Resolve a call of an action, function, extern function or method (P4Error if none)."""
        f = e.func
        if isinstance(f, A.EName):
            b = self.x.lookup(f.name, ctx, f.coord, f.dot)
            if isinstance(b, BAction):
                return self.action_call(b, e, ctx)
            if isinstance(b, BFunction):
                return self.function_call(b, e, ctx)
            if b is None and f.name in self.g.extern_funcs:
                return self.extern_function(f.name, e, ctx)
            if b is None:
                raise P4Error(f.coord, f"{f.name}: declaration not found")
            raise P4Error(f.coord, f"{f.name}: is not a function, action or method")
        if isinstance(f, A.EMember):
            return self.method_call(f, e, ctx)
        raise P4Error(e.coord, f"{source_text(f)}: cannot be called")

    # ------------------------------------------------------------------ binding
    def bind(
        self,
        fname: str,
        params: list[A.ParamAst],
        args: list[A.Arg],
        ctx: Ctx,
        coord: ir.Coord,
        tvars: dict[str, Any],
        binding: dict[str, Any],
        ptypes: list[Any] | None = None,
    ) -> list[ir.Argument]:
        """Bind actual arguments to `params`; fills `binding` with inferred type variables."""
        by_param = match_args(fname, params, args, coord)
        missing = [p.name for p in params if p.name not in by_param and p.default is None]
        if missing:
            raise P4Error(coord, f"{fname}: expected {len(params)} arguments, got {len(args)} (missing '{missing[0]}')")
        if ptypes is None:
            ptypes = [self.x.env.resolve(p.type, tvars) for p in params]
        # first pass: evaluate arguments and infer type variables
        values: list[ir.Expr | None] = []
        for p, pt in zip(params, ptypes, strict=True):
            a = by_param.get(p.name)
            if a is None:
                values.append(None)
                continue
            expected = substitute(pt, binding)
            v = self.x.expr(a.value, ctx, None if has_tvars(expected) else expected)
            _unify(pt, v.type, binding)
            values.append(v)
        out: list[ir.Argument] = []
        for p, pt, val in zip(params, ptypes, values, strict=True):
            a = by_param.get(p.name)
            if val is None:
                val = self.x.expr(p.default, ctx, substitute(pt, binding))
            t = substitute(pt, binding)
            if has_tvars(t):
                raise P4Error(
                    a.coord if a else coord,
                    f"{fname}: cannot infer the type of '{p.name}' from {type_str(val.type)} (use a typed value, e.g. 32w0)",
                )
            d = p.direction
            acoord = a.coord if a else coord
            if d in ("out", "inout"):
                if isinstance(val, ir.DontCare):
                    if d == "inout":
                        raise P4Error(acoord, f"{fname}: '_' cannot be passed to inout parameter '{p.name}'")
                    val = ir.DontCare(type=t, coord=acoord)
                else:
                    self.x.check_lvalue(val, ctx, acoord, f"{fname}: argument '{p.name}'")
                    if val.type != t:
                        raise P4Error(acoord, f"{fname}: argument '{p.name}' has type {type_str(val.type)}, expected {type_str(t)}")
            else:
                if isinstance(val, ir.DontCare):
                    raise P4Error(acoord, f"{fname}: '_' can only be passed to out parameters")
                val = self.x.convert(val, t, acoord, f"{fname}: argument '{p.name}'")
            out.append(ir.Argument(name=p.name, direction=d, value=val))
        return out

    @staticmethod
    def _pick(fname: str, protos: list[A.MethodProto], nargs: int, coord: ir.Coord) -> A.MethodProto:
        for p in protos:
            required = sum(1 for q in p.params if q.default is None)
            if required <= nargs <= len(p.params):
                return p
        counts = " or ".join(str(len(p.params)) for p in protos)
        raise P4Error(coord, f"{fname}: expected {counts} arguments, got {nargs}")

    def _explicit(self, e: A.ECall, proto: A.MethodProto, ctx: Ctx, binding: dict[str, Any]) -> None:
        if not e.type_args:
            return
        if len(e.type_args) != len(proto.tparams):
            raise P4Error(e.coord, f"{proto.name}: expected {len(proto.tparams)} type arguments, got {len(e.type_args)}")
        for name, ta in zip(proto.tparams, e.type_args, strict=True):
            t = self.x.env.resolve(ta, ctx.tvars)
            if not isinstance(t, TVar):
                binding[name] = t

    # ------------------------------------------------------------------ kinds
    def action_call(self, b: BAction, e: A.ECall, ctx: Ctx) -> ir.MethodCall:
        """A direct call of action `b` (not from a parser); its arguments bound."""
        if ctx.in_parser:
            raise P4Error(e.coord, f"{b.decl.name}: actions cannot be called from a parser")
        args = self.bind(b.decl.name, b.decl.params, e.args, ctx, e.coord, {}, {},
                         [p.type for p in b.params])
        self.x.used_actions.add(b.cp_name)
        return ir.MethodCall(kind=ir.CallKind.ACTION, method=b.decl.name, target=None, args=args,
                             type=VOID, callee=b.cp_name, coord=e.coord)

    def function_call(self, b: BFunction, e: A.ECall, ctx: Ctx) -> ir.MethodCall:
        """A call of function `b`, type arguments inferred; generic ones specialized."""
        proto = b.decl.proto
        binding: dict[str, Any] = {}
        tv = {n: TVar(name=n) for n in proto.tparams}
        self._explicit(e, proto, ctx, binding)
        args = self.bind(proto.name, proto.params, e.args, ctx, e.coord, tv, binding)
        ret = substitute(self.x.env.resolve(proto.ret, tv), binding)
        callee = b.uid
        if proto.tparams:
            missing = [n for n in proto.tparams if n not in binding]
            if missing:
                raise P4Error(e.coord, f"{proto.name}: cannot infer type argument {missing[0]}; give it explicitly")
            callee = self.x.specialize(b.decl, binding)
        return ir.MethodCall(kind=ir.CallKind.FUNCTION, method=proto.name, target=None, args=args,
                             type=ret, callee=callee, coord=e.coord,
                             type_args=[binding[n] for n in proto.tparams if n in binding])

    def extern_function(self, name: str, e: A.ECall, ctx: Ctx) -> ir.MethodCall | ir.BoolLit:
        """A call of extern function `name`; digest takes a struct, a list or a bit<W>, verify only runs in a parser;
        static_assert is evaluated here (its `true`)."""
        if name in self.g.user_externs:
            raise user_extern(e.coord, name)
        proto = self._pick(name, self.g.extern_funcs[name], len(e.args), e.coord)
        binding: dict[str, Any] = {}
        tv = {n: TVar(name=n) for n in proto.tparams}
        self._explicit(e, proto, ctx, binding)
        args = self.bind(name, proto.params, e.args, ctx, e.coord, tv, binding)
        if name == "static_assert":
            return self._static_assert(args, e)
        ret = substitute(self.x.env.resolve(proto.ret, tv), binding)
        targs = [binding.get(n, TVar(name=n)) for n in proto.tparams]
        if name == "digest":
            data_t = targs[0]
            nt = self.x.named(data_t)
            # a list expression's type is a tuple, which has no name, nor has bit<W>: P4Info
            # calls such a digest digest_N, as p4c does (p4info.unnamed_digests)
            if not isinstance(nt, (ir.StructType, ir.TupleType, ir.BitsType)):
                raise P4Error(e.coord, f"digest: data must be a struct, a list or a bit<W>, not {type_str(data_t)}")
            ta = e.type_args[0] if e.type_args else None
            if isinstance(ta, A.TName) and ta.name in self.x.env.g.typedefs:
                raise P4Error(ta.coord, f"digest<{ta.name}>: a typedef as the type argument, after which p4c "
                                        "names the digest; p4switch does not: give the struct itself, or no "
                                        "type argument")
            if isinstance(nt, ir.StructType):
                self.x.digests.setdefault(nt.name, ir.Digest(name=nt.name, type=data_t))
        if name in ("verify",) and not ctx.in_parser:
            raise P4Error(e.coord, "verify: may only be called in a parser")
        return ir.MethodCall(kind=ir.CallKind.EXTERN_FUNCTION, method=name, target=None, args=args,
                             type=ret, coord=e.coord, type_args=targs)

    @staticmethod
    def _static_assert(args: list[ir.Argument], e: A.ECall) -> ir.BoolLit:
        """core.p4's `static_assert(check[, message])`, evaluated here as p4c does: an error at
        the call when `check` is false, else `true` (it may initialise a constant)."""
        check = args[0].value
        if not isinstance(check, ir.BoolLit):
            raise P4Error(e.args[0].coord, "static_assert: the condition must be a compile-time constant")
        if not check.value:
            message = args[1].value if len(args) > 1 else None
            text = message.value if isinstance(message, ir.StringLit) else ""
            raise P4Error(e.coord, f"static_assert: {text or 'assertion failed'}")
        return ir.BoolLit(value=True, coord=e.coord)

    def method_call(self, f: A.EMember, e: A.ECall, ctx: Ctx) -> ir.Expr:
        """A call `target.method(...)`: table or instance apply, extern method or built-in."""
        tgt_ast = f.expr
        b = None
        if isinstance(tgt_ast, A.EName):
            b = self.x.lookup(tgt_ast.name, ctx, tgt_ast.coord, tgt_ast.dot)
        if isinstance(b, BTable):
            return self.table_apply(b, f, e, ctx)
        if isinstance(b, BSub):
            return self.sub_apply(b, f, e, ctx)
        if isinstance(b, BValueSet):
            raise P4Error(f.coord, f"{tgt_ast.name}: a value_set has no methods")
        if isinstance(b, BAction):
            raise P4Error(f.coord, f"{tgt_ast.name}: an action has no methods")
        target = self.x.expr(tgt_ast, ctx)
        tt = self.x.named(target.type)
        if isinstance(tt, ir.ExternType):
            return self.extern_method(target, tt, f, e, ctx)
        if isinstance(tt, (ir.HeaderType, ir.HeaderUnionType, ir.StackType, ir.StructType)):
            return self.builtin(target, tt, f, e, ctx)
        raise P4Error(f.coord, f"{f.name}: no method of a value of type {type_str(target.type)}")

    def table_apply(self, b: BTable, f: A.EMember, e: A.ECall, ctx: Ctx) -> ir.MethodCall:
        """`t.apply()` of table `b`, typed as its apply result (hit, miss, action_run)."""
        if f.name != "apply":
            raise P4Error(f.coord, f"{f.name}: a table has only the apply() method")
        if e.args:
            raise P4Error(e.coord, "apply: a table's apply() takes no arguments")
        if ctx.in_action:
            raise P4Error(e.coord, "tables cannot be applied from an action")
        actions = tuple(r.action for r in (b.table.actions if b.table else []))
        res = ir.StructType(
            name=f"{b.cp_name}.apply_result",
            fields=(
                ir.Field(name="hit", type=BOOL),
                ir.Field(name="miss", type=BOOL),
                ir.Field(name="action_run", type=ir.EnumType(name=f"{b.cp_name}.action_list", members=actions)),
            ),
        )
        v = b.var
        return ir.MethodCall(kind=ir.CallKind.TABLE_APPLY, method="apply",
                             target=ir.Var(name=v.name, uid=v.uid, scope=v.scope, type=v.type, coord=f.coord),
                             args=[], type=res, callee=b.cp_name, coord=e.coord)

    def sub_apply(self, b: BSub, f: A.EMember, e: A.ECall, ctx: Ctx) -> ir.MethodCall:
        """`p.apply(...)` of a parser or control instance declared inside this block."""
        if f.name != "apply":
            raise P4Error(f.coord, f"{f.name}: a {b.kind} instance has only the apply() method")
        decl = b.inst.decl
        if b.kind == "control" and ctx.in_parser:
            raise P4Error(e.coord, "a control cannot be applied from a parser")
        if b.kind == "parser" and not ctx.in_parser:
            raise P4Error(e.coord, "a parser can only be applied from a parser")
        if ctx.in_action:
            raise P4Error(e.coord, "a control cannot be applied from an action")
        if b.passed_to:
            raise unsupported(e.coord, f"{b.var.name}: applying a {b.kind} instance that is also passed to "
                                       f"{b.passed_to} (one instance used from two blocks)")
        # defaults live in the declaration's parameters (`in bit<8> y = 5`), not in the IR's
        src = self.g.controls.get(decl.name) or self.g.parsers.get(decl.name)
        defaults = {p.name: p.default for p in src.params} if src is not None else {}
        params = [A.ParamAst(direction=p.direction, type=None, name=p.name, default=defaults.get(p.name))
                  for p in decl.params]
        args = self.bind(b.var.name, params, e.args, ctx, e.coord, {}, {}, [p.type for p in decl.params])
        kind = ir.CallKind.CONTROL_APPLY if b.kind == "control" else ir.CallKind.PARSER_APPLY
        v = b.var
        return ir.MethodCall(kind=kind, method="apply",
                             target=ir.Var(name=v.name, uid=v.uid, scope=v.scope, type=v.type, coord=f.coord),
                             args=args, type=VOID, callee=b.inst.cp_name, coord=e.coord)

    def extern_method(self, target: ir.Expr, tt: ir.ExternType, f: A.EMember, e: A.ECall, ctx: Ctx) -> ir.MethodCall:
        """A call of a method of an extern object (packet_in/packet_out ones checked too)."""
        info = self.g.externs.get(tt.name)
        if info is None or f.name not in info.methods:
            raise P4Error(f.coord, f"{f.name}: not a method of {tt.name}")
        proto = self._pick(f"{tt.name}.{f.name}", info.methods[f.name], len(e.args), e.coord)
        class_tv = dict(zip(info.decl.tparams, tt.type_args, strict=False))
        tv: dict[str, Any] = dict(class_tv)  # IR types and the method's own type variables
        tv.update({n: TVar(name=n) for n in proto.tparams})
        binding: dict[str, Any] = {}
        self._explicit(e, proto, ctx, binding)
        args = self.bind(f.name, proto.params, e.args, ctx, e.coord, tv, binding)
        ret = substitute(self.x.env.resolve(proto.ret, tv), binding)
        targs = [binding.get(n, TVar(name=n)) for n in proto.tparams]
        if any(isinstance(t, TVar) for t in targs):
            raise P4Error(e.coord, f"{f.name}: cannot infer type arguments; give them explicitly ({f.name}<T>(...))")
        kind = ir.CallKind.PACKET if tt.name in _PACKET_EXTERNS else ir.CallKind.EXTERN_METHOD
        if kind == ir.CallKind.PACKET:
            self._check_packet(f.name, targs, args, e, ctx)
        return ir.MethodCall(kind=kind, method=f.name, target=target, args=args, type=ret,
                             coord=e.coord, type_args=targs)

    def _check_packet(self, name: str, targs: list[Any], args: list[ir.Argument], e: A.ECall, ctx: Ctx) -> None:
        if name in ("extract", "lookahead", "advance", "length") and not ctx.in_parser:
            raise P4Error(e.coord, f"packet_in.{name}: may only be called in a parser")
        if name == "extract":
            t = self.x.named(targs[0])
            if not isinstance(t, ir.HeaderType):
                raise P4Error(e.coord, f"extract: argument must be a header, not {type_str(targs[0])}")
            has_varbit = any(isinstance(fl.type, ir.VarbitType) for fl in t.fields)
            if has_varbit and len(args) == 1:
                raise P4Error(e.coord, f"extract: header {t.name} has a varbit field: pass its size in bits as a second argument")
            if not has_varbit and len(args) == 2:
                raise P4Error(e.coord, f"extract: header {t.name} has no varbit field")
        if name == "lookahead":
            t = self.x.named(targs[0])
            if not isinstance(t, (ir.BitsType, ir.HeaderType, ir.StructType, ir.BoolType)):
                raise P4Error(e.coord, f"lookahead: cannot look ahead a {type_str(targs[0])}")
        if name == "emit":
            t = self.x.named(targs[0])
            if not isinstance(t, (ir.HeaderType, ir.HeaderUnionType, ir.StackType, ir.StructType)):
                raise P4Error(e.coord, f"emit: argument must be a header, union, stack or struct, not {type_str(targs[0])}")

    def builtin(self, target: ir.Expr, tt: Any, f: A.EMember, e: A.ECall, ctx: Ctx) -> ir.Expr:
        """A built-in method of a header, union, stack or struct (isValid, push_front ...)."""
        name = f.name
        if name in _SIZE_METHODS:
            if e.args:
                raise P4Error(e.coord, f"{name}: takes no arguments")
            bits = self.x.header_width(target.type)
            if isinstance(tt, ir.HeaderType) and name.startswith("max"):
                bits += sum(fl.type.max_width for fl in tt.fields if isinstance(fl.type, ir.VarbitType))
            value = bits if name.endswith("Bits") else (bits + 7) // 8
            return ir.Constant(value=value, type=INT, coord=e.coord)
        if isinstance(tt, (ir.HeaderType, ir.HeaderUnionType)) and name == "isValid":
            self._noargs(e, name)
            return ir.MethodCall(kind=ir.CallKind.BUILTIN, method=name, target=target, args=[], type=BOOL, coord=e.coord)
        if isinstance(tt, ir.HeaderType) and name in ("setValid", "setInvalid"):
            self._noargs(e, name)
            self.x.check_lvalue(target, ctx, e.coord, name)
            return ir.MethodCall(kind=ir.CallKind.BUILTIN, method=name, target=target, args=[], type=VOID, coord=e.coord)
        if isinstance(tt, ir.StackType) and name in ("push_front", "pop_front"):
            if len(e.args) != 1:
                raise P4Error(e.coord, f"{name}: expected 1 argument, got {len(e.args)}")
            count = self.x.expr(e.args[0].value, ctx)
            if not isinstance(count, ir.Constant) or count.value < 0:
                raise P4Error(e.args[0].coord, f"{name}: count must be a non-negative constant")
            self.x.check_lvalue(target, ctx, e.coord, name)
            arg = ir.Argument(name="count", direction="in", value=ir.Constant(value=count.value, type=INT, coord=count.coord))
            return ir.MethodCall(kind=ir.CallKind.BUILTIN, method=name, target=target, args=[arg], type=VOID, coord=e.coord)
        raise P4Error(f.coord, f"{name}: not a method of {type_str(target.type)}")

    @staticmethod
    def _noargs(e: A.ECall, name: str) -> None:
        if e.args:
            raise P4Error(e.coord, f"{name}: takes no arguments")


__all__ = ["CallResolver", "match_args", "BVar", "BExtern", "is_header_like", "BIT32"]
