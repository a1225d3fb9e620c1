"""Expression checking: resolve names, infer and check types, fold constants.

`ExprChecker.expr` turns an AST expression into a typed IR expression: every
result carries its type, integer literals get the width the context demands
(P4-16 spec section 8.9, implicit casts), implicit conversions become
explicit `ir.Cast`s, and constant sub-expressions are folded. Calls are
resolved to what they call (`ir.CallKind`) with arguments bound to parameter
names and directions.

Names defined here: `ExprChecker`, `Ctx`, and the shared types `BOOL`, `INT`, `VOID`, `BIT32`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from p4switch import ir
from p4switch.frontend import ast as A
from p4switch.frontend import fold as F
from p4switch.frontend.errors import P4Error, unsupported
from p4switch.frontend.keynames import source_text
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
)
from p4switch.frontend.types import (
    NT,
    BlockTypeRef,
    Globals,
    TVar,
    TypeEnv,
    has_tvars,
    is_header_like,
    substitute,
    type_str,
    width_of,
)

if TYPE_CHECKING:
    from p4switch.frontend.calls import CallResolver

_ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}
_CMP = {"==", "!=", "<", "<=", ">", ">="}
BOOL = ir.BoolType()
INT = ir.IntType()
VOID = ir.VoidType()
BIT32 = ir.BitsType(width=32)


@dataclass(kw_only=True)
class Ctx:
    """Where an expression is checked: its scope and enclosing block."""

    scope: Scope
    block: BlockCtx
    in_action: bool = False
    in_parser: bool = False
    return_type: Any = None
    tvars: dict[str, Any] = field(default_factory=dict)


def _newtype_hint(src: Any, dst: Any) -> str:
    """Why a cast or conversion involving a `type` fails (p4c keeps `type`s apart)."""
    nt = dst if isinstance(dst, NT) else src if isinstance(src, NT) else None
    if nt is None:
        return ""
    return f" (type {nt.name} converts only to and from {type_str(nt.base)}, with an explicit cast)"


def _coord(e: Any) -> ir.Coord:
    return getattr(e, "coord", None) or ir.NO_COORD


class ExprChecker:
    """Typed lowering of expressions (see module docstring)."""

    # Set after construction: by CallResolver (calls) and by the elaborator,
    # which owns what needs the whole program (the others).
    calls: CallResolver
    make_extern: Callable[[A.DInstance, Ctx], BExtern]
    global_instance: Callable[[str, Ctx, ir.Coord], Any]
    specialize: Callable[[A.DFunction, dict[str, Any]], str]
    direct_instance: Callable[[A.SDirectApply, Ctx], BSub]

    def __init__(self, g: Globals, env: TypeEnv) -> None:
        self.g = g
        self.env = env
        self.digests: dict[str, ir.Digest] = {}
        self.used_actions: set[str] = set()  # cp_names of actions referenced anywhere
        self.global_actions: dict[str, BAction] = {}
        # The top-level control or parser being lowered ("" outside one), and the copies of
        # top-level actions with a relative @name made for it (`localize`).
        self.root_prefix = ""
        self.localized: dict[tuple[str, str], BAction] = {}

    # ------------------------------------------------------------------ helpers
    def named(self, t: Any) -> Any:
        """The declaration behind a TypeName (HeaderType/StructType/...), else t."""
        return self.env.named(t)

    def const_int(self, e: Any, ctx: Ctx | None, what: str = "value") -> int:
        """A compile-time integer (widths, sizes, slice bounds)."""
        x = self.expr(e, ctx) if ctx is not None else self.global_expr(e)
        if isinstance(x, ir.Constant):
            return x.value
        raise P4Error(_coord(e), f"{what} must be a compile-time constant")

    def global_expr(self, e: Any, expected: Any = None) -> ir.Expr:
        """Check expression `e` in an empty top-level scope."""
        ctx = Ctx(scope=Scope(), block=BlockCtx(prefix="", kind="global"))
        return self.expr(e, ctx, expected)

    # ------------------------------------------------------------------ conversions
    def convert(self, x: ir.Expr, t: Any, coord: ir.Coord, what: str = "") -> ir.Expr:
        """Implicit conversion of `x` to type `t` (spec 8.9.2), or an error."""
        src = x.type
        if src == t or isinstance(t, TVar):
            return x
        nt = self.named(t)
        if isinstance(x, ir.Constant) and isinstance(src, ir.IntType):
            if isinstance(nt, ir.BitsType):
                return F.const(x.value, nt, x.coord)
            if isinstance(nt, ir.EnumType) and nt.underlying is not None:
                pass
        if isinstance(src, ir.IntType) and isinstance(nt, ir.BitsType):
            return ir.Cast(expr=x, type=t, coord=x.coord)
        ns = self.named(src)
        # serializable enum -> its underlying type
        if isinstance(ns, ir.EnumType) and ns.underlying is not None and nt == ns.underlying:
            return self.enum_to_bits(x, ns, t)
        if isinstance(x, ir.ListExpr) and isinstance(nt, (ir.StructType, ir.HeaderType)):
            if len(x.items) != len(nt.fields):
                raise P4Error(coord, f"{what or 'expression'}: {len(x.items)} values for {len(nt.fields)} fields of {nt.name}")
            fields = [(f.name, self.convert(v, f.type, coord)) for f, v in zip(nt.fields, x.items, strict=True)]
            return ir.StructExpr(fields=fields, type=t, coord=x.coord)
        if isinstance(x, ir.ListExpr) and isinstance(nt, ir.TupleType) and len(x.items) == len(nt.elems):
            items = [self.convert(v, et, coord) for v, et in zip(x.items, nt.elems, strict=True)]
            return ir.ListExpr(items=items, type=t, coord=x.coord)
        if isinstance(x, ir.StructExpr) and isinstance(nt, (ir.StructType, ir.HeaderType)):
            got = dict(x.fields)
            names = [f.name for f in nt.fields]
            if set(got) != set(names):
                raise P4Error(coord, f"{what or 'expression'}: fields {sorted(got)} do not match {nt.name}")
            fields = [(f.name, self.convert(got[f.name], f.type, coord)) for f in nt.fields]
            return ir.StructExpr(fields=fields, type=t, coord=x.coord)
        if isinstance(x, ir.DontCare):
            return x
        if isinstance(t, NT) and isinstance(x, ir.Constant) and isinstance(src, ir.IntType):
            # p4c converts an integer literal to a `type` over bit<W> implicitly,
            # as the cast would (its other conversions to and from a `type` need one)
            return self.newtype_cast(x, t, coord)
        label = f"{what}: " if what else ""
        hint = _newtype_hint(src, t)
        if hint:
            hint = f" without a cast{hint}"
        raise P4Error(coord, f"{label}cannot convert {type_str(src)} to {type_str(t)}{hint}")

    @staticmethod
    def enum_to_bits(x: ir.Expr, et: ir.EnumType, t: Any) -> ir.Expr:
        """A serializable enum value as its underlying type (folded for members)."""
        if isinstance(x, ir.EnumMember):
            return ir.Constant(value=et.values[et.members.index(x.member)], type=t, coord=x.coord)
        return ir.Cast(expr=x, type=t, coord=x.coord)

    # ------------------------------------------------------------------ expressions
    def expr(self, e: Any, ctx: Ctx, expected: Any = None) -> ir.Expr:
        """Check and lower expression `e` (`expected`: the type the context wants, or None)."""
        m = getattr(self, "_e_" + type(e).__name__, None)
        if m is None:
            raise unsupported(_coord(e), f"expression {type(e).__name__}")
        x = m(e, ctx, expected)
        return x

    def _e_EInt(self, e: A.EInt, ctx: Ctx, expected: Any) -> ir.Expr:
        if e.width is not None:
            t = ir.BitsType(width=e.width, signed=e.signed)
            if e.width <= 0:
                raise P4Error(e.coord, f"{e.text}: invalid width")
            return F.const(e.value, t, e.coord)
        return ir.Constant(value=e.value, type=INT, coord=e.coord)

    def _e_EBool(self, e: A.EBool, ctx: Ctx, expected: Any) -> ir.Expr:
        return ir.BoolLit(value=e.value, coord=e.coord)

    def _e_EStr(self, e: A.EStr, ctx: Ctx, expected: Any) -> ir.Expr:
        return ir.StringLit(value=e.value, coord=e.coord)

    def _e_EDontCare(self, e: A.EDontCare, ctx: Ctx, expected: Any) -> ir.Expr:
        return ir.DontCare(coord=e.coord)

    def _e_EErrorMember(self, e: A.EErrorMember, ctx: Ctx, expected: Any) -> ir.Expr:
        if e.name not in self.g.errors:
            raise P4Error(e.coord, f"error.{e.name}: no such error")
        return ir.ErrorMember(name=e.name, coord=e.coord)

    def lookup(self, name: str, ctx: Ctx, coord: ir.Coord, dot: bool = False) -> Any:
        """What `name` means: local scopes (not for `.name`), then globals; None if nothing."""
        b = None if dot else ctx.scope.lookup(name)
        if b is not None:
            return b
        if name in self.g.consts:
            return BConst(value=self.g.consts[name])
        if name in self.global_actions:
            return self.localize(self.global_actions[name])
        if name in self.g.functions:
            return BFunction(decl=self.g.functions[name], uid=name)
        if name in self.g.instances and name != "main":
            return self.global_instance(name, ctx, coord)
        return None

    def localize(self, b: BAction) -> BAction:
        """The top-level action `b` as the control being lowered sees it. Like p4c
        (LocalizeAllActions), each top-level control using a top-level action has a copy of
        its own; a relative @name("x") on the action then names that copy within the
        control, `<control>.x`, one entity per control. Without @name, or with an absolute
        @name(".x"), every copy keeps the top-level name: `b` itself."""
        anno = A.find_anno(b.decl.annos, "name")
        relative = (anno is not None and bool(anno.args) and isinstance(anno.args[0], str)
                    and not anno.args[0].startswith("."))
        if not relative or not self.root_prefix or b.ir_action is None:
            return b
        key = (b.cp_name, self.root_prefix)
        if key not in self.localized:
            name = f"{self.root_prefix}.{b.cp_name}"
            self.localized[key] = BAction(decl=b.decl, cp_name=name, params=b.params,
                                          ir_action=dataclasses.replace(b.ir_action, cp_name=name))
        return self.localized[key]

    def _e_EName(self, e: A.EName, ctx: Ctx, expected: Any) -> ir.Expr:
        b = self.lookup(e.name, ctx, e.coord, e.dot)
        if b is None:
            if e.name in self.g.extern_funcs or e.name in self.g.actions:
                raise P4Error(e.coord, f"{e.name}: a function or action must be called")
            raise P4Error(e.coord, f"{e.name}: declaration not found")
        if isinstance(b, BVar):
            v = b.var
            return ir.Var(name=v.name, uid=v.uid, scope=v.scope, type=v.type, coord=e.coord)
        if isinstance(b, BConst):
            x = b.value
            if isinstance(x, ir.Constant):
                return ir.Constant(value=x.value, type=x.type, coord=e.coord)
            if isinstance(x, ir.BoolLit):
                return ir.BoolLit(value=x.value, coord=e.coord)
            return x
        if isinstance(b, (BTable, BExtern, BSub, BValueSet)):
            v = b.var
            return ir.Var(name=v.name, uid=v.uid, scope=v.scope, type=v.type, coord=e.coord)
        if isinstance(b, BAction):
            raise P4Error(e.coord, f"{e.name}: an action must be called")
        raise P4Error(e.coord, f"{e.name}: cannot be used as a value")

    def _e_ETypeMember(self, e: A.ETypeMember, ctx: Ctx, expected: Any) -> ir.Expr:
        t = self.env.resolve(e.type, ctx.tvars)
        nt = self.named(t)
        if isinstance(nt, ir.EnumType):
            if e.name not in nt.members:
                raise P4Error(e.coord, f"{e.name}: not a member of enum {nt.name}")
            return ir.EnumMember(enum=nt.name, member=e.name, type=t, coord=e.coord)
        raise P4Error(e.coord, f"{type_str(t)}.{e.name}: not a value")

    def _e_EMember(self, e: A.EMember, ctx: Ctx, expected: Any) -> ir.Expr:
        # A dotted name may be an enum member whose enum is spelled as a plain
        # identifier in a scope where it is shadowed: not the case in P4; types
        # are TYPE_IDENT tokens, handled by ETypeMember.
        base = self.expr(e.expr, ctx)
        bt = self.named(base.type)
        if isinstance(bt, (ir.HeaderType, ir.StructType, ir.HeaderUnionType)):
            for f in bt.fields:
                if f.name == e.name:
                    return ir.Member(expr=base, name=e.name, type=f.type, coord=e.coord)
            raise P4Error(e.coord, f"{e.name}: field not found in {bt.name}")
        if isinstance(bt, ir.StackType):
            if e.name in ("next", "last"):
                if e.name == "next" and not ctx.in_parser:
                    raise P4Error(e.coord, "stack.next may only be used in a parser")
                return ir.Member(expr=base, name=e.name, type=bt.elem, coord=e.coord)
            if e.name == "lastIndex":
                if not ctx.in_parser:  # P4-16 §8.18, as p4c checks it
                    raise P4Error(e.coord, "'lastIndex' for stacks can only be used in a parser")
                return ir.Member(expr=base, name=e.name, type=BIT32, coord=e.coord)
            if e.name == "size":
                return ir.Constant(value=bt.size, type=BIT32, coord=e.coord)
            raise P4Error(e.coord, f"{e.name}: not a property of a header stack")
        if isinstance(bt, ir.StructType) is False and isinstance(base, ir.MethodCall) and base.kind == ir.CallKind.TABLE_APPLY:
            res = self.named(base.type)
            for f in res.fields:
                if f.name == e.name:
                    return ir.Member(expr=base, name=e.name, type=f.type, coord=e.coord)
        raise P4Error(e.coord, f"{e.name}: no member of a value of type {type_str(base.type)}")

    def _e_EIndex(self, e: A.EIndex, ctx: Ctx, expected: Any) -> ir.Expr:
        base = self.expr(e.expr, ctx)
        bt = self.named(base.type)
        idx = self.expr(e.index, ctx)
        if isinstance(bt, ir.StackType):
            it = self.named(idx.type)
            if isinstance(it, ir.EnumType) and it.underlying is not None:
                idx = self.cast(idx, it.underlying, e.index.coord)  # a serializable enum: its value (p4c)
            if isinstance(idx, ir.Constant) and not 0 <= idx.value < bt.size:
                raise P4Error(e.coord, f"index {idx.value} out of bounds for {type_str(bt)}")
            if not isinstance(self.named(idx.type), (ir.IntType, ir.BitsType)):
                raise P4Error(e.index.coord, "stack index must be an integer")
            return ir.Index(expr=base, index=idx, type=bt.elem, coord=e.coord)
        if isinstance(bt, ir.BitsType) and isinstance(idx, ir.Constant):
            return self._slice(base, idx.value, idx.value, e.coord)
        raise P4Error(e.coord, f"cannot index a value of type {type_str(base.type)}")

    def _e_ESlice(self, e: A.ESlice, ctx: Ctx, expected: Any) -> ir.Expr:
        base = self.expr(e.expr, ctx)
        hi = self.const_int(e.hi, ctx, "slice bound")
        lo = self.const_int(e.lo, ctx, "slice bound")
        return self._slice(base, hi, lo, e.coord)

    def _slice(self, base: ir.Expr, hi: int, lo: int, coord: ir.Coord) -> ir.Expr:
        bt = self.named(base.type)
        if isinstance(bt, ir.IntType) and isinstance(base, ir.Constant):
            w = hi - lo + 1
            return F.const(base.value >> lo, ir.BitsType(width=w), coord)
        if not isinstance(bt, ir.BitsType):
            raise P4Error(coord, f"cannot slice a value of type {type_str(base.type)}")
        if not (0 <= lo <= hi < bt.width):
            raise P4Error(coord, f"slice [{hi}:{lo}] out of range for {type_str(bt)}")
        t = ir.BitsType(width=hi - lo + 1)
        if isinstance(base, ir.Constant):
            return F.const((base.value % (1 << bt.width)) >> lo, t, coord)
        return ir.Slice(expr=base, hi=hi, lo=lo, type=t, coord=coord)

    def _e_EUn(self, e: A.EUn, ctx: Ctx, expected: Any) -> ir.Expr:
        x = self.expr(e.expr, ctx, expected)
        t = self.named(x.type)
        if e.op == "!":
            if not isinstance(t, ir.BoolType):
                raise P4Error(e.coord, f"'!' expects bool, not {type_str(x.type)}")
        elif e.op == "~":
            if not isinstance(t, ir.BitsType):
                raise P4Error(e.coord, f"'~' expects bit<W> or int<W>, not {type_str(x.type)}")
        elif not isinstance(t, (ir.BitsType, ir.IntType)):
            raise P4Error(e.coord, f"'{e.op}' expects a number, not {type_str(x.type)}")
        folded = F.fold_unop(e.op, x, x.type, e.coord)
        if folded is not None:
            return folded
        if e.op == "+":
            return x
        return ir.UnOp(op=e.op, expr=x, type=x.type, coord=e.coord)

    def _numeric_pair(self, op: str, a: ir.Expr, b: ir.Expr, coord: ir.Coord) -> tuple[ir.Expr, ir.Expr]:
        """Give both operands one type: an `int` constant takes the other side's type."""
        ta, tb = self.named(a.type), self.named(b.type)
        # serializable enums compare as their underlying type
        if isinstance(ta, ir.EnumType) and ta.underlying is not None and not isinstance(tb, ir.EnumType):
            a, ta = self.enum_to_bits(a, ta, ta.underlying), ta.underlying
        if isinstance(tb, ir.EnumType) and tb.underlying is not None and not isinstance(ta, ir.EnumType):
            b, tb = self.enum_to_bits(b, tb, tb.underlying), tb.underlying
        if isinstance(ta, ir.IntType) and isinstance(tb, ir.BitsType):
            a = self.convert(a, b.type, coord)
        elif isinstance(tb, ir.IntType) and isinstance(ta, ir.BitsType):
            b = self.convert(b, a.type, coord)
        elif isinstance(ta, ir.BitsType) and isinstance(tb, ir.BitsType) and ta != tb:
            raise P4Error(coord, f"{op}: cannot operate on values of different types {type_str(ta)} and {type_str(tb)}")
        return a, b

    def _e_EBin(self, e: A.EBin, ctx: Ctx, expected: Any) -> ir.Expr:
        op = e.op
        a = self.expr(e.left, ctx)
        b = self.expr(e.right, ctx)
        ta, tb = self.named(a.type), self.named(b.type)
        if op in ("&&", "||"):
            for x in (a, b):
                if not isinstance(self.named(x.type), ir.BoolType):
                    raise P4Error(x.coord, f"'{op}' expects bool operands, not {type_str(x.type)}")
            folded = F.fold_binop(op, a, b, BOOL, e.coord)
            # short-circuit folding with one constant side
            if folded is None and isinstance(a, ir.BoolLit):
                if op == "&&":
                    return b if a.value else a
                return a if a.value else b
            return folded or ir.BinOp(op=op, left=a, right=b, type=BOOL, coord=e.coord)
        if op in ("<<", ">>"):
            if not isinstance(ta, (ir.BitsType, ir.IntType)):
                raise P4Error(e.coord, f"'{op}': left operand of type {type_str(a.type)} is not a number")
            if isinstance(tb, ir.BitsType) and tb.signed:
                raise P4Error(e.coord, f"'{op}': shift amount must be unsigned")
            if not isinstance(tb, (ir.BitsType, ir.IntType)):
                raise P4Error(e.coord, f"'{op}': shift amount of type {type_str(b.type)} is not a number")
            if isinstance(b, ir.Constant) and b.value < 0:
                raise P4Error(e.coord, f"'{op}': negative shift amount")
            if isinstance(ta, ir.IntType) and not isinstance(b, ir.Constant):
                raise P4Error(e.coord, f"'{op}': the width of the left operand must be known (use a typed literal such as 32w1)")
            folded = F.fold_binop(op, a, b, a.type, e.coord)
            return folded or ir.BinOp(op=op, left=a, right=b, type=a.type, coord=e.coord)
        if op == "++":
            for x in (a, b):
                if not isinstance(self.named(x.type), ir.BitsType):
                    raise P4Error(x.coord, f"'++' expects bit<W>/int<W> operands, not {type_str(x.type)} (use a typed literal)")
            t: ir.Type = ir.BitsType(width=ta.width + tb.width, signed=ta.signed)
            folded = F.fold_binop(op, a, b, t, e.coord)
            return folded or ir.BinOp(op=op, left=a, right=b, type=t, coord=e.coord)
        if op in _CMP:
            if op in ("==", "!="):
                if isinstance(ta, (ir.BitsType, ir.IntType, ir.EnumType)) and isinstance(tb, (ir.BitsType, ir.IntType, ir.EnumType)):
                    a, b = self._numeric_pair(op, a, b, e.coord)
                if a.type != b.type and not isinstance(a, ir.ListExpr) and not isinstance(b, ir.ListExpr):
                    raise P4Error(e.coord, f"'{op}': cannot compare {type_str(a.type)} and {type_str(b.type)}")
            else:
                if not (isinstance(ta, (ir.BitsType, ir.IntType)) and isinstance(tb, (ir.BitsType, ir.IntType))):
                    raise P4Error(e.coord, f"'{op}': cannot compare {type_str(a.type)} and {type_str(b.type)}")
                a, b = self._numeric_pair(op, a, b, e.coord)
            folded = F.fold_binop(op, a, b, BOOL, e.coord)
            return folded or ir.BinOp(op=op, left=a, right=b, type=BOOL, coord=e.coord)
        if op in _ARITH:
            if not (isinstance(ta, (ir.BitsType, ir.IntType, ir.EnumType)) and isinstance(tb, (ir.BitsType, ir.IntType, ir.EnumType))):
                bad = a if not isinstance(ta, (ir.BitsType, ir.IntType)) else b
                raise P4Error(e.coord, f"'{op}': operand of type {type_str(bad.type)} is not a number")
            a, b = self._numeric_pair(op, a, b, e.coord)
            t = a.type
            if op in ("/", "%") and isinstance(b, ir.Constant) and b.value == 0:
                raise P4Error(e.coord, "division by zero")
            if op in ("/", "%") and isinstance(self.named(t), ir.BitsType) and self.named(t).signed:
                raise P4Error(e.coord, f"'{op}' is not defined on signed values")
            if op in ("|+|", "|-|") and isinstance(self.named(t), ir.IntType):
                raise P4Error(e.coord, f"'{op}' needs a fixed-width operand")
            folded = F.fold_binop(op, a, b, t, e.coord)
            return folded or ir.BinOp(op=op, left=a, right=b, type=t, coord=e.coord)
        raise unsupported(e.coord, f"operator '{op}'")

    def _e_EMux(self, e: A.EMux, ctx: Ctx, expected: Any) -> ir.Expr:
        c = self.expr(e.cond, ctx)
        if not isinstance(self.named(c.type), ir.BoolType):
            raise P4Error(e.cond.coord, f"condition of ?: must be bool, not {type_str(c.type)}")
        a = self.expr(e.then, ctx, expected)
        b = self.expr(e.else_, ctx, expected)
        ta, tb = self.named(a.type), self.named(b.type)
        if isinstance(ta, (ir.BitsType, ir.IntType)) and isinstance(tb, (ir.BitsType, ir.IntType)):
            if isinstance(ta, ir.IntType) and isinstance(tb, ir.IntType) and expected is not None:
                a, b = self.convert(a, expected, e.coord), self.convert(b, expected, e.coord)
            else:
                a, b = self._numeric_pair("?:", a, b, e.coord)
        elif a.type != b.type:
            raise P4Error(e.coord, f"?: branches have different types {type_str(a.type)} and {type_str(b.type)}")
        if isinstance(c, ir.BoolLit):
            return a if c.value else b
        if isinstance(self.named(a.type), ir.IntType):
            raise P4Error(e.coord, "?: on int values needs a width (use typed literals)")
        return ir.Mux(cond=c, then=a, else_=b, type=a.type, coord=e.coord)

    def _e_ECast(self, e: A.ECast, ctx: Ctx, expected: Any) -> ir.Expr:
        t = self.env.resolve(e.type, ctx.tvars)
        x = self.expr(e.expr, ctx, t)
        return self.cast(x, t, e.coord)

    def cast(self, x: ir.Expr, t: Any, coord: ir.Coord) -> ir.Expr:
        """The explicit cast `(t) x`, refused where P4-16 §8.11 allows none."""
        src, nt = self.named(x.type), self.named(t)
        if x.type == t:
            return x
        if isinstance(t, NT) or isinstance(x.type, NT):
            return self.newtype_cast(x, t, coord)
        ok = False
        if isinstance(nt, ir.BitsType):
            if isinstance(src, ir.EnumType) and src.underlying is not None:
                if src.underlying != nt:  # P4-16 §8.11.2: to the underlying type only
                    raise P4Error(coord, f"illegal cast from {type_str(x.type)} to {type_str(t)} "
                                         f"(a serializable enum casts to {type_str(src.underlying)} only)")
                x = self.enum_to_bits(x, src, src.underlying)
                src = src.underlying
                if x.type == t:
                    return x
            ok = isinstance(src, (ir.BitsType, ir.IntType, ir.BoolType))
            if isinstance(src, ir.BoolType) and nt.width != 1:
                ok = False
        elif isinstance(nt, ir.BoolType):
            ok = (isinstance(src, ir.BitsType) and src.width == 1 and not src.signed) or isinstance(x, ir.Constant)
        elif isinstance(nt, ir.IntType):
            ok = isinstance(x, ir.Constant)
        elif isinstance(nt, ir.EnumType) and nt.underlying is not None:
            ok = isinstance(src, (ir.BitsType, ir.IntType))
            if ok and isinstance(x, ir.Constant):
                x = F.const(x.value, nt.underlying, x.coord)
        elif isinstance(nt, (ir.StructType, ir.HeaderType, ir.TupleType)) and isinstance(x, (ir.ListExpr, ir.StructExpr)):
            return self.convert(x, t, coord)
        if not ok:
            raise P4Error(coord, f"illegal cast from {type_str(x.type)} to {type_str(t)}")
        folded = F.fold_cast(x, nt, coord)
        if folded is not None and not isinstance(nt, ir.EnumType):
            folded.type = t if isinstance(folded, ir.Constant) else folded.type
            return folded
        return ir.Cast(expr=x, type=t, coord=coord)

    def newtype_cast(self, x: ir.Expr, t: Any, coord: ir.Coord) -> ir.Expr:
        """A cast to or from a `type` (p4c's canCastBetween): only between the
        type and its underlying type; an integer literal may be cast to a type
        whose underlying type is bit<W>/int<W>. Legal casts only retag the value
        (the IR does not know `type`s)."""
        if isinstance(t, NT) and isinstance(x, ir.Constant) and isinstance(x.type, ir.IntType) \
                and isinstance(self.named(t.base), ir.BitsType):
            x = F.const(x.value, self.named(t.base), x.coord)
        ok = (isinstance(t, NT) and x.type == t.base) or (isinstance(x.type, NT) and x.type.base == t)
        if not ok:
            raise P4Error(coord, f"illegal cast from {type_str(x.type)} to {type_str(t)}"
                                 f"{_newtype_hint(x.type, t)}")
        return dataclasses.replace(x, type=t)

    def _e_EList(self, e: A.EList, ctx: Ctx, expected: Any) -> ir.Expr:
        nt = self.named(expected) if expected is not None else None
        items = []
        for i, it in enumerate(e.items):
            et = None
            if isinstance(nt, ir.TupleType) and i < len(nt.elems):
                et = nt.elems[i]
            elif isinstance(nt, (ir.StructType, ir.HeaderType)) and i < len(nt.fields):
                et = nt.fields[i].type
            x = self.expr(it, ctx, et)
            if et is not None and not isinstance(et, TVar):
                x = self.convert(x, et, it.coord)
            items.append(x)
        lst = ir.ListExpr(items=items, type=ir.TupleType(elems=tuple(x.type for x in items)), coord=e.coord)
        if isinstance(nt, (ir.StructType, ir.HeaderType)):
            return self.convert(lst, expected, e.coord)
        return lst

    def _e_EStruct(self, e: A.EStruct, ctx: Ctx, expected: Any) -> ir.Expr:
        nt = self.named(expected) if expected is not None else None
        if not isinstance(nt, (ir.StructType, ir.HeaderType)):
            raise P4Error(e.coord, "a structure expression needs a struct or header type here (cast it: (T){...})")
        ftypes = {f.name: f.type for f in nt.fields}
        fields = []
        for name, v in e.fields:
            if name not in ftypes:
                raise P4Error(e.coord, f"{name}: field not found in {nt.name}")
            fields.append((name, self.convert(self.expr(v, ctx, ftypes[name]), ftypes[name], v.coord)))
        return self.convert(ir.StructExpr(fields=fields, type=expected, coord=e.coord), expected, e.coord)

    def _e_ECtor(self, e: A.ECtor, ctx: Ctx, expected: Any) -> ir.Expr:
        raise unsupported(e.coord, "constructor call in an expression")

    def _e_EDefault(self, e: A.EDefault, ctx: Ctx, expected: Any) -> ir.Expr:
        raise P4Error(e.coord, "'default' is only allowed in select cases, table entries and switch labels")

    def _e_EMask(self, e: A.EMask, ctx: Ctx, expected: Any) -> ir.Expr:
        raise P4Error(e.coord, "'&&&' is only allowed in select cases and table entries")

    _e_ERange = _e_EMask

    def _e_ECall(self, e: A.ECall, ctx: Ctx, expected: Any) -> ir.Expr:
        call = self.calls.call(e, ctx)
        if isinstance(call, ir.MethodCall) and isinstance(call.type, ir.VoidType):
            raise P4Error(e.coord, f"{source_text(e.func)}: a call returning void is not a value")
        return call

    # ------------------------------------------------------------------ l-values
    def check_lvalue(self, x: ir.Expr, ctx: Ctx, coord: ir.Coord, what: str = "assignment") -> None:
        """Reject writes to read-only values (in parameters, constants, action data)."""
        node = x
        while True:
            if isinstance(node, (ir.Member, ir.Index, ir.Slice)):
                if isinstance(node, ir.Member) and isinstance(node.expr.type, ir.StackType) and node.name in ("lastIndex",):
                    raise P4Error(coord, f"{what}: {node.name} is read-only")
                node = node.expr
                continue
            break
        if isinstance(node, ir.Var):
            b = ctx.scope.lookup(node.name)
            if isinstance(b, BVar):
                if b.readonly:
                    kind = f"'{b.direction}' parameter" if b.direction else "read-only value"
                    raise P4Error(coord, f"{what}: cannot write to {kind} '{node.name}'")
                return
            raise P4Error(coord, f"{what}: '{node.name}' is not a variable")
        if isinstance(node, ir.DontCare):
            return
        raise P4Error(coord, f"{what}: expression is not an l-value")

    def header_width(self, t: Any) -> int:
        """Width in bits of a fixed-size type (0 for error, plain enums and varbits)."""
        return width_of(t, self.env)


__all__ = ["ExprChecker", "Ctx", "BOOL", "INT", "VOID", "BIT32", "has_tvars",
           "is_header_like", "substitute", "BlockTypeRef", "BFunction", "BExtern", "BSub", "BTable",
           "BValueSet", "BAction"]
