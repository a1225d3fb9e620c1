"""IR -> Python source: the module builder, value layout and expressions.

The pipeline never walks the IR per packet: `ModuleBuilder` turns a whole
program into one Python module (source text plus the globals it needs),
compiled once at load. Statements, parsers, controls and externs are in
`blocks`; this module holds what they share:

* value layout: every header/struct/union type becomes a generated class
  whose class attributes are the zero defaults (`new_<T>()` builds one with
  fresh nested composites); bit<W> values are Python ints in [0, 2**W),
  int<W> are signed ints, bool is bool, error and enums are ints;
* `Env`, the scope chain from a `Var.uid` to the Python expression of its
  storage;
* `ExprGen`, which renders an IR expression as a Python expression string.

Generated source holds no string from the program as it is: names become
Python names through `py_name` or `ModuleBuilder.fresh` (which keep only
``[0-9A-Za-z_]``), text goes in as `repr`, and numbers through `int_lit`.

Names defined here: `CodegenError`, `ModuleBuilder`, `Env`, `ExprGen`,
`py_name`, `int_lit`, `TypeInfo`.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from typing import Any

from .. import ir
from ..p4info import unnamed_digests


class CodegenError(Exception):
    """The program uses something the pipeline cannot run (message names the source position)."""


def _fail(node: Any, what: str) -> CodegenError:
    coord = getattr(node, "coord", None) or ir.NO_COORD
    return CodegenError(f"{coord}: error: {what} is not supported by the p4switch pipeline")


def py_name(name: str) -> str:
    """A P4 field name as a Python attribute name.

    A P4 identifier is kept as it is unless it is a Python keyword or starts
    with ``_`` or ``F_``: those get an ``F_`` in front, so no two identifiers
    share an attribute. Anything else (the program file's loader lets no other
    name through) has every character outside ``[0-9A-Za-z_]`` replaced: what
    comes out is always an identifier.
    """
    if name.isascii() and name.isidentifier() and not keyword.iskeyword(name) \
            and not name.startswith(("_", "F_")):
        return name
    return "F_" + re.sub(r"[^0-9A-Za-z_]", "_", name)


def _int(value: object) -> int:
    if type(value) is not int:  # a bool is not one either
        raise CodegenError(f"internal error: {value!r} where the pipeline needs an int")
    return value


def int_lit(value: object) -> str:
    """An int from the IR as Python source; anything else (a bool too) is refused, never pasted."""
    return str(_int(value))


class Env:
    """Scope chain: uid -> Python expression of the storage."""

    def __init__(self, parent: Env | None = None) -> None:
        self.parent = parent
        self.names: dict[str, str] = {}
        self.types: dict[str, Any] = {}

    def bind(self, uid: str, expr: str, typ: Any = None) -> None:
        """Bind a uid to the Python expression of its storage (and its type)."""
        self.names[uid] = expr
        if typ is not None:
            self.types[uid] = typ

    def lookup(self, uid: str) -> str | None:
        """The Python expression bound to a uid here or in an enclosing scope; None if unbound."""
        env: Env | None = self
        while env is not None:
            r = env.names.get(uid)
            if r is not None:
                return r
            env = env.parent
        return None


class TypeInfo:
    """Type questions about one program: resolve names, widths, composite layout."""

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.types = program.types

    def resolve(self, t: Any) -> Any:
        """Follow type names to the declared type (a name not in `types` stays a `TypeName`)."""
        seen = 0
        while isinstance(t, ir.TypeName):
            nt = self.types.get(t.name)
            if nt is None:
                # Named extern/parser/control types are not in `types`; keep the name.
                return t
            t = nt
            seen += 1
            if seen > 64:
                raise CodegenError(f"type {t} does not resolve")
        return t

    def width(self, t: Any) -> int:
        """The bit width of a value of type `t` as the pipeline stores it (`ir.bit_width`).

        `error` and plain enums are 32-bit values; a varbit is as wide as
        its maximum; a type without a width is refused.
        """
        rt = self.resolve(t)
        w = _int(rt.max_width) if isinstance(rt, ir.VarbitType) else ir.bit_width(rt, self.resolve, opaque=32)
        if w is None:
            raise CodegenError(f"type {rt} has no bit width")
        return _int(w)

    def is_composite(self, t: Any) -> bool:
        """Is a value of this type an object (header, struct, union, stack) rather than a scalar?"""
        return isinstance(self.resolve(t), (ir.HeaderType, ir.StructType, ir.HeaderUnionType,
                                            ir.StackType))

    def is_signed(self, t: Any) -> bool:
        """Is it an `int<W>`?"""
        t = self.resolve(t)
        return isinstance(t, ir.BitsType) and t.signed

    def zero(self, t: Any) -> str:
        """The Python source of a scalar type's zero value."""
        t = self.resolve(t)
        if isinstance(t, ir.BoolType):
            return "False"
        if isinstance(t, ir.StringType):
            return "''"
        if isinstance(t, ir.TupleType):
            return "(" + "".join(self.zero(e) + ", " for e in t.elems) + ")"
        return "0"


class ModuleBuilder:
    """Accumulates the generated module: source lines and the globals they use."""

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.ti = TypeInfo(program)
        self.lines: list[str] = []
        self.globals: dict[str, Any] = {}
        self._n = 0
        self.classes: dict[str, str] = {}  # type name -> class name
        self.newfn: dict[str, str] = {}  # type name -> constructor expression
        self.error_codes = {name: i for i, name in enumerate(program.errors)}
        self.action_ids: dict[str, int] = {}
        # header type -> fields the program may write (`fieldwrites`), and the header
        # types whose extracted bytes are kept for the deparser (`_raw`): none written
        self.header_writes: dict[str, set[str]] = {}
        self.raw_headers: set[str] = set()
        # id of an action/function declaration -> (it, the variables its body names),
        # for `callgen`; the entry keeps the declaration alive, so its id is not reused
        self.uses: dict[int, tuple[Any, set[str]]] = {}
        self._unnamed_digests: dict[str, str] | None = None
        for name in ("NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
                     "ParserTimeout", "ParserInvalidArgument"):
            self.error_codes.setdefault(name, len(self.error_codes))

    def unnamed_digests(self) -> dict[str, str]:
        """`file:line:col` of each digest() whose data's type has no name -> its P4Info name."""
        if self._unnamed_digests is None:
            self._unnamed_digests = unnamed_digests(self.program)
        return self._unnamed_digests

    def fresh(self, hint: str) -> str:
        """A new Python identifier built from `hint` (only [0-9A-Za-z_] kept)."""
        self._n += 1
        return f"{re.sub(r'[^0-9A-Za-z_]', '_', hint)[:40]}_{self._n}"

    def add_global(self, obj: Any, hint: str) -> str:
        """Bind `obj` as a new global of the module; returns its name."""
        name = self.fresh(hint)
        self.globals[name] = obj
        return name

    def emit(self, text: str) -> None:
        """Append one line of module source."""
        self.lines.append(text)

    def action_id(self, cp_name: str) -> int:
        """The action id of an action (numbered on first use from 1)."""
        aid = self.action_ids.get(cp_name)
        if aid is None:
            aid = self.action_ids[cp_name] = len(self.action_ids) + 1
        return aid

    # ------------------------------------------------------------ composites
    def layout(self, t: Any) -> list[tuple[str, str, Any]]:
        """(p4 name, python name, type) of a header/struct/union's fields."""
        t = self.ti.resolve(t)
        return [(f.name, py_name(f.name), f.type) for f in t.fields]

    def class_for(self, t: Any) -> str:
        """The generated class of a named header/struct/union type."""
        t = self.ti.resolve(t)
        key = t.name
        cls = self.classes.get(key)
        if cls is not None:
            return cls
        cls = self.fresh("T_" + t.name)
        self.classes[key] = cls
        body = []
        fields = self.layout(t)
        body.append(f"    _fields = {tuple(py for _, py, _ in fields)!r}")
        body.append(f"    _p4name = {t.name!r}")
        if isinstance(t, ir.HeaderType):
            body.append("    _v = False")
            if t.name in self.raw_headers:
                body.append("    _raw = None")
        for _, py, ft in fields:
            rt = self.ti.resolve(ft)
            if isinstance(rt, ir.VarbitType):
                body.append(f"    {py} = 0")
                body.append(f"    _w_{py} = 0")
            elif not self.ti.is_composite(rt):
                body.append(f"    {py} = {self.ti.zero(rt)}")
        self.emit(f"class {cls}:")
        self.lines.extend(body)
        self.emit("")
        return cls

    def new_expr(self, t: Any) -> str:
        """A Python expression creating a fresh zero/invalid value of composite type t."""
        rt = self.ti.resolve(t)
        if isinstance(rt, ir.StackType):
            return f"Stack({self.new_callable(rt.elem)}, {int_lit(rt.size)})"
        return self.new_callable(rt) + "()"

    def new_callable(self, t: Any) -> str:
        """The name of the callable that builds a fresh value of a composite type."""
        rt = self.ti.resolve(t)
        key = rt.name
        fn = self.newfn.get(key)
        if fn is not None:
            return fn
        cls = self.class_for(rt)
        nested = [(py, ft) for _, py, ft in self.layout(rt) if self.ti.is_composite(ft)]
        if not nested:
            self.newfn[key] = cls
            return cls
        fn = self.fresh("new_" + rt.name)
        self.newfn[key] = fn
        inits = [(py, self.new_expr(ft)) for py, ft in nested]
        self.emit(f"def {fn}():")
        self.emit(f"    o = {cls}()")
        for py, ex in inits:
            self.emit(f"    o.{py} = {ex}")
        self.emit("    return o")
        self.emit("")
        return fn

    def leaf_paths(self, t: Any) -> list[tuple[str, str, Any]]:
        """(top-level field name, python attribute path, type) of a header's or struct's bit fields.

        Wire order; a struct-typed field of a header (P4-16 §7.2.2) is
        expanded into its fields (`flags.f0`, `flags.f1` ...).
        """
        out: list[tuple[str, str, Any]] = []
        for name, py, ft in self.layout(t):
            rt = self.ti.resolve(ft)
            if isinstance(rt, ir.StructType):
                out += [(name, f"{py}.{path}", lt) for _, path, lt in self.leaf_paths(rt)]
            else:
                out.append((name, py, ft))
        return out

    def unpacker(self, t: Any) -> str:
        """A generated function `f(v)`: a new valid header (or struct) of type t from its bits v."""
        rt = self.ti.resolve(t)
        cache = self.globals.setdefault("__unpackers__", {})
        fn = cache.get(rt.name)
        if fn is not None:
            return fn
        fn = cache[rt.name] = self.fresh("unpack_" + rt.name)
        new = self.new_callable(rt)
        lines = [f"def {fn}(v):", f"    o = {new}()"]
        shift = self.ti.width(rt)
        for _, path, lt in self.leaf_paths(rt):
            w = self.ti.width(lt)
            shift -= w
            code = f"(v >> {shift}) & {hex((1 << w) - 1)}" if shift else f"v & {hex((1 << w) - 1)}"
            lr = self.ti.resolve(lt)
            if isinstance(lr, ir.BoolType):
                code = f"bool({code})"
            elif isinstance(lr, ir.BitsType) and lr.signed:
                code = f"sx({code}, {w})"
            lines.append(f"    o.{path} = {code}")
        if isinstance(rt, ir.HeaderType):
            lines.append("    o._v = True")
        lines.append("    return o")
        self.lines.extend(lines + [""])
        return fn


_ARITH = {"+", "-", "*"}
_CMP = {"==", "!=", "<", "<=", ">", ">="}


class ExprGen:
    """Renders IR expressions as Python expressions in an `Env`.

    `call_hook(call, env)` renders method calls (set by `blocks`).
    """

    def __init__(self, mb: ModuleBuilder, call_hook: Callable[[ir.MethodCall, Env], str]) -> None:
        self.mb = mb
        self.ti = mb.ti
        self.call_hook = call_hook

    def mask(self, t: Any) -> int:
        """All ones in the width of type `t`."""
        return (1 << self.ti.width(t)) - 1

    def wrap(self, code: str, t: Any) -> str:
        """Wrap an unbounded integer expression to type t."""
        rt = self.ti.resolve(t)
        if isinstance(rt, ir.BitsType):
            if rt.signed:
                return f"sx({code}, {int_lit(rt.width)})"
            return f"(({code}) & {hex((1 << rt.width) - 1)})"
        return code

    def const(self, value: int, t: Any) -> str:
        """An integer constant of type `t` as Python source, in range for the type."""
        rt = self.ti.resolve(t)
        if isinstance(rt, ir.BoolType):
            return "True" if value else "False"
        if isinstance(rt, ir.BitsType):
            if rt.signed:
                h = 1 << (rt.width - 1)
                value = ((value + h) & ((1 << rt.width) - 1)) - h
            else:
                value &= (1 << rt.width) - 1
        return hex(value) if value > 9 else int_lit(value)

    def enum_value(self, enum: str, member: str) -> int:
        """The integer of an enum member (its value in a serializable enum, else its index)."""
        t = self.ti.types.get(enum)
        if not isinstance(t, ir.EnumType):
            return 0
        idx = t.members.index(member)
        if t.underlying is not None and t.values:
            return t.values[idx]
        return idx

    def ex(self, e: Any, env: Env) -> str:
        """An IR expression as a Python expression (dispatched on its IR class)."""
        m = getattr(self, "_" + type(e).__name__, None)
        if m is None:
            raise _fail(e, f"expression {type(e).__name__}")
        return m(e, env)

    # leaves -----------------------------------------------------------------
    def _Constant(self, e: ir.Constant, env: Env) -> str:
        return self.const(e.value, e.type)

    def _BoolLit(self, e: ir.BoolLit, env: Env) -> str:
        return "True" if e.value else "False"

    def _StringLit(self, e: ir.StringLit, env: Env) -> str:
        return repr(e.value)

    def _EnumMember(self, e: ir.EnumMember, env: Env) -> str:
        return int_lit(self.enum_value(e.enum, e.member))

    def _ErrorMember(self, e: ir.ErrorMember, env: Env) -> str:
        code = self.mb.error_codes.get(e.name)
        if code is None:
            raise _fail(e, f"error.{e.name} (not declared)")
        return str(code)

    def _DontCare(self, e: ir.DontCare, env: Env) -> str:
        return "None"

    def _Var(self, e: ir.Var, env: Env) -> str:
        r = env.lookup(e.uid)
        if r is None:
            r = env.lookup(e.name)
        if r is not None:
            return r
        if e.scope == ir.Scope.CONST:
            c = self.mb.program.constants.get(e.name) or self.mb.program.constants.get(e.uid)
            if c is not None:
                return "(" + self.ex(c, env) + ")"
        raise _fail(e, f"reference to '{e.name}' here")

    # structure ------------------------------------------------------------------
    def _Member(self, e: ir.Member, env: Env) -> str:
        bt = self.ti.resolve(e.expr.type)
        if isinstance(e.expr, ir.MethodCall) and e.expr.kind == ir.CallKind.TABLE_APPLY:
            call = self.ex(e.expr, env)
            if e.name == "hit":
                return f"{call}[2]"
            if e.name == "miss":
                return f"(not {call}[2])"
            if e.name == "action_run":
                return f"{call}[3]"
            raise _fail(e, f"table result member '{e.name}'")
        base = self.ex(e.expr, env)
        if isinstance(bt, ir.StackType):
            if e.name == "size":
                return int_lit(bt.size)
            if e.name == "lastIndex":
                return f"(({base}.n - 1) & 0xffffffff)"
            if e.name == "last":
                return f"stack_last({base})"
            if e.name == "next":
                return f"stack_next({base})"
            if e.name == "nextIndex":
                return f"{base}.n"
            raise _fail(e, f"header stack member '{e.name}'")
        return f"{base}.{py_name(e.name)}"

    def _Index(self, e: ir.Index, env: Env) -> str:
        base = self.ex(e.expr, env)
        if isinstance(e.index, ir.Constant):  # in range: the front end checks, and so does this
            st = self.ti.resolve(e.expr.type)
            size = _int(st.size) if isinstance(st, ir.StackType) else 0
            index = _int(e.index.value)
            if not 0 <= index < size:
                raise _fail(e, f"index {index} of a stack of {size}")
            return f"{base}.h[{index}]"
        return f"{base}.at({self.ex(e.index, env)})"

    def _Slice(self, e: ir.Slice, env: Env) -> str:
        v = self.ex(e.expr, env)
        m = hex((1 << (e.hi - e.lo + 1)) - 1)
        return f"((({v}) >> {int_lit(e.lo)}) & {m})" if e.lo else f"(({v}) & {m})"

    def _Mux(self, e: ir.Mux, env: Env) -> str:
        return f"({self.ex(e.then, env)} if {self.ex(e.cond, env)} else {self.ex(e.else_, env)})"

    def _ListExpr(self, e: ir.ListExpr, env: Env) -> str:
        return "(" + "".join(self.ex(x, env) + ", " for x in e.items) + ")"

    def _StructExpr(self, e: ir.StructExpr, env: Env) -> str:
        rt = self.ti.resolve(e.type)
        if not isinstance(rt, (ir.StructType, ir.HeaderType)):
            return "(" + "".join(self.ex(v, env) + ", " for _, v in e.fields) + ")"
        # build_<T>(v1, v2, ...) creates a value (a header made valid)
        fn = self.struct_builder(rt, [n for n, _ in e.fields])
        return f"{fn}(" + ", ".join(self.ex(v, env) for _, v in e.fields) + ")"

    def struct_builder(self, rt: Any, names: list[str]) -> str:
        """The name of a generated function building a struct or header from values of the named fields."""
        key = (rt.name, tuple(names))
        cache = self.mb.globals.setdefault("__builders__", {})
        fn = cache.get(key)
        if fn is not None:
            return fn
        fn = self.mb.fresh("build_" + rt.name)
        cache[key] = fn
        newc = self.mb.new_callable(rt)
        args = [f"a{i}" for i in range(len(names))]
        self.mb.emit(f"def {fn}({', '.join(args)}):")
        self.mb.emit(f"    o = {newc}()")
        for a, n in zip(args, names, strict=False):
            ft = next(f.type for f in rt.fields if f.name == n)
            if self.ti.is_composite(ft):
                self.mb.emit(f"    copy_into(o.{py_name(n)}, {a})")
            else:
                self.mb.emit(f"    o.{py_name(n)} = {a}")
        if isinstance(rt, ir.HeaderType):
            self.mb.emit("    o._v = True")
        self.mb.emit("    return o")
        self.mb.emit("")
        return fn

    def _MethodCall(self, e: ir.MethodCall, env: Env) -> str:
        return self.call_hook(e, env)

    # operators ------------------------------------------------------------------
    def _UnOp(self, e: ir.UnOp, env: Env) -> str:
        v = self.ex(e.expr, env)
        if e.op == "!":
            return f"(not {v})"
        rt = self.ti.resolve(e.type)
        if e.op == "~":
            if isinstance(rt, ir.BitsType) and not rt.signed:
                return f"(({v}) ^ {hex(self.mask(rt))})"
            return f"(~{v})"
        if e.op == "-":
            return self.wrap(f"-({v})", rt)
        raise _fail(e, f"operator {e.op}")

    def _BinOp(self, e: ir.BinOp, env: Env) -> str:
        op = e.op
        a = self.ex(e.left, env)
        b = self.ex(e.right, env)
        rt = self.ti.resolve(e.type)
        if op == "&&":
            return f"({a} and {b})"
        if op == "||":
            return f"({a} or {b})"
        if op in _CMP:
            if self.ti.is_composite(e.left.type):
                r = f"eq({a}, {b})"
                return r if op == "==" else f"(not {r})"
            return f"({a} {op} {b})"
        if op in _ARITH:
            return self.wrap(f"{a} {op} {b}", rt)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op == "<<":
            if isinstance(rt, ir.BitsType):
                if isinstance(e.right, ir.Constant):
                    if e.right.value >= rt.width:
                        return "0"
                    return self.wrap(f"{a} << {int_lit(e.right.value)}", rt)
                w = int_lit(rt.width)
                if rt.signed:
                    return f"sx(shl({a}, {b}, {w}), {w})"
                return f"shl({a}, {b}, {w})"
            return f"({a} << {b})"
        if op == ">>":
            return f"({a} >> {b})"
        if op == "/":
            return self.wrap(f"div({a}, {b})", rt) if isinstance(rt, ir.BitsType) else f"div({a}, {b})"
        if op == "%":
            return self.wrap(f"mod({a}, {b})", rt) if isinstance(rt, ir.BitsType) else f"mod({a}, {b})"
        if op == "++":
            wb = self.ti.width(e.right.type)
            if self.ti.is_signed(e.right.type):
                b = f"({b} & {hex((1 << wb) - 1)})"
            if self.ti.is_signed(e.left.type):
                a = f"({a} & {hex((1 << self.ti.width(e.left.type)) - 1)})"
            r = f"(({a} << {wb}) | {b})"
            return f"sx({r}, {int_lit(rt.width)})" if self.ti.is_signed(rt) else r
        if op in ("|+|", "|-|"):
            if not isinstance(rt, ir.BitsType):
                raise _fail(e, f"saturating {op} on {rt}")
            if rt.signed:
                lo, hi = -(1 << (rt.width - 1)), (1 << (rt.width - 1)) - 1
            else:
                lo, hi = 0, (1 << rt.width) - 1
            fn = "sat_add" if op == "|+|" else "sat_sub"
            return f"{fn}({a}, {b}, {lo}, {hi})"
        raise _fail(e, f"operator {op}")

    def _Cast(self, e: ir.Cast, env: Env) -> str:
        v = self.ex(e.expr, env)
        src = self.ti.resolve(e.expr.type)
        dst = self.ti.resolve(e.type)
        if isinstance(dst, ir.BoolType):
            return f"bool({v})" if not isinstance(src, ir.BoolType) else v
        if isinstance(dst, ir.BitsType):
            if isinstance(src, ir.BoolType):
                return f"int({v})"
            if isinstance(src, ir.BitsType) and not src.signed and not dst.signed and src.width <= dst.width:
                return v
            return self.wrap(v, dst)
        if isinstance(dst, ir.EnumType) or isinstance(dst, ir.IntType):
            return v
        if self.ti.is_composite(dst):
            return v
        return v


__all__ = ["CodegenError", "ModuleBuilder", "Env", "ExprGen", "py_name", "int_lit", "TypeInfo"]
