"""Type environment of the front end: global declarations and type resolution.

`Globals` holds every top-level declaration by kind (the symbol table p4c's
ResolveReferences builds); `TypeEnv.resolve` turns type syntax into IR types
(typedefs expanded, named types as `ir.TypeName`, type variables substituted);
the helpers answer questions the checker asks (`width_of`, `fields_of`,
`type_str`, `same_type`).

Names defined here: `Globals`, `ExternInfo`, `BlockTypeRef`, `TVar`, `NT`,
`TypeEnv`, `type_str`, `width_of`, `fields_of`, `is_bits`, `is_header_like`,
`same_type`, `substitute`, `has_tvars`, `newtype_name`, `unwrap_newtype`,
`erase_newtypes`.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, cast

from p4switch import ir
from p4switch.frontend import ast as A
from p4switch.frontend.errors import P4Error


@dataclass(frozen=True, kw_only=True)
class TVar:
    """A type variable of a generic extern/function/block (never in the IR)."""

    name: str


@dataclass(frozen=True, kw_only=True)
class NT:
    """The type introduced by `type T N;` while the program is checked.

    p4c keeps N distinct from T (no implicit conversion either way, explicit
    casts only between N and T, no arithmetic on N), so the checker does too;
    `erase_newtypes` replaces every NT by its `base` before the IR leaves the
    front end (the IR contract: values of N simply have type T).
    """

    name: str
    base: Any


@dataclass(frozen=True, kw_only=True)
class BlockTypeRef:
    """A parser/control/package type used as a package parameter type (never in the IR)."""

    kind: str
    name: str
    type_args: tuple[Any, ...] = ()


@dataclass(kw_only=True)
class ExternInfo:
    """An extern object type: its declaration, constructors and methods by name."""

    decl: A.DExternObj
    ctors: list[A.MethodProto]
    methods: dict[str, list[A.MethodProto]]


@dataclass(kw_only=True)
class Globals:
    """All top-level declarations of the program, by kind."""

    types: dict[str, ir.Type] = field(default_factory=dict)  # header/struct/union/enum
    typedefs: dict[str, Any] = field(default_factory=dict)  # name -> resolved ir type
    # `type` declarations (an `NT` while checking, the underlying type in the
    # IR; the declarations are kept for P4Info)
    newtypes: dict[str, ir.NewType] = field(default_factory=dict)
    const_bases: dict[str, int] = field(default_factory=dict)  # const name -> base of its literal (key names)
    externs: dict[str, ExternInfo] = field(default_factory=dict)
    extern_funcs: dict[str, list[A.MethodProto]] = field(default_factory=dict)
    block_types: dict[str, A.DBlockType] = field(default_factory=dict)
    parsers: dict[str, A.DParser] = field(default_factory=dict)
    controls: dict[str, A.DControl] = field(default_factory=dict)
    actions: dict[str, A.DAction] = field(default_factory=dict)
    functions: dict[str, A.DFunction] = field(default_factory=dict)
    consts: dict[str, ir.Expr] = field(default_factory=dict)
    instances: dict[str, A.DInstance] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    match_kinds: list[str] = field(default_factory=list)
    type_annos: dict[str, list[A.Anno]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # global name -> kind (duplicate check)
    decl_order: list[str] = field(default_factory=list)
    # externs (functions and object types) the program declares itself, not core.p4/v1model.p4
    user_externs: dict[str, ir.Coord] = field(default_factory=dict)


def type_str(t: Any) -> str:
    """P4 spelling of a type, for messages."""
    if isinstance(t, ir.BitsType):
        return f"{'int' if t.signed else 'bit'}<{t.width}>"
    if isinstance(t, ir.BoolType):
        return "bool"
    if isinstance(t, ir.IntType):
        return "int"
    if isinstance(t, ir.VarbitType):
        return f"varbit<{t.max_width}>"
    if isinstance(t, ir.StringType):
        return "string"
    if isinstance(t, ir.ErrorType):
        return "error"
    if isinstance(t, ir.MatchKindType):
        return "match_kind"
    if isinstance(t, ir.VoidType):
        return "void"
    if isinstance(t, ir.TypeName):
        return t.name
    if isinstance(t, (ir.HeaderType, ir.StructType, ir.HeaderUnionType, ir.EnumType)):
        return t.name
    if isinstance(t, ir.StackType):
        return f"{type_str(t.elem)}[{t.size}]"
    if isinstance(t, ir.TupleType):
        return f"tuple<{', '.join(type_str(e) for e in t.elems)}>"
    if isinstance(t, ir.ExternType):
        if t.type_args:
            return f"{t.name}<{', '.join(type_str(a) for a in t.type_args)}>"
        return t.name
    if isinstance(t, (TVar, NT)):
        return t.name
    if isinstance(t, BlockTypeRef):
        return t.name
    return str(t)


class TypeEnv:
    """Resolves type syntax against `Globals` (plus type variables in scope)."""

    def __init__(self, g: Globals, fold_const: Any) -> None:
        self.g = g
        self.fold_const = fold_const  # callable(expr_ast) -> int (compile-time constant)

    def named(self, t: Any) -> Any:
        """The declaration behind a TypeName (HeaderType/StructType/...), else t."""
        if isinstance(t, ir.TypeName):
            return self.g.types[t.name]
        return t


    def resolve(self, t: Any, tvars: dict[str, Any] | None = None) -> Any:
        """Type syntax as an IR type: typedefs expanded, named types as `ir.TypeName`, `tvars` substituted."""
        tvars = tvars or {}
        if isinstance(t, A.TBits):
            w = self.fold_const(t.width)
            if w <= 0 and not (w == 0 and False):
                raise P4Error(t.coord, f"invalid width {w} for {'int' if t.signed else 'bit'}<>")
            return ir.BitsType(width=w, signed=t.signed)
        if isinstance(t, A.TVarbit):
            return ir.VarbitType(max_width=self.fold_const(t.width))
        if isinstance(t, A.TBase):
            return {
                "bool": ir.BoolType(), "error": ir.ErrorType(), "string": ir.StringType(),
                "int": ir.IntType(), "void": ir.VoidType(), "_": TVar(name="_"),
            }[t.name]
        if isinstance(t, A.TName):
            return self._resolve_name(t.name, t.coord, (), tvars)
        if isinstance(t, A.TSpecialized):
            args = tuple(self.resolve(a, tvars) for a in t.args)
            return self._resolve_name(t.base.name, t.coord, args, tvars)
        if isinstance(t, A.TStack):
            elem = self.resolve(t.elem, tvars)
            n = self.fold_const(t.size)
            if not is_header_like(self.named(elem)):
                raise P4Error(t.coord, f"header stack element type {type_str(elem)} is not a header or header_union")
            return ir.StackType(elem=elem, size=n)
        if isinstance(t, A.TTuple):
            return ir.TupleType(elems=tuple(self.resolve(a, tvars) for a in t.args))
        raise P4Error(getattr(t, "coord", None), f"unexpected type syntax {t!r}")

    def _resolve_name(self, name: str, coord: ir.Coord, args: tuple, tvars: dict[str, Any]) -> Any:
        g = self.g
        if name in tvars and not args:
            return tvars[name]
        if name in g.typedefs and not args:
            return g.typedefs[name]
        if name in g.types and not args:
            return ir.TypeName(name=name)
        if name in g.externs:
            info = g.externs[name]
            if len(args) != len(info.decl.tparams):
                if not args and info.decl.tparams:
                    # type variables stand in for IR types until the call binds them
                    tvs = tuple(cast(ir.Type, TVar(name=p)) for p in info.decl.tparams)
                    return ir.ExternType(name=name, type_args=tvs)
                raise P4Error(coord, f"{name}: expected {len(info.decl.tparams)} type arguments, got {len(args)}")
            return ir.ExternType(name=name, type_args=args)
        if name in g.block_types:
            return BlockTypeRef(kind=g.block_types[name].kind, name=name, type_args=args)
        if name in g.parsers:
            return BlockTypeRef(kind="parser", name=name)
        if name in g.controls:
            return BlockTypeRef(kind="control", name=name)
        if name == "match_kind":
            return ir.MatchKindType()
        raise P4Error(coord, f"{name}: type not declared")


def is_bits(t: Any) -> bool:
    """Is `t` a `bit<W>` or `int<W>`?"""
    return isinstance(t, ir.BitsType)


def is_header_like(t: Any) -> bool:
    """Is `t` a header or a header union?"""
    return isinstance(t, (ir.HeaderType, ir.HeaderUnionType))


def fields_of(t: Any) -> tuple[ir.Field, ...]:
    """The fields of a header, struct or union type (none for other types)."""
    return getattr(t, "fields", ())


def width_of(t: Any, env: TypeEnv) -> int:
    """Width in bits of a fixed-size type (`ir.bit_width`; 0 for error, plain enums and varbits)."""

    def resolve(x: Any) -> Any:
        """`x` with type names and `type`s resolved to the type underneath."""
        x = env.named(x)
        while isinstance(x, NT):
            x = env.named(x.base)
        return x

    return ir.bit_width(t, resolve, opaque=0) or 0


def same_type(a: Any, b: Any) -> bool:
    """Are two resolved types the same (IR types compare by value)?"""
    return a == b


def substitute(t: Any, binding: dict[str, Any]) -> Any:
    """Replace type variables in `t` by their bindings."""
    if isinstance(t, TVar):
        return binding.get(t.name, t)
    if isinstance(t, ir.ExternType):
        return ir.ExternType(name=t.name, type_args=tuple(substitute(a, binding) for a in t.type_args))
    if isinstance(t, ir.TupleType):
        return ir.TupleType(elems=tuple(substitute(a, binding) for a in t.elems))
    if isinstance(t, ir.StackType):
        return ir.StackType(elem=substitute(t.elem, binding), size=t.size)
    if isinstance(t, BlockTypeRef):
        return BlockTypeRef(kind=t.kind, name=t.name, type_args=tuple(substitute(a, binding) for a in t.type_args))
    return t


def has_tvars(t: Any) -> bool:
    """Does `t` still mention a type variable?"""
    if isinstance(t, TVar):
        return True
    if isinstance(t, (ir.ExternType, BlockTypeRef)):
        return any(has_tvars(a) for a in t.type_args)
    if isinstance(t, ir.TupleType):
        return any(has_tvars(a) for a in t.elems)
    if isinstance(t, ir.StackType):
        return has_tvars(t.elem)
    return False


def newtype_name(t: Any) -> str:
    """The `type` a value of type `t` has (P4Info `type_name`), or ''."""
    return t.name if isinstance(t, NT) else ""


def unwrap_newtype(t: Any) -> Any:
    """The underlying type of a (chain of) `type` declarations."""
    while isinstance(t, NT):
        t = t.base
    return t


def erase_newtypes(root: Any) -> Any:
    """Replace every `NT` under `root` by its underlying type (in place where mutable).

    The IR is a DAG of dataclasses: mutable nodes are updated in place (each
    visited once), frozen ones (types, fields, annotations) rebuilt when a
    part changed.
    """
    seen: dict[int, Any] = {}
    fields_of_cls: dict[type, tuple[str, ...]] = {}

    def names(cls: type) -> tuple[str, ...]:
        """The field names of dataclass `cls` (cached)."""
        f = fields_of_cls.get(cls)
        if f is None:
            f = fields_of_cls[cls] = tuple(x.name for x in dataclasses.fields(cls))
        return f

    def walk(x: Any) -> Any:
        """`x` with every `type` replaced by its underlying type, in place where possible."""
        if x is None or isinstance(x, (str, int, bool, float, enum.Enum)):
            return x
        if isinstance(x, NT):
            return walk(unwrap_newtype(x))
        key = id(x)
        if key in seen:
            return seen[key]
        if isinstance(x, list):
            seen[key] = x
            for i, v in enumerate(x):
                x[i] = walk(v)
            return x
        if isinstance(x, tuple):
            out: Any = tuple(walk(v) for v in x)
            out = x if all(a is b for a, b in zip(out, x, strict=True)) else out
            seen[key] = out
            return out
        if isinstance(x, dict):
            seen[key] = x
            for k in list(x):
                x[k] = walk(x[k])
            return x
        if dataclasses.is_dataclass(x) and not isinstance(x, type):  # instances; no classes in the IR
            cls = type(x)
            if cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]  # not in typeshed
                changes = {}
                for n in names(cls):
                    v = getattr(x, n)
                    w = walk(v)
                    if w is not v:
                        changes[n] = w
                out = dataclasses.replace(x, **changes) if changes else x
                seen[key] = out
                return out
            seen[key] = x
            for n in names(cls):
                v = getattr(x, n)
                w = walk(v)
                if w is not v:
                    setattr(x, n, w)
            return x
        return x

    return walk(root)
