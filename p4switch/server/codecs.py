"""Per-table and per-action translators, compiled once from the P4Info.

Every TableEntry write or read needs the same facts about its table (each
match field's id -> key position, match kind and width; which actions are
allowed and in which scope; whether a priority is needed) and about each
action (parameter ids and widths). Looking them up in P4Info messages on
every update costs more than the rest of the write, so `build_codecs` turns
them into plain Python objects when a pipeline config is installed, and the
`decode_*` / `encode_*` functions here work on those objects only.

Decoders check every rule the P4Runtime spec sets for the value they decode
(§8.3 byte strings, §9.1.1 match canonical form) and raise `P4RTError` with
the spec's code; encoders fill protobuf messages in place (no intermediate
messages to copy) with canonical byte strings.

Names defined here: `FieldCodec`, `ActionCodec`, `TableCodec`, `build_codecs`,
`decode_match`, `decode_action`, `encode_match_into`, `encode_action_into`;
`EXACT`, `LPM`, `TABLE_ONLY`, `DEFAULT_ONLY`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, cast

from p4switch.pipeline.state import ActionCall, FieldMatch
from p4switch.proto import p4i
from p4switch.translate import (
    INVALID_ARGUMENT,
    PERMISSION_DENIED,
    P4InfoIndex,
    P4RTError,
    decode_value,
    invalid,
)

_NEEDS_PRIORITY = frozenset({"ternary", "range", "optional"})
EXACT, LPM = "exact", "lpm"
TABLE_ONLY, DEFAULT_ONLY = p4i.ActionRef.TABLE_ONLY, p4i.ActionRef.DEFAULT_ONLY


def _fast_field_match() -> Callable[[str, int, int, int, int], FieldMatch]:
    """FieldMatch(kind, value, mask, prefix_len, high), filling its __dict__ directly.

    The frozen dataclass sets each field through object.__setattr__, which costs
    more than the rest of decoding a match field; the object built here is equal
    (and hashes equal) to the one __init__ builds. Falls back to the class if its
    fields change or it grows __slots__.
    """
    if hasattr(FieldMatch, "__slots__") or tuple(f.name for f in dataclasses.fields(FieldMatch)) != (
            "kind", "value", "mask", "prefix_len", "high"):
        return lambda k, v, m, p, h: FieldMatch(kind=k, value=v, mask=m, prefix_len=p, high=h)
    new = object.__new__

    def make(kind: str, value: int, mask: int, prefix_len: int, high: int) -> FieldMatch:
        """A FieldMatch equal to `FieldMatch(...)`, built by filling its __dict__."""
        o = new(FieldMatch)
        d = o.__dict__
        d["kind"] = kind
        d["value"] = value
        d["mask"] = mask
        d["prefix_len"] = prefix_len
        d["high"] = high
        return o
    return make


def _fast_action_call() -> Callable[[str, tuple[int, ...]], ActionCall]:
    """ActionCall(action, args) the same way (see _fast_field_match)."""
    if hasattr(ActionCall, "__slots__") or tuple(f.name for f in dataclasses.fields(ActionCall)) != (
            "action", "args"):
        return lambda a, args: ActionCall(action=a, args=args)
    new = object.__new__

    def make(action: str, args: tuple[int, ...]) -> ActionCall:
        """An ActionCall equal to `ActionCall(...)`, built by filling its __dict__."""
        o = new(ActionCall)
        d = o.__dict__
        d["action"] = action
        d["args"] = args
        return o
    return make


_field_match = _fast_field_match()
_action_call = _fast_action_call()


def _value(raw: bytes, top: int, width: int, what: str) -> int:
    """decode_value's fast path: the common valid case without a call."""
    v = int.from_bytes(raw, "big")
    if not raw or v >= top:
        decode_value(raw, width, what)  # raises the precise OUT_OF_RANGE
    return v


class FieldCodec:
    """One match field: where it goes in the pipeline key and how it decodes."""

    __slots__ = ("fid", "pos", "kind", "width", "name", "decode")

    def __init__(self, fid: int, pos: int, kind: str, width: int, name: str) -> None:
        self.fid, self.pos, self.kind, self.width, self.name = fid, pos, kind, width, name
        self.decode = _field_decoder(kind, width, name)


def _field_decoder(kind: str, w: int, name: str) -> Callable[[Any], FieldMatch]:
    top = 1 << w
    what = f"match field {name!r}"
    make = _field_match

    def wrong(which: str | None) -> P4RTError:
        """The error for a FieldMatch of another match kind than the field's."""
        return invalid(f"match field {name!r} is {kind}, got {which}")

    if kind == "exact":
        def exact(fm: Any) -> FieldMatch:
            """Decode an exact FieldMatch."""
            if not fm.HasField("exact"):
                raise wrong(fm.WhichOneof("field_match_type"))
            raw = fm.exact.value
            v = int.from_bytes(raw, "big")
            if not raw or v >= top:
                decode_value(raw, w, what)
            return make(EXACT, v, 0, 0, 0)
        return exact
    if kind == "optional":
        def optional(fm: Any) -> FieldMatch:
            """Decode an optional FieldMatch."""
            if not fm.HasField("optional"):
                raise wrong(fm.WhichOneof("field_match_type"))
            return make("optional", _value(fm.optional.value, top, w, what), 0, 0, 0)
        return optional
    if kind == "lpm":
        def lpm(fm: Any) -> FieldMatch:
            """Decode an LPM FieldMatch (prefix 1..width, no bits beyond it)."""
            if not fm.HasField("lpm"):
                raise wrong(fm.WhichOneof("field_match_type"))
            m = fm.lpm
            plen = m.prefix_len
            raw = m.value
            value = int.from_bytes(raw, "big")
            if not raw or value >= top:
                decode_value(raw, w, what)
            if plen <= 0 or plen > w:
                raise invalid(f"{what}: prefix length {plen} not in 1..{w} (omit don't-care fields)")
            if value & ((1 << (w - plen)) - 1):
                raise invalid(f"{what}: value has bits set beyond the /{plen} prefix")
            return make(LPM, value, 0, plen, 0)
        return lpm
    if kind == "ternary":
        def ternary(fm: Any) -> FieldMatch:
            """Decode a ternary FieldMatch (mask not zero, no value bits outside it)."""
            if not fm.HasField("ternary"):
                raise wrong(fm.WhichOneof("field_match_type"))
            m = fm.ternary
            value = _value(m.value, top, w, what)
            mask = _value(m.mask, top, w, what + " mask")
            if mask == 0:
                raise invalid(f"{what}: mask is zero (omit don't-care fields)")
            if value & ~mask:
                raise invalid(f"{what}: value has bits set outside the mask")
            return make("ternary", value, mask, 0, 0)
        return ternary
    if kind == "range":
        def range_(fm: Any) -> FieldMatch:
            """Decode a range FieldMatch (low <= high, not the full range)."""
            if not fm.HasField("range"):
                raise wrong(fm.WhichOneof("field_match_type"))
            m = fm.range
            low = _value(m.low, top, w, what + " low")
            high = _value(m.high, top, w, what + " high")
            if low > high:
                raise invalid(f"{what}: low bound {low} is above high bound {high}")
            if low == 0 and high == top - 1:
                raise invalid(f"{what}: full range (omit don't-care fields)")
            return make("range", low, 0, 0, high)
        return range_

    def unsupported(fm: Any) -> FieldMatch:
        """Refuse a field of a match kind p4switch does not support."""
        if fm.WhichOneof("field_match_type") != kind:
            raise wrong(fm.WhichOneof("field_match_type"))
        raise P4RTError(INVALID_ARGUMENT, f"{what}: match kind {kind} is not supported")
    return unsupported


class ActionCodec:
    """One action: its P4Info id and name and its parameters (id, width, name) in order."""

    __slots__ = ("id", "name", "params", "by_id", "fast")

    def __init__(self, a: p4i.Action) -> None:
        self.id = a.preamble.id
        self.name = a.preamble.name
        self.params = tuple((p.id, p.bitwidth, p.name) for p in a.params)
        self.by_id = {p.id: (i, p.bitwidth, p.name) for i, p in enumerate(a.params)}
        self.fast = _fast_params(self.name, tuple((p.id, p.bitwidth) for p in a.params))


def _fast_params(name: str, specs: tuple[tuple[int, int], ...]) -> Callable[[Any], ActionCall | None]:
    """The ActionCall of an Action's params when they come in P4Info order and are all
    valid; None for anything else (decode_action then finds the precise error or order)."""
    make = _action_call
    n = len(specs)
    if n == 0:
        call = make(name, ())
        return lambda params: call if not params else None
    if n == 1:
        ((i0, w0),) = specs

        def one(params: Any) -> ActionCall | None:
            """The ActionCall of exactly one valid parameter in P4Info order, else None."""
            if len(params) != 1:
                return None
            p0 = params[0]
            raw = p0.value
            v0 = int.from_bytes(raw, "big")
            if p0.param_id != i0 or not raw or v0 >> w0:
                return None
            return make(name, (v0,))
        return one
    if n == 2:
        (i0, w0), (i1, w1) = specs

        def two(params: Any) -> ActionCall | None:
            """The ActionCall of exactly two valid parameters in P4Info order, else None."""
            if len(params) != 2:
                return None
            p0 = params[0]  # indexing: about half the cost of unpacking a repeated field
            p1 = params[1]
            r0, r1 = p0.value, p1.value
            v0, v1 = int.from_bytes(r0, "big"), int.from_bytes(r1, "big")
            if p0.param_id != i0 or p1.param_id != i1 or not r0 or not r1 or v0 >> w0 or v1 >> w1:
                return None
            return make(name, (v0, v1))
        return two

    def many(params: Any) -> ActionCall | None:
        """The ActionCall of all parameters valid and in P4Info order, else None."""
        if len(params) != n:
            return None
        out = []
        for p, (pid, w) in zip(params, specs, strict=True):  # lengths checked above
            raw = p.value
            v = int.from_bytes(raw, "big")
            if p.param_id != pid or not raw or v >> w:
                return None
            out.append(v)
        return make(name, tuple(out))
    return many


class TableCodec:
    """One table: its match fields by id, allowed actions with scopes, table-level flags."""

    __slots__ = ("id", "name", "table", "fields", "decoders", "order", "n_exact", "needs_priority", "impl_id",
                 "is_const", "const_default", "idle_ok", "counter", "meter", "refs", "keyless", "single")

    def __init__(self, t: p4i.Table, ix: P4InfoIndex, key_pos: dict[int, int],
                 actions: dict[int, ActionCodec]) -> None:
        self.id = t.preamble.id
        self.name = t.preamble.name
        self.table = t
        self.fields: dict[int, FieldCodec] = {}
        for mf in t.match_fields:
            self.fields[mf.id] = FieldCodec(mf.id, key_pos[mf.id], ix.match_type(mf), mf.bitwidth, mf.name)
        # field id -> (position, decoder, 1 if exact else 0): what decode_match needs, in one lookup
        self.decoders = {f.fid: (f.pos, f.decode, int(f.kind == "exact")) for f in self.fields.values()}
        # P4Info order, for reads: (position, field id, kind)
        self.order = tuple((f.pos, f.fid, f.kind) for f in self.fields.values())
        self.n_exact = sum(1 for f in self.fields.values() if f.kind == "exact")
        # a one-field key (most route and MAC tables): (field id, position, decoder)
        only = next(iter(self.fields.values())) if len(self.fields) == 1 else None
        self.single = (only.fid, only.pos, only.decode) if only is not None else None
        self.needs_priority = any(f.kind in _NEEDS_PRIORITY for f in self.fields.values())
        self.impl_id = t.implementation_id
        self.is_const = t.is_const_table
        self.const_default = t.const_default_action_id
        self.idle_ok = t.idle_timeout_behavior != p4i.Table.NO_TIMEOUT
        self.counter = self.id in ix.table_counter
        self.meter = self.id in ix.table_meter
        self.keyless = not t.match_fields
        self.refs = {r.id: (actions[r.id], r.scope) for r in t.action_refs if r.id in actions}


def build_codecs(p4info: p4i.P4Info, ix: P4InfoIndex, key_pos: dict[int, dict[int, int]]
                 ) -> tuple[dict[int, TableCodec], dict[int, ActionCodec], dict[str, ActionCodec]]:
    """The codecs of a P4Info: tables by id, actions by id, actions by name."""
    actions = {a.preamble.id: ActionCodec(a) for a in p4info.actions}
    by_name = {a.name: a for a in actions.values()}
    tables = {t.preamble.id: TableCodec(t, ix, key_pos[t.preamble.id], actions) for t in p4info.tables}
    return tables, actions, by_name


def decode_match(tc: TableCodec, fields: Any) -> dict[int, FieldMatch]:
    """The key of an entry, canonical, by key position; don't-care fields are absent."""
    single = tc.single
    if single is not None and len(fields) == 1:
        fm = fields[0]
        if fm.field_id == single[0]:
            return {single[1]: single[2](fm)}
    out: dict[int, FieldMatch] = {}
    decoders = tc.decoders
    n_exact = 0
    for fm in fields:
        d = decoders.get(fm.field_id)
        if d is None:
            raise invalid(f"table {tc.name!r} has no match field id {fm.field_id}")
        pos, decode, exact = d
        if pos in out:
            raise invalid(f"match field id {fm.field_id} given twice")
        out[pos] = decode(fm)
        n_exact += exact
    if n_exact != tc.n_exact:
        missing = [f.name for f in tc.fields.values() if f.kind == "exact" and f.pos not in out]
        raise invalid(f"exact match field {missing[0]!r} is missing")
    return out


def decode_action(tc: TableCodec | None, actions: dict[int, ActionCodec], action: Any,
                  *, default: bool = False) -> ActionCall:
    """An Action spec, checked against the table's action refs and scopes (any action without a table)."""
    aid = action.action_id
    if tc is not None:
        ref = tc.refs.get(aid)
        if ref is None:
            a = actions.get(aid)
            if a is None:
                raise invalid(f"unknown action id {aid}")
            raise invalid(f"action {a.name!r} is not an action of table {tc.name!r}")
        a, scope = ref
        if scope == TABLE_ONLY and default:
            raise P4RTError(PERMISSION_DENIED, f"action {a.name!r} is @tableonly")
        if scope == DEFAULT_ONLY and not default:
            raise P4RTError(PERMISSION_DENIED, f"action {a.name!r} is @defaultonly")
    else:
        a = actions.get(aid)
        if a is None:
            raise invalid(f"unknown action id {aid}")
    params = action.params
    call = a.fast(params)
    if call is not None:
        return call
    n = len(a.params)
    if len(params) == n:
        # The common case: every parameter once. Place by id, then check all came.
        args: list[int | None] = [None] * n
        by_id = a.by_id
        for p in params:
            spec = by_id.get(p.param_id)
            if spec is None:
                raise invalid(f"action {a.name!r} has no parameter id {p.param_id}")
            i, w, pname = spec
            if args[i] is not None:
                raise invalid(f"action {a.name!r}: parameter id {p.param_id} given twice")
            raw = p.value
            v = int.from_bytes(raw, "big")
            if not raw or v >> w:
                decode_value(raw, w, f"parameter {pname!r}")
            args[i] = v
        # n distinct parameter ids filled all n slots.
        return _action_call(a.name, tuple(cast("list[int]", args)))
    given: dict[int, bytes] = {}
    for p in params:
        if p.param_id in given:
            raise invalid(f"action {a.name!r}: parameter id {p.param_id} given twice")
        given[p.param_id] = p.value
    for pid, _w, pname in a.params:
        if pid not in given:
            raise invalid(f"action {a.name!r}: parameter {pname!r} is missing")
    raise invalid(f"action {a.name!r} has no parameter id {sorted(set(given) - set(a.by_id))[0]}")


def _bytes(v: int) -> bytes:
    return v.to_bytes((v.bit_length() + 7) >> 3 or 1, "big")


def encode_match_into(tc: TableCodec, match: dict[int, FieldMatch], te: Any) -> None:
    """Append the entry's match fields (P4Info order, canonical values) to TableEntry `te`."""
    add = te.match.add
    for pos, fid, kind in tc.order:
        m = match.get(pos)
        if m is None:
            continue
        fm = add()
        fm.field_id = fid
        if kind == "exact":
            fm.exact.value = _bytes(m.value)
        elif kind == "lpm":
            x = fm.lpm
            x.value = _bytes(m.value)
            x.prefix_len = m.prefix_len
        elif kind == "ternary":
            x = fm.ternary
            x.value = _bytes(m.value)
            x.mask = _bytes(m.mask)
        elif kind == "range":
            x = fm.range
            x.low = _bytes(m.value)
            x.high = _bytes(m.high)
        elif kind == "optional":
            fm.optional.value = _bytes(m.value)


def encode_action_into(a: ActionCodec, call: ActionCall, msg: Any) -> None:
    """Fill p4.v1.Action `msg` with `call` (canonical parameter values)."""
    msg.action_id = a.id
    add = msg.params.add
    for (pid, _w, _n), v in zip(a.params, call.args, strict=False):
        p = add()
        p.param_id = pid
        p.value = _bytes(v)


__all__ = ["FieldCodec", "ActionCodec", "TableCodec", "build_codecs", "decode_match",
           "decode_action", "encode_match_into", "encode_action_into", "EXACT", "LPM",
           "TABLE_ONLY", "DEFAULT_ONLY"]
