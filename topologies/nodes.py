"""Mininet switch nodes that run a P4Runtime switch process, one class per target.

Both targets take simple_switch_grpc's flags, so one base class builds the
command line and manages the process; subclasses say which program to run
and hold, in one place per target, how the switch's port settings
(`topologies.ports`: priority queues, port rate, queue depth, PFC) reach it:

- `P4SwitchNode`: the built-in target, `python -m p4switch` from this
  interpreter's environment. At start: `--priority-queues N`, per port
  `--port-speed PORT=GBPS` (fractional: 10 Mb/s is `0.01`), `--queue-depth
  PORT=PKTS` and `--ctl-addr` (its control API); with the topology's
  `buffer.accounting: bytes`, `--buffer-unit bytes`, the depth in bytes
  and `--shared-buffer BYTES[:ALPHA]` for its pool. These apply to every
  pipeline the controller pushes. Its PFC is p4switch's native 802.1Qbb
  traffic manager by default (`native_pfc=True`: `--pfc PORT=PRIOS` for the
  lossless classes, and after each pipeline commit `configure` sets their
  XOFF/XON, and in bytes their headroom, through the control API,
  `set_pfc`), or, with `native_pfc=False`,
  the programs' own (`p4/include/control/pfc.p4`, set by the controller over
  P4Runtime) as on BMv2: no `--pfc`, so PFC frames reach the program.
- `Bmv2SwitchNode`: BMv2's `simple_switch_grpc`. At start: `--thrift-port`
  and, after `--`, `--priority-queues N`. After a pipeline is committed,
  `configure` sets per port `set_queue_depth PKTS PORT` and `set_queue_rate
  PPS PORT` through `simple_switch_CLI --thrift-port N` (it needs a loaded
  program). BMv2 rates are in packets/s per priority queue: the tier rate
  in the lossless class's RoCE frames, rate / (8 x 1,082 bytes) rounded up
  (`PortSettings.frame`: 1,082 bytes at the default MTU, 4,154 with jumbo links;
  `ports.frames_per_second`), so a queue of RoCE WRITE
  packets leaves at the link's rate (less than a frame a second above it,
  and the switch's side of the cable is shaped 5 % above that pace:
  `packet_queues`, `topologies.net`), and the queue, not the link's tc
  shaper, is the bottleneck. A smaller packet would take a RoCE frame's
  slot, so the controller sends RC ACKs to a lane of their own, the highest
  queue (`controller.qos.ack_lane`; CNPs are in the control class already);
  a bigger one (a 1,514-B frame of another class) leaves at up to 1.4x the
  rate into the shaper, and several busy classes of one port can together
  exceed the rate (the shaper caps it then). A BMv2 fabric runs the
  programs' PFC (docs/bmv2.md, "PFC on BMv2"): on a port with PFC its
  lossless queues and its lowest queue, where the program holds paused
  packets, are `ports.HOLD_QUEUE_PACKETS` long (PFC headroom).

A switch lives in the root network namespace (like Mininet's kernel
switches); its ports are the root-side ends of the Mininet veth pairs, named
`<switch>-eth<port>`. The process is started in its own session so that a
Ctrl-C in the terminal reaches the runner, which then stops the switches in
order, instead of killing them behind its back. `start` launches the
process; Mininet's `batchStartup` hook, once every switch of a class is
launched, waits until each one's gRPC port accepts connections
(`wait_started`), so the switches start side by side; and `stop` always ends
the process (SIGTERM, then SIGKILL); `stop_switch_processes` ends several
switches' processes together, so their servers' grace periods overlap.

`record()` is what `run.json` keeps of a switch (`topologies.switchproc.SwitchRecord`:
the exact command line, its port settings, gRPC/Thrift/ctl ports, log, pid), so that
`topologies.attach` can restart it identically and re-apply its settings
without the Mininet objects (`switchproc.launch` and `wait_ready`, and the
classmethods `configure` and `tm_stats`, which take a record). Every
process started here carries `switchproc.RUN_ENV`. The targets' names and
the `--pfc` choice are in `topologies.targets`, which the `aizone` command
reads without importing Mininet.

Names defined here: `FabricSwitch`, `P4SwitchNode`, `Bmv2SwitchNode`,
`SWITCH_CLASSES`, `stop_switch_processes`, `uses_native_pfc`.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from mininet.node import Switch

from p4switch.ctl import CtlError
from p4switch.ctl import request as ctl_request

from .errors import NetworkError
from .ports import DRAIN_SPEEDUP, HOLD_QUEUE_PACKETS, SwitchSettings, frames_per_second
from .switchproc import SwitchRecord, launch, port_open, wait_ready
from .targets import Pfc

__all__ = [
    "SWITCH_CLASSES",
    "Bmv2SwitchNode",
    "FabricSwitch",
    "P4SwitchNode",
    "stop_switch_processes",
    "uses_native_pfc",
]


class FabricSwitch(Switch):
    """A P4Runtime switch process in the root namespace, driven by simple_switch_grpc flags."""

    target: ClassVar[str] = ""
    # Seconds to wait for the gRPC port; a pure-Python target imports a lot.
    start_timeout: ClassVar[float] = 60.0
    # Ports the process listens on besides gRPC ("thrift", "ctl"): checked free at start.
    extra_ports: ClassVar[tuple[str, ...]] = ()
    # PFC in the target's traffic manager by default (p4switch's native 802.1Qbb), else the
    # programs' own (p4/include/control/pfc.p4, which the controller then configures).
    native_pfc_default: ClassVar[bool] = False
    # Whether the target has PFC of its own at all (`Pfc.NATIVE` is refused where not).
    native_pfc_available: ClassVar[bool] = False
    # How a link to this target is taken down: "carrier" sets both interfaces
    # down (Mininet's link control), "blackhole" keeps them up and drops
    # everything either end sends (see FabricRuntime.set_link).
    link_down: ClassVar[str] = "carrier"
    # Whether the target's queue rates count packets, not bytes (BMv2's set_queue_rate):
    # the controller then gives RC ACKs a lane of their own (`controller.qos.ack_lane`)
    # and `topologies.net` shapes the switch's side of each cable 5 % above the queue's pace
    # in packets (`ports.switch_end_mbps`), as it does above a byte-paced port's rate.
    packet_queues: ClassVar[bool] = False
    # Whether the target's port sockets also read frames other processes send out of its
    # ports (BMv2's libpcap, both directions): `wait_ready` then makes them read only what
    # arrives (`topologies.portsockets`), or the delay line's sends come back in.
    reads_outgoing: ClassVar[bool] = False

    def __init__(
        self,
        name: str,
        *,
        device_id: int,
        grpc_port: int,
        cpu_port: int = 255,
        thrift_port: int | None = None,
        ctl_port: int | None = None,
        role: str = "",
        settings: SwitchSettings | None = None,
        json_path: str | None = None,
        log_dir: str | None = None,
        log_console: bool = False,
        run_token: str = "",
        tls_dir: str | None = None,
        control_dir: str | None = None,
        native_pfc: bool | None = None,
        **params: Any,
    ) -> None:
        params.setdefault("inNamespace", False)
        super().__init__(name, **params)
        self.device_id = device_id
        self.grpc_port = grpc_port
        self.cpu_port = cpu_port
        self.thrift_port = thrift_port
        self.ctl_port = ctl_port
        self.role = role
        self.settings = settings
        self.json_path = json_path
        self.log_dir = Path(log_dir) if log_dir else None
        self.log_console = log_console
        self.run_token = run_token
        # P4Runtime over mutual TLS with the fabric's CA (None: plaintext, for a switch
        # a test starts on its own); where the switch's local sockets go (0700).
        self.tls_dir = tls_dir
        self.native_pfc = self.native_pfc_default if native_pfc is None else native_pfc
        self.control_dir = Path(control_dir) if control_dir else None
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = self.log_dir / f"{name}.log" if self.log_dir else None
        self._record: SwitchRecord | None = None

    # --- what subclasses define ------------------------------------------

    def command(self) -> list[str]:
        """The argv that starts the switch process (each target defines it)."""
        raise NotImplementedError

    @classmethod
    def configure(cls, record: SwitchRecord) -> None:
        """Apply the run-time part of the port settings; call after each pipeline commit."""

    @classmethod
    def tm_stats(cls, record: SwitchRecord) -> dict[str, Any] | None:
        """Queue counters per "port/priority", when the target reports them (else None)."""
        return None

    # --- shared -----------------------------------------------------------

    @property
    def grpc_addr(self) -> str:
        """The switch's P4Runtime address, "127.0.0.1:<grpc_port>"."""
        return f"127.0.0.1:{self.grpc_port}"

    def port_intfs(self) -> list[tuple[int, str]]:
        """(port, interface) for each data port, by port number."""
        return sorted(
            (port, intf.name)
            for port, intf in self.intfs.items()
            if intf.name != "lo" and port != 0
        )

    def ctl_addr(self) -> str | None:
        """Where p4switch's control API listens: a 0600 Unix socket in the fabric's 0700
        folder when there is one (only root reaches it), else the loopback port."""
        if self.target != "p4switch":
            return None
        if self.control_dir is not None:
            return f"unix:{self.control_dir / self.name}.ctl"
        return f"127.0.0.1:{self.ctl_port}" if self.ctl_port is not None else None

    def tls_args(self) -> list[str]:
        """The TLS flags both targets share, when the fabric has a PKI."""
        if self.tls_dir is None:
            return []
        from .pki import FabricPki

        return FabricPki(directory=Path(self.tls_dir)).server_flags()

    def iface_args(self) -> list[str]:
        """`-i PORT@IFACE` flags for every data port."""
        args: list[str] = []
        for port, name in self.port_intfs():
            args += ["-i", f"{port}@{name}"]
        return args

    def record(self) -> SwitchRecord:
        """What run.json keeps of this switch (the same object across restarts)."""
        if self._record is None:
            self._record = SwitchRecord(
                name=self.name, role=self.role, target=self.target, argv=self.command(),
                grpc_port=self.grpc_port, device_id=self.device_id,
                thrift_port=self.thrift_port, ctl_port=self.ctl_port,
                ctl_addr=self.ctl_addr(),
                log=str(self.log_path) if self.log_path else None,
                settings=self.settings.to_json() if self.settings else {},
                tls_dir=self.tls_dir, native_pfc=self.native_pfc, token=self.run_token)
        return self._record

    def start(self, controllers: list[Any]) -> None:
        """Launch the switch process; `batchStartup` (Mininet calls it once every switch of a
        class is launched, so they start side by side) waits until it serves. Call
        `wait_started` after a `start` of one switch alone."""
        for _port, name in self.port_intfs():
            # No IPv6 autoconf chatter from the root side of our ports, and
            # no checksum offload (a raw socket would read partial checksums).
            self.cmd(f"sysctl -qw net.ipv6.conf.{name}.disable_ipv6=1")
            self.cmd(f"ethtool -K {name} tx off rx off sg off tso off gso off gro off >/dev/null 2>&1")
            self.cmd(f"ip link set {name} up")
        if self.log_path is not None and self.log_path.exists():
            self.log_path.unlink()  # a fresh log per run; restarts append
        self.proc = launch(self.record())

    def wait_started(self) -> None:
        """Return once the launched process's gRPC port accepts connections
        (`SwitchStartError` if it exits or the port stays shut for `start_timeout` s)."""
        assert self.proc is not None, f"{self.name}: wait_started before start"
        wait_ready(self.record(), self.proc, self.start_timeout, reads_outgoing=self.reads_outgoing)

    @classmethod
    def batchStartup(cls, switches: tuple[FabricSwitch, ...]) -> tuple[FabricSwitch, ...]:  # noqa: N802 - Mininet's name
        """Wait for every launched switch of this class (Mininet's hook after `start`)."""
        for sw in switches:
            sw.wait_started()
        return switches

    def connected(self) -> bool:
        """Whether the switch process runs and its gRPC port accepts connections."""
        return self.proc is not None and self.proc.poll() is None and port_open(
            "127.0.0.1", self.grpc_port
        )

    def stop_process(self, timeout: float = 5.0) -> None:
        """End the switch process: SIGTERM, then SIGKILL after `timeout` seconds."""
        stop_switch_processes([self], timeout)

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 - Mininet's name
        """End the switch process, then stop the Mininet node (and its interfaces)."""
        self.stop_process()
        super().stop(deleteIntfs)

    def terminate(self) -> None:
        """End the switch process, then terminate the Mininet node."""
        self.stop_process()
        super().terminate()


class P4SwitchNode(FabricSwitch):
    """The built-in pure-Python v1model target (`python -m p4switch`)."""

    target = "p4switch"
    # Native PFC by default: the programs' PFC holds a paused class by recirculating it,
    # which costs p4switch most of a core per held port (docs/p4switch.md, "PFC").
    native_pfc_default = True
    native_pfc_available = True
    # Its control API is a Unix socket in the fabric's folder (`ctl_addr`): no TCP port.
    extra_ports = ()

    def command(self) -> list[str]:
        """The `python -m p4switch` argv: program, ports, ids, TLS and port settings."""
        cmd = [sys.executable, "-m", "p4switch"]
        cmd += [self.json_path] if self.json_path else ["--no-p4"]
        cmd += self.iface_args()
        cmd += ["--device-id", str(self.device_id), "--grpc-server-addr", self.grpc_addr,
                "--cpu-port", str(self.cpu_port)]
        cmd += self.tls_args()
        cmd += self.settings_args()
        if self.log_console:
            cmd.append("--log-console")
        return cmd

    def settings_args(self) -> list[str]:
        """Priority queues, the buffer's unit and pool, per-port speed, queue depth and PFC
        classes, and the control API."""
        args: list[str] = []
        s = self.settings
        if s is not None:
            args += ["--priority-queues", str(s.queues)]
            in_bytes = s.buffer_unit == "bytes"
            if in_bytes:
                args += ["--buffer-unit", "bytes"]
            if s.shared_bytes:
                pool = str(s.shared_bytes) + (f":{s.alpha:g}" if s.alpha else "")
                args += ["--shared-buffer", pool]
            for p in s.ports:
                depth = p.queue_bytes if in_bytes else p.queue
                args += ["--port-speed", f"{p.port}={p.gbps}", "--queue-depth", f"{p.port}={depth}"]
                if p.pfc and self.native_pfc:
                    args += ["--pfc", f"{p.port}={','.join(map(str, p.pfc))}"]
        address = self.ctl_addr()
        if address is not None:
            args += ["--ctl-addr", address]
        return args

    @classmethod
    def configure(cls, record: SwitchRecord) -> None:
        """Native PFC only: XOFF/XON of every PFC port through the control API (after a commit);
        with a buffer counted in bytes, in bytes and with the port's headroom."""
        if record.ctl_addr is None or not record.settings or not record.native_pfc:
            return
        settings = record.switch_settings
        for p in settings.ports:
            if not p.pfc:
                continue
            req: dict[str, Any] = {"cmd": "set_pfc", "port": p.port, "priorities": list(p.pfc),
                                   "xoff": p.xoff, "xon": p.xon}
            if settings.buffer_unit == "bytes":
                req.update(xoff=p.xoff_bytes, xon=p.xon_bytes, headroom=p.headroom_bytes)
            _ctl(record, req)

    @classmethod
    def tm_stats(cls, record: SwitchRecord) -> dict[str, Any] | None:
        """p4switch's traffic manager counters, "port/priority" -> {depth, max_depth, ...}."""
        if record.ctl_addr is None:
            return None
        try:
            reply = _ctl(record, {"cmd": "tm"})
        except NetworkError:
            return None  # no pipeline yet, or the switch is restarting
        queues: dict[str, Any] = reply.get("tm", {}).get("queues", {})
        return queues


def _ctl(record: SwitchRecord, req: dict[str, Any]) -> dict[str, Any]:
    """One request to p4switch's control API (`p4switch.ctl.request`); NetworkError on failure."""
    try:
        reply = ctl_request(str(record.ctl_addr), req)
    except (OSError, ValueError, CtlError) as exc:
        raise NetworkError(f"{record.name}: p4switch control API {record.ctl_addr}: "
                           f"{exc}") from None
    if not reply.get("ok"):
        raise NetworkError(f"{record.name}: {req['cmd']} refused: {reply.get('error')}")
    return reply


class Bmv2SwitchNode(FabricSwitch):
    """BMv2 `simple_switch_grpc`; target options go after `--` as it requires."""

    target = "bmv2"
    start_timeout = 30.0
    extra_ports = ("thrift",)
    # BMv2 1.15.5 stops receiving on every port once one of its interfaces
    # goes down (its one receive loop over all ports stalls; measured: rx
    # counters of the other ports freeze while tx goes on), so a failed link
    # keeps its carrier and drops everything instead.
    link_down = "blackhole"
    packet_queues = True
    reads_outgoing = True
    # simple_switch_CLI imports Thrift and reads the program from the switch.
    cli_timeout: ClassVar[float] = 30.0

    def command(self) -> list[str]:
        """The `simple_switch_grpc` argv: program, ports, ids, Thrift and gRPC ports, TLS."""
        cmd = ["simple_switch_grpc"]
        cmd += [self.json_path] if self.json_path else ["--no-p4"]
        cmd += self.iface_args()
        cmd += ["--device-id", str(self.device_id)]
        if self.thrift_port is not None:
            # Each instance needs its own Thrift port (the default 9090 clashes). BMv2 binds
            # it on every address with no authentication: `topologies.firewall` confines it.
            cmd += ["--thrift-port", str(self.thrift_port)]
        if self.control_dir is not None and _bmv2_takes("--notifications-addr"):
            # Its notifications socket (default: a name under /tmp) in the 0700 folder. A
            # BMv2 built without nanomsg has neither the option nor the socket.
            cmd += ["--notifications-addr", f"ipc://{self.control_dir / self.name}-notify.ipc"]
        if self.log_console:
            cmd.append("--log-console")
        else:
            # BMv2 formats every log message of its level, trace by default, sink or no
            # sink: measured in a fabric, over a fifth of its CPU went to formatting
            # packet traces nobody reads. Warnings and errors only.
            cmd += ["--log-level", "warn"]
        cmd += ["--", "--grpc-server-addr", self.grpc_addr, "--cpu-port", str(self.cpu_port)]
        cmd += self.tls_args()
        if self.settings is not None:
            cmd += ["--priority-queues", str(self.settings.queues)]
        return cmd

    @staticmethod
    def cli_commands(settings: SwitchSettings) -> list[str]:
        """simple_switch_CLI lines for each port's queue depth and rate (all its priority
        queues); on a port with PFC, its lossless queues, its lowest queue (the program's
        hold loop) and its drain lane (`settings.drain`) get `ports.HOLD_QUEUE_PACKETS` of
        PFC headroom, and the drain lane `ports.DRAIN_SPEEDUP` times the port's rate."""
        lines = []
        for p in settings.ports:
            lines.append(f"set_queue_depth {p.queue} {p.port}")
            pps = frames_per_second(p.rate_mbps, p.frame)
            lane = settings.drain if p.pfc else 0
            if p.pfc:
                deep = max(p.queue, HOLD_QUEUE_PACKETS)
                held = {0, lane, *p.pfc}  # lane 0 (none) is the hold loop's queue anyway
                lines += [f"set_queue_depth {deep} {p.port} {q}" for q in sorted(held)]
            lines.append(f"set_queue_rate {pps} {p.port}")
            if lane:
                lines.append(f"set_queue_rate {DRAIN_SPEEDUP * pps} {p.port} {lane}")
        return lines

    @classmethod
    def configure(cls, record: SwitchRecord) -> None:
        """Queue depth and rate per port through the Thrift CLI (needs a loaded program)."""
        if record.thrift_port is None or not record.settings:
            return
        script = "\n".join(cls.cli_commands(record.switch_settings)) + "\n"
        try:
            out = subprocess.run(["simple_switch_CLI", "--thrift-port", str(record.thrift_port)],
                                 input=script, capture_output=True, text=True,
                                 timeout=cls.cli_timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise NetworkError(f"{record.name}: simple_switch_CLI: {exc}") from None
        text = out.stdout + out.stderr
        bad = [ln for ln in text.splitlines() if "Error" in ln or "Invalid" in ln
               or "Could not" in ln]
        if out.returncode != 0 or bad:
            raise NetworkError(f"{record.name}: simple_switch_CLI --thrift-port "
                               f"{record.thrift_port}: {(bad or [text.strip()])[0]}")


@functools.cache
def _bmv2_takes(option: str) -> bool:
    """Does this machine's simple_switch_grpc know `option` (its --help lists it)?"""
    try:
        out = subprocess.run(["simple_switch_grpc", "--help"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in out.stdout + out.stderr


# One node class per target, in `targets.TARGETS`' order (tests/unit/app/test_cli.py checks).
SWITCH_CLASSES: dict[str, type[FabricSwitch]] = {cls.target: cls for cls in (P4SwitchNode, Bmv2SwitchNode)}

def uses_native_pfc(target: str, pfc: Pfc | str | None) -> bool:
    """Whether a fabric on `target` runs the target's native PFC for the choice `pfc` (None:
    the target's default, `FabricSwitch.native_pfc_default`); `NetworkError` for native PFC
    on a target that has none (BMv2) or an unknown choice."""
    cls = SWITCH_CLASSES[target]
    if pfc is None:
        return cls.native_pfc_default
    try:
        choice = Pfc(pfc)
    except ValueError:
        raise NetworkError(f"--pfc {pfc}: unknown PFC choice "
                           f"(choose from {', '.join(p.value for p in Pfc)})") from None
    if choice is Pfc.NATIVE and not cls.native_pfc_available:
        native = ", ".join(n for n, c in SWITCH_CLASSES.items() if c.native_pfc_available)
        raise NetworkError(f"--pfc native: target {target} has no PFC of its own (only "
                           f"{native} has): use --pfc program, the programs' PFC")
    return choice is Pfc.NATIVE


def stop_switch_processes(switches: Iterable[FabricSwitch], timeout: float = 5.0) -> None:
    """End the switches' processes together: SIGTERM to every one first, then SIGKILL to any
    still running `timeout` seconds later (a switch's server gives calls in progress a grace
    period, which the switches then spend at once instead of one after another)."""
    ending: list[subprocess.Popen[bytes]] = []
    for sw in switches:
        proc, sw.proc = sw.proc, None
        if proc is None or proc.poll() is not None:
            continue
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        ending.append(proc)
    deadline = time.monotonic() + timeout
    for proc in ending:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(5)
