"""Run-time access to a running fabric: host commands, link control, switch processes.

`FabricRuntime` is what the controller daemon holds to act on the network
it runs. It is built either from a `FabricNet` it has just started
(`FabricRuntime.from_net(net)`) or, after the daemon died (SIGKILL
included) and a new one attaches, from `run.json` and the plan
(`FabricRuntime.from_state(state, plan)`): host namespaces are pinned as
/run/netns/aizone-<host> and switch processes run in their own sessions, so
both outlive the daemon, and `run.json` records each switch's exact command
line and port settings (`switchproc.SwitchRecord`).

- `host_popen(host, argv, **popen_kw)` / `host_run(host, argv, timeout)`:
  a command inside the host's pinned namespace (`ip netns exec`), carrying
  the run's `AIZONE_RUN` marker (so `cleanup()` ends it with the run); on
  another server (`remote_server(host)`), through ssh, with Unix sockets
  forwarded from here if asked (`unix_forwards`).
- `port_popen(node, argv, lifetime_s=None, **popen_kw)`: a command where a
  host's or switch's ports are (the host's namespace, the root one), on the
  server that node runs on (there through ssh without a terminal, so its
  output is byte for byte: a capture's pcap).
- `set_link(link_id, up, silent=False)` / `link_up(link_id)`: both ends of a
  link, by its id "<a_intf>--<b_intf>" (`LinkPlan.id`). Down is the
  target's way: p4switch links lose their carrier (with the Mininet
  network at hand, through its interfaces, `Intf.ifconfig`, what Mininet's
  `configLinkStatus` does for every link between two nodes, here for the
  one link asked for, so a parallel uplink stays up; otherwise `ip link
  set` in the right namespaces); BMv2 links keep it and drop everything
  (a blackhole qdisc), because BMv2 stops receiving on all its ports when
  one of its interfaces goes down. `silent=True` always takes the
  blackhole: a failure only the controller's probes can see. tc shaping
  stays on the interfaces. Linux drops a host's routes through an
  interface that goes down: bringing a host link up restores that NIC's
  routes.
- `switch_alive(name)`, `kill_switch(name)` (SIGKILL, for tests),
  `restart_switch(name)`: the same command line, hence the same port
  settings; waits until the gRPC port accepts connections, updates
  `run.json` and returns the new pid.
- `configure_switch(name)`: the run-time part of the port settings (p4switch
  PFC XOFF/XON, BMv2 queue depth and rate), which needs a committed
  pipeline: call it after every pipeline push, including after a restart.
- `tm_stats(name)`: the target's queue counters per "port/priority"
  (p4switch), or None (BMv2).

Target-specific work is the switch class's (`SWITCH_CLASSES[target]`), not
an if on the target here. Errors are `NetworkError` with one line that says
what and where.

Names defined here: `FabricRuntime`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mininet.link import Link

from .addressing import AddressPlan, LinkPlan, link_id
from .errors import NetworkError
from .hostcfg import nic_routes
from .net import FabricNet
from .nodes import SWITCH_CLASSES, FabricSwitch
from .runstate import (
    NETNS_DIR,
    RunState,
    netns_name,
    process_exited,
    update_state,
    zombie_or_gone,
)
from .sshcmd import remote_argv, remote_nodes, wait_remote_ready
from .switchproc import RUN_ENV, SwitchRecord, launch, proc_start, wait_ready

__all__ = ["FabricRuntime"]


class FabricRuntime:
    """Runtime access to one running fabric (see the module docstring)."""

    def __init__(self, plan: AddressPlan, *, token: str, target: str,
                 records: list[SwitchRecord], net: FabricNet | None = None,
                 state_directory: Path | None = None,
                 servers: Sequence[str] = (), placement: Mapping[str, str] | None = None,
                 clock_offsets: Mapping[str, float] | None = None) -> None:
        if target not in SWITCH_CLASSES:
            raise NetworkError(f"run.json names target {target!r}, not one of "
                               f"{', '.join(SWITCH_CLASSES)}")
        missing = sorted({s.name for s in plan.switches} - {r.name for r in records})
        if missing:
            raise NetworkError(f"the running fabric has no record of switch(es) "
                               f"{', '.join(missing[:3])}: is it the same topology?")
        self.plan = plan
        self.token = token
        self.target = target
        self.switch_cls: type[FabricSwitch] = SWITCH_CLASSES[target]
        self.records = {r.name: r for r in records}
        self.state_directory = state_directory
        # A cluster fabric (`topologies.cluster`): its servers, this machine first, and every
        # node's server; both empty on one machine.
        spread = len(servers) > 1
        self.servers: tuple[str, ...] = tuple(servers) if spread else ()
        self.placement: dict[str, str] = dict(placement or {}) if spread else {}
        # Each other server's wall clock minus this machine's, read at `up`.
        self.clock_offsets: dict[str, float] = dict(clock_offsets or {}) if spread else {}
        # The nodes on another server than this one: reached by ssh.
        self.node_servers = remote_nodes({"servers": self.servers, "placement": self.placement})
        self._net = net
        self._procs: dict[str, subprocess.Popen[bytes]] = {}  # switch processes we started
        self._mn_links: dict[str, Link] = {}
        if net is not None and net.net is not None:
            for link in net.net.links:
                self._mn_links[link_id(link.intf1.name, link.intf2.name)] = link
        # Mininet nodes run commands through one shell each: one caller at a time.
        self._mn_lock = threading.Lock()
        self._restart_lock = threading.Lock()

    @classmethod
    def from_net(cls, net: FabricNet) -> FabricRuntime:
        """Access to a network this process has just started."""
        if net.state is None or net.net is None:
            raise NetworkError("the network is not running")
        records = [sw.record() for sw in net.fabric_switches()]
        return cls(net.plan, token=net.token, target=net.switch_cls.target, records=records,
                   net=net, state_directory=net.state_directory,
                   servers=net.meta.get("servers") or (),
                   placement=net.meta.get("placement"),
                   clock_offsets=net.meta.get("clock_offsets"))

    @classmethod
    def from_state(cls, state: RunState, plan: AddressPlan, *,
                   state_directory: Path | None = None) -> FabricRuntime:
        """Access to a fabric another (possibly dead) process started, from its run.json."""
        records = [SwitchRecord.from_json(d) for d in state.switches]
        if not all(r.argv for r in records):
            raise NetworkError("run.json has no command line for its switches "
                               "(written by an older aizone): restart the fabric")
        return cls(plan, token=state.token, target=state.target, records=records,
                   state_directory=state_directory, servers=state.meta.get("servers") or (),
                   placement=state.meta.get("placement"),
                   clock_offsets=state.meta.get("clock_offsets"))

    # --- hosts ---------------------------------------------------------------

    def netns(self, host: str) -> str:
        """The pinned namespace name of `host` ("aizone-<host>")."""
        try:
            self.plan.host(host)
        except KeyError:
            raise NetworkError(f"no host {host!r} in fabric {self.plan.name!r}") from None
        name = netns_name(host)
        if host not in self.node_servers and not (NETNS_DIR / name).exists():
            raise NetworkError(f"{host}: its network namespace {NETNS_DIR / name} is gone "
                               f"(the fabric is down?)")
        return name

    def _host_argv(self, host: str, argv: list[str], *, tty: bool = False,
                   unix_forwards: Sequence[tuple[str, str]] = ()) -> list[str]:
        inside = ["ip", "netns", "exec", self.netns(host), *argv]
        server = self.node_servers.get(host)
        if server is None:
            return inside
        return remote_argv(server, inside, {RUN_ENV: self.token,
                                            "PATH": os.environ.get("PATH", "")}, tty=tty,
                           unix_forwards=unix_forwards)

    def _env(self, env: dict[str, str] | None) -> dict[str, str]:
        out = dict(os.environ if env is None else env)
        out[RUN_ENV] = self.token
        return out

    def remote_server(self, node: str) -> str | None:
        """The server `node` (a switch or host) runs on when that is not this machine (a
        cluster fabric), else None."""
        return self.node_servers.get(node)

    def host_popen(self, host: str, argv: list[str], *,
                   unix_forwards: Sequence[tuple[str, str]] = (),
                   **popen_kw: Any) -> subprocess.Popen[Any]:
        """Start `argv` inside `host`'s network namespace; `popen_kw` go to `subprocess.Popen`.

        `unix_forwards`: (here, there) Unix socket paths, for a host on another
        server (`remote_server`): a connection to `here` reaches `there` on that
        server, through the ssh session that runs the command
        (`sshcmd.remote_argv`). A host on this machine has nothing to forward.
        """
        env = self._env(popen_kw.pop("env", None))
        if unix_forwards and host not in self.node_servers:
            raise NetworkError(f"{host} runs on this machine: it has no socket to forward")
        # A pseudo-terminal on another server: the command ends with its ssh session.
        return subprocess.Popen(self._host_argv(host, argv, tty=True, unix_forwards=unix_forwards),
                                env=env, **popen_kw)

    def port_popen(self, node: str, argv: list[str], *, lifetime_s: float | None = None,
                   **popen_kw: Any) -> subprocess.Popen[Any]:
        """Start `argv` where `node`'s ports are (a host's namespace, or the root namespace
        for a switch's), on the server `node` runs on, marked as this fabric's.

        On another server it runs through ssh without a terminal, so what it writes arrives
        byte for byte (a pcap); ending ssh does not end it there until it next writes, so
        `lifetime_s` bounds it there (`timeout`), and `aizone down` ends it by its marker.
        """
        server = self.node_servers.get(node)
        is_host = any(h.name == node for h in self.plan.hosts)
        if server is None:
            if is_host:
                return self.host_popen(node, argv, **popen_kw)
            return self.root_popen(argv, **popen_kw)
        bounded = ["timeout", f"{lifetime_s:g}", *argv] if lifetime_s else argv
        if is_host:
            remote = self._host_argv(node, bounded)
        else:
            remote = remote_argv(server, bounded, {RUN_ENV: self.token,
                                                   "PATH": os.environ.get("PATH", "")})
        return subprocess.Popen(remote, env=self._env(popen_kw.pop("env", None)), **popen_kw)

    def root_popen(self, argv: list[str], **popen_kw: Any) -> subprocess.Popen[Any]:
        """Start `argv` in the root namespace (the switches' ports), marked as this fabric's
        like every process it starts, so `aizone down` ends it if its caller could not."""
        env = self._env(popen_kw.pop("env", None))
        return subprocess.Popen(argv, env=env, **popen_kw)

    def host_run(self, host: str, argv: list[str], timeout: float = 30.0, *,
                 limit: int | None = None) -> subprocess.CompletedProcess[str]:
        """Run `argv` inside `host`'s namespace to completion (text output captured).

        With `limit`, at most that many bytes of each of stdout and stderr are
        kept (the rest is read and counted, so the command never blocks, and a
        line says how much was left out). Raises `subprocess.TimeoutExpired`
        (the command killed) after `timeout` s.
        """
        if limit is None:
            return subprocess.run(self._host_argv(host, argv), env=self._env(None),
                                  capture_output=True, text=True, timeout=timeout)
        return _run_bounded(self._host_argv(host, argv), self._env(None), timeout, limit)

    # --- links ---------------------------------------------------------------

    def _link(self, link_id: str) -> LinkPlan:
        try:
            return self.plan.link(link_id)
        except KeyError:
            raise NetworkError(f"no link {link_id!r} in fabric {self.plan.name!r} "
                               f"(ids are <a_intf>--<b_intf>, e.g. "
                               f"{self.plan.links[0].id})") from None

    def _ends(self, link: LinkPlan) -> list[tuple[str | None, str | None, str]]:
        """(server or None for this machine, namespace or None for the root one, interface)
        of both ends."""
        def ns(node: str) -> str | None:
            """The namespace of `node`'s end: a host's own for a host link, else None."""
            return self.netns(node) if link.tier == "host" and node == link.a else None
        return [(self.node_servers.get(link.a), ns(link.a), link.a_intf),
                (self.node_servers.get(link.b), ns(link.b), link.b_intf)]

    def set_link(self, link_id: str, up: bool, *, silent: bool = False) -> None:
        """Take both ends of a link down, or bring them back (shaping kept).

        Down is the target's way (`FabricSwitch.link_down`): "carrier", the
        interfaces set down; or "blackhole", carrier kept and everything the
        two ends send dropped by a blackhole qdisc under their shaper. With
        `silent`, always the blackhole: a link that dies without its ports
        noticing, which only the controller's probes can find. Up undoes
        whichever was done.
        """
        link = self._link(link_id)
        if silent or self.switch_cls.link_down == "blackhole":
            if not up:
                self._blackhole(link, True)
                return
        if up:
            self._blackhole(link, False)
        state = "up" if up else "down"
        mn = self._mn_links.get(link_id)
        if mn is not None and self._net is not None and self._net.net is not None:
            with self._mn_lock:
                for intf in (mn.intf1, mn.intf2):
                    out = intf.ifconfig(state)
                    if out.strip():
                        raise NetworkError(f"{link_id}: {intf.name} {state}: {out.strip()}")
        else:
            for server, ns, intf in self._ends(link):
                _ip(ns, ["link", "set", "dev", intf, state], what=f"{link_id}: {intf} {state}",
                    server=server)
        if up and link.tier == "host":
            nic = self.plan.host(link.a).nics[link.a_port]
            for argv in nic_routes(nic):
                _ip(self.netns(link.a), argv[1:], what=f"{link_id}: {nic.host} routes",
                    server=self.node_servers.get(link.a))

    def _blackhole(self, link: LinkPlan, on: bool) -> None:
        """Drop (or stop dropping) everything both ends of `link` send.

        The blackhole replaces the leaf of the tier's HTB shaper (class 5:1,
        as Mininet's TCLink builds it), or the root qdisc of an unshaped link.
        """
        for server, ns, intf in self._ends(link):
            shown = _tc(ns, ["qdisc", "show", "dev", intf], what=intf, server=server)
            where = ["parent", "5:1"] if "htb 5:" in shown else ["root"]
            present = BLACKHOLE in shown
            if on and not present:
                _tc(ns, ["qdisc", "add", "dev", intf, *where, "handle", "10:", "blackhole"],
                    what=f"{link.id}: {intf} blackhole", server=server)
            elif not on and present:
                _tc(ns, ["qdisc", "del", "dev", intf, *where, "handle", "10:"],
                    what=f"{link.id}: {intf} blackhole removed", server=server)

    def link_up(self, link_id: str) -> bool:
        """Both ends administratively up, with carrier, and not blackholed."""
        link = self._link(link_id)
        for server, ns, intf in self._ends(link):
            if BLACKHOLE in _tc(ns, ["qdisc", "show", "dev", intf], what=intf, server=server):
                return False
            out = _ip(ns, ["-j", "link", "show", "dev", intf], what=f"{link_id}: {intf}",
                      server=server)
            try:
                flags = json.loads(out)[0].get("flags", [])
            except (ValueError, IndexError):
                return False
            if "UP" not in flags or "LOWER_UP" not in flags:
                return False
        return True

    # --- switches ------------------------------------------------------------

    def _record(self, name: str) -> SwitchRecord:
        try:
            return self.records[name]
        except KeyError:
            raise NetworkError(f"no switch {name!r} in fabric {self.plan.name!r}") from None

    def _reap(self, name: str) -> None:
        # Our own children must be waited for, or they linger as zombies.
        proc = self._procs.get(name)
        if proc is not None:
            proc.poll()
        if self._net is not None and self._net.net is not None:
            node = self._net.net.nameToNode.get(name)
            if isinstance(node, FabricSwitch) and node.proc is not None:
                node.proc.poll()

    def switch_alive(self, name: str) -> bool:
        """Is the recorded process of switch `name` running (and not a reused pid)?"""
        rec = self._record(name)
        self._reap(name)
        if rec.pid is None or proc_start(rec.pid) != rec.start:
            return False
        return not zombie_or_gone(rec.pid)

    def _exited(self, name: str) -> bool:
        """Not alive, and no thread of the recorded process holds its files any more."""
        rec = self._record(name)
        if self.switch_alive(name):
            return False
        return rec.pid is None or proc_start(rec.pid) != rec.start or process_exited(rec.pid)

    def kill_switch(self, name: str, timeout: float = 5.0) -> None:
        """SIGKILL the switch process (tests: a switch that crashes) and wait until it is gone."""
        rec = self._record(name)
        if not self.switch_alive(name):
            return
        assert rec.pid is not None
        try:
            os.killpg(rec.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + timeout
        while not self._exited(name) and time.monotonic() < deadline:
            time.sleep(0.02)

    def _stop(self, name: str, timeout: float = 5.0) -> None:
        rec = self._record(name)
        if not self.switch_alive(name):
            return
        assert rec.pid is not None
        try:
            os.killpg(rec.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while not self._exited(name) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.kill_switch(name)

    def restart_switch(self, name: str) -> int:
        """Start switch `name` again with its recorded command line; returns the new pid.

        A live process is stopped first. Waits until the gRPC port accepts
        connections (the switch has no pipeline yet: push it, then call
        `configure_switch`) and records the new pid in run.json.
        """
        with self._restart_lock:
            rec = self._record(name)
            self._stop(name)
            proc = launch(rec)
            server = self.node_servers.get(name)
            try:
                if server is None:
                    wait_ready(rec, proc, self.switch_cls.start_timeout,
                               reads_outgoing=self.switch_cls.reads_outgoing)
                else:  # its ssh session runs here; the switch itself there
                    wait_remote_ready(rec, proc, server,
                                      ports=len(self.plan.switch(name).ports),
                                      reads_outgoing=self.switch_cls.reads_outgoing,
                                      timeout=self.switch_cls.start_timeout)
            except BaseException:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)
                raise
            self._procs[name] = proc
            if self._net is not None and self._net.net is not None:
                node = self._net.net.nameToNode.get(name)
                if isinstance(node, FabricSwitch):
                    node.proc = proc  # so that the network's stop() ends this one
            self._save()
            assert rec.pid is not None
            return rec.pid

    def configure_switch(self, name: str) -> None:
        """Apply the switch's run-time port settings (after each pipeline push)."""
        self.switch_cls.configure(self._record(name))

    def tm_stats(self, name: str) -> dict[str, Any] | None:
        """Queue counters of the switch's traffic manager, "port/priority" -> {...}, or None."""
        return self.switch_cls.tm_stats(self._record(name))

    def _save(self) -> None:
        switches = [self.records[s.name].to_json() for s in self.plan.switches]

        def change(state: RunState) -> None:
            """Put the switch records into `state`."""
            state.switches = switches

        update_state(change, self.state_directory)
        if self._net is not None and self._net.state is not None:
            self._net.state.switches = switches


BLACKHOLE = "qdisc blackhole 10:"


def _on(server: str | None, argv: list[str]) -> list[str]:
    """`argv` as run here, or on `server` of a cluster fabric through ssh."""
    if server is None:
        return argv
    return remote_argv(server, argv, {"PATH": os.environ.get("PATH", "")})


def _tc(netns: str | None, args: list[str], *, what: str, server: str | None = None) -> str:
    """Run `tc ARGS...` (inside NETNS, on SERVER); NetworkError with tc's message on failure."""
    argv = [*(["ip", "netns", "exec", netns] if netns else []), "tc", *args]
    out = subprocess.run(_on(server, argv), capture_output=True, text=True)
    if out.returncode != 0:
        raise NetworkError(f"{what}: {out.stderr.strip() or ' '.join(argv)}")
    return out.stdout


def _ip(netns: str | None, args: list[str], *, what: str, server: str | None = None) -> str:
    """Run `ip [-n NETNS] ARGS...` (on SERVER); NetworkError with ip's message on failure."""
    argv = ["ip", *(["-n", netns] if netns else []), *args]
    out = subprocess.run(_on(server, argv), capture_output=True, text=True)
    if out.returncode != 0:
        raise NetworkError(f"{what}: {out.stderr.strip() or ' '.join(argv)}")
    return out.stdout


def _run_bounded(argv: list[str], env: dict[str, str], timeout: float,
                 limit: int) -> subprocess.CompletedProcess[str]:
    """`subprocess.run` with text capture, keeping at most `limit` bytes per stream."""
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    kept: dict[str, bytearray] = {"out": bytearray(), "err": bytearray()}
    dropped = {"out": 0, "err": 0}

    def drain(name: str, stream: Any) -> None:
        """Read `stream` to its end, keeping at most `limit` bytes of it."""
        while chunk := stream.read1(65536):
            room = limit - len(kept[name])
            kept[name] += chunk[:max(room, 0)]
            dropped[name] += max(len(chunk) - max(room, 0), 0)

    readers = [threading.Thread(target=drain, args=(n, s), daemon=True)
               for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for r in readers:
        r.start()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        for r in readers:
            r.join(5)

    def text(name: str) -> str:
        """What was kept of stream `name`, with a note of what was not."""
        out = kept[name].decode(errors="replace")
        if dropped[name]:
            out += f"\n[aizone: {dropped[name]} more bytes not kept (limit {limit})]\n"
        return out

    return subprocess.CompletedProcess(argv, proc.returncode, text("out"), text("err"))
