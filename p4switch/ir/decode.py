"""The program file's checked decoder: what `ir.from_json` runs on untrusted input.

A program file comes from outside (SetForwardingPipelineConfig, the command
line), and the pipeline turns it into Python source that p4switch, often as
root, compiles and runs. So nothing in it is taken on trust: every node is
decoded against its dataclass's field types (a field typed `Expr` holds an
expression node, a `list[Param]` a list of `Param` nodes, an `int` an int and
not a bool), every string against the form that field takes in the files
`p4switch-compile` writes, and every number against its range. The first
thing out of place raises `ProgramFileError`, naming it and the path to it::

    invalid program file: program.pipeline['p'].decl.states[1].name:
    'start\\nimport os' is not a P4 identifier (near rtsw.p4:80:5)

The forms a string takes (`Form`):

* `IDENT`: P4-16's identifier, ``[A-Za-z_][A-Za-z0-9_]*`` (field, parameter,
  state, table, action and block names);
* `QUALIFIED`: identifiers joined by dots, the control-plane names
  (``ingress.t1``) and the front end's synthetic type names
  (``ingress.t1.apply_result``, ``ingress.t1.action_list``);
* `UID`: a name unique in its block; the front end's own ones hold ``$``
  (``$se1``, ``hdr$arg``), a specialised generic function's ends in its type
  arguments (``pick<bit<16>>``); `CALLEE`, what a call names, is either form;
* `KEY_NAME`: a table key's control-plane name, as p4c makes it from the key
  expression (``hdr.ipv4.dst[31:24]``, ``h.$valid$``, ``meta.x & 0xf0``);
* fixed word sets (`DIRECTION`, the operators, keyset kinds ...);
* `TEXT` (string literals and annotation arguments: data, never code) and
  `PATH` (source file names, no control characters).

`STRINGS` and `NUMBERS` give the form or range of every str and int field,
keyed by (node class name, field name); a field typed `Any` is decoded by the
type the caller gives for it (`decode`'s `any_fields`).

Names defined here: `ProgramFileError`, `Form`, `Range`, the forms above,
`STRINGS`, `NUMBERS`, `MAX_WIDTH`, `MAX_STACK`, `decode`, `node_classes`.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class ProgramFileError(ValueError):
    """The program file is not a p4switch program of a version we can run."""


@dataclass(frozen=True, kw_only=True)
class Form:
    """What a string field may hold: a pattern it must match in full, or one of a set of words."""

    what: str  # for messages: "a P4 identifier"
    pattern: re.Pattern[str] | None = None
    words: frozenset[str] = frozenset()
    empty: bool = False  # "" is allowed too (an optional name)
    max_len: int = 256

    def or_empty(self) -> Form:
        """The same form, with "" allowed too."""
        return dataclasses.replace(self, empty=True)

    def problem(self, value: str) -> str | None:
        """Why `value` does not fit (None when it does)."""
        if len(value) > self.max_len:
            return f"is longer than {self.max_len} characters"
        if value == "" and self.empty:
            return None
        ok = value in self.words if self.pattern is None else self.pattern.fullmatch(value) is not None
        return None if ok else f"is not {self.what}"


@dataclass(frozen=True, kw_only=True)
class Range:
    """The ints a number field may hold, both ends included."""

    lo: int
    hi: int

    def problem(self, value: int) -> str | None:
        """Why `value` does not fit (None when it does)."""
        return None if self.lo <= value <= self.hi else f"is out of range [{self.lo}, {self.hi}]"


# Widths beyond this (bits) and stacks beyond this (elements) are refused: the
# pipeline computes with masks of a value's width and allocates stacks whole.
MAX_WIDTH = 1 << 16
MAX_STACK = 1 << 12

_ID = r"[A-Za-z_][A-Za-z0-9_]*"
_QUALIFIED = rf"{_ID}(?:\.{_ID})*"
_UID = r"[A-Za-z_$][A-Za-z0-9_$]*(?:<[A-Za-z0-9_$.<>\[\], ]*>)?"
IDENT = Form(what="a P4 identifier", pattern=re.compile(_ID))
QUALIFIED = Form(what="a P4 name (identifiers joined by dots)", pattern=re.compile(_QUALIFIED))
UID = Form(what="a P4 name or p4switch-compile's name for one", pattern=re.compile(_UID))
CALLEE = Form(what="a P4 name or p4switch-compile's name for one", empty=True,
              pattern=re.compile(f"{_QUALIFIED}|{_UID}"))
KEY_NAME = Form(what="a table key name (a key expression as p4c names it)",
                pattern=re.compile(r"[A-Za-z0-9_.$\[\]:& -]+"))
TEXT = Form(what="text", pattern=re.compile(r".*", re.DOTALL), max_len=1 << 16)
PATH = Form(what="a file name without control characters", pattern=re.compile(r"[^\x00-\x1f\x7f]*"),
            max_len=4096)
DIRECTION = Form(what="a direction ('', in, out, inout)", words=frozenset(("", "in", "out", "inout")))
BINARY_OP = Form(what="a P4 binary operator", words=frozenset((
    "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "++", "|+|", "|-|",
    "==", "!=", "<", "<=", ">", ">=", "&&", "||")))
UNARY_OP = Form(what="a P4 unary operator", words=frozenset(("-", "~", "!")))
KEYSET_KIND = Form(what="a keyset kind", words=frozenset(("exact", "mask", "range", "default", "value_set")))
CONTROLLER_HEADER = Form(what="packet_in or packet_out", words=frozenset(("packet_in", "packet_out")))

_INT32 = Range(lo=-(1 << 31), hi=(1 << 31) - 1)
_COUNT = Range(lo=0, hi=1 << 32)
_VALUE = Range(lo=-(1 << MAX_WIDTH), hi=1 << MAX_WIDTH)

STRINGS: dict[tuple[str, str], Form] = {
    ("Coord", "file"): PATH,
    ("TypeName", "name"): QUALIFIED,
    ("ExternType", "name"): IDENT,
    ("Field", "name"): IDENT,
    ("Field", "type_name"): IDENT.or_empty(),
    ("HeaderType", "name"): IDENT,
    ("HeaderUnionType", "name"): IDENT,
    ("StructType", "name"): QUALIFIED,
    ("EnumType", "name"): QUALIFIED,
    ("EnumType", "members"): QUALIFIED,  # an action_list enum's members are action names
    ("Annotation", "name"): IDENT,
    ("Annotation", "args"): TEXT,
    ("Annotation", "tokens"): TEXT,
    ("Annotation", "keys"): IDENT,
    ("StringLit", "value"): TEXT,
    ("Var", "name"): IDENT,
    ("Var", "uid"): UID,
    ("Member", "name"): IDENT,
    ("UnOp", "op"): UNARY_OP,
    ("BinOp", "op"): BINARY_OP,
    ("StructExpr", "fields"): IDENT,
    ("EnumMember", "enum"): QUALIFIED,
    ("EnumMember", "member"): QUALIFIED,
    ("ErrorMember", "name"): IDENT,
    ("Argument", "name"): IDENT.or_empty(),
    ("Argument", "direction"): DIRECTION,
    ("MethodCall", "method"): IDENT,
    ("MethodCall", "callee"): CALLEE,
    ("SwitchCase", "labels"): QUALIFIED,
    ("Param", "name"): IDENT,
    ("Param", "uid"): UID,
    ("Param", "direction"): DIRECTION,
    ("Param", "type_name"): IDENT.or_empty(),
    ("Action", "name"): IDENT,
    ("Action", "cp_name"): QUALIFIED,
    ("Function", "name"): IDENT,
    ("Function", "uid"): UID,
    ("ActionRef", "action"): QUALIFIED,
    ("KeyElement", "match_kind"): IDENT,
    ("KeyElement", "name"): KEY_NAME,
    ("KeyElement", "type_name"): IDENT.or_empty(),
    ("Keyset", "kind"): KEYSET_KIND,
    ("Table", "name"): IDENT,
    ("Table", "cp_name"): QUALIFIED,
    ("Table", "implementation"): QUALIFIED.or_empty(),
    ("Table", "direct_counter"): QUALIFIED.or_empty(),
    ("Table", "direct_meter"): QUALIFIED.or_empty(),
    ("ExternInstance", "name"): IDENT,
    ("ExternInstance", "cp_name"): QUALIFIED,
    ("ExternInstance", "uid"): UID,
    ("ExternInstance", "type_arg_names"): IDENT.or_empty(),
    ("ValueSet", "name"): IDENT,
    ("ValueSet", "cp_name"): QUALIFIED,
    ("ValueSet", "uid"): UID,
    ("SelectCase", "state"): IDENT,
    ("Transition", "state"): IDENT.or_empty(),
    ("ParserState", "name"): IDENT,
    ("Parser", "name"): IDENT,
    ("Control", "name"): IDENT,
    ("ParserInstance", "name"): IDENT,
    ("ParserInstance", "uid"): UID,
    ("ParserInstance", "cp_name"): QUALIFIED,
    ("ControlInstance", "name"): IDENT,
    ("ControlInstance", "uid"): UID,
    ("ControlInstance", "cp_name"): QUALIFIED,
    ("ControllerHeader", "kind"): CONTROLLER_HEADER,
    ("ControllerHeader", "header"): IDENT,
    ("Digest", "name"): QUALIFIED,
    ("NewType", "name"): IDENT,
    ("Program", "arch"): IDENT,
    ("Program", "source"): PATH,
    ("Program", "types"): QUALIFIED,  # the keys
    ("Program", "errors"): IDENT,
    ("Program", "match_kinds"): IDENT,
    ("Program", "constants"): IDENT,
    ("Program", "pipeline"): IDENT,
    ("Program", "new_types"): IDENT,
    ("Program", "block_order"): IDENT,
}

NUMBERS: dict[tuple[str, str], Range] = {
    ("Coord", "line"): Range(lo=0, hi=_INT32.hi),
    ("Coord", "col"): Range(lo=0, hi=_INT32.hi),
    ("BitsType", "width"): Range(lo=1, hi=MAX_WIDTH),
    ("VarbitType", "max_width"): Range(lo=0, hi=MAX_WIDTH),
    ("StackType", "size"): Range(lo=1, hi=MAX_STACK),
    ("EnumType", "values"): _VALUE,
    ("Annotation", "args"): _VALUE,
    ("Constant", "value"): _VALUE,
    ("Slice", "hi"): Range(lo=0, hi=MAX_WIDTH - 1),
    ("Slice", "lo"): Range(lo=0, hi=MAX_WIDTH - 1),
    ("ConstEntry", "priority"): _INT32,
    ("ConstEntry", "match_rank"): _INT32,
    ("Table", "size"): _COUNT,
    ("ValueSet", "size"): _COUNT,
}


def _slice_bits(node: Any) -> str | None:
    return None if node.lo <= node.hi else f"slice [{node.hi}:{node.lo}] has hi below lo"


# Checks across the fields of one node, after it is built: class name -> problem or None.
_NODE_CHECKS: dict[str, Callable[[Any], str | None]] = {"Slice": _slice_bits}

_SCALARS = {str: "a string", int: "an int", bool: "a bool"}

# A decoder takes the JSON value and its path in the document: linked pairs
# (parent path, step), spelled out only for a message.
_Decoder = Callable[[Any, Any], Any]


def _spell(path: Any) -> str:
    steps: list[str] = []
    while isinstance(path, tuple):
        path, step = path
        steps.append(step)
    return str(path) + "".join(reversed(steps))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class _Bad(Exception):
    """A problem found at `path` (becomes a ProgramFileError at the top, with the nearest coord)."""

    def __init__(self, path: Any, what: str) -> None:
        super().__init__(what)
        self.path = path
        self.what = what
        self.near = ""


class _Schema:
    """Decoders built once per hint: a node class's fields, a container, a checked scalar."""

    def __init__(self, any_fields: Mapping[tuple[str, str], Any]) -> None:
        self.any_fields = any_fields
        self.fields: dict[type, dict[str, _Decoder]] = {}

    def node_fields(self, cls: type) -> dict[str, _Decoder]:
        """The decoder of each field of node class `cls`, built on first use."""
        got = self.fields.get(cls)
        if got is None:
            got = self.fields[cls] = {}  # set first: node types refer to themselves
            hints = typing.get_type_hints(cls)
            for f in dataclasses.fields(cls):
                hint = self.any_fields.get((cls.__name__, f.name), hints[f.name])
                got[f.name] = self.build(hint, (cls.__name__, f.name))
        return got

    def build(self, hint: Any, owner: tuple[str, str]) -> _Decoder:
        """The decoder for a type hint (union, list, tuple, dict or one type)."""
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin in (typing.Union, types.UnionType):
            return self._union(args, owner)
        if origin is list:
            return self._list(self.build(args[0], owner))
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                item = self._list(self.build(args[0], owner))
                return lambda obj, path: tuple(item(obj, path))
            return self._fixed_tuple([self.build(a, owner) for a in args])
        if origin is dict:
            return self._dict(self.build(args[0], owner), self.build(args[1], owner))
        return self._union((hint,), owner)

    def _union(self, options: tuple[Any, ...], owner: tuple[str, str]) -> _Decoder:
        generic = [o for o in options if typing.get_origin(o) is not None]
        if generic:  # `list[Expr] | None`: the container, or null
            if len(generic) > 1 or any(o is not type(None) for o in options if o not in generic):
                raise RuntimeError(f"ir.decode: cannot decode {owner} ({options})")  # a schema bug
            inner = self.build(generic[0], owner)
            return lambda obj, path: None if obj is None else inner(obj, path)
        nodes = {c.__name__: c for c in options if isinstance(c, type) and dataclasses.is_dataclass(c)}
        for c in nodes.values():  # built now, so a field without a rule shows on the first load
            self.node_fields(c)
        enums = [c for c in options if isinstance(c, type) and issubclass(c, enum.Enum)]
        none_ok = type(None) in options
        form = STRINGS.get(owner) if str in options else None
        span = NUMBERS.get(owner) if int in options else None
        bool_ok = bool in options
        known = set(nodes.values()) | set(enums) | {type(None), str, int, bool}
        if (str in options and form is None) or (int in options and span is None) \
                or any(o not in known for o in options):
            raise RuntimeError(f"ir.decode: no rule for {owner} ({options})")  # a schema bug
        kinds = [f"a {n} node" for n in nodes] + [f"a {e.__name__}" for e in enums] + \
            [_SCALARS[t] for t in (str, int, bool) if t in options] + (["null"] if none_ok else [])
        what = ", ".join(kinds[:-1]) + " or " + kinds[-1] if len(kinds) > 1 else kinds[0]
        node_what = " or ".join(nodes) + " node"
        schema = self

        def decode(obj: Any, path: Any) -> Any:
            """`obj` decoded as the first of the hint's options it fits (_Bad when none)."""
            kind = type(obj)
            if kind is dict and nodes:
                tag = obj.get("@")
                cls = nodes.get(tag) if type(tag) is str else None
                if cls is None:
                    raise _Bad(path, f"{_show(tag)} is not a {node_what}")
                return schema.node(cls, obj, path)
            if kind is str and form is not None:
                problem = form.problem(obj)
                if problem is not None:
                    raise _Bad(path, f"{_show(obj)} {problem}")
                return obj
            if kind is int and span is not None:
                problem = span.problem(obj)
                if problem is not None:
                    raise _Bad(path, f"{_show(obj)} {problem}")
                return obj
            if kind is bool and bool_ok:
                return obj
            if obj is None and none_ok:
                return None
            for e in enums:
                if kind is str and obj in e._value2member_map_:
                    return e(obj)
            raise _Bad(path, f"{_show(obj)} is not {what}")

        return decode

    def node(self, cls: type, obj: dict[str, Any], path: Any) -> Any:
        """The node of class `cls` a JSON object describes, its fields decoded and checked."""
        fields = self.node_fields(cls)
        kwargs: dict[str, Any] = {}
        try:
            for key, value in obj.items():
                if key == "@":
                    continue
                dec = fields.get(key)
                if dec is None:
                    raise _Bad(path, f"{cls.__name__} has no field {_show(key)}")
                kwargs[key] = dec(value, (path, "." + key))
        except _Bad as e:
            if not e.near:
                e.near = _coord_text(obj.get("coord"))
            raise
        try:
            node = cls(**kwargs)
        except TypeError:
            missing = [f.name for f in dataclasses.fields(cls)
                       if f.name not in kwargs and f.default is dataclasses.MISSING
                       and f.default_factory is dataclasses.MISSING]
            raise _Bad(path, f"{cls.__name__} without {', '.join(missing) or 'its fields'}") from None
        check = _NODE_CHECKS.get(cls.__name__)
        problem = check(node) if check is not None else None
        if problem is not None:
            raise _Bad(path, problem)
        return node

    @staticmethod
    def _list(item: _Decoder) -> _Decoder:
        def decode(obj: Any, path: Any) -> list[Any]:
            """A JSON list, each item decoded."""
            if type(obj) is not list:
                raise _Bad(path, f"{_show(obj)} is not a list")
            return [item(x, (path, f"[{i}]")) for i, x in enumerate(obj)]

        return decode

    @staticmethod
    def _fixed_tuple(items: list[_Decoder]) -> _Decoder:
        def decode(obj: Any, path: Any) -> tuple[Any, ...]:
            """A JSON list of exactly the tuple's length, each item decoded."""
            if type(obj) is not list or len(obj) != len(items):
                raise _Bad(path, f"{_show(obj)} is not a list of {len(items)}")
            return tuple(d(x, (path, f"[{i}]")) for i, (d, x) in enumerate(zip(items, obj, strict=True)))

        return decode

    @staticmethod
    def _dict(key: _Decoder, value: _Decoder) -> _Decoder:
        def decode(obj: Any, path: Any) -> dict[Any, Any]:
            """A `{"@dict": [[key, value], ...]}` object as a dict (no key twice)."""
            pairs = obj.get("@dict") if type(obj) is dict and len(obj) == 1 else None
            if type(pairs) is not list:
                raise _Bad(path, f"{_show(obj)} is not a mapping ({{'@dict': [[key, value], ...]}})")
            out: dict[Any, Any] = {}
            for i, pair in enumerate(pairs):
                if type(pair) is not list or len(pair) != 2:
                    raise _Bad((path, f"[{i}]"), f"{_show(pair)} is not a [key, value] pair")
                k = key(pair[0], (path, f"[{i}]"))
                if k in out:
                    raise _Bad((path, f"[{k!r}]"), "appears twice")
                out[k] = value(pair[1], (path, f"[{k!r}]"))
            return out

        return decode


def _coord_text(obj: Any) -> str:
    """'file:line:col' of a raw coord that is well formed, else ''."""
    if type(obj) is not dict:
        return ""
    file, line, col = obj.get("file"), obj.get("line"), obj.get("col")
    if type(file) is not str or PATH.problem(file) or type(line) is not int or type(col) is not int:
        return ""
    return f"{file}:{line}:{col}"


_SCHEMAS: dict[type, tuple[_Schema, _Decoder]] = {}


def _schema(root: type, any_fields: Mapping[tuple[str, str], Any]) -> tuple[_Schema, _Decoder]:
    got = _SCHEMAS.get(root)
    if got is None:
        schema = _Schema(any_fields)
        got = _SCHEMAS[root] = (schema, schema.build(root, ("", "")))
    return got


def node_classes(root: type, any_fields: Mapping[tuple[str, str], Any]) -> frozenset[type]:
    """The node classes a `root` node is decoded from: those its field types name, transitively.

    Building the decoder checks that each of their str and int fields has a
    rule (`STRINGS`, `NUMBERS`): RuntimeError names one that has none.
    """
    return frozenset(_schema(root, any_fields)[0].fields)


def decode(obj: Any, root: type, any_fields: Mapping[tuple[str, str], Any]) -> Any:
    """Decode the JSON value `obj` as a `root` node; raises ProgramFileError on anything out of place.

    `any_fields` gives the type to decode each field typed `Any` with, by
    (class name, field name).
    """
    _, root_decoder = _schema(root, any_fields)
    try:
        return root_decoder(obj, "program")
    except _Bad as e:
        near = f" (near {e.near})" if e.near else ""
        raise ProgramFileError(f"invalid program file: {_spell(e.path)}: {e.what}{near}") from None
    except RecursionError:
        raise ProgramFileError("invalid program file: nested too deeply") from None


__all__ = ["ProgramFileError", "Form", "Range", "IDENT", "QUALIFIED", "UID", "CALLEE", "KEY_NAME", "TEXT",
           "PATH", "DIRECTION", "STRINGS", "NUMBERS", "MAX_WIDTH", "MAX_STACK", "decode", "node_classes"]
