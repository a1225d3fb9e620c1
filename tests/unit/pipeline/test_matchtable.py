"""Table lookups and writes, without a program: exact, LPM, ternary/range priorities, profiles."""

from __future__ import annotations

import pytest

from p4switch.pipeline.actionprofile import ActionProfile
from p4switch.pipeline.matchtable import ActionInfo, KeySpec, Table, const_match
from p4switch.pipeline.runtime import Packet
from p4switch.pipeline.state import (
    ActionCall,
    Code,
    FieldMatch,
    Group,
    Member,
    StateError,
    TableEntry,
)


def _fn(*a):
    return None


ACTIONS = {
    "a": ActionInfo(cp_name="a", fn=_fn, action_id=1, param_widths=(8,)),
    "nop": ActionInfo(cp_name="nop", fn=_fn, action_id=2, param_widths=()),
}


def table(*kinds: str, width: int = 16, **kw) -> Table:
    keys = [KeySpec(name=f"k{i}", kind=k, width=width) for i, k in enumerate(kinds)]
    return Table("t", keys, ACTIONS, default=ActionCall(action="nop"), **kw)


def act(v: int) -> ActionCall:
    return ActionCall(action="a", args=(v,))


def hit(t: Table, key) -> int | None:
    r = t.lookup(key, Packet(b""))
    return r[1][0] if r[2] else None


def test_exact_multi_key():
    """Exact tables match the whole key tuple."""
    t = table("exact", "exact")
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1), 1: FieldMatch(kind="exact", value=2)},
                        action=act(7)))
    assert hit(t, (1, 2)) == 7
    assert hit(t, (2, 1)) is None


def test_lpm_with_exact_prefers_longest():
    """LPM plus exact: longest matching prefix among entries with the same exact part."""
    t = table("exact", "lpm", width=32)
    for plen, v in ((8, 1), (24, 2), (0, 3)):
        t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=5),
                                   1: FieldMatch(kind="lpm", value=0x0A0B0C00 & ~((1 << (32 - plen)) - 1) & 0xFFFFFFFF,
                                                 prefix_len=plen)}
                            if plen else {0: FieldMatch(kind="exact", value=5)}, action=act(v)))
    assert hit(t, (5, 0x0A0B0C01)) == 2
    assert hit(t, (5, 0x0A0B0D01)) == 1
    assert hit(t, (5, 0x0B000000)) == 3
    assert hit(t, (6, 0x0A0B0C01)) is None


def test_ternary_higher_priority_wins():
    """P4Runtime semantics: the matching entry with the largest priority wins."""
    t = table("ternary")
    t.insert(TableEntry(match={0: FieldMatch(kind="ternary", value=0x10, mask=0xF0)}, priority=5, action=act(1)))
    t.insert(TableEntry(match={0: FieldMatch(kind="ternary", value=0x12, mask=0xFF)}, priority=9, action=act(2)))
    assert hit(t, 0x12) == 2
    assert hit(t, 0x13) == 1
    assert hit(t, 0x22) is None


def test_range_and_optional():
    """Range bounds are inclusive; an absent optional key is a wildcard."""
    t = table("range", "optional")
    t.insert(TableEntry(match={0: FieldMatch(kind="range", value=10, high=20)}, priority=1, action=act(1)))
    t.insert(TableEntry(match={0: FieldMatch(kind="range", value=10, high=20),
                               1: FieldMatch(kind="optional", value=3)}, priority=2, action=act(2)))
    assert hit(t, (10, 3)) == 2
    assert hit(t, (20, 4)) == 1
    assert hit(t, (21, 3)) is None


def test_priority_required_for_ternary_tables():
    """Entries of ternary tables need a priority > 0."""
    t = table("ternary")
    with pytest.raises(StateError) as ei:
        t.insert(TableEntry(match={}, action=act(1)))
    assert ei.value.code == Code.INVALID_ARGUMENT


def test_size_limit_is_resource_exhausted():
    """Inserting beyond the table size fails with RESOURCE_EXHAUSTED."""
    t = table("exact", size=2)
    for v in (1, 2):
        t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=v)}, action=act(v)))
    with pytest.raises(StateError) as ei:
        t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=3)}, action=act(3)))
    assert ei.value.code == Code.RESOURCE_EXHAUSTED


def test_const_default_cannot_change():
    """A const default action refuses other actions (PERMISSION_DENIED)."""
    t = table("exact", default_const=True)
    with pytest.raises(StateError) as ei:
        t.set_default(act(1))
    assert ei.value.code == Code.PERMISSION_DENIED


def test_direct_counter_counts_hits_only():
    """Direct counters count packets and bytes of hits, not of misses."""
    t = table("exact", direct_counter=True)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, action=act(1)))
    pk = Packet(b"x" * 100)
    t.lookup(1, pk)
    t.lookup(2, pk)
    (e,) = t.entries()
    assert (e.counter_packets, e.counter_bytes) == (1, 100)


def test_selector_picks_member_by_hash_in_handle_order():
    """hash % n over members ordered by creation handle, weights repeat members."""
    prof = ActionProfile("p", 16, selector=True, algorithm="identity")
    for mid in (30, 10, 20):
        prof.member_insert(Member(member_id=mid, action=act(mid)))
    prof.group_insert(Group(group_id=1, members=[(10, 1), (20, 2), (30, 1)]))
    t = Table("t", [KeySpec(name="k", kind="exact", width=8)], ACTIONS, default=ActionCall(action="nop"),
              profile=prof)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    # handles: 30 -> 0, 10 -> 1, 20 -> 2; expanded list: [30, 10, 20, 20]
    got = [t.lookup(1, Packet(b""), lambda i=i: bytes([i]))[1][0] for i in range(4)]
    assert got == [30, 10, 20, 20]


def _selector_table(prof: ActionProfile) -> Table:
    return Table("t", [KeySpec(name="k", kind="exact", width=8)], ACTIONS, default=ActionCall(action="nop"),
                 profile=prof)


def test_entry_cannot_point_at_an_empty_group():
    """BMv2 refuses an entry whose group has no member (EMPTY_GRP, P4Runtime UNKNOWN)."""
    prof = ActionProfile("p", 16, selector=True)
    prof.group_insert(Group(group_id=1, members=[]))
    t = _selector_table(prof)
    with pytest.raises(StateError) as ei:
        t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    assert ei.value.code == Code.UNKNOWN
    assert t.entries() == []


def test_group_emptied_under_an_entry_hits_and_runs_no_action():
    """BMv2: a lookup reaching an empty group is a hit running the empty action."""
    prof = ActionProfile("p", 16, selector=True)
    prof.member_insert(Member(member_id=1, action=act(1)))
    prof.group_insert(Group(group_id=1, members=[(1, 1)]))
    t = _selector_table(prof)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    prof.group_modify(Group(group_id=1, members=[]))
    fn, args, hit_, action_id = t.lookup(1, Packet(b""), lambda: b"")
    assert hit_ is True and args == () and action_id not in (1, 2)


def test_weighted_member_copies_take_new_handles_as_pi_does():
    """Weight w = w BMv2 member handles; the extra copies get the lowest free handles later."""
    prof = ActionProfile("p", 16, selector=True, algorithm="identity")
    for mid in (10, 20, 30):  # handles 0, 1, 2
        prof.member_insert(Member(member_id=mid, action=act(mid)))
    prof.group_insert(Group(group_id=1, members=[(10, 2), (20, 1)]))  # copy of 10 -> handle 3
    t = _selector_table(prof)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    got = [t.lookup(1, Packet(b""), lambda i=i: bytes([i]))[1][0] for i in range(3)]
    assert got == [10, 20, 10]
    prof.group_modify(Group(group_id=1, members=[(10, 1), (20, 1)]))  # copy released
    assert prof.handles[10] == [0]


def test_group_referenced_by_entry_cannot_be_deleted():
    """Deleting a group an entry uses fails with FAILED_PRECONDITION."""
    prof = ActionProfile("p", 16, selector=True)
    prof.member_insert(Member(member_id=1, action=act(1)))
    prof.group_insert(Group(group_id=1, members=[(1, 1)]))
    t = _selector_table(prof)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    with pytest.raises(StateError) as ei:
        prof.group_delete(1)
    assert ei.value.code == Code.FAILED_PRECONDITION
    t.delete(TableEntry(match={0: FieldMatch(kind="exact", value=1)}))
    prof.group_delete(1)


@pytest.mark.parametrize("kind,ks,value,mask,want", [
    ("lpm", "mask", 0x0A000000, 0xFF000000, FieldMatch(kind="lpm", value=0x0A000000, prefix_len=8)),
    ("ternary", "exact", 5, None, FieldMatch(kind="ternary", value=5, mask=0xFFFFFFFF)),
    ("exact", "exact", 5, None, FieldMatch(kind="exact", value=5)),
    ("ternary", "default", None, None, None),
], ids=["lpm-mask", "ternary-exact", "exact", "wildcard"])
def test_const_entry_keysets(kind, ks, value, mask, want):
    """Const entry keysets become the FieldMatch P4Runtime would show."""
    assert const_match(kind, 32, ks, value, mask, None) == want


def test_one_shot_action_set_selects_by_hash():
    """A one-shot entry's action set is a hidden group: weights repeat actions."""
    prof = ActionProfile("p", 16, selector=True, algorithm="identity")
    t = Table("t", [KeySpec(name="k", kind="exact", width=8)], ACTIONS, default=ActionCall(action="nop"),
              profile=prof)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)},
                        action_set=((act(1), 1), (act(2), 2))))
    got = [t.lookup(1, Packet(b""), lambda i=i: bytes([i]))[1][0] for i in range(3)]
    assert got == [1, 2, 2]


def test_idle_timeout_entry_reported_once_until_hit_again():
    """A support_timeout table records hit times; idle entries are reported once per idle period."""
    t = table("exact", support_timeout=True)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, action=act(1), idle_timeout_ns=1000))
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=2)}, action=act(2)))  # no timeout
    (e,) = t.entries()[:1]
    t0 = e.last_hit_ns
    assert t0 > 0
    assert t.idle_entries(t0 + 999) == []
    (idle,) = t.idle_entries(t0 + 1000)
    assert idle.match[0].value == 1
    assert t.idle_entries(t0 + 5000) == []  # already reported
    t.lookup(1, Packet(b""))
    (e,) = [x for x in t.entries() if x.match[0].value == 1]
    assert e.last_hit_ns >= t0
    assert len(t.idle_entries(e.last_hit_ns + 1000)) == 1


def test_default_entry_direct_counter_counts_misses():
    """A miss counts packets and bytes on the default entry's direct counter, shown by default_entry()."""
    t = table("exact", direct_counter=True)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, action=act(1)))
    t.lookup(1, Packet(b"x" * 100))
    t.lookup(2, Packet(b"x" * 60))
    t.lookup(3, Packet(b"x" * 60))
    d = t.default_entry()
    assert d.is_default and (d.counter_packets, d.counter_bytes) == (2, 120)
    t.set_direct(TableEntry(match={}, is_default=True), packets=0, bytes_=7)
    assert (t.default_entry().counter_packets, t.default_entry().counter_bytes) == (0, 7)


def test_default_entry_direct_meter_config_round_trips():
    """The default entry's direct meter is set like an entry's; a bad config is refused."""
    t = table("exact", direct_meter="m")
    t.set_direct(TableEntry(match={}, is_default=True), meter_config=(1, 10, 1, 1))
    assert t.default_entry().meter_config == (1, 10, 1, 1)
    pk = Packet(b"x")
    t.lookup(9, pk)
    assert pk.meter_colors == {"m": 0}
    with pytest.raises(StateError) as ei:
        t.set_direct(TableEntry(match={}, is_default=True), meter_config=(5, 1, 1, 1))
    assert ei.value.code == Code.INVALID_ARGUMENT
    t.set_direct(TableEntry(match={}, is_default=True), meter_config=None)
    assert t.default_entry().meter_config is None


def test_selection_follows_member_and_group_changes():
    """Cached selector choices are rebuilt after a member or group changes."""
    prof = ActionProfile("p", 16, selector=True, algorithm="identity")
    prof.member_insert(Member(member_id=1, action=act(1)))
    prof.member_insert(Member(member_id=2, action=act(2)))
    prof.group_insert(Group(group_id=1, members=[(1, 1), (2, 1)]))
    t = _selector_table(prof)
    t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    assert t.lookup(1, Packet(b""), lambda: b"\x01")[1] == (2,)
    prof.member_modify(Member(member_id=2, action=act(9)))
    assert t.lookup(1, Packet(b""), lambda: b"\x01")[1] == (9,)
    prof.group_modify(Group(group_id=1, members=[(1, 1)]))
    assert t.lookup(1, Packet(b""), lambda: b"\x01")[1] == (1,)


def test_trusted_insert_keeps_the_entry_object_and_entries_view_is_live():
    """insert(trusted=True) stores the given entry; entries(copy=False) shows the live objects."""
    t = table("exact")
    e = TableEntry(match={0: FieldMatch(kind="exact", value=1)}, action=act(1))
    view = t.entries(copy=False)
    assert len(view) == 0
    t.insert(e, trusted=True)
    assert len(view) == 1 and view[0] is e and list(view) == [e]
    assert t.entries()[0] is not e
    with pytest.raises(StateError) as ei:
        t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=1)}, action=act(2)), trusted=True)
    assert ei.value.code == Code.ALREADY_EXISTS
    assert hit(t, 1) == 1


def test_lpm_prefix_lengths_present_longest_first():
    """Only the prefix lengths in use are probed, longest first; emptied lengths disappear."""
    t = table("lpm", width=32)
    for plen in (8, 24, 16):
        t.insert(TableEntry(match={0: FieldMatch(kind="lpm", value=0x0A000000, prefix_len=plen)}, action=act(plen)))
    assert [bin(m).count("1") for m, _ in t.plens] == [24, 16, 8]
    assert hit(t, 0x0A000001) == 24
    t.delete(TableEntry(match={0: FieldMatch(kind="lpm", value=0x0A000000, prefix_len=24)}))
    assert [bin(m).count("1") for m, _ in t.plens] == [16, 8]
    assert hit(t, 0x0A000001) == 16


def test_single_key_lpm_default_route_modify_and_delete():
    """A one-key LPM table: /0 matches everything, modify replaces the action in place, delete by key."""
    t = table("lpm", width=32)
    t.insert(TableEntry(match={}, action=act(1)), trusted=True)  # /0: the LPM field is a don't-care
    t.insert(TableEntry(match={0: FieldMatch(kind="lpm", value=0x0A000000, prefix_len=8)}, action=act(2)),
             trusted=True)
    assert (hit(t, 0x0A010203), hit(t, 0x0B000000)) == (2, 1)
    t.modify(TableEntry(match={0: FieldMatch(kind="lpm", value=0x0A000000, prefix_len=8)}, action=act(3)),
             trusted=True)
    assert hit(t, 0x0A010203) == 3 and len(t.recs) == 2
    with pytest.raises(StateError) as ei:
        t.insert(TableEntry(match={0: FieldMatch(kind="lpm", value=0x0A000000, prefix_len=8)}, action=act(4)),
                 trusted=True)
    assert ei.value.code == Code.ALREADY_EXISTS
    t.delete(TableEntry(match={}))
    assert hit(t, 0x0B000000) is None and hit(t, 0x0A000001) == 3


def test_entries_with_equal_actions_share_one_result():
    """Entries calling the same action with the same data share one result tuple; others do not."""
    t = table("exact")
    for k, v in ((1, 5), (2, 5), (3, 6)):
        t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=k)}, action=act(v)), trusted=True)
    assert t.fast[1] is t.fast[2] and t.fast[3] is not t.fast[1]
    assert [hit(t, k) for k in (1, 2, 3)] == [5, 5, 6]


def test_result_cache_stays_bounded_under_insert_delete_churn():
    """Entries inserted and deleted with ever new action data do not grow the table's memory
    without bound, and every entry still hits with its own action data."""
    wide = {"a": ActionInfo(cp_name="a", fn=_fn, action_id=1, param_widths=(32,)), "nop": ACTIONS["nop"]}
    t = Table("t", [KeySpec(name="k", kind="exact", width=32)], wide, default=ActionCall(action="nop"), size=4096)
    for i in range(20000):
        t.insert(TableEntry(match={0: FieldMatch(kind="exact", value=i)}, action=ActionCall(action="a", args=(i,))))
        if i % 10:
            t.delete(TableEntry(match={0: FieldMatch(kind="exact", value=i)}))
    assert len(t.recs) == 2000
    assert len(t._rcache) <= 4096 + 2 * len(t.recs) + 1
    assert all(hit(t, i) == i for i in range(0, 20000, 10))  # a one-field key is the bare value
