"""One installed forwarding pipeline config as the P4Runtime server sees it.

`PipelineState` bundles the P4Info (and its `P4InfoIndex`), the device config
bytes and cookie, the running `Device`, and the control-plane state that the
Device protocol does not keep (P4Runtime-only fields such as
`controller_metadata`, PRE entries and indexed meter configs, digest configs),
so that every Read answers exactly what was written.

Names defined here: `PipelineState`, `EntryKey`, `entry_key`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch import ir
from p4switch.pipeline.state import Device, FieldMatch
from p4switch.proto import p4i, p4r
from p4switch.server.codecs import ActionCodec, TableCodec, build_codecs
from p4switch.translate import P4InfoIndex

EntryKey = tuple[frozenset[tuple[int, FieldMatch]], int]


def entry_key(match: dict[int, FieldMatch], priority: int) -> EntryKey:
    """The key a table entry is known by: its match and its priority."""
    return frozenset(match.items()), priority


@dataclass
class PipelineState:
    """One installed forwarding pipeline config and the control-plane state kept with it."""

    p4info: p4i.P4Info
    index: P4InfoIndex
    device_config: bytes
    cookie: int | None
    program: ir.Program | None
    device: Device | None
    # table id -> {field id: key position in the pipeline's key list}
    key_pos: dict[int, dict[int, int]] = field(default_factory=dict)
    # (table id, key) -> controller_metadata of a written entry
    controller_metadata: dict[tuple[int, EntryKey], int] = field(default_factory=dict)
    mcast: dict[int, p4r.MulticastGroupEntry] = field(default_factory=dict)
    clone: dict[int, p4r.CloneSessionEntry] = field(default_factory=dict)
    meters: dict[tuple[int, int], p4r.MeterConfig] = field(default_factory=dict)
    digests: dict[int, p4r.DigestEntry.Config] = field(default_factory=dict)
    value_sets: dict[int, list[p4r.ValueSetMember]] = field(default_factory=dict)
    # action profile id -> "oneshot" | "members" (spec forbids mixing the two styles)
    profile_style: dict[int, str] = field(default_factory=dict)
    digest_by_name: dict[str, p4i.Digest] = field(default_factory=dict)
    digest_members: dict[int, list[str]] = field(default_factory=dict)
    # translators compiled from the P4Info (see codecs): by table id, action id, action name
    tcodec: dict[int, TableCodec] = field(default_factory=dict)
    acodec: dict[int, ActionCodec] = field(default_factory=dict)
    acodec_by_name: dict[str, ActionCodec] = field(default_factory=dict)
    # extra per-config data a subsystem may hang here
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        p4info: p4i.P4Info,
        device_config: bytes,
        cookie: int | None,
        program: ir.Program | None,
        device: Device | None,
    ) -> PipelineState:
        """The state of a new config: P4Info index, key positions and codecs built from the P4Info and program."""
        index = P4InfoIndex.build(p4info)
        st = cls(p4info=p4info, index=index, device_config=device_config, cookie=cookie,
                 program=program, device=device)
        for d in p4info.digests:
            st.digest_by_name[d.preamble.name] = d
            if d.type_spec.WhichOneof("type_spec") == "struct":
                struct = p4info.type_info.structs.get(d.type_spec.struct.name)
                if struct is not None:
                    st.digest_members[d.preamble.id] = [m.name for m in struct.members]
        ir_keys = _ir_table_keys(program) if program is not None else {}
        for t in p4info.tables:
            names = ir_keys.get(t.preamble.name)
            pos: dict[int, int] = {}
            for i, mf in enumerate(t.match_fields):
                # Map by key name when the IR knows it (P4Info order is only a
                # recommendation), by position otherwise.
                pos[mf.id] = names.index(mf.name) if names and mf.name in names else i
            st.key_pos[t.preamble.id] = pos
        st.tcodec, st.acodec, st.acodec_by_name = build_codecs(p4info, index, st.key_pos)
        return st


def _ir_table_keys(program: ir.Program) -> dict[str, list[str]]:
    """Table cp_name -> key element names, in key order, for every table in the program."""
    return {t.cp_name: [k.name for k in t.keys] for t in ir.tables_of(program)}


__all__ = ["PipelineState", "EntryKey", "entry_key"]
