"""Tests for controller.p4rt: a real P4Runtime session against a p4switch process (no ports)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.build import CompiledProgram
from controller.entities import Action, Exact, Lpm, TableEntry
from controller.errors import P4RuntimeError, WriteError
from controller.p4info import load_p4info
from controller.p4rt import SwitchSession
from controller.routes import NAMES, compute_routes
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server() -> Iterator[str]:
    """A p4switch with no program and no data ports; yields its gRPC address."""
    addr = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen([sys.executable, "-m", "p4switch", "--no-p4", "--device-id", "7",
                             "--grpc-server-addr", addr, "--cpu-port", "255"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    host, port = addr.split(":")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"p4switch exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            socket.create_connection((host, int(port)), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield addr
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def session(server: str, rtsw_program: CompiledProgram) -> Iterator[SwitchSession]:
    s = SwitchSession("sw", server, 7, election_id=10).open()
    s.set_pipeline(load_p4info(rtsw_program.p4info), rtsw_program.device_config.read_bytes())
    yield s
    s.close()


def rack_entries():
    return compute_routes(plan_addresses(load_spec(ROOT / "topologies" / "rack.yaml")), "rtsw1")


def test_primary_session_pushes_pipeline_and_installs_routes(session: SwitchSession) -> None:
    """Arbitration wins, the pipeline is set, the rack's entities insert and read back."""
    assert session.primary
    entries = rack_entries()
    session.insert(entries.install_order())
    assert sorted(map(repr, session.read_table(NAMES["route_table"]))) == sorted(
        repr(e) for e in entries.entries if e.table == NAMES["route_table"])
    assert len(session.read_members(NAMES["selector"])) == len(entries.members)
    assert session.read_default(NAMES["config_table"]) == entries.defaults[0]


def test_write_error_names_each_failed_update(session: SwitchSession) -> None:
    """In a batch of three, only the duplicate fails and is reported by its index."""
    route = lambda ip, nid: TableEntry(  # noqa: E731
        table=NAMES["route_table"], match=(("dst_addr", Lpm(value=ip, prefix_len=32)),),
        action=Action(name=NAMES["route_action"], params=(("next_id", nid),)))
    session.insert([route(1, 1)])
    with pytest.raises(WriteError) as exc:
        session.insert([route(2, 1), route(1, 1), route(3, 1)])
    (err,) = exc.value.errors
    assert (err.index, err.code) == (1, "ALREADY_EXISTS")
    assert "INSERT FabricIngress.routing.ipv4_route" in str(exc.value)
    assert len(session.read_table(NAMES["route_table"])) == 3  # the others went in


def test_delete_of_a_missing_entry_is_not_found(session: SwitchSession) -> None:
    """Deleting what is not there fails with NOT_FOUND."""
    e = TableEntry(table=NAMES["next_table"], match=(("next_id", Exact(value=9)),), member_id=9)
    with pytest.raises(WriteError) as exc:
        session.delete([e])
    assert exc.value.errors[0].code == "NOT_FOUND"


def test_counters_read_by_name(session: SwitchSession) -> None:
    """rx_port reads as 512 zeroed cells; one index reads alone."""
    cells = session.read_counters(NAMES["rx_counter"])
    assert len(cells) == 512 and all(c.packets == 0 for c in cells.values())
    assert list(session.read_counters(NAMES["tx_counter"], index=3)) == [3]


def test_lower_election_id_is_not_primary(session: SwitchSession, server: str) -> None:
    """A second controller with a lower election id is refused as primary."""
    with pytest.raises(P4RuntimeError, match="not primary"):
        SwitchSession("other", server, 7, election_id=5).open()


def test_observer_reads_without_a_stream(session: SwitchSession, server: str) -> None:
    """open(primary=False) reads the P4Info and tables while another controller is primary."""
    session.insert(rack_entries().install_order())
    with SwitchSession("obs", server, 7).open(primary=False) as obs:
        obs.get_p4info()
        assert len(obs.read_table(NAMES["arp_table"])) == 2


def test_no_server_is_unavailable() -> None:
    """Nothing listening: P4RuntimeError UNAVAILABLE that says so."""
    with pytest.raises(P4RuntimeError, match="no P4Runtime server") as exc:
        SwitchSession("gone", f"127.0.0.1:{free_port()}", 1, timeout=0.5).open()
    assert exc.value.code == "UNAVAILABLE"
