"""One fabric over two servers (this machine and a namespace running sshd), Mininet's cluster mode.

`aizone up ai_zone_small --servers localhost,<server>` through the CLI, as a
user runs it: the switches the placement puts on the other server run in
that server's network namespace, started over ssh, with one ssh session per
node, link end and step there, not one per file or host (the server's sshd
counts them); every host pair passes
`aizone check` (ping and a RoCEv2 WRITE, through the VXLAN tunnels between
the servers); the agents of the hosts placed there run there and are reached
from here through their ssh sessions' socket forwards (the server's
filesystem is this machine's, so the test makes sure no client takes the
agent's own socket instead); `aizone status` names each switch's server;
`aizone mode eecmp`; a ring AllReduce run with `aizone run` counts,
on every fabric link, what the flow model predicts for the same job, within
the bound `tests/fabric/test_model_vs_emulator.py` holds a one-machine run
to (`model_support`): the same per-link bytes as on one machine; `aizone
stats` has counters from the switches there; `aizone capture` of a host
NIC and of a switch port there runs tcpdump there and streams its pcap
back whole; `aizone trace` from a host here to a host there is confirmed
by the counters of switches on both servers; a switch killed there is
restarted there and reconciled; an uplink
between the servers taken down reroutes (every pair still answers) and
comes back; `aizone down` leaves nothing here and nothing on the server.
The daemon killed (SIGKILL), `aizone up` re-attaches to both servers'
switches with nothing written, looks after them as the first did, and its
`down` cleans the server. `aizone down` after the daemon was killed ends
what it left on the server too (its `--pcap` tcpdumps included, whose
rings of the switches there are written there), from run.json; with
run.json gone as well (the controller's machine crashed), `aizone down
--servers` cleans the server by aizone's names and marker. A clock that
jumps after `up` is named by `aizone status` and holds jobs back until it
is back. `aizone status` also gives the server's clock offset, read at `up` (the
namespace shares this machine's clock: within the bound). Then: scaled
latency over servers is refused before anything is built; so is a server
whose clock is 5 s ahead (a second namespace server whose sshd runs every
session under libfaketime), naming it and the offset; servers are checked
side by side, and of two that fail `up` names the one listed first; and `aizone
experiment qp-scaling --quick --servers` runs its grid there.
Skips, saying why, only where sshd cannot run (tests/fabric/servers_support.py); a failure
where the machine declares `sshd` in AIZONE_REQUIRE (tests/provides.py).

On BMv2, `make test` runs the first test only (switches started, killed and restarted on
the other server); the rest check the daemon, run.json, clocks and placement, the same on
every target, and are marked `one_target` (pyproject.toml).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import ICMP, IP
from scapy.utils import rdpcap

from controller.hostagents import agents_dir
from tests.fabric.fabric_support import ROOT, aizone, assert_clean, leftovers
from tests.fabric.model_support import assert_counters_match_model, check_run_ok
from tests.fabric.servers_support import NamespaceServers, faketime_missing, sshd_missing
from tests.provides import unavailable
from topologies.addressing import plan_addresses
from topologies.cluster import MAX_CLOCK_OFFSET_S
from topologies.runstate import STATE_FILE, RunState, read_state, state_dir
from topologies.spec import load_spec

SMALL = ROOT / "topologies" / "ai_zone_small.yaml"
RANKS, SIZE, QPS = 16, 64 * 1024, 4


SKEW_S = 5.0  # the second server's clock: this far ahead


@pytest.fixture(scope="module")
def servers() -> Iterator[NamespaceServers]:
    """One server beside this machine (a namespace with its own sshd), and a second one whose
    clock is SKEW_S ahead where libfaketime is installed."""
    why = sshd_missing()
    if why:
        unavailable("sshd", f"sshd cannot run here: {why}")
    skewed = not faketime_missing()
    with NamespaceServers(2 if skewed else 1,
                          clock_skew_s={1: SKEW_S} if skewed else None) as made:
        yield made


def _server_processes(ns: str) -> dict[int, str]:
    """pid -> command line of every process in the server's namespace."""
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True,
                          check=True).stdout.split()
    out = {}
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        out[int(pid)] = cmd
    return out


def _up_over_two(target: str, build_dir: Path, servers: NamespaceServers, *extra: str
                 ) -> tuple[str, str, dict[int, str], dict[str, str],
                            subprocess.CompletedProcess[str]]:
    """`aizone up ai_zone_small --servers localhost,<the first server> EXTRA...`: that server,
    its namespace, its processes before (its sshd's), the environment that reaches it, and up."""
    server, ns = servers.addresses[0], servers.namespaces[0]
    sshd_only = _server_processes(ns)
    env = servers.env()
    up = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir),
                "--servers", f"localhost,{server}", *extra, str(SMALL), env=env)
    return server, ns, sshd_only, env, up


def test_ai_zone_small_over_two_servers_passes_check_and_downs_clean(
        target: str, build_dir: Path, servers: NamespaceServers, tmp_path: Path) -> None:
    """Switches run on both servers, every pair passes `check`, `down` leaves nothing on either."""
    before = leftovers()
    opened = servers.sessions(0)
    server, ns, sshd_only, env, up = _up_over_two(target, build_dir, servers)
    opened = servers.sessions(0) - opened
    try:
        assert up.returncode == 0, up.stderr[-2000:]
        state = read_state()
        assert state is not None
        placed = sorted(n for n, s in state.meta["placement"].items()
                        if s == server and not n.startswith("h"))
        assert placed, state.meta["placement"]
        _up_opened_the_sessions_it_needs(opened, state.meta["placement"], server, placed, target)
        # Each switch placed there runs in the server's namespace: its process is a child
        # of the server's sshd, with the switch's name among its ports' interfaces.
        there = [cmd for pid, cmd in _server_processes(ns).items() if pid not in sshd_only]
        for name in placed:
            assert any(f"@{name}-eth" in cmd for cmd in there), (name, there)
        status = json.loads(aizone("status", "--json", env=env).stdout)
        assert status["servers"] == ["localhost", server], status["servers"]
        assert list(status["clock_offsets"]) == [server], status["clock_offsets"]
        assert abs(status["clock_offsets"][server]) < MAX_CLOCK_OFFSET_S, status["clock_offsets"]
        assert sorted(s["name"] for s in status["switches"] if s["server"] == server) == placed
        # The server has its own firewall table over the switches' control ports.
        grpc = {int(s["grpc_addr"].rsplit(":", 1)[1]) for s in status["switches"]}
        assert grpc <= set(_confined_ports(ns)), (grpc, _confined_ports(ns))
        _control_ports_there_closed_to_the_network(state, placed, server)
        check = aizone("check", "--json", env=env, timeout=900)
        data = json.loads(check.stdout)
        assert check.returncode == 0 and data["ok"], check.stdout[-3000:]
        _agents_there_answer_through_ssh(state.meta["placement"], server, ns)
        mode = aizone("mode", "eecmp", "--json", env=env)
        assert mode.returncode == 0, mode.stderr[-2000:]
        _allreduce_counts_what_the_model_predicts(env)
        _switches_there_report_counters(placed, env)
        _captures_there_are_that_servers_packets(state.meta["placement"], server, env, tmp_path)
        _a_trace_across_the_servers_is_confirmed(state.meta["placement"], server, env)
        _a_switch_killed_there_is_restarted(placed[0], ns, env)
        _tunnel_link_down_reroutes_and_up_restores(state.meta["placement"], env)
    finally:
        down = aizone("down", env=env)
    assert down.returncode == 0, down.stderr
    assert_clean(before)
    _server_is_clean(ns, sshd_only)


def _up_opened_the_sessions_it_needs(opened: int, placement: dict[str, str], server: str,
                                     switches: list[str], target: str) -> None:
    """`up` opened one ssh session to the server per thing that lives there or is made there,
    plus one per server for each step that serves them all, counted by the server's sshd:
    each ssh session costs a connection and a key exchange (about 0.4 s here)."""
    hosts = [n for n, s in placement.items() if s == server and n.startswith("h")]
    plan = plan_addresses(load_spec(SMALL))
    tunnels = [ln for ln in plan.links if (placement[ln.a] == server) != (placement[ln.b] == server)]
    assert hosts and switches and tunnels, placement
    # A host: its shell and its traffic agent. A switch: its shell and its process (BMv2 also
    # a session that sets its port sockets to read arriving frames only). A link between the
    # servers: its VXLAN device there. Per server: the preflight's probe and clock reading,
    # the control ports' firewall, the control folder with the PKI files, the hosts'
    # namespace pins. The daemon may read the server's clock once more as `up` returns.
    per_switch = 3 if target == "bmv2" else 2
    needed = 2 * len(hosts) + per_switch * len(switches) + len(tunnels) + 5
    assert needed <= opened <= needed + 1, (opened, needed, hosts, switches, len(tunnels))


def _server_is_clean(ns: str, sshd_only: dict[int, str]) -> None:
    """Nothing of a run on the server: no process but sshd's, no link but its own, no
    firewall table, no reserved port."""
    assert sorted(_server_processes(ns)) == sorted(sshd_only), _server_processes(ns)
    links = subprocess.run(["ip", "-n", ns, "-o", "link", "show"], capture_output=True,
                           text=True, check=True).stdout
    names = [ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines()]
    assert names == ["lo", "eth0"], links
    assert _confined_ports(ns) == []
    reserved = subprocess.run(["ip", "netns", "exec", ns, "cat",
                               "/proc/sys/net/ipv4/ip_local_reserved_ports"],
                              capture_output=True, text=True, check=True).stdout.strip()
    assert reserved == "", reserved


@pytest.mark.one_target
def test_down_after_the_daemon_was_killed_cleans_the_other_server(
        target: str, build_dir: Path, servers: NamespaceServers, tmp_path: Path) -> None:
    """SIGKILL the daemon of a fabric over two servers, up with `--pcap`: its switches,
    namespaces, tunnels, firewall and the port captures of the switches there stay there;
    `aizone down` ends them there too, from the run's record."""
    before = leftovers()
    pcaps = tmp_path / "pcap"
    server, ns, sshd_only, env, up = _up_over_two(target, build_dir, servers,
                                                  "--pcap", str(pcaps))
    try:
        assert up.returncode == 0, up.stderr[-2000:]
        state = read_state()
        assert state is not None
        there = sorted(n for n, s in state.meta["placement"].items()
                       if s == server and n[0] != "h")
        os.kill(json.loads(up.stdout)["pid"], signal.SIGKILL)
        time.sleep(1)
        # What the run placed there is still there: the daemon's own teardown never ran.
        assert _confined_ports(ns), "the server's firewall table went with the daemon"
        links = subprocess.run(["ip", "-n", ns, "-o", "link", "show"], capture_output=True,
                               text=True, check=True).stdout
        assert len(links.splitlines()) > 2, links
    finally:
        down = aizone("down", "--json", env=env)
    assert down.returncode == 0, down.stdout + down.stderr
    assert json.loads(down.stdout)["servers"] == {server: ""}
    assert_clean(before)
    _server_is_clean(ns, sshd_only)  # the tcpdumps there too
    # Each port of a switch there was captured there (its tcpdump ran on the server): the
    # uplinks' rings hold the link probes, every 0.2 s.
    plan = plan_addresses(load_spec(SMALL))
    for name in there:
        for port in plan.switch(name).ports:
            ring = rdpcap(str(pcaps / f"{port.intf}.pcap0"))
            if port.peer.startswith(("rtsw", "ctsw")):
                assert len(ring) >= 3, (port.intf, ring)


@pytest.mark.one_target
def test_a_killed_daemon_over_two_servers_is_replaced_by_one_that_reattaches(
        target: str, build_dir: Path, servers: NamespaceServers) -> None:
    """SIGKILL the daemon of a fabric over two servers; `aizone up` re-attaches: every switch,
    those on the server too, read back with nothing written; every pair passes `check`."""
    before = leftovers()
    server, ns, sshd_only, env, up = _up_over_two(target, build_dir, servers)
    try:
        assert up.returncode == 0, up.stderr[-2000:]
        pid = json.loads(up.stdout)["pid"]
        os.kill(pid, signal.SIGKILL)
        time.sleep(1)
        orphan = json.loads(aizone("status", "--json", env=env).stdout)
        assert orphan == {"running": False, "orphan": "ai_zone_small"}, orphan
        again = aizone("up", "--json", env=env)
        assert again.returncode == 0, again.stdout + again.stderr[-2000:]
        status = json.loads(aizone("status", "--json", env=env).stdout)
        assert status["pid"] != pid and status["phase"] == "up", status
        assert status["servers"] == ["localhost", server], status["servers"]
        assert {s["server"] for s in status["switches"]} == {"localhost", server}
        for s in status["switches"]:
            counts = s["last_reconcile"]["counts"]
            assert s["last_reconcile"]["reason"] == "start", s
            assert counts["insert"] == counts["modify"] == counts["delete"] == 0, s
            assert counts["unchanged"] > 20, s
        check = aizone("check", "--json", env=env, timeout=900)
        assert check.returncode == 0 and json.loads(check.stdout)["ok"], check.stdout[-3000:]
        # The new daemon looks after the server's switches and tunnels as the first did.
        state = read_state()
        assert state is not None and state.owner_pid == status["pid"], state
        placement = state.meta["placement"]
        placed = sorted(n for n, s in placement.items() if s == server and n[0] != "h")
        _a_switch_killed_there_is_restarted(placed[0], ns, env)
        _tunnel_link_down_reroutes_and_up_restores(placement, env)
    finally:
        down = aizone("down", env=env)
    # Down through the re-attached daemon: it ends what the run placed on the server too.
    assert down.returncode == 0, down.stderr
    assert_clean(before)
    _server_is_clean(ns, sshd_only)


@pytest.mark.one_target
def test_down_with_servers_cleans_them_when_the_record_is_gone(
        target: str, build_dir: Path, servers: NamespaceServers) -> None:
    """The controller's machine "crashed": its daemon killed and run.json gone, as /run is
    after a reboot. `aizone down --servers localhost,<server>` still cleans the server, by
    aizone's names and marker."""
    before = leftovers()
    server, ns, sshd_only, env, up = _up_over_two(target, build_dir, servers)
    try:
        assert up.returncode == 0, up.stderr[-2000:]
        os.kill(json.loads(up.stdout)["pid"], signal.SIGKILL)
        time.sleep(1)
        (state_dir() / STATE_FILE).unlink()
        assert _confined_ports(ns), "the server's firewall table went with the daemon"
    finally:
        down = aizone("down", "--json", "--servers", f"localhost,{server}", env=env)
    assert down.returncode == 0, down.stdout + down.stderr
    assert json.loads(down.stdout)["servers"] == {server: ""}
    assert_clean(before)
    _server_is_clean(ns, sshd_only)


def _control_ports_there_closed_to_the_network(state: RunState, placed: list[str],
                                                server: str) -> None:
    """From this machine, another one on the servers' network: no control port of a switch
    on the server answers at the server's address (BMv2 binds Thrift on every address: only
    the server's firewall table keeps it closed)."""
    for rec in state.switches:
        if rec["name"] not in placed:
            continue
        for port in (rec["grpc_port"], rec.get("thrift_port")):
            if port is None:
                continue
            try:
                with socket.create_connection((server, port), timeout=2):
                    raise AssertionError(f"{rec['name']}: port {port} answers at {server}")
            except OSError:
                pass


def _confined_ports(ns: str) -> list[int]:
    """The control ports the server's `inet aizone` nftables table holds (none: no table)."""
    out = subprocess.run(["ip", "netns", "exec", ns, "nft", "-j", "list", "set", "inet",
                          "aizone", "control_ports"], capture_output=True, text=True)
    if out.returncode != 0:
        return []
    return sorted(e for item in json.loads(out.stdout)["nftables"]
                  for e in item.get("set", {}).get("elem", []) if isinstance(e, int))


def _ssh_listens_on(path: Path) -> bool:
    """Whether an ssh process of this machine's namespace listens on the Unix socket `path`
    (`ss -xlp`)."""
    out = subprocess.run(["ss", "-xlpnH"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[4] == str(path):
            return '(("ssh",' in line
    return False


def _process_under(argv_part: str, ns: str) -> bool:
    """Whether a process whose command line holds `argv_part` descends from a process in
    network namespace `ns` (the server's sshd: what runs there runs in its sessions)."""
    in_ns = set(_server_processes(ns))
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if argv_part not in cmd:
            continue
        pid = int(entry.name)
        while pid > 1:
            if pid in in_ns:
                return True
            try:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                break
    return False


def _agents_there_answer_through_ssh(placement: dict[str, str], server: str, ns: str) -> None:
    """A host placed on the server has its agent there (started by the server's sshd),
    listening on its `.remote.sock`; the socket every client uses here is the listening
    end of an ssh forward, not the agent's own."""
    hosts = sorted(n for n, s in placement.items() if s == server and n.startswith("h"))
    assert hosts, placement
    for host in hosts:
        remote = agents_dir() / f"{host}.remote.sock"
        assert _process_under(f"traffic.hostagent --host {host} --socket {remote} ", ns), host
        assert _ssh_listens_on(agents_dir() / f"{host}.sock"), host


def _allreduce_counts_what_the_model_predicts(env: dict[str, str]) -> None:
    """A ring AllReduce over both servers: every fabric link counts the model's bytes."""
    run = aizone("run", "allreduce", "--ranks", str(RANKS), "--size", str(SIZE), "--qps",
                 str(QPS), "--strategy", "rr", "--placement", "packed", "--json", env=env)
    assert run.returncode == 0, f"aizone run: exit {run.returncode}: {run.stderr[-2000:]}"
    job = json.loads(run.stdout)
    check_run_ok(job)
    spec = load_spec(SMALL)
    checked = assert_counters_match_model(job, spec, plan_addresses(spec), ranks=RANKS,
                                          size=SIZE, qps=QPS)
    assert checked >= 4  # the ring crosses the spine, and so the servers


def _switches_there_report_counters(placed: list[str], env: dict[str, str]) -> None:
    """`aizone stats`: the switches on the server answer the daemon's counter reads (the
    AllReduce before moved frames out of every one of them)."""
    snap = json.loads(aizone("stats", "--json", env=env).stdout)
    for name in placed:
        ports = snap["switches"][name]["ports"]
        assert sum(p["tx_packets"] for p in ports.values()) > 0, (name, ports)


def _captures_there_are_that_servers_packets(placement: dict[str, str], server: str,
                                             env: dict[str, str], tmp_path: Path) -> None:
    """`aizone capture` of a host NIC and of a switch port on the server (the dashboard's
    capture links ask the same API): tcpdump runs there and its pcap arrives whole, with the
    pings `check` sends between a host here and the host there."""
    plan = plan_addresses(load_spec(SMALL))
    there = next(h for h in plan.hosts if placement[h.name] == server
                 and placement[h.nics[0].switch] == server)
    here = next(h for h in plan.hosts if placement[h.name] != server)
    nic = there.nics[0]
    points = {there.name: tmp_path / "host.pcap",
              f"{nic.switch}:{nic.switch_port}": tmp_path / "port.pcap"}
    bpf = f"icmp and host {here.nics[0].ip} and host {nic.ip}"
    captures = [subprocess.Popen(
        [sys.executable, "-m", "aizone.cli", "capture", where, "-w", str(path),
         "--seconds", "120", "--count", "2", "--filter", bpf], env={**os.environ, **env}, cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for where, path in points.items()]
    try:
        time.sleep(3)  # both tcpdumps listening before the pings
        aizone("check", "--json", "--no-roce", env=env, timeout=900)
        outs = [c.communicate(timeout=150) for c in captures]
    finally:
        for c in captures:
            c.kill()
    for c, (where, path), (_, err) in zip(captures, points.items(), outs, strict=True):
        assert c.returncode == 0, (where, err[-2000:])
        packets = rdpcap(str(path))  # a stream mangled on its way (a terminal's CR) fails here
        assert len(packets) == 2, (where, packets)
        assert {(p[IP].src, p[IP].dst, p[ICMP].type) for p in packets} == {
            (here.nics[0].ip, nic.ip, 8), (nic.ip, here.nics[0].ip, 0)}, (where, packets)


def _a_trace_across_the_servers_is_confirmed(placement: dict[str, str], server: str,
                                             env: dict[str, str]) -> None:
    """`aizone trace` from a host here to a host there: the path predicted from the switches'
    entries (both servers' switches read back) is the one the RoCEv2 packets took, by the
    counters of every switch on it."""
    plan = plan_addresses(load_spec(SMALL))
    here = next(h for h in plan.hosts if placement[h.name] != server)
    there = next(h for h in plan.hosts if placement[h.name] == server)
    proc = aizone("trace", here.name, there.name, "--json", env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr[-1000:]
    data = json.loads(proc.stdout)
    assert data["prediction"]["delivered_to"] == there.nics[0].intf, data["prediction"]
    hops = [h["switch"] for h in data["prediction"]["hops"]]
    assert {placement[s] for s in hops} == {"localhost", server}, hops
    assert data["confirmation"]["confirmed"] is True, data["confirmation"]


def _a_switch_killed_there_is_restarted(name: str, ns: str, env: dict[str, str]) -> None:
    """SIGKILL a switch process on the server: its ssh session ends, the daemon starts it
    there again and writes its entries back; every pair answers again."""
    state = read_state()
    assert state is not None
    session = next(s for s in state.switches if s["name"] == name)["pid"]
    victims = [pid for pid, cmd in _server_processes(ns).items() if f"@{name}-eth" in cmd]
    assert len(victims) == 1, (name, victims)
    os.kill(victims[0], signal.SIGKILL)
    deadline = time.monotonic() + 120
    record = None
    while record is None and time.monotonic() < deadline:
        status = json.loads(aizone("status", "--json", env=env).stdout)
        record = next((r for r in status["restarts"]
                       if r["switch"] == name and r["pid"] != session), None)
        time.sleep(1)
    assert record, status["restarts"]
    assert record["writes"]["insert"] > 20, record
    again = [pid for pid, cmd in _server_processes(ns).items() if f"@{name}-eth" in cmd]
    assert len(again) == 1 and again != victims, (victims, again)
    routes = json.loads(aizone("routes", name, "--json", env=env).stdout)
    assert routes["switches"][name]["matches_intent"], routes
    check = aizone("check", "--json", "--no-roce", env=env, timeout=900)
    assert check.returncode == 0 and json.loads(check.stdout)["ok"], check.stdout[-3000:]


def _tunnel_link_down_reroutes_and_up_restores(placement: dict[str, str],
                                               env: dict[str, str]) -> None:
    """An uplink between the servers (a VXLAN pair) down: rerouted, every pair still
    answers; up: back, nothing failed."""
    rtsw = sorted(n for n, s in placement.items() if n.startswith("rtsw"))[0]
    ctsw = sorted(n for n, s in placement.items()
                  if n.startswith("ctsw") and s != placement[rtsw])[0]
    proc = aizone("link", "down", rtsw, ctsw, "--json", env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    down = json.loads(proc.stdout)
    try:
        assert down["up"] is False and down["link"].startswith(f"{rtsw}-eth"), down
        # Rerouted: by this request, or already by the probes that saw the link die first.
        status = aizone("status", "--json", env=env)
        assert json.loads(status.stdout)["failed"] == [down["link"]], status.stdout[-2000:]
        check = aizone("check", "--json", "--no-roce", env=env, timeout=900)
        assert check.returncode == 0 and json.loads(check.stdout)["ok"], check.stdout[-3000:]
    finally:
        up = aizone("link", "up", rtsw, ctsw, "--json", env=env)
    assert up.returncode == 0, up.stderr[-2000:]
    assert json.loads(up.stdout)["up"] is True
    status = aizone("status", "--json", env=env)
    assert json.loads(status.stdout)["failed"] == [], status.stdout[-2000:]


@pytest.mark.one_target
def test_up_names_the_server_it_cannot_reach(target: str, build_dir: Path,
                                             servers: NamespaceServers) -> None:
    """A server no sshd answers on: `up` fails before building anything, naming that server."""
    before = leftovers()
    nobody = servers.addresses[0].rsplit(".", 1)[0] + ".99"
    up = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir),
                "--servers", f"localhost,{nobody}", str(SMALL), env=servers.env())
    assert up.returncode == 1
    assert f"server {nobody}: ssh failed" in up.stderr, up.stderr[-2000:]
    assert_clean(before)


@pytest.mark.one_target
def test_up_refuses_a_server_whose_clock_is_off(target: str, build_dir: Path,
                                                servers: NamespaceServers) -> None:
    """A server whose clock is SKEW_S ahead: `up` fails before building anything, naming the
    server and its offset as read over ssh."""
    if len(servers.addresses) < 2:
        unavailable("sshd", f"no server with a skewed clock: {faketime_missing()}")
    before = leftovers()
    skewed = servers.addresses[1]
    up = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir),
                "--servers", f"localhost,{skewed}", str(SMALL), env=servers.env())
    assert up.returncode == 1
    said = re.search(rf"server {re.escape(skewed)}: its clock is ([+-][0-9.]+) s from this "
                     rf"machine's", up.stderr)
    assert said, up.stderr[-2000:]
    assert abs(float(said.group(1)) - SKEW_S) < 0.1, said.group(0)
    assert "synchronise the servers' clocks" in up.stderr
    assert_clean(before)


@pytest.mark.one_target
def test_a_clock_that_drifts_after_up_is_seen_and_jobs_wait_for_it(
        target: str, build_dir: Path, servers: NamespaceServers) -> None:
    """The server's clock jumps SKEW_S ahead while the fabric runs (its sshd starts giving new
    sessions libfaketime): within a few of the daemon's readings `aizone status` names the
    server and its offset, and `aizone run` refuses a job saying why; back in sync, the
    status is clear again and a job runs."""
    why = faketime_missing()
    if why:
        unavailable("sshd", f"no way to skew a server's clock: {why}")
    before = leftovers()
    server, ns, sshd_only, env, up = _up_over_two(target, build_dir, servers)
    try:
        assert up.returncode == 0, up.stderr[-2000:]
        servers.set_clock_skew(0, SKEW_S)
        status = _status_until(env, lambda st: server in st["clock_off"])
        assert abs(status["clock_offsets"][server] - SKEW_S) < 0.1, status["clock_offsets"]
        said = status["clock_off"][server]
        assert said.startswith(f"server {server}: its clock is +5.0"), said
        run = aizone("run", "allreduce", "--ranks", "4", "--size", "16K", "--json", env=env)
        assert run.returncode != 0
        assert f"server {server}: its clock is +5.0" in run.stderr, run.stderr[-2000:]
        assert "the job is not started" in run.stderr, run.stderr[-2000:]
        text = aizone("status", env=env).stdout
        assert f"clock: server {server}: its clock is +5.0" in text, text
        servers.set_clock_skew(0, None)
        status = _status_until(env, lambda st: not st["clock_off"])
        assert abs(status["clock_offsets"][server]) < MAX_CLOCK_OFFSET_S, status
        run = aizone("run", "allreduce", "--ranks", "4", "--size", "16K", "--json", env=env)
        assert run.returncode == 0, run.stderr[-2000:]
    finally:
        servers.set_clock_skew(0, None)
        down = aizone("down", env=env)
    assert down.returncode == 0, down.stderr
    assert_clean(before)
    _server_is_clean(ns, sshd_only)


def _status_until(env: dict[str, str], ok: Callable[[dict[str, Any]], bool],
                  timeout: float = 60) -> dict[str, Any]:
    """`aizone status --json` until `ok` holds for it (the daemon reads the clocks every
    controller.clocks.CLOCK_INTERVAL_S)."""
    deadline = time.monotonic() + timeout
    while True:
        status: dict[str, Any] = json.loads(aizone("status", "--json", env=env).stdout)
        if ok(status) or time.monotonic() > deadline:
            assert ok(status), status
            return status
        time.sleep(1)


@pytest.mark.one_target
@pytest.mark.parametrize("skewed_first", [True, False], ids=["skewed-first", "unreachable-first"])
def test_up_checks_servers_side_by_side_and_names_the_first_that_fails(
        target: str, build_dir: Path, servers: NamespaceServers, skewed_first: bool) -> None:
    """Two failing servers, one refused at once (its clock) and one only after ssh's connect
    timeout (no sshd): whichever the checks find first, `up` names the one `--servers` lists
    first, and builds nothing."""
    if len(servers.addresses) < 2:
        unavailable("sshd", f"no server with a skewed clock: {faketime_missing()}")
    before = leftovers()
    skewed = servers.addresses[1]
    nobody = servers.addresses[0].rsplit(".", 1)[0] + ".99"
    order = [skewed, nobody] if skewed_first else [nobody, skewed]
    up = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir),
                "--servers", ",".join(["localhost", *order]), str(SMALL), env=servers.env())
    assert up.returncode == 1
    if skewed_first:
        assert f"server {skewed}: its clock is" in up.stderr, up.stderr[-2000:]
        assert nobody not in up.stderr, up.stderr[-2000:]
    else:
        assert f"server {nobody}: ssh failed" in up.stderr, up.stderr[-2000:]
        assert f"server {skewed}:" not in up.stderr, up.stderr[-2000:]
    assert_clean(before)


@pytest.mark.one_target
def test_up_refuses_scaled_latency_across_servers(target: str, build_dir: Path,
                                                  servers: NamespaceServers,
                                                  tmp_path: Path) -> None:
    """A topology with a `latency:` section over two servers: refused before anything is
    built (its delay line serves switch ports on this machine only), saying so."""
    before = leftovers()
    topo = tmp_path / "delayed.yaml"
    # The preset with its programs' paths made absolute, and the latency section's defaults.
    topo.write_text(SMALL.read_text().replace("../p4/", f"{ROOT}/p4/") + "\nlatency: {}\n")
    up = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir),
                "--servers", f"localhost,{servers.addresses[0]}", str(topo), env=servers.env())
    assert up.returncode == 1
    assert "latency: scaled latency runs on one machine only" in up.stderr, up.stderr[-2000:]
    assert_clean(before)


@pytest.mark.one_target
def test_an_experiment_runs_over_two_servers(target: str, build_dir: Path,
                                             servers: NamespaceServers, tmp_path: Path) -> None:
    """`aizone experiment qp-scaling --quick --servers`: the daemon spreads its fabric over
    both servers, every run completes with all its bytes, and nothing is left anywhere."""
    before = leftovers()
    server, ns = servers.addresses[0], servers.namespaces[0]
    sshd_only = _server_processes(ns)
    proc = aizone("experiment", "qp-scaling", "--quick", "--target", target, "--build-dir",
                  str(build_dir), "--servers", f"localhost,{server}", "--out", str(tmp_path),
                  "--json", env=servers.env(), timeout=1800)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-3000:]}"
    result = json.loads(proc.stdout)
    assert f"--servers localhost,{server}" in result["command"]
    # Where the daemon ran the switches: some on each server.
    here, there = result["sizes"]["servers"].split("; ")
    assert here.startswith("localhost: ") and len(here.split()) > 1, here
    assert there.startswith(f"{server}: ") and len(there.split()) > 1, there
    assert result["runs"] == 8 and result["repeat"] == 1
    failed = [(p["params"], r["error"]) for p in result["points"] for r in p["runs"]
              if r["error"] is not None]
    assert failed == [], f"runs failed: {failed}"
    for p in result["points"]:
        (run,) = p["runs"]
        # Every byte arrived; each rank's 2 x 15 chunks crossed the spine (see
        # test_experiments.py for the 2,077,440 B worked out by hand).
        assert run["metrics"]["bytes_ok"] == 1.0, p["params"]
        links = run["details"]["links"]
        assert sum(up for up, _ in links.values()) >= 2_077_440, (p["params"], links)
    assert_clean(before)
    assert sorted(_server_processes(ns)) == sorted(sshd_only)
