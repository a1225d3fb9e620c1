"""Tests for controller.demo's pure parts: ping output, counter deltas, entity comparison."""

from __future__ import annotations

import pytest

from controller.demo import DemoReport, counter_deltas, entities_match, parse_ping
from controller.entities import Action, Exact, TableEntry
from controller.fabric import PortCounters

IPUTILS = """PING 10.0.0.3 (10.0.0.3) 56(84) bytes of data.
64 bytes from 10.0.0.3: icmp_seq=1 ttl=63 time=0.912 ms

--- 10.0.0.3 ping statistics ---
3 packets transmitted, 3 received, 0% packet loss, time 402ms
rtt min/avg/max/mdev = 0.512/0.700/0.912/0.163 ms
"""
BUSYBOX = """--- 10.0.0.3 ping statistics ---
3 packets transmitted, 2 packets received, 33% packet loss
round-trip min/avg/max = 0.5/0.6/0.7 ms
"""
LOST = """3 packets transmitted, 0 received, 100% packet loss, time 2040ms\n"""


@pytest.mark.parametrize(("out", "expected"), [
    (IPUTILS, (3, 3, 0.7)), (BUSYBOX, (3, 2, 0.6)), (LOST, (3, 0, None)), ("", (3, 0, None))],
    ids=["iputils", "busybox", "all-lost", "no-output"])
def test_parse_ping(out: str, expected: tuple) -> None:
    """Transmitted, received and average RTT from ping's summary."""
    assert parse_ping(out, 3) == expected


def test_counter_deltas_subtract_per_port() -> None:
    """After minus before, per switch port; a port missing before counts from zero."""
    pc = lambda port, rx, tx: PortCounters(switch="s", port=port, rx_packets=rx,  # noqa: E731
                                           rx_bytes=rx * 100, tx_packets=tx, tx_bytes=tx * 100)
    rows = counter_deltas({"s": {1: pc(1, 2, 3)}}, {"s": {1: pc(1, 5, 3), 2: pc(2, 1, 1)}})
    assert [(r["port"], r["rx_packets"], r["tx_packets"], r["rx_bytes"]) for r in rows] == [
        (1, 3, 0, 300), (2, 1, 1, 100)]


def test_entities_match_reports_missing_and_extra() -> None:
    """Equal sets match; otherwise the diff names an example of each side."""
    a = TableEntry(table="t", match=(("k", Exact(value=1)),), action=Action(name="x"))
    b = TableEntry(table="t", match=(("k", Exact(value=2)),), action=Action(name="x"))
    assert entities_match([a, b], [b, a])[0]
    ok, detail = entities_match([a], [b])
    assert not ok and "1 missing" in detail and "1 unexpected" in detail


def test_report_is_ok_only_when_every_check_passed() -> None:
    """No checks, or one failure, is not ok."""
    r = DemoReport()
    assert not r.ok
    r.add("a", True, "")
    assert r.ok
    r.add("b", False, "")
    assert not r.ok and r.to_json()["ok"] is False
