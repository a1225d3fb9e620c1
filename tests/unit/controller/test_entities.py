"""Tests for controller.entities: every computed entity encodes and decodes back equal."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.entities import (
    Action,
    Exact,
    Group,
    Lpm,
    Member,
    TableEntry,
    Ternary,
    decode_entity,
    describe,
    encode_entity,
)
from controller.errors import SchemaError
from controller.p4info import P4Schema
from controller.routes import NAMES, compute_routes
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("topology,switch", [("rack", "rtsw1"), ("ai_zone_small", "rtsw2")],
                         ids=["rack", "ai_zone_small"])
@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_computed_entities_round_trip(schema: P4Schema, topology: str, switch: str,
                                      mode: str) -> None:
    """encode then decode gives back the same entity, for every RTSW entity."""
    plan = plan_addresses(load_spec(ROOT / "topologies" / f"{topology}.yaml"))
    for e in compute_routes(plan, switch, mode).install_order():
        assert decode_entity(schema, encode_entity(schema, e)) == e


def test_lpm_is_canonical_and_masked(schema: P4Schema) -> None:
    """An LPM value is sent as the shortest bytes, host bits cleared."""
    e = TableEntry(table=NAMES["route_table"], match=(("dst_addr", Lpm(value=0x0A000003,
                                                                        prefix_len=24)),),
                   action=Action(name=NAMES["route_drop"]))
    fm = encode_entity(schema, e).table_entry.match[0]
    assert fm.lpm.value == bytes([10, 0, 0, 0]) and fm.lpm.prefix_len == 24
    ex = TableEntry(table=NAMES["next_table"], match=(("next_id", Exact(value=2)),), member_id=2)
    assert encode_entity(schema, ex).table_entry.match[0].exact.value == b"\x02"


def test_group_and_member_encode_profile_ids(schema: P4Schema) -> None:
    """Members and groups carry the selector's id; group members have weight 1."""
    m = Member(profile=NAMES["selector"], member_id=5, action=Action(
        name=NAMES["next_action"], params=(("port", 5), ("src_mac", 1), ("dst_mac", 2))))
    g = Group(profile=NAMES["selector"], group_id=1024, members=(5, 6), max_size=2)
    pid = schema.action_profile_id(NAMES["selector"])
    assert encode_entity(schema, m).action_profile_member.action_profile_id == pid
    pg = encode_entity(schema, g).action_profile_group
    assert [(x.member_id, x.weight) for x in pg.members] == [(5, 1), (6, 1)]


@pytest.mark.parametrize(
    ("entity", "message"),
    [
        (TableEntry(table=NAMES["route_table"], match=(("dst_addr", Exact(value=1)),),
                    action=Action(name=NAMES["route_drop"])), "is LPM, not EXACT"),
        (TableEntry(table=NAMES["next_table"], match=(("next_id", Exact(value=1 << 16)),),
                    member_id=1), "does not fit bit<16>"),
        (TableEntry(table=NAMES["route_table"], match=(("dst_addr", Lpm(value=1, prefix_len=33)),),
                    action=Action(name=NAMES["route_drop"])), "prefix length 33"),
        (TableEntry(table=NAMES["route_table"], action=Action(
            name=NAMES["route_action"], params=(("next", 1),))), "unknown parameter"),
        (TableEntry(table=NAMES["route_table"], action=Action(name=NAMES["next_action"], params=(
            ("port", 1), ("src_mac", 1), ("dst_mac", 1)))), "is not an action of table"),
        (TableEntry(table=NAMES["next_table"], match=(("next_id", Exact(value=1)),)),
         "exactly one of action, member, group"),
        (TableEntry(table="FabricIngress.qos.dscp_to_tc",
                    match=(("dscp", Ternary(value=1, mask=0x3F)),),
                    action=Action(name="FabricIngress.qos.set_tc", params=(("tc", 9),))),
         "does not fit bit<3>"),
    ],
    ids=["wrong-kind", "too-wide", "long-prefix", "bad-param", "wrong-action", "no-action",
         "param-too-wide"],
)
def test_bad_entities_raise_schema_error(schema: P4Schema, entity: TableEntry, message: str) -> None:
    """Entities the P4Info cannot hold are rejected before anything is sent."""
    with pytest.raises(SchemaError, match=message):
        encode_entity(schema, entity)


def test_describe_is_readable() -> None:
    """describe() shows table and match in the usual notation."""
    e = TableEntry(table=NAMES["route_table"], match=(("dst_addr", Lpm(value=0x0A000003,
                                                                        prefix_len=32)),),
                   action=Action(name=NAMES["route_drop"]))
    assert describe(e) == "FabricIngress.routing.ipv4_route dst_addr=10.0.0.3/32"
