"""Fabric tests for topologies.net / nodes / runstate: bring-up, teardown, crash cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from fabric_support import ROOT, assert_clean, leftovers

from topologies.addressing import plan_addresses
from topologies.errors import NetworkError
from topologies.net import FabricNet
from topologies.nodes import SWITCH_CLASSES, P4SwitchNode
from topologies.runstate import cleanup, read_state
from topologies.spec import load_spec, parse_spec

RACK = ROOT / "topologies" / "rack.yaml"


def rack_plan(port_base: int = 20001):
    spec = load_spec(RACK)
    spec = spec.model_copy(update={"switches": spec.switches.model_copy(
        update={"grpc_port_base": port_base})})
    return plan_addresses(spec)


def test_network_starts_configures_hosts_and_stops_clean(target: str) -> None:
    """Hosts get their /31 and default route, switches listen; stop leaves nothing."""
    before = leftovers()
    with FabricNet(rack_plan(), switch=SWITCH_CLASSES[target]) as net:
        h1 = net.host("h1")
        assert "10.0.0.1/31" in h1.cmd("ip -4 -o addr show dev h1-eth0")
        assert "default via 10.0.0.0 dev h1-eth0" in h1.cmd("ip route show default")
        assert net.switch("rtsw1").connected()
        state = read_state()
        assert state is not None and state.ready
        assert [s["name"] for s in state.switches] == ["rtsw1"]
    assert_clean(before)


def test_failed_start_leaves_nothing(target: str) -> None:
    """A switch that cannot start: NetworkError, and every veth and process is gone."""
    before = leftovers()

    class Broken(P4SwitchNode):
        def command(self) -> list[str]:
            return [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]

    with pytest.raises(NetworkError, match="exited with code 3"):
        FabricNet(rack_plan(), switch=Broken).start()
    assert_clean(before)


def test_port_in_use_is_refused_before_anything_starts() -> None:
    """A taken gRPC port: NetworkError naming it; nothing was created."""
    before = leftovers()
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(NetworkError, match=f"127.0.0.1:{port} for rtsw1 is already in use"):
            FabricNet(rack_plan(port), switch=P4SwitchNode).start()
    assert_clean(before)


def test_exception_inside_the_with_block_tears_down() -> None:
    """An error while the network runs still stops it."""
    before = leftovers()
    with pytest.raises(RuntimeError), FabricNet(rack_plan(), switch=P4SwitchNode):
        raise RuntimeError("test")
    assert_clean(before)


CRASHER = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {root!r})
    from topologies import load_spec, plan_addresses
    from topologies.net import FabricNet
    from topologies.nodes import P4SwitchNode
    net = FabricNet(plan_addresses(load_spec({rack!r})), switch=P4SwitchNode).start()
    # A process that outlives h1's shell (own session, so no SIGHUP) keeps
    # h1's namespace, and so the veths, alive after the owner dies.
    net.host("h1").cmd("setsid sleep 600 < /dev/null > /dev/null 2>&1 &")
    print("up", flush=True)
    time.sleep(600)
""")


def test_cleanup_removes_what_a_killed_run_left() -> None:
    """SIGKILL the owner mid-run: cleanup() ends its processes and deletes its veths."""
    before = leftovers()
    proc = subprocess.Popen([sys.executable, "-c", CRASHER.format(root=str(ROOT), rack=str(RACK))],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "up"
        assert read_state() is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()  # the owner is gone; what it made stays (no wait for anything else)
        left = leftovers()
        assert left["interfaces"], "a killed run should leave its veths"
        assert left["processes"], "and its switch process"
        report = cleanup()
        assert report.killed and report.state_removed
    finally:
        if proc.poll() is None:
            proc.kill()
        cleanup()
    assert_clean(before)


def test_cleanup_refuses_to_touch_a_live_run_unless_asked() -> None:
    """A running fabric: cleanup(stop_running=False) raises and changes nothing."""
    with FabricNet(rack_plan(), switch=P4SwitchNode) as net:
        # Our own pid owns it; pretend to be someone else by asking with a fake owner.
        state = read_state()
        assert state is not None
        child = subprocess.run(
            [sys.executable, "-c",
             "from topologies.runstate import cleanup\n"
             "try:\n cleanup(stop_running=False)\nexcept Exception as e: print(type(e).__name__, e)"],
            cwd=ROOT, capture_output=True, text=True)
        assert "NetworkError aizone is already running" in child.stdout
        assert net.switch("rtsw1").connected()


def test_shaped_links_use_tc(target: str) -> None:
    """A bandwidth limit on host links puts an htb qdisc on the veths."""
    spec = parse_spec({"racks": [{"hosts": 2}], "links": {"host": {"rate_mbps": 100}},
                       "programs": {"rtsw": str(ROOT / "p4" / "rtsw.p4")}}, source="shaped.yaml")
    with FabricNet(plan_addresses(spec), switch=SWITCH_CLASSES[target]) as net:
        out = net.host("h1").cmd("tc qdisc show dev h1-eth0")
        assert "htb" in out, out
