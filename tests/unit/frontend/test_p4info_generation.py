"""P4Info generation: p4c's ids, aliases, field ids, entity kinds."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.p4info import P4InfoError, build_p4info
from p4switch.p4names import Symbols, anno_strings, field_ids, jenkins_hash

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
    s = Symbols()
    for n in ("a.b.c", "d.b.c", "e.f", "g"):
        s.add(0x01, n)
    assert s.alias("a.b.c") == "a.b.c"
    assert s.alias("e.f") == "f"
    assert s.alias("g") == "g"


def test_id_collisions_probe_linearly() -> None:
    """A name whose hashed id is taken gets the next free one (p4c's probeForId)."""
    s = Symbols()
    target = (0x01 << 24) | (jenkins_hash("x") & 0xFFFFFF)
    s.add(0x01, "taken", (ir.Annotation(name="id", args=(target,)),))
    s.add(0x01, "x")
    s.compute_ids()
    assert s.id(0x01, "taken") == target
    assert s.id(0x01, "x") == target + 1


def test_field_ids_honour_at_id() -> None:
    """@id on a parameter is used; others count from 1 skipping taken ids."""
    anno = (ir.Annotation(name="id", args=(1,)),)
    assert field_ids([(), anno, ()]) == [2, 1, 3]


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


def _info(name: str):
    return build_p4info(compile_file(CORPUS / "valid" / f"{name}.p4"))


def test_new_types_carry_type_name_and_translation() -> None:
    """`type` with @p4runtime_translation: sdn_bitwidth as bitwidth, type_name, new_types entry."""
    info = _info("newtype")
    (t,) = info.tables
    assert [(f.name, f.bitwidth, f.type_name.name) for f in t.match_fields] == [
        ("meta.in_port", 32, "PortId_t"), ("hdr.vlan.vid", 12, "VlanId_t")]
    nts = info.type_info.new_types
    assert nts["PortId_t"].translated_type.uri == "p4.org/psa/v1/PortId_t"
    assert nts["PortId_t"].translated_type.sdn_bitwidth == 32
    assert nts["VlanId_t"].original_type.bitstring.bit.bitwidth == 12
    md = info.controller_packet_metadata[0].metadata[0]
    assert (md.name, md.bitwidth, md.type_name.name) == ("ingress_port", 32, "PortId_t")


def test_externs_constructed_in_table_properties_take_the_property_name() -> None:
    """`@name("x") implementation = action_selector(...)` is the profile x, unprefixed (as p4c 1.2.4.8 names it)."""
    info = _info("ecmp_selector")
    profiles = {p.preamble.name: p for p in info.action_profiles}
    wcmp = next(t for t in info.tables if t.preamble.name == "MyIngress.wcmp")
    assert wcmp.implementation_id == profiles["wcmp_selector"].preamble.id
    assert profiles["wcmp_selector"].with_selector and profiles["wcmp_selector"].size == 256
    assert [c.preamble.name for c in info.direct_counters] == ["wcmp_counter"]
    ids = {t.preamble.name: t.preamble.id for t in info.tables}
    assert list(profiles["MyIngress.nhop_profile"].table_ids) == [ids["MyIngress.nhop"], ids["MyIngress.nhop_v2"]]


def test_names_ids_pkginfo_and_param_names() -> None:
    """@pkginfo fills pkg_info, @name renames params, @id fixes ids, leading-dot names are global.

    `@name("ingress")` on the control type does not rename its block: p4c
    names it after the instance in main's arguments, the type's name."""
    info = _info("names_ids")
    assert (info.pkg_info.name, info.pkg_info.version, info.pkg_info.arch) == ("names_ids.p4", "1.0.0", "v1model")
    tables = {t.preamble.name: t for t in info.tables}
    assert set(tables) == {"MyIngress.port_bd", "l2_fwd"}
    assert tables["MyIngress.port_bd"].preamble.id == 0x02000042
    assert tables["MyIngress.port_bd"].preamble.doc.brief == "Port to bridge domain"
    actions = {a.preamble.name: a for a in info.actions}
    assert actions["set_bd"].preamble.id == 0x01000101
    assert [(p.id, p.name) for p in actions["set_bd"].params] == [(7, "bd"), (2, "extra")]
    assert info.counters[0].preamble.name == "port_packets" and info.counters[0].preamble.id == 0x12000001


def test_enum_types_are_registered_in_type_info() -> None:
    """Serializable enums used as keys/params and plain enums used as params appear in type_info."""
    info = _info("enum_keys")
    assert set(info.type_info.serializable_enums) == {"EtherType", "Verdict"}
    assert info.type_info.serializable_enums["EtherType"].members[0].value == b"\x08\x00"
    assert [m.name for m in info.type_info.enums["Color"].members] == ["GREEN", "YELLOW", "RED"]
    color = next(a for a in info.actions if a.preamble.name == "MyIngress.set_color")
    assert color.params[0].type_name.name == "Color" and color.params[0].bitwidth == 0


def test_struct_value_set_and_top_level_externs() -> None:
    """A struct value_set lists its fields (@match kinds); top-level externs keep their bare names."""
    vs = _info("value_set").value_sets[1]
    assert vs.preamble.name == "MyParser.tunnel_ports"
    assert [(m.name, m.bitwidth, m.match_type) for m in vs.match] == [("protocol", 8, 2), ("port", 16, 4)]
    info = _info("globals_direct")
    assert [c.preamble.name for c in info.counters] == ["global_port_counter"]
    assert [r.preamble.name for r in info.registers] == ["global_state"]
    assert [t.preamble.name for t in info.tables] == ["MyIngress.Learn.learn"]


def test_v1model_2020_registers_keep_their_value_type() -> None:
    """With V1MODEL_VERSION 20200408, register<T, I> describes T in P4Info."""
    info = _info("v1model_2020")
    (reg,) = info.registers
    assert reg.preamble.name == "MyIngress.flow_bytes" and reg.size == 256
    assert reg.type_spec.bitstring.bit.bitwidth == 32


def test_unknown_annotations_render_token_by_token() -> None:
    """p4c prints unparsed annotation bodies token by token; parsed ones with ', '."""
    annos = (ir.Annotation(name="my_anno", args=(1, "x")), ir.Annotation(name="noWarn", args=("unused",)),
             ir.Annotation(name="defaultonly"))
    assert anno_strings(annos) == ['@my_anno(1 , "x")', '@noWarn("unused")', "@defaultonly"]


@pytest.fixture(scope="module")
def p4rt_names():
    return _info("p4rt_names")


def test_complex_key_names_are_printed_like_p4c(p4rt_names) -> None:
    """Slices, isValid() as $valid$, stack indexes (constants folded, base kept), `&`, locals, field @name."""
    names = next(t for t in p4rt_names.tables if t.preamble.name == "MyIngress.names")
    assert [(f.id, f.name, f.bitwidth, f.match_type) for f in names.match_fields] == [
        (1, "hdr.ipv4.dst[31:24]", 8, 2),
        (2, "hdr.ipv4.$valid$", 1, 2),
        (3, "hdr.stack[0].f", 8, 4),
        (4, "hdr.stack[0x1].f", 8, 2),
        (5, "hdr.ipv4.protocol & 0xf0", 8, 4),
        (6, "hdr.ipv4.dst", 32, 3),
        (7, "tmp.b", 16, 2),
        (8, "ttl_cast", 8, 2),
    ]


def test_type_name_is_set_for_every_key_and_param_of_a_type(p4rt_names) -> None:
    """A `type` reached through a cast, a local variable, a struct field or a parameter names its type."""
    typed = next(t for t in p4rt_names.tables if t.preamble.name == "MyIngress.typed_keys")
    assert [(f.name, f.bitwidth, f.type_name.name) for f in typed.match_fields] == [
        ("in_port", 9, "PortId_t"), ("local_port", 9, "PortId_t"), ("meta.port", 9, "PortId_t")]
    set_port = next(a for a in p4rt_names.actions if a.preamble.name == "MyIngress.set_port")
    assert [(p.name, p.bitwidth, p.type_name.name) for p in set_port.params] == [("port", 9, "PortId_t")]
    assert p4rt_names.type_info.new_types["PortId_t"].original_type.bitstring.bit.bitwidth == 9


def test_blocks_are_named_by_their_type(p4rt_names) -> None:
    """`V1Switch(..., MyIngress(), ...)`: names are MyIngress.*, as p4c's HierarchicalNames makes them."""
    assert [t.preamble.name for t in p4rt_names.tables] == ["MyIngress.names", "MyIngress.typed_keys"]


def test_unused_top_level_externs_are_kept_in_declaration_order(p4rt_names) -> None:
    """p4c never removes extern instances: unused top-level counters/registers are in P4Info, first."""
    assert [(c.preamble.name, c.size) for c in p4rt_names.counters] == [("used_counter", 8), ("unused_counter", 4)]
    assert [(r.preamble.name, r.size) for r in p4rt_names.registers] == [("unused_register", 32)]
    assert p4rt_names.counters[1].spec.unit == p4i.CounterSpec.BYTES


def test_tables_keep_block_order_not_name_order() -> None:
    """p4c does not sort tables: they follow the blocks, then declaration order inside a block."""
    assert [t.preamble.name for t in _info("control_flow").tables] == ["MyIngress.fwd", "MyIngress.acl"]
    assert [t.preamble.name for t in _info("clone_recirculate").tables] == [
        "ingress.ipv4_da_lpm", "ingress.mac_da", "egress.send_frame"]


ENUM_KEY = """
#include <core.p4>
#include <v1model.p4>
enum Color { RED, GREEN }
header h_t { bit<8> a; }
struct hs { h_t h; }
struct ms { Color c; }
parser P(packet_in pk, out hs h, inout ms m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout hs h, inout ms m) { apply { } }
control I(inout hs h, inout ms m, inout standard_metadata_t sm) {
    table t {
        key = { m.c: exact; }
        actions = { NoAction; }
    }
    apply { t.apply(); }
}
control E(inout hs h, inout ms m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs h, inout ms m) { apply { } }
control D(packet_out pk, in hs h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_plain_enum_key_cannot_be_described_in_p4info(tmp_path: Path) -> None:
    """p4c has no width for a plain enum key (TypeMap::widthBits): P4Info generation fails at the key."""
    src = tmp_path / "enum_key.p4"
    src.write_text(ENUM_KEY)
    program = compile_file(src)
    with pytest.raises(P4InfoError) as info:
        build_p4info(program)
    assert str(info.value) == (f"{src}:14:17: error: m.c: a table key of type Color cannot be described in P4Info "
                               "(width not well-defined for values of type Color; use a serializable enum, enum bit<W>)")


def test_registers_of_a_new_type_name_it_and_register_it_in_new_types() -> None:
    """register<N> (N a `type`, also through a typedef) has type_spec new_type { name: N }, as p4c."""
    info = _info("register_newtype")
    got = {r.preamble.name: (text_format.MessageToString(r.type_spec, as_one_line=True), r.size)
           for r in info.registers}
    assert got == {
        "Ing.pkts": ('new_type { name: "PktCount_t" }', 16),
        "Ing.aliased": ('new_type { name: "PktCount_t" }', 8),
        "Ing.tags": ('new_type { name: "Tag_t" }', 4),
        "Ing.plain": ("bitstring { bit { bitwidth: 16 } }", 2),
    }
    assert text_format.MessageToString(info.type_info, as_one_line=True) == (
        'new_types { key: "PktCount_t" value { original_type { bitstring { bit { bitwidth: 32 } } } } } '
        'new_types { key: "Tag_t" value { translated_type { uri: "example.org/Tag_t" sdn_bitwidth: 16 } } }')
