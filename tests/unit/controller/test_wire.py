"""Tests for controller.wire (and entities.describe): intent values on the wire and back."""

from __future__ import annotations

from pathlib import Path

import finsy as fy
import pytest

from controller.entities import Action, Exact, Group, Lpm, Member, TableEntry, Ternary, describe
from controller.errors import SchemaError
from controller.intent import probe_acl_entry
from controller.qos import compute_qos
from controller.routes import NAMES, compute_routes
from controller.wire import encode, from_finsy, to_finsy
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[3]


def round_trip(e: object, schema: fy.P4Schema) -> object:
    f = to_finsy(e)  # type: ignore[arg-type]
    return from_finsy(type(f).decode(f.encode(schema), schema), schema)


@pytest.mark.parametrize("topology,switch", [("rack", "rtsw1"), ("ai_zone_small", "rtsw2")],
                         ids=["rack", "ai_zone_small"])
@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_computed_entities_round_trip(schema: fy.P4Schema, topology: str, switch: str,
                                      mode: str) -> None:
    """Every route, QoS and probe entity of an RTSW comes back from the wire equal."""
    spec = load_spec(ROOT / "topologies" / f"{topology}.yaml")
    plan = plan_addresses(spec)
    entities = [*compute_routes(plan, switch, mode).install_order(),
                *compute_qos(spec, plan, switch), probe_acl_entry()]
    for e in entities:
        assert round_trip(e, schema) == e


def test_lpm_is_canonical_and_exact_is_shortest(schema: fy.P4Schema) -> None:
    """An LPM value goes as its network address; an exact one as the shortest bytes."""
    e = TableEntry(table=NAMES["route_table"], match=(("dst_addr", Lpm(value=0x0A000000,
                                                                        prefix_len=24)),),
                   action=Action(name=NAMES["route_drop"]))
    fm = encode(e, schema).table_entry.match[0]
    assert fm.lpm.value == bytes([10, 0, 0, 0]) and fm.lpm.prefix_len == 24
    ex = TableEntry(table=NAMES["next_table"], match=(("next_id", Exact(value=2)),), member_id=2)
    assert encode(ex, schema).table_entry.match[0].exact.value == b"\x02"


def test_group_members_have_weight_one_and_the_selector_id(schema: fy.P4Schema) -> None:
    """Members and groups carry the selector's id; group members have weight 1."""
    m = Member(profile=NAMES["selector"], member_id=5, action=Action(
        name=NAMES["next_action"], params=(("port", 5), ("src_mac", 1), ("dst_mac", 2))))
    g = Group(profile=NAMES["selector"], group_id=1024, members=(5, 6), max_size=2)
    pid = schema.action_profiles[NAMES["selector"]].id
    assert encode(m, schema).action_profile_member.action_profile_id == pid
    pg = encode(g, schema).action_profile_group
    assert [(x.member_id, x.weight) for x in pg.members] == [(5, 1), (6, 1)]


@pytest.mark.parametrize(
    "entity",
    [
        TableEntry(table=NAMES["route_table"], match=(("dst_addr", Exact(value=1)),),
                   action=Action(name=NAMES["route_drop"])),
        TableEntry(table=NAMES["next_table"], match=(("next_id", Exact(value=1 << 16)),),
                   member_id=1),
        TableEntry(table=NAMES["route_table"], action=Action(
            name=NAMES["route_action"], params=(("next", 1),))),
        TableEntry(table="FabricIngress.nope", action=Action(name=NAMES["route_drop"])),
        TableEntry(table="FabricIngress.qos.dscp_to_tc",
                   match=(("dscp", Ternary(value=1, mask=0x3F)),),
                   action=Action(name="FabricIngress.qos.set_tc", params=(("tc", 9),))),
    ],
    ids=["wrong-kind", "too-wide", "bad-param", "no-such-table", "param-too-wide"],
)
def test_entities_the_p4info_cannot_hold_name_themselves(schema: fy.P4Schema,
                                                         entity: TableEntry) -> None:
    """SchemaError before anything is sent, and the message names the entity."""
    with pytest.raises(SchemaError) as exc:
        encode(entity, schema)
    assert str(exc.value).startswith(describe(entity).split(" ")[0])


def test_describe_is_readable() -> None:
    """describe() shows table and match in the usual notation."""
    e = TableEntry(table=NAMES["route_table"], match=(("dst_addr", Lpm(value=0x0A000003,
                                                                        prefix_len=32)),),
                   action=Action(name=NAMES["route_drop"]))
    assert describe(e) == "FabricIngress.routing.ipv4_route dst_addr=10.0.0.3/32"
