"""P4Runtime static entries: the `entries` of tables as one WriteRequest, like p4c.

`p4c --p4runtime-entries-files` writes a `p4.v1.WriteRequest` holding one
INSERT update per entry of every table that has `entries` (p4c's
P4RuntimeEntriesConverter in control-plane/p4RuntimeSerializer.cpp, read
for behaviour). Reproduced here:

* tables in P4Info order; match fields numbered 1, 2, ... in key order,
  `selector` keys skipped (key `@id`s are not used, as in p4c); action
  parameters numbered 1, 2, ...;
* values are big-endian byte strings padded to the field's width
  (ceil(W/8) bytes); key widths are the P4Info match-field bitwidths,
  parameter widths those of the declared (underlying) type; negative values
  are rejected;
* don't-care matches are left out: `_`/`default` for lpm, ternary, range and
  optional keys, a zero mask, a full range; an lpm mask must be a prefix;
  masked-off value bits are cleared;
* a table whose key has a ternary, range or optional field gives each entry
  a priority: `const entries` count down from the number of entries to 1 in
  program order (`@priority` is ignored, as p4c warns); non-const `entries`
  use the priority the front end gave each one (`priority =`, or computed
  from `largest_priority_wins`/`priority_delta` like p4c's EntryPriorities,
  see `p4switch.frontend.priorities`); P4Runtime priorities are int32;
* `is_const` is set for `const entries` and for `const` entries of `entries`.

Names defined here: `build_entries`, `write_entries`.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format, text_format

from p4switch import ir
from p4switch.p4names import P4InfoError
from p4switch.p4types import cp_width
from p4switch.proto import p4i, p4r

_PRIORITY_KINDS = ("ternary", "range", "optional")
_KINDS = ("exact", "lpm", "ternary", "range", "optional")
_INT_MAX = (1 << 31) - 1


def _tables(program: ir.Program) -> dict[str, ir.Table]:
    """Table cp_name -> table (the first declared under that name)."""
    out: dict[str, ir.Table] = {}
    for t in ir.tables_of(program):
        out.setdefault(t.cp_name, t)
    return out


def _bytes(v: int, width: int, coord: ir.Coord) -> bytes:
    if v < 0:
        raise P4InfoError(f"{v}: negative values are not supported in P4Runtime entries", coord)
    if width <= 0 or v >> width:
        raise P4InfoError(f"cannot represent {v} on {width} bits", coord)
    return v.to_bytes((width + 7) // 8, "big")


class _Converter:
    def __init__(self, program: ir.Program, info: p4i.P4Info) -> None:
        self.p = program
        self.info = info
        self.actions = {a.preamble.id: a for a in info.actions}
        self.action_ids = {a.preamble.name: a.preamble.id for a in info.actions}
        self.ir_actions: dict[str, ir.Action] = {a.cp_name: a for a in program.actions}
        for loc in ir.control_locals(self.p.pipeline.values()):
            if isinstance(loc, ir.Action):
                self.ir_actions.setdefault(loc.cp_name, loc)

    def value(self, x: ir.Expr | None, coord: ir.Coord) -> int:
        """The integer a key or argument expression stands for (constants only)."""
        if isinstance(x, ir.Constant):
            return x.value
        if isinstance(x, ir.BoolLit):
            return int(x.value)
        if isinstance(x, ir.EnumMember):
            et = self.p.types.get(x.enum)
            if isinstance(et, ir.EnumType) and et.underlying is not None:
                return et.values[et.members.index(x.member)]
            raise P4InfoError(f"{x.enum}.{x.member}: invalid Member key expression", coord)
        if isinstance(x, ir.Cast):
            return self.value(x.expr, coord)
        raise P4InfoError("invalid key expression in table entries", coord)

    def request(self) -> p4r.WriteRequest:
        """The WriteRequest: one INSERT per entry of each table with `entries`, in P4Info order."""
        req = p4r.WriteRequest()
        tables = _tables(self.p)
        for t in self.info.tables:
            table = tables.get(t.preamble.name)
            if table is None or table.const_entries is None:
                continue
            widths = [mf.bitwidth for mf in t.match_fields]
            self.add_table(req, t.preamble.id, table, widths)
        return req

    def add_table(self, req: p4r.WriteRequest, table_id: int, table: ir.Table, widths: list[int]) -> None:
        """Add an INSERT update for each entry of `table` to `req`."""
        entries = table.const_entries or []
        needs_priority = any(k.match_kind in _PRIORITY_KINDS for k in table.keys)
        countdown = len(entries)
        for e in entries:
            u = req.updates.add()
            u.type = p4r.Update.INSERT
            te = u.entity.table_entry
            te.table_id = table_id
            self.add_match(te, table, e, widths)
            self.add_action(te, e.action)
            te.is_const = table.entries_const or e.is_const
            if needs_priority:
                if table.entries_const:
                    te.priority = countdown
                elif e.priority is None:
                    raise P4InfoError("entry should have priority", e.coord)
                elif e.priority > _INT_MAX:  # p4c: Constant::asInt()
                    raise P4InfoError(f"{e.priority}: Value too large for int", e.coord)
                else:
                    te.priority = e.priority
                countdown -= 1

    def add_match(self, te: Any, table: ir.Table, e: ir.ConstEntry, widths: list[int]) -> None:
        """Fill the match fields of `te` from entry `e`, don't-care fields left out."""
        fid = 0
        for key, ks in zip(table.keys, e.keys, strict=True):
            if key.match_kind not in _KINDS:
                if ks.kind != "default":
                    raise P4InfoError(f"{key.match_kind}: match type not supported by P4Runtime serializer", ks.coord)
                continue
            width = widths[fid]
            fid += 1
            kind, coord = key.match_kind, ks.coord
            if ks.kind == "default":
                if kind == "exact":
                    raise P4InfoError("invalid key expression in table entries (an exact key needs a value)", coord)
                continue
            if kind == "exact":
                m = te.match.add()
                m.field_id = fid
                m.exact.value = _bytes(self.value(ks.value, coord), width, coord)
            elif kind == "lpm":
                self._lpm(te, fid, ks, width)
            elif kind == "ternary":
                v = self.value(ks.value, coord)
                mask = self.value(ks.mask, coord) if ks.kind == "mask" else (1 << width) - 1
                if mask == 0:
                    continue
                m = te.match.add()
                m.field_id = fid
                m.ternary.value = _bytes(v & mask, width, coord)
                m.ternary.mask = _bytes(mask, width, coord)
            elif kind == "range":
                lo = self.value(ks.value, coord)
                hi = self.value(ks.hi, coord) if ks.kind == "range" else lo
                if lo > hi:
                    raise P4InfoError("invalid range for table entry", coord)
                if lo == 0 and hi == (1 << width) - 1:
                    continue
                m = te.match.add()
                m.field_id = fid
                m.range.low = _bytes(lo, width, coord)
                m.range.high = _bytes(hi, width, coord)
            else:  # optional
                m = te.match.add()
                m.field_id = fid
                m.optional.value = _bytes(self.value(ks.value, coord), width, coord)

    def _lpm(self, te: Any, fid: int, ks: ir.Keyset, width: int) -> None:
        coord = ks.coord
        v = self.value(ks.value, coord)
        if ks.kind == "mask":
            mask = self.value(ks.mask, coord)
            zeros = width if mask == 0 else (mask & -mask).bit_length() - 1
            if zeros + bin(mask).count("1") != width:
                raise P4InfoError("invalid mask for LPM key", coord)
            if mask == 0:
                return
            v &= mask
            prefix = width - zeros
        else:
            prefix = width
        m = te.match.add()
        m.field_id = fid
        m.lpm.value = _bytes(v, width, coord)
        m.lpm.prefix_len = prefix

    def add_action(self, te: Any, ref: ir.ActionRef) -> None:
        """Fill the action of `te` from `ref`, parameters numbered from 1."""
        act = te.action.action
        act.action_id = self.action_ids[ref.action]
        decl = self.ir_actions.get(ref.action)
        data = [p for p in decl.params if not p.direction] if decl is not None else []
        for i, (arg, param) in enumerate(zip(ref.args, data, strict=False), start=1):
            p = act.params.add()
            p.param_id = i
            p.value = _bytes(self.value(arg, ref.coord), cp_width(self.p, param.type), ref.coord)


def build_entries(program: ir.Program, info: p4i.P4Info) -> p4r.WriteRequest:
    """The WriteRequest p4c emits for the tables' `entries` (raises `P4InfoError`)."""
    return _Converter(program, info).request()


def write_entries(req: p4r.WriteRequest, path: str) -> None:
    """Write in the format given by the extension (.txt/.txtpb text, .json, .bin), like p4c."""
    if path.endswith(".json"):
        mode, payload = "w", json_format.MessageToJson(req, indent=2)
    elif path.endswith(".bin"):
        mode, payload = "wb", req.SerializeToString()
    elif path.endswith((".txt", ".txtpb")):
        mode, payload = "w", text_format.MessageToString(req)
    else:
        raise P4InfoError(f"{path}: unknown file kind; known suffixes are .bin, .txt, .txtpb, .json")
    with open(path, mode) as f:
        f.write(payload)


__all__ = ["build_entries", "write_entries"]
