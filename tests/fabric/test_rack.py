"""Fabric tests on topologies/rack.yaml: the demo's steps, asserted one by one.

One fabric (rtsw1, h1, h2) is brought up for the module with the real
bring-up path (compile, Mininet, P4Runtime pipeline push, routes) and torn
down at the end; the test that removes a route puts it back.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from fabric_support import ROOT, assert_clean, leftovers

from controller.demo import counter_deltas, entities_match, ping, rdma_write
from controller.entities import TableEntry
from controller.routes import NAMES
from controller.runner import RunningFabric, bring_up

pytestmark = pytest.mark.skipif(importlib.util.find_spec("p4switch.compile") is None,
                                reason="p4switch-compile is not there yet")

RACK = ROOT / "topologies" / "rack.yaml"


@pytest.fixture(scope="module")
def fab(target: str, build_dir: Path) -> Iterator[RunningFabric]:
    before = leftovers()
    running = bring_up(RACK, target=target, build_dir=build_dir)
    try:
        yield running
    finally:
        running.down()
    assert_clean(before)


def route_to(fab: RunningFabric, host: str) -> TableEntry:
    ip = fab.plan.host(host).ip
    for e in fab.installed["rtsw1"].entries:
        if e.table == NAMES["route_table"] and e.match[0][1].prefix_len == 32:
            value = e.match[0][1].value
            if ".".join(str((value >> s) & 0xFF) for s in (24, 16, 8, 0)) == ip:
                return e
    raise AssertionError(f"no route to {host}")


def test_entries_read_back_equal_what_was_installed(fab: RunningFabric) -> None:
    """Members, entries and the switch_config default read back as installed."""
    read = fab.ctl.read_entities("rtsw1")
    ok, detail = entities_match(fab.installed["rtsw1"].install_order(), read)
    assert ok, detail


def test_ping_h1_to_h2_succeeds(fab: RunningFabric) -> None:
    """h1 pings h2 through rtsw1: every echo is answered (ARP answered by the P4 program)."""
    result = ping(fab, "h1", fab.plan.host("h2").ip, count=3)
    assert result["received"] == result["transmitted"] == 3


def test_rdma_write_arrives_intact_with_valid_icrc(fab: RunningFabric) -> None:
    """One 8 KiB RDMA WRITE: all packets arrive, ICRC and PSNs check, message complete."""
    sender, receiver = rdma_write(fab, "h1", "h2", size=8192)
    assert "error" not in sender and "error" not in receiver, (sender, receiver)
    assert receiver["packets"] == sender["packets"] > 1
    assert receiver["messages_complete"] == 1 and receiver["payload_bytes"] == 8192
    assert receiver["icrc_errors"] == receiver["psn_errors"] == receiver["length_errors"] == 0


def test_port_counters_move_by_at_least_the_packets_sent(fab: RunningFabric) -> None:
    """rx of h1's port and tx of h2's port grow by >= the RoCE packets h1 sent."""
    before = fab.ctl.all_port_counters()
    sender, receiver = rdma_write(fab, "h1", "h2", size=4096)
    after = fab.ctl.all_port_counters()
    rows = {(r["switch"], r["port"]): r for r in counter_deltas(before, after)}
    h1, h2 = fab.plan.host("h1").nics[0], fab.plan.host("h2").nics[0]
    sent = sender["packets"]
    assert rows[(h1.switch, h1.switch_port)]["rx_packets"] >= sent
    assert rows[(h2.switch, h2.switch_port)]["tx_packets"] >= sent
    assert rows[(h2.switch, h2.switch_port)]["tx_bytes"] >= sender["bytes"]


def test_without_the_route_to_h2_nothing_arrives(fab: RunningFabric) -> None:
    """Delete h2's /32 over P4Runtime: ping and RoCE fail; put it back: both work again."""
    session = fab.ctl.sessions["rtsw1"]
    route = route_to(fab, "h2")
    session.delete([route])
    try:
        assert route not in session.read_table(NAMES["route_table"])
        result = ping(fab, "h1", fab.plan.host("h2").ip, count=2)
        assert result["received"] == 0
        sender, receiver = rdma_write(fab, "h1", "h2", size=1024, timeout=3)
        assert sender.get("packets", 0) >= 1, sender
        assert receiver.get("packets", 0) == 0 and receiver.get("messages_complete", 0) == 0
    finally:
        session.insert([route])
    result = ping(fab, "h1", fab.plan.host("h2").ip, count=2)
    assert result["received"] == 2


def test_write_error_lists_the_failed_update(fab: RunningFabric) -> None:
    """Inserting an existing route again fails with ALREADY_EXISTS for that update only."""
    from controller.errors import WriteError

    session = fab.ctl.sessions["rtsw1"]
    with pytest.raises(WriteError) as exc:
        session.insert([route_to(fab, "h1")])
    (err,) = exc.value.errors
    assert err.index == 0 and err.code == "ALREADY_EXISTS"
    assert "ipv4_route" in str(exc.value)
