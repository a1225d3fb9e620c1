"""Tests for controller.p4info: name <-> id look-ups against the P4Info of p4/rtsw.p4."""

from __future__ import annotations

import pytest

from controller.errors import SchemaError
from controller.p4info import P4Schema
from controller.routes import NAMES


@pytest.mark.parametrize("key", sorted(k for k in NAMES if k.endswith("table")))
def test_every_table_routes_use_exists(schema: P4Schema, key: str) -> None:
    """The tables route computation writes are in the RTSW P4Info, and ids round-trip."""
    tid = schema.table_id(NAMES[key])
    assert schema.table_name(tid) == NAMES[key]


@pytest.mark.parametrize("key", sorted(k for k in NAMES if k.endswith(("action", "drop"))))
def test_every_action_routes_use_exists(schema: P4Schema, key: str) -> None:
    """The actions route computation writes are in the P4Info."""
    assert schema.action_name(schema.action_id(NAMES[key])) == NAMES[key]


def test_match_fields_and_params_by_name(schema: P4Schema) -> None:
    """@name'd keys and action parameters resolve with their widths."""
    mf = schema.match_field(NAMES["route_table"], "dst_addr")
    assert mf.bitwidth == 32
    assert schema.match_field(NAMES["next_table"], "next_id").bitwidth == 16
    assert [p.name for p in schema.action(NAMES["next_action"]).params] == [
        "port", "src_mac", "dst_mac"]
    assert schema.param(NAMES["next_action"], "port").bitwidth == 9
    assert schema.param(NAMES["arp_action"], "router_mac").bitwidth == 48


def test_next_hop_uses_the_ecmp_selector(schema: P4Schema) -> None:
    """next_hop's implementation is FabricIngress.routing.ecmp_selector, a selector."""
    assert schema.implementation(NAMES["next_table"]) == NAMES["selector"]
    assert schema.action_profile(NAMES["selector"]).with_selector
    assert schema.implementation(NAMES["route_table"]) is None


@pytest.mark.parametrize("name", ["rx_counter", "tx_counter"])
def test_port_counters_by_name(schema: P4Schema, name: str) -> None:
    """rx_port / tx_port are 512-cell counters."""
    counter = schema.counter(NAMES[name])
    assert counter.size == 512
    assert schema.counter_name(schema.counter_id(NAMES[name])) == NAMES[name]


def test_short_names_work_when_unique(schema: P4Schema) -> None:
    """'ipv4_route' finds FabricIngress.routing.ipv4_route."""
    assert schema.table("ipv4_route").preamble.name == NAMES["route_table"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.table("FabricIngress.routing.ipv4_rout"), "did you mean"),
        (lambda s: s.action_id("nope"), "no action named 'nope'"),
        (lambda s: s.match_field(NAMES["route_table"], "dst"), "has no match field 'dst'"),
        (lambda s: s.param(NAMES["next_action"], "mac"), "has no parameter 'mac'"),
        (lambda s: s.counter_id(999), "no counter with id 999"),
        (lambda s: s.check_action_in_table(NAMES["route_table"], NAMES["next_action"]),
         "is not an action of table"),
    ],
    ids=["near-miss", "unknown-action", "unknown-field", "unknown-param", "unknown-id",
         "wrong-table"],
)
def test_unknown_names_raise_schema_error(schema: P4Schema, call, message: str) -> None:
    """Unknown names and ids are SchemaErrors that say what was asked."""
    with pytest.raises(SchemaError, match=message):
        call(schema)
