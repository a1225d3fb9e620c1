"""One fabric across several servers, on Mininet's cluster mode (`mininet.examples.cluster`).

`ClusterNet(plan, placement, switch=P4SwitchNode, ...)` is a `FabricNet`
whose Mininet is Mininet's own `MininetCluster`: every node is placed on
the server `placement` (`topologies.serverplacement.ServerPlacement`)
names, hosts are Mininet `RemoteHost`s (their shells are `mnexec` run
through ssh on their server), switches are the target's node class mixed
with Mininet's `RemoteMixin`, and a link between nodes of two servers is
Mininet's `RemoteGRELink` (a gretap pair between the servers' addresses),
shaped by tc as a local link is (`ClusterLink`). The first server is this
machine ("localhost"): the controller runs here and talks P4Runtime to
every switch.

A switch on another server listens on that server's loopback, as on one
machine, and is started through an ssh session that also forwards its
control ports to the same ports here (`ssh -L`): the controller's P4Runtime
(mutual TLS) crosses machines inside ssh, never in plaintext, the switch's
control ports are reachable on its server by root alone, and ending the
session (SIGTERM to the local ssh) hangs up the switch (its pty closes).
p4switch's control socket is forwarded to `<name>.fwd.ctl` here. The
fabric's CA files are copied to each server over ssh before its first
switch starts.

ssh reads the config file `$AIZONE_SSH_CONFIG` when set (`ssh -F`), else
the user's own; every session is batch mode (never a password prompt).
`check_servers(servers, target)` is the preflight: each server reachable
over ssh as root, the same aizone version at the same interpreter path,
Mininet's `mnexec` and the target's tools present, and its wall clock
within `MAX_CLOCK_OFFSET_S` of this machine's; a `ClusterError` names the
server and what is wrong. The clocks matter to two figures: a job's ranks
start together at one UNIX time (`traffic.schema.Job.start_at`, set 1 s
ahead so every QP exists before data arrives), and a collective's span is
the latest end minus the earliest start across hosts. A rank's own time,
and so `time_s` and the bandwidths, is read on its own monotonic clock and
needs none of this. The offsets are kept in the run's metadata
(`clock_offsets`) and shown by `aizone status`.

`ClusterNet.stop()` stops the network as `FabricNet.stop()` does, then, on
every other server, ends any process still marked with the run's token and
deletes our interfaces left there (`end_run`, run through ssh:
`end_run_on`). `cleanup_servers(state)` does the same from a run's
run.json when its daemon died, for `aizone down`; `cleanup_orphans(servers)`
when run.json is gone too (the controller's machine crashed and lost
/run): on each server, `runstate.cleanup` by aizone's names and marker,
which refuses, naming it, where that server runs a fabric of its own.

Names defined here: `ClusterNet`, `ClusterLink`, `ClusterError`,
`MAX_CLOCK_OFFSET_S`, `check_servers`, `clock_too_far`, `cleanup_servers`,
`cleanup_orphans`, `end_run_on`, `cluster_switch_class`, `end_run`, `ssh_base`,
`SSH_CONFIG_ENV`, `LOCAL`.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mininet.examples.cluster import MininetCluster, Placer, RemoteGRELink, RemoteHost, RemoteMixin
from mininet.link import TCIntf, TCLink
from mininet.net import Mininet
from mininet.node import Host

from .addressing import AddressPlan
from .firewall import release
from .net import FabricNet, FabricTopo
from .nodes import FabricSwitch
from .runstate import OUR_INTF, RunState, netns_name, pin_netns, run_pids
from .serverplacement import ServerPlacement
from .sshcmd import (
    SSH_CONFIG_ENV,
    ClockReading,
    ClusterError,
    clock_offset,
    last_error,
    quote,
    ssh_base,
    ssh_python,
    ssh_run,
    wait_remote_ready,
)
from .switchproc import RUN_ENV, SwitchRecord, launch
from .targets import target_missing

__all__ = ["LOCAL", "SSH_CONFIG_ENV", "ClusterError", "ClusterLink", "ClusterNet",
           "MAX_CLOCK_OFFSET_S", "check_servers", "cleanup_orphans", "cleanup_servers",
           "clock_too_far", "cluster_switch_class",
           "end_run", "end_run_on", "ssh_base"]

# Mininet's name for this machine: the first server of a placement, whatever its name.
LOCAL = "localhost"


# --- preflight -----------------------------------------------------------------------

# How far (s) another server's wall clock may be from this machine's: a tenth of the
# 1-s lead a job's start barrier gives its ranks (controller.jobs), so a rank that
# starts late by the offset still finds every QP made.
MAX_CLOCK_OFFSET_S = 0.1

_PROBE = (
    "import importlib.metadata as m, shutil, sys\n"
    "print(m.version('aizone'))\n"
    "print(','.join(t for t in sys.argv[1:] if shutil.which(t) is None))\n"
)


def check_servers(servers: tuple[str, ...], target: str) -> dict[str, ClockReading]:
    """`ClusterError` naming the first of `servers` (other machines) that cannot run its part
    of a `target` fabric; else each one's clock against this machine's. The servers are
    checked side by side (each check waits on its own ssh sessions)."""
    with ThreadPoolExecutor(max_workers=max(1, min(len(servers), 8))) as pool:
        checks = [pool.submit(_check_server, server, target) for server in servers]
        return {server: check.result() for server, check in zip(servers, checks, strict=True)}


def _check_server(server: str, target: str) -> ClockReading:
    """`check_servers` for one server: its clock reading, or the `ClusterError` naming it."""
    version = importlib.metadata.version("aizone")
    tools = ("mnexec", "nft", *_target_tools(target))
    out = ssh_python(server, _PROBE, *tools)
    text = out.stdout.decode(errors="replace").splitlines()
    if out.returncode != 0 or not text:
        err = out.stderr.decode(errors="replace").strip().splitlines()
        raise ClusterError(f"server {server}: cannot run {sys.executable} with aizone "
                           f"installed ({err[-1] if err else f'exit {out.returncode}'}): "
                           f"install aizone there at the same path")
    if text[0].strip() != version:
        raise ClusterError(f"server {server}: aizone {text[0].strip()} is installed, this "
                           f"machine runs {version}: install the same version everywhere")
    missing = text[1].strip() if len(text) > 1 else ""
    if missing:
        raise ClusterError(f"server {server}: {missing.replace(',', ', ')} not on PATH "
                           f"(needed for target {target})")
    clock = clock_offset(server)
    why = clock_too_far(server, clock)
    if why:
        raise ClusterError(f"{why} and try again")
    return clock


def clock_too_far(server: str, clock: ClockReading) -> str:
    """Why `server`'s clock reading is too far from this machine's for a job over both ("" when
    it is within `MAX_CLOCK_OFFSET_S`, beyond the reading's own uncertainty)."""
    if abs(clock.offset_s) - clock.uncertainty_s <= MAX_CLOCK_OFFSET_S:
        return ""
    return (f"server {server}: its clock is {clock.offset_s:+.3f} s from this machine's "
            f"(+-{clock.uncertainty_s:.3f} s), more than {MAX_CLOCK_OFFSET_S} s: a job's "
            f"ranks start together at one wall-clock time; synchronise the servers' "
            f"clocks (chrony or systemd-timesyncd)")


def _target_tools(target: str) -> tuple[str, ...]:
    """The tools a target's switch needs on its server (BMv2's switch and CLI)."""
    return ("simple_switch_grpc", "simple_switch_CLI") if target == "bmv2" else ()


# --- nodes --------------------------------------------------------------------------


class _ClusterHost(RemoteHost):
    """A Mininet `RemoteHost` whose ssh sessions use `ssh_base()` (our config, batch mode)."""

    def __init__(self, name: str, **params: Any) -> None:
        self.sshbase = [*ssh_base(), "-q", "-tt"]
        super().__init__(name, user="root", **params)


class _ClusterSwitchMixin(RemoteMixin):
    """A target's switch node on a server: started through ssh with its ports forwarded here."""

    # (run token, server, PKI folder, control folder) made ready there (`_prepare_server`).
    _prepared: set[tuple[str, str, str | None, str | None]] = set()

    def __init__(self, name: str, **params: Any) -> None:
        self.sshbase = [*ssh_base(), "-q", "-tt"]
        super().__init__(name, user="root", **params)

    def _forward_ctl(self) -> str | None:
        """The local end of the forwarded p4switch control socket (None: not remote)."""
        address = self.ctl_addr()
        if not self.isRemote or not address or not address.startswith("unix:"):
            return None
        return str(address).removesuffix(".ctl") + ".fwd.ctl"

    def command(self) -> list[str]:
        """The target's argv, run through ssh on the switch's server when it is remote."""
        inner: list[str] = super().command()
        if not self.isRemote:
            return inner
        cmd = [*ssh_base(), "-tt", "-o", "ExitOnForwardFailure=yes",
               "-o", "StreamLocalBindUnlink=yes",
               "-L", f"127.0.0.1:{self.grpc_port}:127.0.0.1:{self.grpc_port}"]
        thrift = self.thrift_port
        if thrift is not None and "thrift" in self.extra_ports:
            cmd += ["-L", f"127.0.0.1:{thrift}:127.0.0.1:{thrift}"]
        local_ctl = self._forward_ctl()
        if local_ctl is not None:
            remote = str(self.ctl_addr()).removeprefix("unix:")
            cmd += ["-L", f"{local_ctl.removeprefix('unix:')}:{remote}"]
        token = self.run_token
        return [*cmd, f"root@{self.serverIP}", "env", f"{RUN_ENV}={token}",
                quote(f"PATH={os.environ.get('PATH', '')}"), "PYTHONUNBUFFERED=1",
                *(quote(a) for a in inner)]

    def record(self) -> SwitchRecord:
        """What run.json keeps; a remote p4switch's control API is its forwarded socket."""
        fresh = self._record is None
        record: SwitchRecord = super().record()
        local_ctl = self._forward_ctl()
        if fresh and local_ctl is not None:
            record.ctl_addr = local_ctl
        return record

    def start(self, controllers: list[Any]) -> None:
        """Launch the switch; on another server through ssh (`wait_started` waits for it
        through its forward)."""
        if not self.isRemote:
            super().start(controllers)
            return
        self._prepare_server()
        for _port, name in self.port_intfs():
            self.cmd(f"sysctl -qw net.ipv6.conf.{name}.disable_ipv6=1")
            self.cmd(f"ethtool -K {name} tx off rx off sg off tso off gso off gro off "
                     f">/dev/null 2>&1")
            self.cmd(f"ip link set {name} up")
        log = getattr(self, "log_path", None)
        if log is not None and log.exists():
            log.unlink()
        self.proc = launch(self.record())

    def wait_started(self) -> None:
        """As a local switch's; on another server, through ssh and its forward."""
        if not self.isRemote:
            super().wait_started()
            return
        assert self.proc is not None, f"{self.name}: wait_started before start"
        wait_remote_ready(self.record(), self.proc, self.serverIP, ports=len(self.port_intfs()),
                          reads_outgoing=self.reads_outgoing, timeout=self.start_timeout)

    def _prepare_server(self) -> None:
        """The switches' control folder and the fabric's PKI files on this switch's server,
        once per server and in one ssh session (not one per file)."""
        tls_dir = getattr(self, "tls_dir", None)
        control_dir = getattr(self, "control_dir", None)
        control = str(control_dir) if control_dir is not None else None
        done = (self.run_token, self.serverIP, tls_dir, control)
        if done in self._prepared:
            return
        # The bytes are read here first, so a server sharing this filesystem (the tests'
        # namespaces) gets the same bytes back: each file is written beside its place and
        # renamed over it, never left truncated.
        files = {p.name: base64.b64encode(p.read_bytes()).decode()
                 for p in sorted(Path(tls_dir).iterdir()) if p.is_file()} if tls_dir else {}
        spec = {"control": control, "tls": tls_dir, "files": files}
        out = ssh_python(self.serverIP, _PREPARE, stdin=json.dumps(spec).encode())
        if out.returncode != 0:
            raise ClusterError(f"server {self.server}: cannot make the switches' control folder "
                               f"{control} or copy the fabric's PKI to {tls_dir}: "
                               f"{last_error(out)}")
        self._prepared.add(done)


# Run on a switch's server by `_prepare_server`: the spec (JSON on stdin) names the control
# folder (made 0700), the PKI folder and its files (base64), each written to a temporary
# file there (0600) and renamed over its name.
_PREPARE = """\
import base64, json, os, sys, tempfile
spec = json.load(sys.stdin)
os.umask(0o077)
if spec["control"]:
    os.makedirs(spec["control"], mode=0o700, exist_ok=True)
if spec["tls"]:
    os.makedirs(spec["tls"], exist_ok=True)
    for name, data in spec["files"].items():
        if os.path.basename(name) != name:
            sys.exit(f"not a file name: {name!r}")
        fd, tmp = tempfile.mkstemp(dir=spec["tls"], prefix=".copy-")
        with os.fdopen(fd, "wb") as f:
            f.write(base64.b64decode(data))
        os.replace(tmp, os.path.join(spec["tls"], name))
"""


_SWITCH_CLASSES: dict[str, type[FabricSwitch]] = {}


def cluster_switch_class(base: type[FabricSwitch]) -> type[FabricSwitch]:
    """`base` (a target's switch node) placeable on any server of a cluster fabric."""
    if base.target not in _SWITCH_CLASSES:
        _SWITCH_CLASSES[base.target] = type(f"Cluster{base.__name__}",
                                            (_ClusterSwitchMixin, base), {})
    return _SWITCH_CLASSES[base.target]


# The MTU of the VXLAN devices that carry a link between two servers at the default
# link MTU: 50 bytes of a 1,500-byte underlay go to the tunnel; the
# fabric's RoCE frames (1,082 bytes at the default MTU) fit. A fabric of larger `mtu` gives
# its tunnels that MTU too (`topologies.net`): the servers' network then carries each
# jumbo frame's VXLAN packet in IP fragments unless its own MTU is larger.
CLUSTER_MTU = 1450


class ClusterLink(RemoteGRELink, TCLink):
    """A tc-shaped link: a veth pair on one server, a VXLAN pair between two.

    Mininet's `RemoteGRELink` with its tunnel made of VXLAN devices instead of
    gretap ones (GRE is a kernel module many machines, this one included, do
    not have; VXLAN is in every kernel Mininet runs on): one VNI per link,
    the device made on the node's server and moved into the node, MTU 1450
    (50 bytes of VXLAN, UDP, IP and Ethernet headers inside a 1500-byte path)
    as Mininet sets for GRE, or the fabric's larger link MTU (`CLUSTER_MTU`).
    """

    VXLAN_PORT = 4789
    _vni = 0

    def __init__(self, node1: Any, node2: Any, port1: int | None = None,
                 port2: int | None = None, intfName1: str | None = None,  # noqa: N803
                 intfName2: str | None = None, addr1: str | None = None,  # noqa: N803
                 addr2: str | None = None, params1: dict[str, Any] | None = None,
                 params2: dict[str, Any] | None = None, **params: Any) -> None:
        RemoteGRELink.__init__(self, node1, node2, port1=port1, port2=port2,
                               intfName1=intfName1, intfName2=intfName2, cls1=TCIntf,
                               cls2=TCIntf, addr1=addr1, addr2=addr2,
                               params1={**params, **(params1 or {})},
                               params2={**params, **(params2 or {})})

    def makeTunnel(self, node1: Any, node2: Any, intfname1: str, intfname2: str,  # noqa: N802
                   addr1: str | None = None, addr2: str | None = None) -> None:
        """A VXLAN device at each end, between the two servers' addresses."""
        ClusterLink._vni += 1
        vni = ClusterLink._vni
        ends = ((node1, intfname1, addr1, node2), (node2, intfname2, addr2, node1))
        for node, name, addr, peer in ends:
            # One shell on the node's server (one ssh session when it is another one) makes
            # the device and moves it into the node, as Mininet's moveIntf would in another.
            steps = [f"ip link add name {name} type vxlan id {vni} local {node.serverIP} "
                     f"remote {peer.serverIP} dstport {self.VXLAN_PORT}"]
            if addr:
                steps.append(f"ip link set {name} address {addr}")
            steps.append(f"ip link set dev {name} mtu {CLUSTER_MTU} up")
            steps.append(f"ip link set {name} netns {int(node.pid)}")
            script = f"ip link delete {name} 2>/dev/null; " + " && ".join(steps)
            made = node.rcmd(["sh", "-c", quote(script) if node.isRemote else script])
            if made.strip():
                raise ClusterError(f"server {node.server}: cannot make the VXLAN device {name} "
                                   f"of {node.name}: {made.strip()}")


class _ClusterMininet(MininetCluster):
    """MininetCluster with placement from the topology and no files under ~/.ssh.

    MininetCluster's own setup checks servers with plain `ssh` and makes
    ~/.ssh/mn for shared connections it does not use here; this one keeps its
    attributes and leaves both out (`check_servers` is the preflight).
    """

    def __init__(self, *, servers: list[str], **params: Any) -> None:
        self.servers = servers
        self.serverIP = {s: self._address(s, servers) for s in servers}
        self.user = "root"
        self.connections: dict[Any, Any] = {}
        self.placement = Placer
        Mininet.__init__(self, **params)

    @classmethod
    def _address(cls, server: str, servers: list[str]) -> str:
        """A server's IPv4 address (GRE tunnels run between addresses)."""
        if server == LOCAL:
            return cls._local_ip(servers)
        address = RemoteMixin.findServerIP(server)
        if not address:
            raise ClusterError(f"server {server}: no IPv4 address for this name "
                               f"(give its address, or a name getent ahostsv4 resolves)")
        return str(address)

    @staticmethod
    def _local_ip(servers: list[str]) -> str:
        """This machine's address towards the other servers (what GRE tunnels start from)."""
        for server in servers:
            if server != LOCAL:
                out = subprocess.run(["ip", "route", "get", server], capture_output=True,
                                     text=True).stdout
                if " src " in out:
                    return out.split(" src ")[1].split()[0]
        return "127.0.0.1"


class _ClusterTopo(FabricTopo):
    """The fabric's topology with each node's server (Mininet's `server` node option)."""

    def build(self, plan: AddressPlan, switch_opts: dict[str, dict[str, Any]] | None = None,
              shaped: bool = False, paced_frame: int | None = None,
              placement: ServerPlacement | None = None) -> None:
        """The plan's nodes and links (`FabricTopo.build`), each node on its server."""
        super().build(plan, switch_opts, shaped, paced_frame)
        assert placement is not None
        for node in self.nodes():
            self.nodeInfo(node)["server"] = _mn_server(placement, node)


def _mn_server(placement: ServerPlacement, node: str) -> str:
    """Mininet's server for `node`: LOCAL for the first server (this machine), else its name."""
    server = placement.server_of(node)
    return LOCAL if server == placement.servers[0] else server


class ClusterNet(FabricNet):
    """A `FabricNet` spread over `placement`'s servers by Mininet's cluster mode."""

    def __init__(self, plan: AddressPlan, placement: ServerPlacement, *,
                 switch: type[FabricSwitch], **kw: Any) -> None:
        super().__init__(plan, switch=cluster_switch_class(switch), link=ClusterLink, **kw)
        self.placement = placement
        self.target = switch.target
        self.meta["servers"] = list(placement.servers)
        self.meta["placement"] = dict(placement.nodes)

    def preflight(self) -> None:
        """`FabricNet`'s checks here, then every other server's (`check_servers`)."""
        super().preflight()
        if self.plan.latency is not None:
            raise ClusterError("latency: scaled latency runs on one machine only (its delay "
                               "line serves every switch port from this machine): remove the "
                               "topology's latency section, or run without --servers")
        if shutil.which("ssh") is None:
            raise ClusterError("ssh is not installed here (Debian: openssh-client)")
        clocks = check_servers(self.placement.servers[1:], self.target)
        self.meta["clock_offsets"] = {server: round(c.offset_s, 4) for server, c in clocks.items()}
        missing = target_missing(self.target)
        if missing:
            raise ClusterError(f"server {LOCAL}: {', '.join(missing)} not on PATH")

    def make_topo(self, opts: dict[str, dict[str, Any]]) -> FabricTopo:
        """The topology with every node's server."""
        return _ClusterTopo(self.plan, opts, self.shaped, self.paced_frame,
                            placement=self.placement)

    def make_mininet(self, topo: FabricTopo) -> Mininet:
        """Mininet's cluster mode over the placement's servers."""
        return _ClusterMininet(servers=[LOCAL, *self.placement.servers[1:]], topo=topo,
                               switch=self.switch_cls, host=_ClusterHost, link=self.link_cls,
                               controller=None, build=False, autoSetMacs=False)

    def confine_control(self, ports: list[int]) -> None:
        """The control ports confined to root here and on every other server (each server's
        own nftables table: a switch there listens there, BMv2's Thrift on every address)."""
        super().confine_control(ports)
        code = "import sys; from topologies.firewall import confine; confine(sys.argv[1:])"
        for server in self.placement.servers[1:]:
            out = ssh_python(server, code, *ports)
            if out.returncode != 0:
                raise ClusterError(f"server {server}: cannot confine the switches' control "
                                   f"ports: {last_error(out)}")

    def pin_hosts(self, hosts: list[Host]) -> None:
        """Pin each host's namespace on its own server (`ip netns attach` there): one ssh
        session per other server."""
        there: dict[str, list[Host]] = {}
        for host in hosts:
            server = _mn_server(self.placement, host.name)
            if server == LOCAL:
                pin_netns(netns_name(host.name), host.pid)
            else:
                there.setdefault(server, []).append(host)
        for server, remote in there.items():
            # A failed pin ends the script with one line naming the host, its pid and ip's
            # own error.
            script = "\n".join(
                f"err=$(ip netns attach {netns_name(h.name)} {int(h.pid)} 2>&1) || "
                f"{{ echo {quote(f'{h.name} (pid {int(h.pid)}): ')}\"$err\" >&2; exit 1; }}"
                for h in remote)
            out = ssh_run(server, script)
            if out.returncode != 0:
                raise ClusterError(f"server {server}: cannot pin a host's namespace as "
                                   f"aizone-<host>: {last_error(out)}")

    def stop(self) -> None:
        """`FabricNet.stop()`, then what is left of the run on every other server."""
        token = self.token
        state: RunState | None = self.state
        netns = list(state.netns) if state is not None else []
        try:
            super().stop()
        finally:
            for server in self.placement.servers[1:]:
                with contextlib.suppress(ClusterError):
                    end_run_on(server, token, netns)


def end_run_on(server: str, token: str, netns: list[str]) -> None:
    """`end_run(token, netns)` on `server`, over ssh; `ClusterError` when it cannot be run."""
    out = ssh_python(server, "import sys; from topologies.cluster import end_run; "
                     "end_run(sys.argv[1], sys.argv[2:])", token, *netns, timeout=120)
    if out.returncode != 0:
        raise ClusterError(f"server {server}: cannot end the run there: {last_error(out)}")


def cleanup_servers(state: RunState) -> dict[str, str]:
    """What a run recorded in `state` left on its other servers, ended (`aizone down` after
    the daemon died, when nothing of it stopped them): server -> "" when done, else why not."""
    servers = list(state.meta.get("servers") or [])
    return _on_each(servers[1:], lambda s: end_run_on(s, state.token, list(state.netns)))


def cleanup_orphans(servers: list[str]) -> dict[str, str]:
    """Every leftover of a run on each of `servers` whose record is gone with the machine that
    ran its controller (`aizone down --servers`): on each, `runstate.cleanup` by aizone's
    names and marker, which refuses, naming it, where a fabric of that server's own runs:
    server -> "" when done, else why not."""
    def clean(server: str) -> None:
        out = ssh_python(server, "from topologies.runstate import cleanup; "
                         "cleanup(stop_running=False)", timeout=120)
        if out.returncode != 0:
            raise ClusterError(f"server {server}: cannot clean up there: {last_error(out)}")

    return _on_each(servers, clean)


def _on_each(servers: list[str], act: Callable[[str], None]) -> dict[str, str]:
    """`act(server)` on every server, whatever the others do: server -> "" when done, else
    the `ClusterError` that says why not."""
    out: dict[str, str] = {}
    for server in servers:
        try:
            act(server)
            out[server] = ""
        except ClusterError as exc:
            out[server] = str(exc)
    return out


def end_run(token: str, netns: list[str]) -> None:
    """On a server: end processes marked with run `token`, unpin `netns`, delete our links
    and the control ports' firewall table."""
    for pid in run_pids(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for name in netns:
        if Path("/run/netns", name).exists():
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            name = parts[1].strip().split("@")[0]
            if OUR_INTF.match(name):
                subprocess.run(["ip", "link", "del", name], capture_output=True)
    release()
