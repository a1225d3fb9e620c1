"""Idle-timeout notifications: a real packet hits an entry, then the entry idles."""

from __future__ import annotations

import queue

import pytest

from p4switch.io import MemoryPorts
from p4switch.proto import p4r
from p4switch.server import P4RuntimeServer
from p4switch.server.idle import IdleScanner

from .conftest import Client, Stream, compiled, update

TTL = 300_000_000  # 300 ms
DST = 0x0000000000AA


def frame(dst: int = DST) -> bytes:
    return dst.to_bytes(6, "big") + bytes.fromhex("020000000001") + b"\x88\xb5" + bytes(50)


def mac_entry(info, dst: int = DST, port: int = 2, ttl: int = TTL, **kw) -> p4r.TableEntry:
    table = info.tables[0]
    fwd = next(a for a in info.actions if a.preamble.name.endswith("forward"))
    te = p4r.TableEntry(table_id=table.preamble.id, idle_timeout_ns=ttl, **kw)
    te.match.add(field_id=table.match_fields[0].id).exact.value = dst.to_bytes(6, "big")
    te.action.action.action_id = fwd.preamble.id
    te.action.action.params.add(param_id=fwd.params[0].id, value=bytes([port]))
    return te


@pytest.fixture
def idle_primary(client: Client) -> tuple[Client, Stream, object]:
    stream = client.stream(10)
    info, blob = compiled("idle.p4")
    client.set_pipeline(p4info=info, device_config=blob)
    return client, stream, info


def next_idle(stream: Stream, timeout: float = 10.0) -> p4r.IdleTimeoutNotification:
    while True:
        msg = stream.recv(timeout)
        if msg.HasField("idle_timeout_notification"):
            return msg.idle_timeout_notification


def test_entry_hit_then_idle_is_notified_to_the_primary(idle_primary, ports: MemoryPorts) -> None:
    """After a hit and TTL without one, the primary gets the entry's key, TTL and metadata."""
    client, stream, info = idle_primary
    client.write(update("INSERT", table_entry=mac_entry(info, controller_metadata=7, metadata=b"m")))
    ports.inject(1, frame())
    assert ports.wait_sent(2) == frame()
    note = next_idle(stream)
    assert note.timestamp > 0 and len(note.table_entry) == 1
    te = note.table_entry[0]
    want = mac_entry(info, controller_metadata=7, metadata=b"m")
    assert (te.table_id, te.priority) == (want.table_id, 0)
    assert te.match[0].exact.value == b"\xaa"  # canonical byte string
    assert (te.idle_timeout_ns, te.controller_metadata, te.metadata) == (TTL, 7, b"m")
    read = client.read(p4r.Entity(table_entry=p4r.TableEntry(
        table_id=want.table_id, time_since_last_hit=p4r.TableEntry.IdleTimeout())))
    assert read[0].table_entry.time_since_last_hit.elapsed_ns >= TTL


def test_backup_gets_no_idle_notification(idle_primary, client: Client) -> None:
    """Notifications go to the primary only."""
    primary, stream, info = idle_primary
    backup = client.stream(5)
    primary.write(update("INSERT", table_entry=mac_entry(info, ttl=50_000_000)))
    next_idle(stream)
    with pytest.raises(queue.Empty):
        next_idle(backup, timeout=0.5)


def test_entry_without_ttl_is_never_notified(idle_primary, server: P4RuntimeServer) -> None:
    """idle_timeout_ns 0: the entry never expires."""
    client, stream, info = idle_primary
    client.write(update("INSERT", table_entry=mac_entry(info, ttl=0)))
    server.runtime.stream.idle.scan(now_ns=1 << 62)
    assert stream.no_message(0.3)


# The scanner's rules, on the real pipeline, with explicit times (nothing waits).

def scanner_of(server: P4RuntimeServer) -> tuple[IdleScanner, list[tuple[int, list]]]:
    seen: list[tuple[int, list]] = []
    scanner = IdleScanner(server.runtime.stream._idle_tables, lambda tid, es: seen.append((tid, es)))
    return scanner, seen


def test_scanner_reports_again_after_another_ttl_without_hits(idle_primary, server: P4RuntimeServer) -> None:
    """The timer restarts at each notification (spec §16.4): one report per TTL while idle."""
    client, _, info = idle_primary
    client.write(update("INSERT", table_entry=mac_entry(info)))
    scanner, seen = scanner_of(server)
    t0 = next(iter(server.runtime.committed.device.table_entries("MyIngress.mac"))).last_hit_ns
    scanner.scan(now_ns=t0 + TTL // 2)
    assert seen == []
    scanner.scan(now_ns=t0 + TTL)
    scanner.scan(now_ns=t0 + TTL + TTL // 2)
    assert len(seen) == 1
    scanner.scan(now_ns=t0 + 2 * TTL)
    assert len(seen) == 2 and seen[1][1][0].idle_timeout_ns == TTL


def test_scanner_forgets_deleted_entries(idle_primary, server: P4RuntimeServer) -> None:
    """A reported entry that is deleted is not reported again."""
    client, _, info = idle_primary
    client.write(update("INSERT", table_entry=mac_entry(info)))
    scanner, seen = scanner_of(server)
    t0 = next(iter(server.runtime.committed.device.table_entries("MyIngress.mac"))).last_hit_ns
    scanner.scan(now_ns=t0 + TTL)
    client.write(update("DELETE", table_entry=mac_entry(info)))
    scanner.scan(now_ns=t0 + 3 * TTL)
    assert len(seen) == 1


def test_hit_entry_is_reported_only_after_idling_again(idle_primary, server: P4RuntimeServer,
                                                       ports: MemoryPorts) -> None:
    """A packet hitting a reported entry restarts its idle period."""
    client, _, info = idle_primary
    client.write(update("INSERT", table_entry=mac_entry(info)))
    scanner, seen = scanner_of(server)
    dev = server.runtime.committed.device
    t0 = next(iter(dev.table_entries("MyIngress.mac"))).last_hit_ns
    scanner.scan(now_ns=t0 + TTL)
    ports.inject(1, frame())
    hit = next(iter(dev.table_entries("MyIngress.mac"))).last_hit_ns
    assert hit > t0
    scanner.scan(now_ns=max(hit, t0 + TTL) + 1)
    assert len(seen) == 1
    scanner.scan(now_ns=hit + TTL)
    assert len(seen) == 2


# Direct counters of the default entry (idle.p4's table counts misses on its default entry).

def default_counter(client: Client, info) -> p4r.CounterData:
    te = p4r.TableEntry(table_id=info.tables[0].preamble.id, is_default_action=True)
    got = client.read(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(table_entry=te)))
    return got[0].direct_counter_entry.data


def test_misses_count_on_the_default_entry(idle_primary, ports: MemoryPorts) -> None:
    """A packet that misses is counted by the default entry's direct counter."""
    client, _, info = idle_primary
    ports.inject(1, frame(0xBB))
    data = default_counter(client, info)
    assert (data.packet_count, data.byte_count) == (1, len(frame(0xBB)))
    te = p4r.TableEntry(table_id=info.tables[0].preamble.id, is_default_action=True,
                        counter_data=p4r.CounterData())
    read = client.read(p4r.Entity(table_entry=te))
    assert read[0].table_entry.counter_data.packet_count == 1


@pytest.mark.parametrize("how", ["direct_counter_entry", "table_entry"])
def test_default_entry_counter_can_be_written(idle_primary, how: str) -> None:
    """MODIFY sets the default entry's counter, by DirectCounterEntry or TableEntry.counter_data."""
    client, _, info = idle_primary
    te = p4r.TableEntry(table_id=info.tables[0].preamble.id, is_default_action=True)
    data = p4r.CounterData(packet_count=5, byte_count=500)
    if how == "direct_counter_entry":
        client.write(update("MODIFY", direct_counter_entry=p4r.DirectCounterEntry(table_entry=te, data=data)))
    else:
        te.counter_data.CopyFrom(data)
        drop = next(a for a in info.actions if a.preamble.name.endswith("drop"))
        te.action.action.action_id = drop.preamble.id
        client.write(update("MODIFY", table_entry=te))
    got = default_counter(client, info)
    assert (got.packet_count, got.byte_count) == (5, 500)
