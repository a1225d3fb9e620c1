"""Run a fabric in Mininet: hosts in network namespaces, one switch process per switch.

`FabricTopo(plan, ...)` is a Mininet `Topo` built from an addressing plan
(data only). `FabricNet(plan, switch=P4SwitchNode)` runs it: the switch
class and the link class are constructor arguments (Mininet's own
`Mininet(topo, switch=..., link=...)` pattern), no controller (the P4Runtime
controller is ours and connects later), no Open vSwitch anywhere.

Links are Mininet `TCLink`s: every veth is shaped by tc (htb) at its
tier's `rate_mbps` on both ends, the host NIC side (a host cannot send
faster than its line rate) and the switch side; each switch is started with
its ports' own speed and queue settings to match (`topologies.nodes`), so
a congested port's queue builds in the switch, where PFC and ECN act,
rather than in the kernel. A switch's speed equals the tc rate behind it,
so tc's queue on the switch side stays near empty (see docs/topologies.md
for how this was measured).

With a `latency:` section in the topology (`topologies.latency`), every
veth end also delays the frames leaving it by its cable's propagation plus
its switch's latency, times the fabric's scale: `start()` opens the delay
line (`topologies.linkdelay`, `topologies.delayline`) once the links
exist, before any host or switch sends; `stop()` ends it.

Lifecycle: `start()` checks preconditions (root, gRPC ports free, none of
our interfaces or pinned namespaces already present), builds the veths,
pins every host's network namespace as /run/netns/aizone-<host> (so it
outlives this process), configures the hosts (`topologies.hostcfg`),
starts the switch processes and waits for their gRPC ports, and records the
run in the state file (see `topologies.runstate`), each switch with its
exact command line and port settings. `stop()` ends every process, deletes
every interface and pinned namespace and the state file; it runs on
exceptions and Ctrl-C too when FabricNet is used as a context manager, and
it is idempotent. If `start()` fails half-way it stops what it started
before raising. Run-time access (commands in hosts, link control, switch
restarts) is `topologies.attach.FabricRuntime.from_net(net)`.

Switch control planes are the controller's alone (DESIGN.md, "Who can reach
what"): before a switch starts, `start()` makes the run's CA
(`topologies.pki`; every switch serves P4Runtime over mutual TLS) and
confines every control port to root on this machine (`topologies.firewall`);
the switches' local sockets go in `<state dir>/switches` (0700). `stop()`
removes both.

Names defined here: `FabricTopo`, `FabricNet`, `link_params`,
`check_ports_free`, `control_ports`, `netem_available`.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import subprocess
from pathlib import Path
from typing import Any

from mininet.link import Link, TCLink
from mininet.log import lg, setLogLevel
from mininet.net import Mininet
from mininet.node import Host
from mininet.topo import Topo

from .addressing import AddressPlan, HostPlan
from .delayline import DelayLine
from .errors import NetworkError
from .firewall import confine
from .hostcfg import host_commands
from .linkdelay import egress_delays, make_door
from .mtu import DEFAULT_MTU
from .nodes import FabricSwitch, stop_switch_processes
from .pki import FabricPki
from .ports import switch_end_mbps, switch_settings
from .runstate import (
    CONTROL_DIR,
    NETNS_DIR,
    OUR_INTF,
    PKI_DIR,
    RunState,
    clear_state,
    netns_name,
    pin_netns,
    proc_start,
    remove_control_files,
    remove_netns,
    root_links,
    state_dir,
    write_state,
)
from .spec import LinkSpec
from .switchproc import RUN_ENV

__all__ = ["FabricNet", "FabricTopo", "check_ports_free", "control_ports", "link_params",
           "netem_available"]


class _HtbQuantumNotice(logging.Filter):
    """Drops the kernel's "quantum of class ... is big" notice that Mininet prints as an error.

    htb warns when rate / r2q exceeds 200,000 bytes (above 16 Mb/s); the
    quantum only shares spare rate between htb classes, and each link has
    one class, so nothing is wrong. Every other tc error still shows.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether to keep `record`: every message but htb's quantum notice."""
        return "quantum of class" not in record.getMessage()


lg.addFilter(_HtbQuantumNotice())


def link_params(shape: LinkSpec) -> dict[str, Any]:
    """TCLink keyword arguments for a tier: rate (Mb/s), netem delay/loss when given.

    Checksum offloads stay off (TCLink would switch them on; raw sockets
    need whole checksums).
    """
    params: dict[str, Any] = {"bw": shape.rate_mbps, "txo": False, "rxo": False}
    if shape.delay_ms is not None:
        params["delay"] = f"{shape.delay_ms}ms"
    if shape.loss_pct is not None:
        params["loss"] = shape.loss_pct
    return params


def netem_available() -> bool:
    """Can this kernel delay packets (sch_netem)? Probed on a throwaway dummy link."""
    name = f"aznetem{os.getpid() % 100000}"
    add = subprocess.run(["ip", "link", "add", name, "type", "dummy"], capture_output=True)
    if add.returncode != 0:
        return False
    try:
        probe = subprocess.run(
            ["tc", "qdisc", "add", "dev", name, "root", "netem", "delay", "1ms"],
            capture_output=True,
        )
        return probe.returncode == 0
    finally:
        subprocess.run(["ip", "link", "del", name], capture_output=True)


def check_ports_free(plan: AddressPlan, *, thrift: bool = False, ctl: bool = False) -> None:
    """Raise `NetworkError` if a switch's gRPC (or Thrift, or ctl) port is already taken."""
    for sw in plan.switches:
        ports = [("gRPC", sw.grpc_port)] + ([("Thrift", sw.thrift_port)] if thrift else []) + (
            [("ctl", sw.ctl_port)] if ctl else [])
        for what, port in ports:
            # Loopback and every address: BMv2 binds Thrift on all of them, and a listener
            # on the machine's own address would take the connections meant for it.
            for address in ("127.0.0.1", "0.0.0.0"):
                if not _bindable(address, port):
                    raise NetworkError(
                        f"{what} port {address}:{port} for {sw.name} is already in use: stop "
                        f"what listens there (ss -ltnp 'sport = :{port}') or change "
                        f"switches.{what.lower()}_port_base in the topology"
                    )


def control_ports(plan: AddressPlan, extra: tuple[str, ...] = ()) -> list[int]:
    """Every TCP port the plan's switches listen on besides their data ports."""
    ports = [sw.grpc_port for sw in plan.switches]
    if "thrift" in extra:
        ports += [sw.thrift_port for sw in plan.switches]
    if "ctl" in extra:
        ports += [sw.ctl_port for sw in plan.switches]
    return ports


def _bindable(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # REUSEADDR: a closed session's TIME_WAIT is not "in use"; a
        # listener still is (gRPC's REUSEPORT needs it on both sides).
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
        return True


class FabricTopo(Topo):
    """The Mininet topology of an addressing plan (no processes, no interfaces yet)."""

    def build(self, plan: AddressPlan, switch_opts: dict[str, dict[str, Any]] | None = None,
              shaped: bool = False, paced_frame: int | None = None) -> None:
        """Add the plan's hosts, switches (with `switch_opts` by name) and links.

        `shaped`: both ends of each cable are shaped, the host's at the tier's rate, the
        switch's a little above its port's own pace (`ports.switch_end_mbps`: 5 % above),
        so the switch's queue, not tc's behind it, stays the bottleneck and holds the
        backlog. `paced_frame`: the switches' queue rates count packets of this many bytes
        (BMv2's), whose pace is `ports.paced_mbps` (less than a frame a second above the
        tier's rate); None: they pace bytes at the tier's rate (p4switch)."""
        switch_opts = switch_opts or {}
        for h in plan.hosts:
            # Addresses are set by FabricNet (Mininet's would use ifconfig and
            # know nothing of per-NIC routing tables).
            self.addHost(h.name, ip=None)
        for s in plan.switches:
            self.addSwitch(s.name, device_id=s.device_id, grpc_port=s.grpc_port,
                           cpu_port=s.cpu_port, thrift_port=s.thrift_port,
                           ctl_port=s.ctl_port, role=s.role,
                           settings=switch_settings(plan, s.name),
                           **switch_opts.get(s.name, {}))
        for link in plan.links:
            a_mac = _intf_mac(plan, link.a, link.a_port)
            b_mac = _intf_mac(plan, link.b, link.b_port)
            opts = link_params(link.shape) if shaped else {}
            ends: dict[str, dict[str, Any]] = {}
            if shaped:
                bw = opts.pop("bw")
                switch_end = switch_end_mbps(bw, paced_frame)
                ends = {f"params{i}": {"bw": bw if node.startswith("h") else switch_end}
                        for i, node in ((1, link.a), (2, link.b))}
            self.addLink(link.a, link.b, port1=link.a_port, port2=link.b_port,
                         intfName1=link.a_intf, intfName2=link.b_intf,
                         addr1=a_mac, addr2=b_mac, **ends, **opts)


def _intf_mac(plan: AddressPlan, node: str, port: int) -> str:
    if node.startswith("h"):
        return plan.host(node).nics[port].mac
    return plan.switch(node).port(port).mac


class FabricNet:
    """A running fabric: Mininet hosts and links plus one switch process per switch.

    `switch`: a `FabricSwitch` class (see `SWITCH_CLASSES`); `link`: a Mininet
    link class (default `TCLink`, which shapes every link; a plain `Link`
    leaves them unshaped);
    `device_configs`: switch name -> program file to load at start (default:
    none, `--no-p4`, the controller pushes the pipeline); `log_dir`: one log
    file per switch; `meta`: facts for the state file.
    """

    def __init__(
        self,
        plan: AddressPlan,
        *,
        switch: type[FabricSwitch],
        link: type[Link] | None = None,
        device_configs: dict[str, str] | None = None,
        log_dir: str | Path | None = None,
        log_console: bool = False,
        meta: dict[str, Any] | None = None,
        state_directory: Path | None = None,
        tls: bool = True,
        native_pfc: bool | None = None,
    ) -> None:
        self.plan = plan
        self.switch_cls = switch
        self.link_cls = link or TCLink
        self.shaped = issubclass(self.link_cls, TCLink)
        # Queue rates in packets (BMv2): the switches' side of each cable above their pace.
        self.paced_frame = plan.roce_frame if self.switch_cls.packet_queues else None
        self.device_configs = device_configs or {}
        self.log_dir = Path(log_dir) if log_dir else None
        self.log_console = log_console
        self.meta = dict(meta or {})
        self.state_directory = state_directory
        # P4Runtime over mutual TLS with a CA of this run's own (topologies.pki); False:
        # plaintext, for tests that drive a network's switches with their own clients.
        self.tls = tls
        # The target's traffic-manager PFC (True) or the programs' (False); None: the target's
        # default (`FabricSwitch.native_pfc_default`: p4switch native, BMv2 the programs').
        self.native_pfc = native_pfc
        self.pki: FabricPki | None = None
        self.token = secrets.token_hex(6)
        self.net: Mininet | None = None
        self.state: RunState | None = None
        self._saved_env: str | None = None
        self.delay_line: DelayLine | None = None

    # --- preconditions -----------------------------------------------------

    def preflight(self) -> None:
        """Raise `NetworkError` (changing nothing) if the network cannot start here."""
        if os.geteuid() != 0:
            raise NetworkError("the network needs root (namespaces, veths): run with sudo")
        extra = self.switch_cls.extra_ports
        check_ports_free(self.plan, thrift="thrift" in extra, ctl="ctl" in extra)
        present = set(root_links())
        ours = [lk.b_intf for lk in self.plan.links] + [lk.a_intf for lk in self.plan.links]
        clash = sorted(n for n in ours if n in present and OUR_INTF.match(n))
        if clash:
            raise NetworkError(
                f"interfaces {', '.join(clash[:3])} already exist (left by an earlier run?): "
                f"run `aizone down` first"
            )
        pinned = [netns_name(h.name) for h in self.plan.hosts
                  if (NETNS_DIR / netns_name(h.name)).exists()]
        if pinned:
            raise NetworkError(
                f"network namespaces {', '.join(pinned[:3])} already exist (left by an earlier "
                f"run?): run `aizone down` first"
            )
        needs_netem = any(
            lk.shape.delay_ms is not None or lk.shape.loss_pct is not None for lk in self.plan.links
        )
        if needs_netem and self.shaped and not netem_available():
            raise NetworkError(
                "link delay/loss needs the kernel's sch_netem, which is missing here: "
                "remove delay_ms/loss_pct from the topology's links"
            )

    # --- lifecycle ---------------------------------------------------------

    def start(self) -> FabricNet:
        """Start the network, recording run.json as it goes; stops it all on failure."""
        self.preflight()
        setLogLevel("error")
        self.state = RunState(
            owner_pid=os.getpid(), owner_start=proc_start(os.getpid()), token=self.token,
            name=self.plan.name, target=self.switch_cls.target, meta=self.meta,
            interfaces=sorted({lk.b_intf for lk in self.plan.links if OUR_INTF.match(lk.b_intf)}
                              | {lk.a_intf for lk in self.plan.links if OUR_INTF.match(lk.a_intf)}),
        )
        # Recorded before anything exists, so a crash at any point leaves a
        # state file that `cleanup` can act on.
        write_state(self.state, self.state_directory)
        # Every process Mininet starts from here on (host shells and what
        # they run, switch processes) inherits the run marker.
        self._saved_env = os.environ.get(RUN_ENV)
        os.environ[RUN_ENV] = self.token
        try:
            directory = self.state_directory or state_dir()
            control = directory / CONTROL_DIR
            control.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(control, 0o700)
            if self.tls:
                self.pki = FabricPki.create(directory / PKI_DIR)
            # Before any switch listens: its control ports are root's from the first moment.
            self.confine_control(control_ports(self.plan, self.switch_cls.extra_ports))
            self.state.meta["firewall"] = True
            write_state(self.state, self.state_directory)
            opts = {
                s.name: {
                    "json_path": self.device_configs.get(s.name),
                    "log_dir": str(self.log_dir) if self.log_dir else None,
                    "log_console": self.log_console,
                    "run_token": self.token,
                    "tls_dir": str(self.pki.directory) if self.pki else None,
                    "control_dir": str(control),
                    "native_pfc": self.native_pfc,
                }
                for s in self.plan.switches
            }
            self.net = self.make_mininet(self.make_topo(opts))
            self.net.build()
            self._set_mtu()
            # Recorded before they exist, so that stop() unpins half-made ones.
            self.state.netns.extend(netns_name(h.name) for h in self.net.hosts)
            self.pin_hosts(self.net.hosts)
            self.state.hosts = [
                {"name": h.name, "pid": h.pid, "netns_inode": _netns_inode(h.pid),
                 "netns": netns_name(h.name)}
                for h in self.net.hosts
            ]
            write_state(self.state, self.state_directory)
            self._start_delay()
            for hp in self.plan.hosts:
                self._configure_host(hp)
            self.net.start()
            self.state.switches = [sw.record().to_json() for sw in self.fabric_switches()]
            self.state.ready = True
            write_state(self.state, self.state_directory)
        except BaseException:
            self.stop()
            raise
        return self

    # Where a cluster fabric (`topologies.cluster.ClusterNet`) differs: the topology, the
    # Mininet that runs it, and where a host's namespace is pinned.

    def make_topo(self, opts: dict[str, dict[str, Any]]) -> FabricTopo:
        """The Mininet topology to build, `opts` being each switch's node options."""
        return FabricTopo(self.plan, opts, self.shaped, self.paced_frame)

    def make_mininet(self, topo: FabricTopo) -> Mininet:
        """The Mininet that runs `topo`: one machine, no controller, no Open vSwitch."""
        return Mininet(topo=topo, switch=self.switch_cls, host=Host, link=self.link_cls,
                       controller=None, build=False, autoSetMacs=False)

    def confine_control(self, ports: list[int]) -> None:
        """Only root on this machine may connect to the switches' control `ports`
        (`topologies.firewall`)."""
        confine(ports)

    def pin_hosts(self, hosts: list[Host]) -> None:
        """Pin each host's network namespace as /run/netns/aizone-<host>."""
        for host in hosts:
            pin_netns(netns_name(host.name), host.pid)

    def _set_mtu(self) -> None:
        # Both ends of every link at the topology's MTU (Mininet leaves veths at 1,500).
        assert self.net is not None
        if self.plan.mtu == DEFAULT_MTU:
            return
        for link in self.net.links:
            for intf in (link.intf1, link.intf2):
                out = intf.node.cmd(f"ip link set dev {intf.name} mtu {self.plan.mtu}")
                if out.strip():
                    raise NetworkError(f"{intf.node.name}: could not set MTU {self.plan.mtu} on "
                                       f"{intf.name}: {out.strip()}")

    def _start_delay(self) -> None:
        # The topology's scaled latency (topologies.latency): the doors, then the
        # delay line, which attaches the classifiers once it reads the doors.
        if self.plan.latency is None:
            return
        assert self.state is not None
        delays = egress_delays(self.plan, self.plan.latency,
                               {h.name: netns_name(h.name) for h in self.plan.hosts})
        # Recorded before they exist: stop() and `aizone down` delete them (the
        # host namespaces' doors go with their namespace).
        self.state.interfaces += [d.door_in for d in delays if d.netns is None]
        write_state(self.state, self.state_directory)
        for d in delays:
            make_door(d)
        log = self.log_dir / "delayline.log" if self.log_dir else None
        self.delay_line = DelayLine(delays, log=log).start()
        self.state.meta["delay_line_pid"] = self.delay_line.pid

    def _configure_host(self, hp: HostPlan) -> None:
        assert self.net is not None
        host = self.net.get(hp.name)
        for argv in host_commands(hp):
            host.cmd(*argv)
        out = host.cmd(f"ip -4 -o addr show dev {hp.nics[0].intf}")
        if hp.nics[0].ip not in out:
            raise NetworkError(f"{hp.name}: could not set address {hp.nics[0].cidr}: {out.strip()}")

    def stop(self) -> None:
        """Stop every process and delete every interface of this run (idempotent)."""
        net, self.net = self.net, None
        try:
            if net is not None:
                # Switch processes first: they should not watch their ports vanish.
                stop_switch_processes(sw for sw in net.switches if isinstance(sw, FabricSwitch))
                try:
                    net.stop()
                except Exception:  # noqa: BLE001 - keep tearing down whatever is left
                    for sw in net.switches:
                        if isinstance(sw, FabricSwitch):
                            sw.stop_process()
                    for node in net.hosts + net.switches:
                        node.terminate()
            if self.delay_line is not None:
                self.delay_line.stop()
                self.delay_line = None
            # Anything Mininet missed (an interface made before a failure),
            # then the pinned namespaces and whatever still runs in them.
            if self.state is not None:
                present = set(root_links())
                for name in self.state.interfaces:
                    if name in present:
                        subprocess.run(["ip", "link", "del", name], capture_output=True)
                remove_netns(self.state.netns)
                remove_control_files(self.state_directory or state_dir())
        finally:
            if self._saved_env is None:
                os.environ.pop(RUN_ENV, None)
            else:
                os.environ[RUN_ENV] = self._saved_env
            self._saved_env = None
            if self.state is not None:
                clear_state(self.state_directory)
                self.state = None

    def __enter__(self) -> FabricNet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- access ------------------------------------------------------------

    def host(self, name: str) -> Host:
        """The running Mininet host `name` (NetworkError when the network is down)."""
        if self.net is None:
            raise NetworkError("the network is not running")
        return self.net.get(name)

    def switch(self, name: str) -> FabricSwitch:
        """The running switch node `name` (NetworkError when the network is down)."""
        if self.net is None:
            raise NetworkError("the network is not running")
        return self.net.get(name)

    def fabric_switches(self) -> list[FabricSwitch]:
        """The switch nodes, in plan order."""
        if self.net is None:
            raise NetworkError("the network is not running")
        return [sw for sw in self.net.switches if isinstance(sw, FabricSwitch)]


def _netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None
