"""P4Runtime <-> p4switch value conversion: byte strings, ids and names.

P4Runtime carries integers as big-endian byte strings and names P4 objects by
numeric ids from the P4Info; the pipeline (`p4switch.pipeline.state`) works
with Python ints and control-plane names. This module is the one place where
the two meet:

* `decode_value` / `encode_value`: the byte-string codec of P4Runtime spec
  §8.4 (Bytestrings). Writes accept any zero padding and reject values wider
  than the field with OUT_OF_RANGE; reads answer with the canonical (shortest)
  string, so what a client writes is what it reads back.
* `P4InfoIndex`: id/name lookups over a `p4.config.v1.P4Info`, built once per
  pipeline config (`table`, `action`, `counter` ... raise `P4RTError` with the
  code the spec prescribes for an unknown id).
* `P4RTError`: the one exception of the P4Runtime boundary; it carries a
  `google.rpc.Code` value (`p4switch.pipeline.state.Code`, plus OK, CANCELLED
  and UNAVAILABLE) that the server turns into a gRPC status or a per-update
  `p4.v1.Error`.
* `pack_controller_header` / `unpack_controller_header`: the BMv2 way of
  carrying packet-in/out metadata as a header in front of the packet, laid
  out from the P4Info `controller_packet_metadata`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.pipeline.state import Code
from p4switch.proto import p4i

# google.rpc.Code values: the pipeline's `Code` (the codes a state operation can
# fail with) is the one enum; the few the server alone needs are added here.
OK = 0
CANCELLED = 1
UNAVAILABLE = 14
UNKNOWN = Code.UNKNOWN
INVALID_ARGUMENT = Code.INVALID_ARGUMENT
NOT_FOUND = Code.NOT_FOUND
ALREADY_EXISTS = Code.ALREADY_EXISTS
PERMISSION_DENIED = Code.PERMISSION_DENIED
RESOURCE_EXHAUSTED = Code.RESOURCE_EXHAUSTED
FAILED_PRECONDITION = Code.FAILED_PRECONDITION
OUT_OF_RANGE = Code.OUT_OF_RANGE
UNIMPLEMENTED = Code.UNIMPLEMENTED
INTERNAL = Code.INTERNAL


class P4RTError(Exception):
    """A P4Runtime request (or one update of it) the server refuses."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message


def invalid(message: str) -> P4RTError:
    """A P4RTError with code INVALID_ARGUMENT."""
    return P4RTError(INVALID_ARGUMENT, message)


# --------------------------------------------------------------------------
# Byte strings
# --------------------------------------------------------------------------


def decode_value(data: bytes, bitwidth: int, what: str) -> int:
    """Decode an unsigned P4Runtime byte string that must fit `bitwidth` bits."""
    if not data:
        raise P4RTError(OUT_OF_RANGE, f"{what}: empty byte string")
    value = int.from_bytes(data, "big")
    if bitwidth > 0 and value.bit_length() > bitwidth:
        raise P4RTError(
            OUT_OF_RANGE, f"{what}: value 0x{data.hex()} does not fit in {bitwidth} bits"
        )
    return value


def encode_value(value: int) -> bytes:
    """The canonical (shortest) byte string of a non-negative int; 0 is b'\\x00'."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def uint128(msg: Any) -> int:
    """A p4.v1.Uint128 as an int."""
    return (msg.high << 64) | msg.low


# --------------------------------------------------------------------------
# Controller packet metadata as a header (BMv2 packet-in/out framing)
# --------------------------------------------------------------------------


def _header_bits(meta: p4i.ControllerPacketMetadata) -> int:
    return sum(m.bitwidth for m in meta.metadata)


def pack_controller_header(meta: p4i.ControllerPacketMetadata, values: dict[int, int]) -> bytes:
    """Serialise metadata (by id) as the @controller_header header, MSB first, byte padded."""
    acc = 0
    for m in meta.metadata:
        acc = (acc << m.bitwidth) | values.get(m.id, 0)
    bits = _header_bits(meta)
    pad = (-bits) % 8
    return (acc << pad).to_bytes((bits + pad) // 8, "big")


def unpack_controller_header(
    meta: p4i.ControllerPacketMetadata, data: bytes
) -> tuple[dict[int, int], bytes]:
    """Split a packet from the CPU port into (metadata by id, payload)."""
    bits = _header_bits(meta)
    nbytes = (bits + 7) // 8
    acc = int.from_bytes(data[:nbytes], "big") >> ((-bits) % 8)
    values: dict[int, int] = {}
    for m in reversed(meta.metadata):
        values[m.id] = acc & ((1 << m.bitwidth) - 1)
        acc >>= m.bitwidth
    return values, data[nbytes:]


# --------------------------------------------------------------------------
# P4Info index
# --------------------------------------------------------------------------


@dataclass
class P4InfoIndex:
    """Lookups by id over one P4Info (ids are unique across object kinds)."""

    p4info: p4i.P4Info
    tables: dict[int, p4i.Table] = field(default_factory=dict)
    actions: dict[int, p4i.Action] = field(default_factory=dict)
    profiles: dict[int, p4i.ActionProfile] = field(default_factory=dict)
    counters: dict[int, p4i.Counter] = field(default_factory=dict)
    direct_counters: dict[int, p4i.DirectCounter] = field(default_factory=dict)
    meters: dict[int, p4i.Meter] = field(default_factory=dict)
    direct_meters: dict[int, p4i.DirectMeter] = field(default_factory=dict)
    registers: dict[int, p4i.Register] = field(default_factory=dict)
    digests: dict[int, p4i.Digest] = field(default_factory=dict)
    value_sets: dict[int, p4i.ValueSet] = field(default_factory=dict)
    cpm: dict[str, p4i.ControllerPacketMetadata] = field(default_factory=dict)
    action_by_name: dict[str, p4i.Action] = field(default_factory=dict)
    # table id -> {match field id: (position, MatchField)}
    match_fields: dict[int, dict[int, tuple[int, p4i.MatchField]]] = field(default_factory=dict)
    # table id -> {action id: ActionRef}
    action_refs: dict[int, dict[int, p4i.ActionRef]] = field(default_factory=dict)
    # table id -> direct counter / meter
    table_counter: dict[int, p4i.DirectCounter] = field(default_factory=dict)
    table_meter: dict[int, p4i.DirectMeter] = field(default_factory=dict)

    @classmethod
    def build(cls, p4info: p4i.P4Info) -> P4InfoIndex:
        """Index a P4Info: objects by id, match fields and action refs by table."""
        ix = cls(p4info=p4info)
        for kind in (
            "tables", "actions", "counters", "direct_counters", "meters",
            "direct_meters", "registers", "digests", "value_sets",
        ):
            target = getattr(ix, kind)
            for obj in getattr(p4info, kind):
                target[obj.preamble.id] = obj
        for obj in p4info.action_profiles:
            ix.profiles[obj.preamble.id] = obj
        for obj in p4info.controller_packet_metadata:
            ix.cpm[obj.preamble.name] = obj
        for a in p4info.actions:
            ix.action_by_name[a.preamble.name] = a
        for t in p4info.tables:
            tid = t.preamble.id
            ix.match_fields[tid] = {mf.id: (pos, mf) for pos, mf in enumerate(t.match_fields)}
            ix.action_refs[tid] = {r.id: r for r in t.action_refs}
        for dc in p4info.direct_counters:
            ix.table_counter[dc.direct_table_id] = dc
        for dm in p4info.direct_meters:
            ix.table_meter[dm.direct_table_id] = dm
        return ix

    def _get(self, where: dict[int, Any], oid: int, kind: str) -> Any:
        try:
            return where[oid]
        except KeyError:
            if oid == 0:
                raise invalid(f"{kind} id 0 is not valid here") from None
            raise invalid(f"unknown {kind} id {oid}") from None

    def table(self, oid: int) -> p4i.Table:
        """The table with id `oid` (P4RTError INVALID_ARGUMENT when unknown)."""
        return self._get(self.tables, oid, "table")

    def action(self, oid: int) -> p4i.Action:
        """The action with id `oid` (P4RTError INVALID_ARGUMENT when unknown)."""
        return self._get(self.actions, oid, "action")

    def profile(self, oid: int) -> p4i.ActionProfile:
        """The action profile with id `oid` (P4RTError INVALID_ARGUMENT when unknown)."""
        return self._get(self.profiles, oid, "action profile")

    def counter(self, oid: int) -> p4i.Counter:
        """The counter with id `oid` (P4RTError INVALID_ARGUMENT when unknown)."""
        return self._get(self.counters, oid, "counter")

    def meter(self, oid: int) -> p4i.Meter:
        """The meter with id `oid` (P4RTError INVALID_ARGUMENT when unknown)."""
        return self._get(self.meters, oid, "meter")

    def register(self, oid: int) -> p4i.Register:
        """The register with id `oid` (P4RTError INVALID_ARGUMENT when unknown)."""
        return self._get(self.registers, oid, "register")

    def digest(self, oid: int) -> p4i.Digest:
        """The digest with id `oid` (P4RTError INVALID_ARGUMENT when unknown)."""
        return self._get(self.digests, oid, "digest")

    def match_type(self, mf: p4i.MatchField) -> str:
        """The match kind of a key field as the pipeline spells it."""
        if mf.HasField("other_match_type"):
            return mf.other_match_type
        return _MATCH_KINDS.get(mf.match_type, "unspecified")


_MATCH_KINDS = {
    p4i.MatchField.EXACT: "exact",
    p4i.MatchField.LPM: "lpm",
    p4i.MatchField.TERNARY: "ternary",
    p4i.MatchField.RANGE: "range",
    p4i.MatchField.OPTIONAL: "optional",
}


def same_program(a: p4i.P4Info, b: p4i.P4Info) -> str:
    """'' when two P4Infos describe the same program objects, else what differs."""
    for kind in ("tables", "actions", "action_profiles", "counters", "direct_counters",
                 "meters", "direct_meters", "registers"):
        na = {o.preamble.name for o in getattr(a, kind)}
        nb = {o.preamble.name for o in getattr(b, kind)}
        if na != nb:
            extra = sorted(na - nb)
            missing = sorted(nb - na)
            return (f"P4Info {kind} do not match the device config "
                    f"(unknown to the program: {extra}; missing: {missing})")
    ta = {t.preamble.name: t for t in a.tables}
    for t in b.tables:
        other = ta[t.preamble.name]
        fa = [(m.name, m.bitwidth) for m in other.match_fields]
        fb = [(m.name, m.bitwidth) for m in t.match_fields]
        if sorted(fa) != sorted(fb):
            return f"P4Info table {t.preamble.name!r} key {fa} does not match the program's {fb}"
    return ""
