"""Action profiles, indexed counters/meters/registers, PRE and digest entries (spec §9.2-9.9)."""

from __future__ import annotations

import pytest

from p4switch.io import MemoryPorts
from p4switch.proto import p4d, p4r

from .conftest import Client, p4_id, update
from .test_tableentries import ECMP, SET_PORT, action, fail_code

PROFILE, COUNTER, PKT_COUNTER, METER, REG = 285212673, 302055425, 302055426, 335544321, 369098753
DIGEST = p4_id("digests", "learn_t")


def member(mid: int, port: int = 1) -> p4r.ActionProfileMember:
    return p4r.ActionProfileMember(action_profile_id=PROFILE, member_id=mid,
                                   action=action(SET_PORT, bytes([port])).action)


def group(gid: int, *members: tuple[int, int], max_size: int = 8) -> p4r.ActionProfileGroup:
    g = p4r.ActionProfileGroup(action_profile_id=PROFILE, group_id=gid, max_size=max_size)
    for mid, w in members:
        g.members.add(member_id=mid, weight=w)
    return g


def ecmp_entry(key: int, **ta) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=ECMP)
    te.match.add(field_id=1).exact.value = bytes([key])
    te.action.CopyFrom(p4r.TableAction(**ta))
    return te


def test_members_groups_and_indirect_entries_round_trip(primary: Client) -> None:
    """Members, a group over them, and a table entry pointing at the group all read back."""
    primary.write(update("INSERT", action_profile_member=member(1)),
                  update("INSERT", action_profile_member=member(2, 2)))
    primary.write(update("INSERT", action_profile_group=group(7, (1, 1), (2, 3))))
    primary.write(update("INSERT", table_entry=ecmp_entry(1, action_profile_group_id=7)))
    got = primary.read(p4r.Entity(action_profile_member=p4r.ActionProfileMember()),
                       p4r.Entity(action_profile_group=p4r.ActionProfileGroup(action_profile_id=PROFILE)),
                       p4r.Entity(table_entry=p4r.TableEntry(table_id=ECMP)))
    assert [e.action_profile_member for e in got[:2]] == [member(1), member(2, 2)]
    assert got[2].action_profile_group == group(7, (1, 1), (2, 3))
    assert got[3].table_entry == ecmp_entry(1, action_profile_group_id=7)


def test_member_errors(primary: Client) -> None:
    """Duplicate member ALREADY_EXISTS, missing NOT_FOUND, member in a group FAILED_PRECONDITION."""
    primary.write(update("INSERT", action_profile_member=member(1)))
    primary.write(update("INSERT", action_profile_group=group(7, (1, 1))))
    assert fail_code(primary, update("INSERT", action_profile_member=member(1)),
                     update("MODIFY", action_profile_member=member(9)),
                     update("DELETE", action_profile_member=member(9)),
                     update("DELETE", action_profile_member=member(1))) == [6, 5, 5, 9]


def test_group_errors(primary: Client) -> None:
    """Unknown member NOT_FOUND, zero weight and max_size change INVALID_ARGUMENT, group in use FAILED_PRECONDITION."""
    primary.write(update("INSERT", action_profile_member=member(1)))
    primary.write(update("INSERT", action_profile_group=group(7, (1, 1))))
    primary.write(update("INSERT", table_entry=ecmp_entry(1, action_profile_group_id=7)))
    assert fail_code(primary, update("INSERT", action_profile_group=group(8, (5, 1))),
                     update("INSERT", action_profile_group=group(8, (1, 0))),
                     update("MODIFY", action_profile_group=group(7, (1, 1), max_size=4)),
                     update("DELETE", action_profile_group=group(7)),
                     update("INSERT", action_profile_group=group(9, (1, 1), max_size=99))) == [5, 3, 3, 9, 3]


def test_entry_pointing_at_missing_member_is_not_found(primary: Client) -> None:
    """Indirect entries must reference existing members/groups."""
    assert fail_code(primary, update("INSERT", table_entry=ecmp_entry(1, action_profile_member_id=4))) == [5]


def test_one_shot_reads_back_as_written_and_forbids_mixing(primary: Client) -> None:
    """One-shot action sets read back unchanged; then member/group writes are refused."""
    te = ecmp_entry(2)
    aset = te.action.action_profile_action_set
    aset.action_profile_actions.add(action=action(SET_PORT, b"\x01").action, weight=1)
    aset.action_profile_actions.add(action=action(SET_PORT, b"\x02").action, weight=2)
    primary.write(update("INSERT", table_entry=te))
    assert [e.table_entry for e in primary.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=ECMP)))] == [te]
    assert fail_code(primary, update("INSERT", action_profile_member=member(1))) == [3]


def test_counter_write_read_and_wildcard(primary: Client) -> None:
    """CounterEntry MODIFY one cell; wildcard index reads every cell; INSERT refused."""
    ce = p4r.CounterEntry(counter_id=COUNTER, index=p4r.Index(index=2),
                          data=p4r.CounterData(packet_count=4, byte_count=400))
    primary.write(update("MODIFY", counter_entry=ce))
    cells = primary.read(p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=COUNTER)))
    assert len(cells) == 16
    assert cells[2].counter_entry == ce
    assert fail_code(primary, update("INSERT", counter_entry=ce), update("DELETE", counter_entry=ce)) == [3, 3]


def test_packets_only_counter_reads_only_packets(primary: Client) -> None:
    """A PACKETS counter reports packet_count only."""
    primary.write(update("MODIFY", counter_entry=p4r.CounterEntry(
        counter_id=PKT_COUNTER, index=p4r.Index(index=0), data=p4r.CounterData(packet_count=3, byte_count=99))))
    got = primary.read(p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=PKT_COUNTER, index=p4r.Index(index=0))))
    assert got[0].counter_entry.data == p4r.CounterData(packet_count=3)


@pytest.mark.parametrize("index,code", [(-1, 3), (16, 11)], ids=["negative", "past-end"])
def test_counter_index_errors(primary: Client, index: int, code: int) -> None:
    """Negative index INVALID_ARGUMENT; index past the size OUT_OF_RANGE."""
    ce = p4r.CounterEntry(counter_id=COUNTER, index=p4r.Index(index=index), data=p4r.CounterData())
    assert fail_code(primary, update("MODIFY", counter_entry=ce)) == [code]


def test_all_counters_wildcard(primary: Client) -> None:
    """counter_id 0 reads all cells of all counters."""
    assert len(primary.read(p4r.Entity(counter_entry=p4r.CounterEntry()))) == 16 + 4


def test_meter_config_write_read_and_reset(primary: Client) -> None:
    """MeterEntry MODIFY sets a cell's config; without config resets it."""
    cfg = p4r.MeterConfig(cir=1000, cburst=100, pir=2000, pburst=200)
    me = p4r.MeterEntry(meter_id=METER, index=p4r.Index(index=1), config=cfg)
    primary.write(update("MODIFY", meter_entry=me))
    got = primary.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=METER, index=p4r.Index(index=1))))
    assert got[0].meter_entry == me
    primary.write(update("MODIFY", meter_entry=p4r.MeterEntry(meter_id=METER, index=p4r.Index(index=1))))
    got = primary.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=METER, index=p4r.Index(index=1))))
    assert not got[0].meter_entry.HasField("config")


def test_register_write_read(primary: Client) -> None:
    """RegisterEntry takes a P4Data bitstring and reads back canonical."""
    re_ = p4r.RegisterEntry(register_id=REG, index=p4r.Index(index=5), data=p4d.P4Data(bitstring=b"\x00\x00\x12\x34"))
    primary.write(update("MODIFY", register_entry=re_))
    got = primary.read(p4r.Entity(register_entry=p4r.RegisterEntry(register_id=REG, index=p4r.Index(index=5))))
    assert got[0].register_entry.data.bitstring == b"\x12\x34"
    too_wide = p4r.RegisterEntry(register_id=REG, index=p4r.Index(index=5), data=p4d.P4Data(bitstring=b"\x01" * 5))
    assert fail_code(primary, update("MODIFY", register_entry=too_wide)) == [11]


def mcast(gid: int, *reps: tuple[int, int]) -> p4r.PacketReplicationEngineEntry:
    g = p4r.MulticastGroupEntry(multicast_group_id=gid)
    for port, inst in reps:
        g.replicas.add(port=bytes([port]), instance=inst)
    return p4r.PacketReplicationEngineEntry(multicast_group_entry=g)


def clone(sid: int, *reps: tuple[int, int]) -> p4r.PacketReplicationEngineEntry:
    c = p4r.CloneSessionEntry(session_id=sid, class_of_service=1, packet_length_bytes=128)
    for port, inst in reps:
        c.replicas.add(port=bytes([port]), instance=inst)
    return p4r.PacketReplicationEngineEntry(clone_session_entry=c)


def test_multicast_groups_and_clone_sessions_round_trip(primary: Client) -> None:
    """PRE entries read back as written; wildcard reads list them."""
    primary.write(update("INSERT", packet_replication_engine_entry=mcast(1, (1, 0), (2, 0))),
                  update("INSERT", packet_replication_engine_entry=clone(5, (255, 1))))
    got = primary.read(p4r.Entity(packet_replication_engine_entry=mcast(0)),
                       p4r.Entity(packet_replication_engine_entry=clone(0)))
    assert [e.packet_replication_engine_entry for e in got] == [mcast(1, (1, 0), (2, 0)), clone(5, (255, 1))]


def test_pre_errors(primary: Client) -> None:
    """Group 0 and duplicate replicas INVALID_ARGUMENT; duplicate insert ALREADY_EXISTS; missing NOT_FOUND."""
    primary.write(update("INSERT", packet_replication_engine_entry=mcast(1, (1, 0))))
    assert fail_code(primary, update("INSERT", packet_replication_engine_entry=mcast(0, (1, 0))),
                     update("INSERT", packet_replication_engine_entry=mcast(2, (1, 0), (1, 0))),
                     update("INSERT", packet_replication_engine_entry=mcast(1, (1, 0))),
                     update("DELETE", packet_replication_engine_entry=clone(9)),
                     update("INSERT", packet_replication_engine_entry=clone(0))) == [3, 3, 6, 5, 3]


def test_digest_config_lifecycle(primary: Client) -> None:
    """DigestEntry INSERT/MODIFY/DELETE with the usual existence errors."""
    de = p4r.DigestEntry(digest_id=DIGEST, config=p4r.DigestEntry.Config(max_timeout_ns=1000, max_list_size=10))
    assert fail_code(primary, update("MODIFY", digest_entry=de)) == [5]
    primary.write(update("INSERT", digest_entry=de))
    assert [e.digest_entry for e in primary.read(p4r.Entity(digest_entry=p4r.DigestEntry()))] == [de]
    assert fail_code(primary, update("INSERT", digest_entry=de)) == [6]
    primary.write(update("DELETE", digest_entry=de))
    assert primary.read(p4r.Entity(digest_entry=p4r.DigestEntry())) == []


PVS = 50331649


def vs_entry(*values: bytes) -> p4r.ValueSetEntry:
    e = p4r.ValueSetEntry(value_set_id=PVS)
    for v in values:
        e.members.add().match.add(field_id=1).exact.value = v
    return e


def ipv4_over(ether_type: int, src: int) -> bytes:
    """An Ethernet frame of `ether_type` carrying an IPv4 header (protocol 0xfd) from `src`."""
    ip = bytes.fromhex("4500001400000000" "40fd0000") + src.to_bytes(4, "big") + bytes(4)
    return bytes(6 * [0x02]) + bytes(6 * [0x04]) + ether_type.to_bytes(2, "big") + ip


def reg0(c: Client) -> bytes:
    e = p4r.RegisterEntry(register_id=REG, index=p4r.Index(index=0))
    return c.read(p4r.Entity(register_entry=e))[0].register_entry.data.bitstring


def test_value_set_modify_and_read(primary: Client, ports: MemoryPorts) -> None:
    """ValueSetEntry MODIFY replaces the members (the parser matches them); reads answer them canonical."""
    ports.inject(1, ipv4_over(0x22F3, 0x0A000001))  # not in the set yet: not parsed as IPv4
    assert reg0(primary) == b"\x00"
    primary.write(update("MODIFY", value_set_entry=vs_entry(b"\x00\x22\xf3", b"\x89\x3b")))
    got = primary.read(p4r.Entity(value_set_entry=p4r.ValueSetEntry(value_set_id=PVS)))
    assert got[0].value_set_entry == vs_entry(b"\x22\xf3", b"\x89\x3b")
    ports.inject(1, ipv4_over(0x22F3, 0x0A000002))
    assert reg0(primary) == b"\x0a\x00\x00\x02"
    primary.write(update("MODIFY", value_set_entry=vs_entry()))
    assert primary.read(p4r.Entity(value_set_entry=p4r.ValueSetEntry()))[0].value_set_entry == vs_entry()


def test_value_set_errors(primary: Client) -> None:
    """INSERT INVALID_ARGUMENT, duplicates ALREADY_EXISTS, beyond size RESOURCE_EXHAUSTED."""
    assert fail_code(primary, update("INSERT", value_set_entry=vs_entry(b"\x01")),
                     update("MODIFY", value_set_entry=vs_entry(b"\x01", b"\x00\x01")),
                     update("MODIFY", value_set_entry=vs_entry(b"\x01", b"\x02", b"\x03"))) == [3, 6, 8]
