"""P4Info generation: p4c's ids, aliases, field ids, entity kinds."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.p4info import _field_ids, _Symbols, build_p4info, jenkins_hash

CORPUS = Path(__file__).resolve().parent / "corpus"


@pytest.fixture(scope="module")
def basic():
    return build_p4info(compile_file(CORPUS / "valid" / "basic.p4"))


@pytest.fixture(scope="module")
def features():
    return build_p4info(compile_file(CORPUS / "valid" / "features.p4"))


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        (0x02, "MyIngress.ipv4_lpm", 37375156),
        (0x01, "NoAction", 21257015),
        (0x01, "MyIngress.drop", 25652968),
        (0x01, "MyIngress.ipv4_forward", 28792405),
    ],
    ids=["table", "NoAction", "drop", "ipv4_forward"],
)
def test_ids_match_p4c_for_tutorial_basic(basic, kind: int, name: str, expected: int) -> None:
    """Ids are p4c's (known answers from the p4lang tutorial's basic.p4info)."""
    entities = basic.tables if kind == 0x02 else basic.actions
    ids = {e.preamble.name: e.preamble.id for e in entities}
    assert ids[name] == expected
    assert expected >> 24 == kind
    assert expected & 0xFFFFFF == jenkins_hash(name) & 0xFFFFFF


def test_basic_table_shape(basic) -> None:
    """Match field, action refs, size and default size as p4c emits them."""
    (t,) = basic.tables
    assert [(f.id, f.name, f.bitwidth, f.match_type) for f in t.match_fields] == [(1, "hdr.ipv4.dstAddr", 32, 3)]
    assert [a.id for a in t.action_refs] == [28792405, 25652968, 21257015]
    assert t.size == 1024
    assert [a.preamble.name for a in basic.actions] == ["NoAction", "MyIngress.drop", "MyIngress.ipv4_forward"]
    params = basic.actions[2].params
    assert [(p.id, p.name, p.bitwidth) for p in params] == [(1, "dstAddr", 48), (2, "port", 9)]


def test_alias_is_shortest_unique_suffix() -> None:
    """Aliases: shortest dot-suffix unique among all names."""
    s = _Symbols()
    for n in ("a.b.c", "d.b.c", "e.f", "g"):
        s.add(0x01, n)
    assert s.alias("a.b.c") == "a.b.c"
    assert s.alias("e.f") == "f"
    assert s.alias("g") == "g"


def test_id_collisions_probe_linearly() -> None:
    """A name whose hashed id is taken gets the next free one (p4c's probeForId)."""
    s = _Symbols()
    target = (0x01 << 24) | (jenkins_hash("x") & 0xFFFFFF)
    s.add(0x01, "taken", (ir.Annotation(name="id", args=(target,)),))
    s.add(0x01, "x")
    s.compute_ids()
    assert s.id(0x01, "taken") == target
    assert s.id(0x01, "x") == target + 1


def test_field_ids_honour_at_id() -> None:
    """@id on a parameter is used; others count from 1 skipping taken ids."""
    anno = (ir.Annotation(name="id", args=(1,)),)
    assert _field_ids([(), anno, ()]) == [2, 1, 3]


def test_features_entities(features) -> None:
    """Direct counters/meters, selectors, counters, meters, registers, digests, packet-in, value sets."""
    names = lambda xs: [x.preamble.name for x in xs]  # noqa: E731
    assert names(features.direct_counters) == ["Ing.dc"]
    assert names(features.direct_meters) == ["Ing.dm"]
    assert names(features.counters) == ["Ing.inner.cnt"]
    assert names(features.meters) == ["Ing.mtr"]
    assert names(features.registers) == ["Ing.reg"]
    assert features.registers[0].type_spec.bitstring.bit.bitwidth == 32
    prof = features.action_profiles[0]
    assert prof.preamble.name == "Ing.sel" and prof.with_selector and prof.size == 1024
    ecmp = next(t for t in features.tables if t.preamble.name == "Ing.ecmp")
    assert [f.name for f in ecmp.match_fields] == ["h.ipv4.dst"]  # selector keys are not match fields
    assert ecmp.implementation_id == prof.preamble.id
    assert list(prof.table_ids) == [ecmp.preamble.id]
    assert names(features.digests) == ["learn_t"]
    assert "learn_t" in features.type_info.structs
    (cpm,) = features.controller_packet_metadata
    assert cpm.preamble.name == "packet_in"
    assert [(m.id, m.name, m.bitwidth) for m in cpm.metadata] == [(1, "port", 9), (2, "pad", 7)]
    assert names(features.value_sets) == ["P.vs"]
    l2 = next(t for t in features.tables if t.preamble.name == "Ing.l2")
    assert l2.match_fields[0].name == "dst_mac"
    assert l2.const_default_action_id == l2.action_refs[2].id
    assert l2.action_refs[2].scope == 2  # DEFAULT_ONLY
    acl = next(t for t in features.tables if t.preamble.name == "Ing.acl")
    assert acl.is_const_table
    timeout = next(t for t in features.tables if t.preamble.name == "Ing.t_timeout")
    assert timeout.idle_timeout_behavior == 1


def test_all_ids_have_their_kind_prefix(features) -> None:
    """Every id carries its P4Ids prefix in the top byte."""
    kinds = {"tables": 2, "actions": 1, "action_profiles": 0x11, "counters": 0x12, "direct_counters": 0x13,
             "meters": 0x14, "direct_meters": 0x15, "registers": 0x16, "digests": 0x17, "value_sets": 3,
             "controller_packet_metadata": 4}
    for field, kind in kinds.items():
        for e in getattr(features, field):
            assert e.preamble.id >> 24 == kind, (field, e.preamble.name)
