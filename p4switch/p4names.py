"""P4Info's names, ids and annotations, as p4c gives them.

p4c's rules reproduced here (control-plane/p4RuntimeSymbolTable.cpp and
p4RuntimeSerializer.cpp, read for behaviour):

* Ids: `@id` honoured (the kind prefix added when missing); the others are
  `prefix << 24 | (jenkins_one_at_a_time(name) & 0xffffff)`, names taken in
  sorted order per kind, collisions resolved by linear probing on the hash
  (`Symbols.compute_ids`).
* Alias: the shortest unique suffix of dot-separated components among all
  control-plane names of the program (`Symbols.alias`).
* Match field, action parameter and packet metadata ids: `@id` or position
  from 1 (`field_ids`).
* Annotations are printed as p4c's ToP4 prints them (`anno_strings`);
  @name, @id, @brief and @description are not repeated there, @brief and
  @description fill `doc` (`doc`).

Names defined here: `P4InfoError`, `Symbols`, `jenkins_hash`, `field_ids`,
`anno`, `anno_strings`, `param_name`, `doc`, `structured_annotations`, `annotate`, `hidden`, `DEFAULT_TABLE_SIZE`
and the id prefixes (`TABLE`, `ACTION` ...).
"""

from __future__ import annotations

import json
from typing import Any, cast

from p4switch import ir

ACTION, TABLE, VALUE_SET, CONTROLLER_HEADER = 0x01, 0x02, 0x03, 0x04
ACTION_PROFILE, COUNTER, DIRECT_COUNTER, METER, DIRECT_METER, REGISTER, DIGEST = (
    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
)
DEFAULT_TABLE_SIZE = 1024
_HIDDEN_ANNOS = {"name", "id", "brief", "description"}


class P4InfoError(ValueError):
    """The program cannot be described in P4Info (duplicate names, bad @id, enum keys).

    `coord` is the source position when one applies; `str()` then reads
    ``file:line:col: error: message`` like the front end's errors.
    """

    def __init__(self, message: str, coord: ir.Coord | None = None) -> None:
        self.message = message
        self.coord = coord
        super().__init__(f"{coord}: error: {message}" if coord is not None else message)


def jenkins_hash(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash (32 bits), as p4c uses for P4Runtime ids."""
    h = 0
    for b in name.encode():
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


def anno(annos: tuple[ir.Annotation, ...], name: str) -> ir.Annotation | None:
    for a in annos:
        if a.name == name:
            return a
    return None


def _fmt_arg(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str) and "=" in v and not v.startswith('"'):
        return v
    return json.dumps(v)


# Annotations p4c's front end parses into expressions (ParseAnnotations and
# the P4Runtime ones); ToP4 prints their arguments separated by ", ". Any other
# annotation keeps its unparsed token list, printed with single spaces between
# tokens, so `@my(1, 2)` reads `@my(1 , 2)` in p4c's P4Info, and so does
# `@platform_property(a = 1, b = 2)`: `@platform_property(a = 1 , b = 2)`.
_PARSED_ANNOS = {
    "name", "deprecated", "noWarn", "length", "pkginfo", "synchronous", "field_list", "match",
    "priority", "id", "brief", "description", "controller_header", "max_group_size",
    "selector_size_semantics", "max_member_weight", "p4runtime_translation",
}

# P4Runtime annotations whose one argument p4c prints as written: a name bare
# (`sum_of_weights`), a string literal in its quotes (`"sum_of_weights"`)
_AS_WRITTEN_ANNOS = {"selector_size_semantics"}


def hidden(annos: tuple[ir.Annotation, ...]) -> bool:
    """Whether a declaration is @hidden from the control plane."""
    return anno(annos, "hidden") is not None


def anno_strings(annos: tuple[ir.Annotation, ...], skip: tuple[str, ...] = ()) -> list[str]:
    out = []
    for a in annos:
        if a.name in _HIDDEN_ANNOS or a.name in skip or a.structured:  # structured: structured_annotations
            continue
        if a.tokens and (a.name not in _PARSED_ANNOS or a.name in _AS_WRITTEN_ANNOS):
            out.append(f"@{a.name}({a.tokens})")
        elif a.args:
            sep = ", " if a.name in _PARSED_ANNOS else " , "
            fmt = str if a.name in _AS_WRITTEN_ANNOS else _fmt_arg
            out.append(f"@{a.name}({sep.join(fmt(x) for x in a.args)})")
        else:
            out.append(f"@{a.name}")
    return out


def param_name(name: str, annos: tuple[ir.Annotation, ...]) -> str:
    """A parameter's or field's control-plane name: its @name if it has one."""
    a = anno(annos, "name")
    if a is not None and a.args and isinstance(a.args[0], str):
        return a.args[0]
    return name


def field_path_name(path: tuple[ir.Field, ...]) -> str:
    """The control-plane name of a leaf field reached by `path` (`ir.leaf_fields`): each
    field's `param_name`, joined by dots (`b.b`, as p4c names a flattened header field)."""
    return ".".join(param_name(f.name, f.annotations) for f in path)


def doc(msg: Any, annos: tuple[ir.Annotation, ...]) -> None:
    for a in annos:
        if a.name in ("brief", "description") and a.args and not a.structured:
            setattr(msg.doc, a.name, str(a.args[0]))


def annotate(msg: Any, annos: tuple[ir.Annotation, ...], skip: tuple[str, ...] = ()) -> None:
    """A P4Info message's `annotations`, `doc` and `structured_annotations` from `annos`."""
    msg.annotations.extend(anno_strings(annos, skip))
    doc(msg, annos)
    structured_annotations(msg, annos)


def structured_annotations(msg: Any, annos: tuple[ir.Annotation, ...]) -> None:
    """`@name[...]` annotations into `msg.structured_annotations`, as p4c writes them."""
    for a in annos:
        if not a.structured:
            continue
        sa = msg.structured_annotations.add()
        sa.name = a.name
        if a.keys:
            kvs = sa.kv_pair_list
            kvs.SetInParent()
            for k, v in zip(a.keys, a.args, strict=True):
                kv = kvs.kv_pairs.add()
                kv.key = k
                _expression(kv.value, v)
        else:
            sa.expression_list.SetInParent()
            for v in a.args:
                _expression(sa.expression_list.expressions.add(), v)


def _expression(e: Any, v: Any) -> None:
    if isinstance(v, bool):
        e.bool_value = v
    elif isinstance(v, int):
        e.int64_value = v
    else:
        e.string_value = str(v)


class Symbols:
    """p4c's P4RuntimeSymbolTable: names per kind, ids, aliases."""

    def __init__(self) -> None:
        self.tables: dict[int, dict[str, int | None]] = {}
        self.assigned: set[int] = set()
        self.suffix_root: dict[str, Any] = {}
        self.all_names: set[str] = set()

    def add(self, kind: int, name: str, annos: tuple[ir.Annotation, ...] = ()) -> None:
        """Register `name` under `kind` once, with its @id if it has one (P4InfoError when bad)."""
        table = self.tables.setdefault(kind, {})
        if name in table:
            return
        ida = anno(annos, "id")
        uid = None
        if ida is not None and ida.args and isinstance(ida.args[0], int):
            uid = ida.args[0]
            prefix = uid & 0xFF000000
            if prefix and prefix != kind << 24:
                raise P4InfoError(f"{name}: @id has the wrong 8-bit prefix")
            uid |= kind << 24
            if uid in self.assigned:
                raise P4InfoError(f"@id {uid} is assigned to multiple declarations")
            self.assigned.add(uid)
        table[name] = uid
        if name not in self.all_names:
            self.all_names.add(name)
            node = self.suffix_root
            for comp in reversed(name.split(".")):
                entry = node.setdefault(comp, [0, {}])
                entry[0] += 1
                node = entry[1]

    def compute_ids(self) -> None:
        """Give each name without an @id the first free id from its Jenkins hash on (as p4c)."""
        for kind in sorted(self.tables):
            table = self.tables[kind]
            for name in sorted(n for n, v in table.items() if v is None):
                h = jenkins_hash(name)
                value = h
                while True:
                    cand = (kind << 24) | (value & 0xFFFFFF)
                    if cand not in self.assigned:
                        break
                    value = (value + 1) & 0xFFFFFFFF
                    if value == h:
                        raise P4InfoError(f"no available id to represent {name} in P4Runtime")
                self.assigned.add(cand)
                table[name] = cand

    def id(self, kind: int, name: str) -> int:
        """The P4Runtime id of `name` under `kind` (after `compute_ids`)."""
        return cast(int, self.tables[kind][name])  # None only until compute_ids()

    def alias(self, name: str) -> str:
        """The shortest dot-separated suffix of `name` no other name shares (p4c's alias)."""
        comps = name.split(".")
        node = self.suffix_root
        needed = 0
        for comp in reversed(comps):
            count, node = node[comp]
            needed += 1
            if count < 2:
                break
        return ".".join(comps[len(comps) - needed :])


def field_ids(annos_list: list[tuple[ir.Annotation, ...]]) -> list[int]:
    """p4c's FieldIdAllocator: @id first, then positions from 1 skipping taken ids."""
    ids: list[int | None] = []
    taken: set[int] = set()
    for annos in annos_list:
        a = anno(annos, "id")
        if a is not None and a.args and isinstance(a.args[0], int):
            if a.args[0] == 0:
                raise P4InfoError("0 is not a valid @id value")
            if a.args[0] in taken:
                raise P4InfoError(f"@id {a.args[0]} is used multiple times")
            ids.append(a.args[0])
            taken.add(a.args[0])
        else:
            ids.append(None)
    index = 1
    out = []
    for v in ids:
        if v is not None:
            index += 1
            out.append(v)
            continue
        while index in taken:
            index += 1
        taken.add(index)
        out.append(index)
    return out


__all__ = ["P4InfoError", "Symbols", "jenkins_hash", "field_ids", "anno", "anno_strings", "param_name", "field_path_name", "doc",
           "structured_annotations", "annotate",
           "hidden", "DEFAULT_TABLE_SIZE", "ACTION", "TABLE", "VALUE_SET", "CONTROLLER_HEADER", "ACTION_PROFILE",
           "COUNTER", "DIRECT_COUNTER", "METER", "DIRECT_METER", "REGISTER", "DIGEST"]
