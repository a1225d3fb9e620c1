"""Tests for topologies.attach: host commands, link control and switch restarts on a real rack.

Each test builds rack.yaml (one switch, two hosts) in Mininet, so they need
root, and hold the shared network lock while they run (conftest.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from topo_net_support import assert_clean, leftovers

from topologies.addressing import AddressPlan, plan_addresses
from topologies.attach import FabricRuntime
from topologies.errors import NetworkError
from topologies.net import FabricNet
from topologies.nodes import SWITCH_CLASSES
from topologies.runstate import cleanup, read_state
from topologies.spec import load_spec
from topologies.switchproc import RUN_ENV, port_open

pytestmark = pytest.mark.root

ROOT = Path(__file__).resolve().parents[3]
RACK = ROOT / "topologies" / "rack.yaml"
H1_LINK = "h1-eth0--rtsw1-eth1"


def rack_plan() -> AddressPlan:
    return plan_addresses(load_spec(RACK))


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def ns_inode(pid: int) -> int:
    return os.stat(f"/proc/{pid}/ns/net").st_ino


def link(intf: str, netns: str | None = None) -> dict:
    """`ip -s -j link show` of `intf`: its flags and its counters (stats64)."""
    argv = ["ip", *(["-n", netns] if netns else []), "-s", "-j", "link", "show", "dev", intf]
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)[0]


def flags(intf: str, netns: str | None = None) -> list[str]:
    return link(intf, netns)["flags"]


def rx_packets(intf: str) -> int:
    """Frames the kernel has received on `intf` (root namespace)."""
    return int(link(intf)["stats64"]["rx"]["packets"])


def qdisc(intf: str, netns: str | None = None) -> str:
    argv = ["tc", *(["-n", netns] if netns else []), "qdisc", "show", "dev", intf]
    return subprocess.run(argv, capture_output=True, text=True).stdout


@pytest.fixture
def rack(state_dir: Path, target: str) -> Iterator[tuple[FabricNet, FabricRuntime]]:
    before = leftovers()
    net = FabricNet(rack_plan(), switch=SWITCH_CLASSES[target], log_dir=state_dir / "logs",
                    state_directory=state_dir)
    with net:
        yield net, FabricRuntime.from_net(net)
    assert_clean(before)


def test_host_run_runs_in_the_hosts_namespace_with_the_run_marker(rack) -> None:
    """h1 sees its own /31 and the command carries AIZONE_RUN=<the run's token>."""
    net, rt = rack
    out = rt.host_run("h1", ["sh", "-c", f"ip -o -4 addr show dev h1-eth0; echo ${RUN_ENV}"], 10)
    assert out.returncode == 0, out.stderr
    assert "10.0.0.1/31" in out.stdout
    assert out.stdout.split()[-1] == net.token


def test_host_popen_starts_in_the_pinned_namespace(rack) -> None:
    """The process's network namespace is /run/netns/aizone-h2, the Mininet host's."""
    net, rt = rack
    proc = rt.host_popen("h2", ["sleep", "30"])
    try:
        # `ip netns exec` enters the namespace, then becomes `sleep`: wait for that exec.
        deadline = time.monotonic() + 10
        while Path(f"/proc/{proc.pid}/comm").read_text().strip() != "sleep":
            assert proc.poll() is None and time.monotonic() < deadline, "sleep never started"
            time.sleep(0.01)
        assert ns_inode(proc.pid) == os.stat("/run/netns/aizone-h2").st_ino
        assert ns_inode(proc.pid) == ns_inode(net.host("h2").pid)
    finally:
        proc.kill()
        proc.wait()


def test_port_popen_runs_where_the_nodes_ports_are(rack) -> None:
    """On one machine: a host's command sees its NIC (its namespace), a switch's sees the
    switch's ports (the root namespace); both carry the run's marker."""
    net, rt = rack
    script = f"ip -o link show; echo ${RUN_ENV}"
    for node, sees, not_there in (("h1", "h1-eth0", "rtsw1-eth1"),
                                  ("rtsw1", "rtsw1-eth1", "h1-eth0")):
        proc = rt.port_popen(node, ["sh", "-c", script], stdout=subprocess.PIPE, text=True)
        out, _ = proc.communicate(timeout=10)
        names = [ln.split(":")[1].strip().split("@")[0] for ln in out.splitlines()[:-1]]
        assert sees in names and not_there not in names, (node, names)
        assert out.split()[-1] == net.token


def test_host_run_refuses_an_unknown_host(rack) -> None:
    """No such host: NetworkError naming it."""
    _, rt = rack
    with pytest.raises(NetworkError, match="no host 'h9'"):
        rt.host_run("h9", ["true"], 5)


def h1_sends(rt: FabricRuntime) -> None:
    """h1 tries its gateway (ARP, then echo requests; the rack's switch has no program, so
    nothing answers): frames out of h1-eth0 whenever it has a route."""
    rt.host_run("h1", ["ping", "-c", "3", "-i", "0.2", "-W", "1", "10.0.0.0"], 10)


def test_set_link_takes_both_ends_down_and_back_with_shaping_and_routes(rack, target: str) -> None:
    """Down, the target's way (`link_down`): p4switch, both ends' carrier gone and h1's default
    route with it; BMv2 (whose receive loop stalls when one of its ports goes down), carrier
    kept and a blackhole under both ends' shaper. Either way nothing h1 sends reaches the
    switch's end. Up: both UP with carrier, htb and no blackhole, h1's default route back,
    and h1's frames reach the switch's end again."""
    _, rt = rack
    assert rt.link_up(H1_LINK)
    rt.set_link(H1_LINK, False)
    assert not rt.link_up(H1_LINK)
    ends = (flags("rtsw1-eth1"), flags("h1-eth0", "aizone-h1"))
    if SWITCH_CLASSES[target].link_down == "carrier":
        assert all("UP" not in f for f in ends), ends
        assert "default" not in rt.host_run("h1", ["ip", "route"], 5).stdout
    else:
        assert SWITCH_CLASSES[target].link_down == "blackhole"
        assert all("LOWER_UP" in f for f in ends), ends
        assert "blackhole" in qdisc("rtsw1-eth1") and "blackhole" in qdisc("h1-eth0", "aizone-h1")
    before = rx_packets("rtsw1-eth1")
    h1_sends(rt)
    assert rx_packets("rtsw1-eth1") == before
    rt.set_link(H1_LINK, True)
    deadline = time.monotonic() + 5
    while not rt.link_up(H1_LINK) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rt.link_up(H1_LINK)
    for end in (qdisc("rtsw1-eth1"), qdisc("h1-eth0", "aizone-h1")):
        assert "htb" in end and "blackhole" not in end, end
    assert "default via 10.0.0.0 dev h1-eth0" in rt.host_run("h1", ["ip", "route"], 5).stdout
    before = rx_packets("rtsw1-eth1")
    h1_sends(rt)
    assert rx_packets("rtsw1-eth1") > before  # its ARP requests, at least
    # The other host's link was never touched.
    assert rt.link_up("h2-eth0--rtsw1-eth2")


def test_set_link_refuses_an_unknown_link(rack) -> None:
    """A link id that is not in the plan: NetworkError with the id form."""
    _, rt = rack
    with pytest.raises(NetworkError, match="no link 'h1--rtsw1'.*<a_intf>--<b_intf>"):
        rt.set_link("h1--rtsw1", False)


def test_restart_after_sigkill_runs_the_same_command_line(rack, state_dir: Path) -> None:
    """kill_switch: not alive; restart_switch: a new pid with the same flags, recorded in run.json."""
    net, rt = rack
    old_pid = net.switch("rtsw1").proc.pid
    old_cmd = cmdline(old_pid)
    rt.kill_switch("rtsw1")
    assert not rt.switch_alive("rtsw1")
    assert not port_open("127.0.0.1", 20001)
    pid = rt.restart_switch("rtsw1")
    assert pid != old_pid and rt.switch_alive("rtsw1")
    assert cmdline(pid) == old_cmd
    assert "--priority-queues" in old_cmd
    assert port_open("127.0.0.1", 20001)
    state = read_state(state_dir)
    assert state is not None and state.switches[0]["pid"] == pid


def test_restart_of_a_live_switch_replaces_it(rack) -> None:
    """A running switch is stopped first; the network's stop ends the new process."""
    net, rt = rack
    old = net.switch("rtsw1").proc.pid
    pid = rt.restart_switch("rtsw1")
    assert pid != old and rt.switch_alive("rtsw1")
    assert net.switch("rtsw1").proc.pid == pid


OWNER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from topologies import load_spec, plan_addresses
    from topologies.net import FabricNet
    from topologies.nodes import SWITCH_CLASSES
    net = FabricNet(plan_addresses(load_spec({rack!r})), switch=SWITCH_CLASSES[{target!r}],
                    log_dir=Path({logs!r}), state_directory=Path({state!r})).start()
    print("up", flush=True)
    time.sleep(600)
""")


def test_after_the_owner_dies_run_json_is_enough(state_dir: Path, target: str) -> None:
    """SIGKILL the process that built the fabric; from_state still runs commands, moves links,
    restarts the switch with the same flags; cleanup() then leaves nothing."""
    before = leftovers()
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER.format(root=str(ROOT), rack=str(RACK), target=target,
                                            logs=str(state_dir / "logs"), state=str(state_dir))],
        stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        assert owner.stdout.readline().strip() == "up"
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        state = read_state(state_dir)
        assert state is not None and state.ready
        rt = FabricRuntime.from_state(state, rack_plan(), state_directory=state_dir)
        # The hosts' namespaces outlived their shells.
        out = rt.host_run("h2", ["ip", "-o", "-4", "addr", "show", "dev", "h2-eth0"], 10)
        assert "10.0.0.3/31" in out.stdout, out.stderr
        rt.set_link(H1_LINK, False)
        assert not rt.link_up(H1_LINK)
        rt.set_link(H1_LINK, True)
        deadline = time.monotonic() + 5
        while not rt.link_up(H1_LINK) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert rt.link_up(H1_LINK)
        old = state.switches[0]
        assert rt.switch_alive("rtsw1")
        rt.kill_switch("rtsw1")
        assert not rt.switch_alive("rtsw1")
        pid = rt.restart_switch("rtsw1")
        assert cmdline(pid) == old["argv"] and pid != old["pid"]
        # Only this run's processes, namespaces and interfaces (its token).
        report = cleanup(directory=state_dir, token=state.token)
        assert pid in report.killed and report.namespaces == ["aizone-h1", "aizone-h2"]
        assert sorted(report.interfaces) == ["rtsw1-eth1", "rtsw1-eth2"]
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        left = read_state(state_dir)
        if left is not None:
            cleanup(directory=state_dir, token=left.token)
    assert_clean(before)
    assert "rtsw1" not in subprocess.run(["tc", "qdisc", "show"], capture_output=True,
                                         text=True).stdout
