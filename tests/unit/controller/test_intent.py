"""Tests for controller.intent: diffs between intended and current state, and their write order."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.entities import Action, Exact, Group, Lpm, Member, TableEntry, Ternary
from controller.intent import (
    OWNED_TABLES,
    Diff,
    FabricIntent,
    acl_rule,
    diff,
    entity_key,
    probe_acl_entry,
)
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

SEL = "FabricIngress.routing.ecmp_selector"
NEXT = "FabricIngress.routing.next_hop"
ROUTE = "FabricIngress.routing.ipv4_route"
CONFIG = "FabricIngress.config.switch_config"


def member(mid: int, port: int | None = None) -> Member:
    return Member(profile=SEL, member_id=mid, action=Action(
        name="FabricIngress.routing.set_output",
        params=(("port", port or mid), ("src_mac", 1), ("dst_mac", 2))))


def route(prefix: int, plen: int, next_id: int) -> TableEntry:
    return TableEntry(table=ROUTE, match=(("dst_addr", Lpm(value=prefix, prefix_len=plen)),),
                      action=Action(name="FabricIngress.routing.set_next_id",
                                    params=(("next_id", next_id),)))


def next_hop(next_id: int, *, group: bool) -> TableEntry:
    return TableEntry(table=NEXT, match=(("next_id", Exact(value=next_id)),),
                      group_id=next_id if group else None,
                      member_id=None if group else next_id)


def config(mode: int) -> TableEntry:
    return TableEntry(table=CONFIG, is_default=True, action=Action(
        name="FabricIngress.config.set_config", params=(("mode", mode), ("salt", 1))))


RACK2 = 0x0A000100  # 10.0.1.0


def test_equal_states_need_no_write() -> None:
    """The same entities in another order: nothing to write, all unchanged."""
    state = [member(5), member(6), next_hop(5, group=False), route(RACK2, 24, 5)]
    d = diff(state, list(reversed(state)))
    assert d.empty and d.counts() == {"insert": 0, "modify": 0, "delete": 0, "unchanged": 4}


def test_a_changed_action_is_a_modify_not_delete_and_insert() -> None:
    """A route whose next id changes keeps its key: one MODIFY."""
    d = diff([route(RACK2, 24, 6)], [route(RACK2, 24, 5)])
    assert d.modifies == (route(RACK2, 24, 6),) and not d.inserts and not d.deletes


def test_default_actions_are_modified_never_deleted() -> None:
    """A default entry missing from the read-back is set; one not in the intent stays."""
    assert diff([config(2)], []).modifies == (config(2),)
    assert diff([], [config(1)]).empty


def test_pin_to_ecmp_writes_make_before_break() -> None:
    """pin -> ecmp: group and its next hop and /24 first, the /32 pin routes deleted last."""
    pin = [member(5), member(6), next_hop(5, group=False), next_hop(6, group=False),
           route(RACK2 | 1, 32, 5), route(RACK2 | 3, 32, 6), config(0)]
    group = Group(profile=SEL, group_id=1024, members=(5, 6), max_size=2)
    ecmp = [member(5), member(6), group, next_hop(1024, group=True), route(RACK2, 24, 1024),
            config(1)]
    order = diff(ecmp, pin).updates()
    kinds = [(k, type(e).__name__, getattr(e, "table", None)) for k, e in order]
    assert kinds == [
        ("insert", "Group", None),
        ("insert", "TableEntry", NEXT),
        ("insert", "TableEntry", ROUTE),
        ("modify", "TableEntry", CONFIG),
        ("delete", "TableEntry", ROUTE),
        ("delete", "TableEntry", ROUTE),
        ("delete", "TableEntry", NEXT),
        ("delete", "TableEntry", NEXT),
    ]


def test_members_are_inserted_in_ascending_id_and_deleted_last() -> None:
    """Members go first in id order (selector member order), and are removed after groups."""
    g = Group(profile=SEL, group_id=1024, members=(7, 3), max_size=2)
    d = diff([member(7), member(3), g], [member(9), Group(profile=SEL, group_id=1025,
                                                         members=(9,), max_size=1)])
    order = [(k, entity_key(e)[0], entity_key(e)[2]) for k, e in d.updates()]
    assert order == [("insert", "member", 3), ("insert", "member", 7), ("insert", "group", 1024),
                     ("delete", "group", 1025), ("delete", "member", 9)]


def test_group_membership_change_is_one_modify() -> None:
    """Removing a dead uplink from a group is a MODIFY of the group (no gap)."""
    before = Group(profile=SEL, group_id=1024, members=(5, 6), max_size=2)
    after = Group(profile=SEL, group_id=1024, members=(6,), max_size=2)
    d = diff([after], [before])
    assert d.updates() == [("modify", after)]


def test_probe_entry_punts_lldp_typed_frames() -> None:
    """The probe ACL entry matches EtherType 0x88cc exactly and punts to the CPU."""
    e = probe_acl_entry()
    assert e.table == "FabricIngress.acl.acl"
    assert e.match == (("eth_type", Ternary(value=0x88CC, mask=0xFFFF)),)
    assert e.action is not None and e.action.name == "FabricIngress.acl.punt_to_cpu"
    assert e.priority > 0


def test_diff_counts_each_kind() -> None:
    """counts() says how many of each write a diff holds."""
    d = Diff(inserts=(member(1),), modifies=(config(1),), deletes=(member(2), member(3)),
             unchanged=4)
    assert d.counts() == {"insert": 1, "modify": 1, "delete": 2, "unchanged": 4}


def test_acl_rule_full_mask_and_given_mask() -> None:
    """A value alone matches every bit of its field; value&&&mask keeps the mask."""
    got = acl_rule("drop", {"ingress_port": 1, "bth_psn": (0x10, 0xFF)}, 500)
    assert got == TableEntry(
        table="FabricIngress.acl.acl",
        match=(("bth_psn", Ternary(value=0x10, mask=0xFF)),
               ("ingress_port", Ternary(value=1, mask=0x1FF))),
        action=Action(name="FabricIngress.acl.drop"), priority=500)


@pytest.mark.parametrize(("action", "match", "priority", "message"), [
    ("reject", {"ingress_port": 1}, 500, "ACL action 'reject'"),
    ("drop", {"ingress_port": 1}, 1000, "1000 is the controller's probes"),
    ("drop", {"vlan": 1}, 500, "ACL field 'vlan'"),
    ("drop", {"ingress_port": 512}, 500, "do not fit bit<9>"),
    ("drop", {"bth_psn": (0x11, 0x10)}, 500, "bits outside the mask"),
    ("drop", {}, 500, "at least one match field"),
])
def test_acl_rule_refuses_what_the_table_cannot_hold(action: str, match: dict, priority: int,
                                                     message: str) -> None:
    with pytest.raises(ValueError, match=message):
        acl_rule(action, match, priority)


def test_added_acl_rules_join_the_switch_intent() -> None:
    """FabricIntent.acl entries are part of for_switch (after the computed ones)."""
    spec = load_spec(Path(__file__).resolve().parents[3] / "topologies" / "ai_zone_small.yaml")
    intent = FabricIntent(spec=spec, plan=plan_addresses(spec), mode="eecmp")
    rule = acl_rule("drop", {"l4_dst_port": 4791}, 500)
    plain = intent.for_switch("rtsw1")
    intent.acl["rtsw1"] = (rule,)
    assert intent.for_switch("rtsw1") == (*plain, rule)
    assert rule not in intent.for_switch("rtsw2")


@pytest.mark.parametrize("packet_queues", [False, True])
def test_every_table_the_intent_writes_is_read_back(packet_queues: bool) -> None:
    """A reconcile diffs the intent against what `read_state` reads, the owned tables: an
    entry of a table outside them would be inserted again on every reconcile (and refused
    as ALREADY_EXISTS). The ACK lane of a BMv2 fabric included."""
    spec = load_spec(Path(__file__).resolve().parents[3] / "topologies" / "ai_zone_small.yaml")
    intent = FabricIntent(spec=spec, plan=plan_addresses(spec), mode="eecmp",
                          packet_queues=packet_queues)
    for switch in ("rtsw1", "ctsw1"):
        tables = {e.table for e in intent.for_switch(switch)
                  if isinstance(e, TableEntry) and not e.is_default}
        assert tables <= set(OWNED_TABLES), tables - set(OWNED_TABLES)
        assert ("FabricIngress.qos.ack_queue" in tables) == packet_queues
