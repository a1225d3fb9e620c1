"""TableEntry, DirectCounterEntry and DirectMeterEntry writes and reads (spec §9.1)."""

from __future__ import annotations

import grpc
import pytest

from p4switch.proto import p4r

from .conftest import Client, p4_id, update, write_errors

LPM, ACL, MAC, CONST, ECMP, KEYLESS = 33554433, 33554434, 33554435, 33554436, 33554437, 33554438
SET_NHOP, MISS, DROP, SET_PORT = 16777217, 16777219, 16777220, 16777221
NOACTION = p4_id("actions", "NoAction")


def action(aid: int, *params: bytes) -> p4r.TableAction:
    ta = p4r.TableAction()
    ta.action.action_id = aid
    for i, v in enumerate(params, 1):
        ta.action.params.add(param_id=i, value=v)
    return ta


def lpm_entry(value: bytes = b"\x0a\x00\x00\x00", plen: int = 8, **kw) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=LPM, **kw)
    fm = te.match.add(field_id=1)
    fm.lpm.value, fm.lpm.prefix_len = value, plen
    if "action" not in kw:
        te.action.CopyFrom(action(SET_NHOP, b"\x01", b"\x02"))
    return te


def acl_entry(priority: int = 10, src=(b"\x0a\x00\x00\x00", b"\xff\x00\x00\x00"),
              proto: bytes = b"\x06", rng=None, opt=None) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=ACL, priority=priority)
    if src is not None:
        fm = te.match.add(field_id=1)
        fm.ternary.value, fm.ternary.mask = src
    te.match.add(field_id=2).exact.value = proto
    if rng is not None:
        fm = te.match.add(field_id=3)
        fm.range.low, fm.range.high = rng
    if opt is not None:
        te.match.add(field_id=4).optional.value = opt
    te.action.CopyFrom(action(DROP))
    return te


def read_table(c: Client, table_id: int, **kw) -> list[p4r.TableEntry]:
    return [e.table_entry for e in c.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id, **kw)))]


def fail_code(c: Client, *updates: p4r.Update) -> list[int]:
    with pytest.raises(grpc.RpcError) as e:
        c.write(*updates)
    assert e.value.code() == grpc.StatusCode.UNKNOWN
    return [x.canonical_code for x in write_errors(e.value)]


def test_insert_then_read_back_is_symmetric(primary: Client) -> None:
    """What is written (canonical) is what is read."""
    te = lpm_entry(controller_metadata=77, metadata=b"cookie")
    primary.write(update("INSERT", table_entry=te))
    assert read_table(primary, LPM) == [te]


def test_padded_values_are_accepted_and_read_back_canonical(primary: Client) -> None:
    """Writes accept zero padding; reads answer the shortest byte strings."""
    te = lpm_entry()
    te.action.CopyFrom(action(SET_NHOP, b"\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00\x00\x02"))
    primary.write(update("INSERT", table_entry=te))
    params = read_table(primary, LPM)[0].action.action.params
    assert [p.value for p in params] == [b"\x01", b"\x02"]


@pytest.mark.parametrize("params", [
    (b"\x02\x00", b"\x02"),  # 512 does not fit bit<9>
    (b"\x01", b"\x01" + b"\x00" * 6),  # 7 bytes with a 1 in the top byte for bit<48>
], ids=["port-too-wide", "mac-too-wide"])
def test_values_wider_than_the_field_are_out_of_range(primary: Client, params) -> None:
    """A value that does not fit its bit width is OUT_OF_RANGE."""
    te = lpm_entry()
    te.action.CopyFrom(action(SET_NHOP, *params))
    assert fail_code(primary, update("INSERT", table_entry=te)) == [11]


def test_parameters_in_any_order_are_placed_by_id(primary: Client) -> None:
    """Action parameters are matched by id, whatever order the request lists them in."""
    te = lpm_entry()
    te.action.action.ClearField("params")
    te.action.action.params.add(param_id=2, value=b"\x0a\x0b")
    te.action.action.params.add(param_id=1, value=b"\x03")
    primary.write(update("INSERT", table_entry=te))
    params = read_table(primary, LPM)[0].action.action.params
    assert [(p.param_id, p.value) for p in params] == [(1, b"\x03"), (2, b"\x0a\x0b")]


@pytest.mark.parametrize("params,code", [
    ([(1, b"\x01")], 3),  # one missing
    ([(1, b"\x01"), (1, b"\x02")], 3),  # one twice
    ([(1, b"\x01"), (3, b"\x02")], 3),  # unknown id
    ([(1, b"\x01"), (2, b"\x01"), (3, b"\x01")], 3),  # one too many
    ([(2, b"\x01\x00\x00\x00\x00\x00\x00"), (1, b"\x01")], 11),  # too wide, out of order
], ids=["missing", "twice", "unknown", "extra", "wide-out-of-order"])
def test_bad_parameter_lists_are_refused(primary: Client, params, code) -> None:
    """Missing, repeated, unknown or extra parameter ids are INVALID_ARGUMENT; a too-wide value OUT_OF_RANGE."""
    te = lpm_entry()
    te.action.action.ClearField("params")
    for pid, value in params:
        te.action.action.params.add(param_id=pid, value=value)
    assert fail_code(primary, update("INSERT", table_entry=te)) == [code]


def test_empty_byte_string_is_out_of_range(primary: Client) -> None:
    """A zero-length value is always refused."""
    te = lpm_entry()
    te.action.CopyFrom(action(SET_NHOP, b"", b"\x01"))
    assert fail_code(primary, update("INSERT", table_entry=te)) == [11]


@pytest.mark.parametrize("value,plen", [
    (b"\x0a\x00\x00\x01", 8), (b"\x0a\x00\x00\x00", 0), (b"\x0a\x00\x00\x00", 33),
], ids=["bits-beyond-prefix", "zero-prefix", "prefix-too-long"])
def test_bad_lpm_is_invalid_argument(primary: Client, value, plen) -> None:
    """LPM rules: 0 < prefix_len <= width, no bits set past the prefix."""
    assert fail_code(primary, update("INSERT", table_entry=lpm_entry(value, plen))) == [3]


@pytest.mark.parametrize("entry", [
    acl_entry(src=(b"\x0a", b"\x00")),
    acl_entry(src=(b"\x0b", b"\x0a")),
    acl_entry(rng=(b"\x05", b"\x01")),
    acl_entry(rng=(b"\x00", b"\xff\xff")),
    acl_entry(priority=0),
], ids=["zero-mask", "value-outside-mask", "low-above-high", "full-range", "no-priority"])
def test_bad_ternary_range_priority_is_invalid_argument(primary: Client, entry) -> None:
    """Ternary/range rules and the priority rule of tables that need one."""
    assert fail_code(primary, update("INSERT", table_entry=entry)) == [3]


def test_priority_on_exact_table_is_invalid_argument(primary: Client) -> None:
    """Tables without ternary/range/optional keys take priority 0."""
    te = lpm_entry()
    te.priority = 5
    assert fail_code(primary, update("INSERT", table_entry=te)) == [3]


def test_missing_exact_field_and_unknown_field_are_invalid_argument(primary: Client) -> None:
    """Exact fields cannot be omitted; field ids must exist; kinds must match."""
    te = acl_entry()
    del te.match[1]
    bad_id = acl_entry()
    bad_id.match.add(field_id=9).exact.value = b"\x01"
    wrong_kind = lpm_entry()
    wrong_kind.match[0].exact.value = b"\x01"
    assert fail_code(primary, update("INSERT", table_entry=te), update("INSERT", table_entry=bad_id),
                     update("INSERT", table_entry=wrong_kind)) == [3, 3, 3]


def test_all_match_kinds_round_trip(primary: Client) -> None:
    """Ternary, exact, range and optional fields with a priority read back as written."""
    te = acl_entry(rng=(b"\x00\x50", b"\x01\xbb"), opt=b"\x03")
    te.match[2].range.low = b"\x50"
    primary.write(update("INSERT", table_entry=te))
    got = read_table(primary, ACL)[0]
    assert sorted(got.match, key=lambda m: m.field_id) == sorted(te.match, key=lambda m: m.field_id)
    assert got.priority == 10


def test_same_key_different_priority_are_different_entries(primary: Client) -> None:
    """Match and priority together identify an entry."""
    primary.write(update("INSERT", table_entry=acl_entry(10)), update("INSERT", table_entry=acl_entry(20)))
    assert len(read_table(primary, ACL)) == 2
    assert [e.priority for e in read_table(primary, ACL, priority=20)] == [20]


def test_modify_and_delete_missing_entry_are_not_found(primary: Client) -> None:
    """MODIFY/DELETE of an entry that does not exist: NOT_FOUND."""
    assert fail_code(primary, update("MODIFY", table_entry=lpm_entry()),
                     update("DELETE", table_entry=lpm_entry())) == [5, 5]


def test_insert_existing_is_already_exists_and_keeps_entry(primary: Client) -> None:
    """A duplicate INSERT fails and leaves the existing entry unchanged."""
    primary.write(update("INSERT", table_entry=lpm_entry()))
    other = lpm_entry()
    other.action.CopyFrom(action(SET_NHOP, b"\x07", b"\x07"))
    assert fail_code(primary, update("INSERT", table_entry=other)) == [6]
    assert read_table(primary, LPM) == [lpm_entry()]


def test_full_table_is_resource_exhausted(primary: Client) -> None:
    """Inserting beyond the table size fails with RESOURCE_EXHAUSTED."""
    from .test_service import mac_entry

    primary.write(*[update("INSERT", table_entry=mac_entry(i, 1)) for i in range(1, 5)])
    assert fail_code(primary, update("INSERT", table_entry=mac_entry(9, 1))) == [8]


def test_modify_replaces_action_and_delete_removes(primary: Client) -> None:
    """MODIFY has full-snapshot semantics for the action; DELETE needs only the key."""
    primary.write(update("INSERT", table_entry=lpm_entry()))
    new = lpm_entry()
    new.action.CopyFrom(action(SET_NHOP, b"\x05", b"\x06"))
    primary.write(update("MODIFY", table_entry=new))
    assert read_table(primary, LPM) == [new]
    key_only = lpm_entry()
    key_only.ClearField("action")
    primary.write(update("DELETE", table_entry=key_only))
    assert read_table(primary, LPM) == []


def test_insert_without_action_is_invalid_argument(primary: Client) -> None:
    """INSERT needs an action."""
    te = lpm_entry()
    te.ClearField("action")
    assert fail_code(primary, update("INSERT", table_entry=te)) == [3]


@pytest.mark.parametrize("ta,code", [
    (action(SET_PORT, b"\x01"), 3),
    (action(MISS), 7),
    (action(SET_NHOP, b"\x01"), 3),
    (action(SET_NHOP, b"\x01", b"\x02", b"\x03"), 3),
], ids=["not-a-table-action", "defaultonly-in-entry", "missing-param", "extra-param"])
def test_action_checks(primary: Client, ta, code) -> None:
    """Actions must belong to the table, respect scope and have exactly their params."""
    te = lpm_entry()
    te.action.CopyFrom(ta)
    assert fail_code(primary, update("INSERT", table_entry=te)) == [code]


def test_indirect_action_on_direct_table_is_invalid_argument(primary: Client) -> None:
    """The TableAction oneof must match the table's implementation."""
    te = lpm_entry()
    te.action.CopyFrom(p4r.TableAction(action_profile_member_id=1))
    assert fail_code(primary, update("INSERT", table_entry=te)) == [3]


def test_is_const_in_write_is_invalid_argument(primary: Client) -> None:
    """is_const must be false in writes."""
    te = lpm_entry()
    te.is_const = True
    assert fail_code(primary, update("INSERT", table_entry=te)) == [3]


def test_const_table_writes_are_permission_denied(primary: Client) -> None:
    """Const tables refuse INSERT/DELETE and action changes, and read back with is_const."""
    te = p4r.TableEntry(table_id=CONST)
    te.match.add(field_id=1).exact.value = b"\x08\x00"
    te.action.CopyFrom(action(NOACTION))
    assert fail_code(primary, update("INSERT", table_entry=te), update("MODIFY", table_entry=te),
                     update("DELETE", table_entry=te)) == [7, 7, 7]
    got = read_table(primary, CONST)
    assert len(got) == 2 and all(e.is_const for e in got)


def test_keyless_table_insert_is_invalid_argument(primary: Client) -> None:
    """Keyless tables only have a default entry."""
    te = p4r.TableEntry(table_id=KEYLESS, action=action(SET_PORT, b"\x01"))
    assert fail_code(primary, update("INSERT", table_entry=te)) == [3]


def default_entry(table_id: int, ta: p4r.TableAction | None = None) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=table_id, is_default_action=True)
    if ta is not None:
        te.action.CopyFrom(ta)
    return te


def test_default_entry_modify_and_reset(primary: Client) -> None:
    """MODIFY sets the default action; MODIFY without action resets it to the program's."""
    primary.write(update("MODIFY", table_entry=default_entry(LPM, action(MISS))))
    assert read_table(primary, LPM, is_default_action=True) == [default_entry(LPM, action(MISS))]
    primary.write(update("MODIFY", table_entry=default_entry(LPM)))
    assert read_table(primary, LPM, is_default_action=True) == [default_entry(LPM, action(NOACTION))]


def test_default_entry_insert_delete_and_match_are_invalid_argument(primary: Client) -> None:
    """The default entry can only be modified, and has no match."""
    with_match = default_entry(LPM, action(MISS))
    with_match.match.add(field_id=1).lpm.value = b"\x01"
    assert fail_code(primary, update("INSERT", table_entry=default_entry(LPM, action(MISS))),
                     update("DELETE", table_entry=default_entry(LPM)),
                     update("MODIFY", table_entry=with_match)) == [3, 3, 3]


def test_const_default_and_tableonly_default_are_permission_denied(primary: Client) -> None:
    """A const default action cannot change; a @tableonly action cannot be the default."""
    assert fail_code(primary, update("MODIFY", table_entry=default_entry(CONST, action(NOACTION))),
                     update("MODIFY", table_entry=default_entry(MAC, action(DROP)))) == [7, 7]


def test_wildcard_read_of_all_tables_excludes_defaults(primary: Client) -> None:
    """table_id 0 reads every non-default entry of every table (const ones too)."""
    primary.write(update("INSERT", table_entry=lpm_entry()))
    got = [e.table_entry for e in primary.read(p4r.Entity(table_entry=p4r.TableEntry()))]
    assert sorted(e.table_id for e in got) == [LPM, CONST, CONST]


def test_read_filters_by_match_and_action(primary: Client) -> None:
    """A match in the read request selects one entry; an action id filters by action."""
    a, b = lpm_entry(), lpm_entry(b"\x0b\x00\x00\x00", 8, action=action(NOACTION))
    primary.write(update("INSERT", table_entry=a), update("INSERT", table_entry=b))
    req = lpm_entry(b"\x0b\x00\x00\x00", 8)
    req.ClearField("action")
    assert [e.action.action.action_id for e in read_table(primary, LPM, match=req.match)] == [NOACTION]
    only = p4r.TableEntry(table_id=LPM, action=action(SET_NHOP))
    assert [e.table_entry for e in primary.read(p4r.Entity(table_entry=only))] == [a]


def test_direct_counter_through_table_entry(primary: Client) -> None:
    """counter_data initialises on INSERT, is kept by MODIFY without it, and reads when asked."""
    te = lpm_entry(counter_data=p4r.CounterData(packet_count=3, byte_count=300))
    primary.write(update("INSERT", table_entry=te))
    plain = read_table(primary, LPM)[0]
    assert not plain.HasField("counter_data")
    new = lpm_entry(action=action(NOACTION))
    primary.write(update("MODIFY", table_entry=new))
    got = read_table(primary, LPM, counter_data=p4r.CounterData())[0]
    assert (got.counter_data.packet_count, got.counter_data.byte_count) == (3, 300)


def test_direct_counter_entry_write_and_read(primary: Client) -> None:
    """DirectCounterEntry MODIFY sets an entry's counter; INSERT is refused; wildcard reads all."""
    primary.write(update("INSERT", table_entry=lpm_entry()))
    key = lpm_entry()
    key.ClearField("action")
    dce = p4r.DirectCounterEntry(table_entry=key, data=p4r.CounterData(packet_count=5, byte_count=9))
    primary.write(update("MODIFY", direct_counter_entry=dce))
    got = primary.read(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(table_entry=p4r.TableEntry(table_id=LPM))))
    assert got[0].direct_counter_entry.data == p4r.CounterData(packet_count=5, byte_count=9)
    assert got[0].direct_counter_entry.table_entry.match == key.match
    assert fail_code(primary, update("INSERT", direct_counter_entry=dce)) == [3]


def test_direct_counter_of_missing_entry_is_not_found(primary: Client) -> None:
    """DirectCounterEntry for an entry that does not exist: NOT_FOUND."""
    key = lpm_entry()
    key.ClearField("action")
    dce = p4r.DirectCounterEntry(table_entry=key, data=p4r.CounterData(packet_count=5))
    assert fail_code(primary, update("MODIFY", direct_counter_entry=dce)) == [5]


def test_counter_data_on_table_without_direct_counter_is_invalid_argument(primary: Client) -> None:
    """Direct resources must exist on the table."""
    from .test_service import mac_entry

    te = mac_entry(1, 1)
    te.counter_data.packet_count = 1
    assert fail_code(primary, update("INSERT", table_entry=te)) == [3]


def test_direct_meter_config_write_read_and_reset(primary: Client) -> None:
    """meter_config on INSERT reads back; DirectMeterEntry without config resets to default."""
    cfg = p4r.MeterConfig(cir=100, cburst=10, pir=200, pburst=20)
    primary.write(update("INSERT", table_entry=lpm_entry(meter_config=cfg)))
    assert read_table(primary, LPM, meter_config=p4r.MeterConfig())[0].meter_config == cfg
    key = lpm_entry()
    key.ClearField("action")
    primary.write(update("MODIFY", direct_meter_entry=p4r.DirectMeterEntry(table_entry=key)))
    got = primary.read(p4r.Entity(direct_meter_entry=p4r.DirectMeterEntry(table_entry=key)))
    assert not got[0].direct_meter_entry.HasField("config")


def test_modify_without_meter_config_resets_meter(primary: Client) -> None:
    """Spec §9.1.6: an unset meter_config in MODIFY means the default config."""
    cfg = p4r.MeterConfig(cir=100, cburst=10, pir=200, pburst=20)
    primary.write(update("INSERT", table_entry=lpm_entry(meter_config=cfg)))
    primary.write(update("MODIFY", table_entry=lpm_entry()))
    assert not read_table(primary, LPM, meter_config=p4r.MeterConfig())[0].HasField("meter_config")


def test_idle_timeout_on_table_without_support_is_invalid_argument(primary: Client) -> None:
    """idle_timeout_ns needs a table with idle timeout support."""
    assert fail_code(primary, update("INSERT", table_entry=lpm_entry(idle_timeout_ns=10**9))) == [3]


def test_unknown_table_id_is_invalid_argument(primary: Client) -> None:
    """Write to a table id that is not in the P4Info."""
    te = lpm_entry()
    te.table_id = 0x02FFFFFF
    assert fail_code(primary, update("INSERT", table_entry=te)) == [3]
