"""Mininet switch nodes that run a P4Runtime switch process, one class per target.

Both targets take simple_switch_grpc's flags, so one base class builds the
command line and manages the process; subclasses only say which program to
run and how it spells the target-specific options:

- `P4SwitchNode`: the built-in target, `python -m p4switch` from this
  interpreter's environment.
- `Bmv2SwitchNode`: BMv2's `simple_switch_grpc`, when it is on PATH.

A switch lives in the root network namespace (like Mininet's kernel
switches); its ports are the root-side ends of the Mininet veth pairs, named
`<switch>-eth<port>`. The process is started in its own session so that a
Ctrl-C in the terminal reaches the runner, which then stops the switches in
order, instead of killing them behind its back. The node waits until the
gRPC port accepts connections before `start` returns, and `stop` always ends
the process (SIGTERM, then SIGKILL).

Every process started here carries the environment variable `AIZONE_RUN`,
so `topologies.cleanup` can find leftovers of a crashed run without
matching on process names.

Names defined here: `FabricSwitch`, `P4SwitchNode`, `Bmv2SwitchNode`,
`SWITCH_CLASSES`, `resolve_target`, `target_missing`, `NetworkError`,
`SwitchStartError`, `RUN_ENV`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

from mininet.node import Switch

__all__ = [
    "RUN_ENV",
    "SWITCH_CLASSES",
    "Bmv2SwitchNode",
    "FabricSwitch",
    "NetworkError",
    "P4SwitchNode",
    "SwitchStartError",
    "resolve_target",
    "target_missing",
]

RUN_ENV = "AIZONE_RUN"


class NetworkError(Exception):
    """The emulated network cannot be built, run or torn down as asked."""


class SwitchStartError(NetworkError):
    """A switch process did not come up (it exited, or its gRPC port never opened)."""


def port_open(host: str, port: int, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class FabricSwitch(Switch):
    """A P4Runtime switch process in the root namespace, driven by simple_switch_grpc flags."""

    target: ClassVar[str] = ""
    # Seconds to wait for the gRPC port; a pure-Python target imports a lot.
    start_timeout: ClassVar[float] = 60.0

    def __init__(
        self,
        name: str,
        *,
        device_id: int,
        grpc_port: int,
        cpu_port: int = 255,
        thrift_port: int | None = None,
        json_path: str | None = None,
        log_dir: str | None = None,
        log_console: bool = False,
        run_token: str = "",
        **params: Any,
    ) -> None:
        params.setdefault("inNamespace", False)
        super().__init__(name, **params)
        self.device_id = device_id
        self.grpc_port = grpc_port
        self.cpu_port = cpu_port
        self.thrift_port = thrift_port
        self.json_path = json_path
        self.log_dir = Path(log_dir) if log_dir else None
        self.log_console = log_console
        self.run_token = run_token
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    # --- what subclasses define ------------------------------------------

    def command(self) -> list[str]:
        raise NotImplementedError

    # --- shared -----------------------------------------------------------

    @property
    def grpc_addr(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def port_intfs(self) -> list[tuple[int, str]]:
        """(port, interface) for each data port, by port number."""
        return sorted(
            (port, intf.name)
            for port, intf in self.intfs.items()
            if intf.name != "lo" and port != 0
        )

    def iface_args(self) -> list[str]:
        args: list[str] = []
        for port, name in self.port_intfs():
            args += ["-i", f"{port}@{name}"]
        return args

    def start(self, controllers: list[Any]) -> None:
        """Launch the switch process and wait until its gRPC port accepts connections."""
        for _port, name in self.port_intfs():
            # No IPv6 autoconf chatter from the root side of our ports, and
            # no checksum offload (a raw socket would read partial checksums).
            self.cmd(f"sysctl -qw net.ipv6.conf.{name}.disable_ipv6=1")
            self.cmd(f"ethtool -K {name} tx off rx off sg off tso off gso off gro off >/dev/null 2>&1")
            self.cmd(f"ip link set {name} up")
        env = dict(os.environ)
        env[RUN_ENV] = self.run_token or "1"
        env.setdefault("PYTHONUNBUFFERED", "1")
        if self.log_dir:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self.log_path = self.log_dir / f"{self.name}.log"
            log = open(self.log_path, "wb")  # noqa: SIM115 - handed to the child
        else:
            log = open(os.devnull, "wb")  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise SwitchStartError(f"{self.name}: cannot run {self.target}: {exc}") from None
        finally:
            log.close()
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            code = self.proc.poll()
            if code is not None:
                raise SwitchStartError(
                    f"{self.name}: {self.target} exited with code {code} at start"
                    f"{self._log_hint()}"
                )
            if port_open("127.0.0.1", self.grpc_port):
                return
            time.sleep(0.1)
        raise SwitchStartError(
            f"{self.name}: {self.target} did not open gRPC port {self.grpc_port} within "
            f"{self.start_timeout:.0f} s{self._log_hint()}"
        )

    def _log_hint(self) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        lines = [ln for ln in self.log_path.read_text(errors="replace").splitlines() if ln.strip()]
        last = f": {lines[-1].strip()}" if lines else ""
        return f"{last} (log: {self.log_path})"

    def connected(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and port_open(
            "127.0.0.1", self.grpc_port
        )

    def stop_process(self, timeout: float = 5.0) -> None:
        """End the switch process: SIGTERM, then SIGKILL after `timeout` seconds."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(5)

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 - Mininet's name
        self.stop_process()
        super().stop(deleteIntfs)

    def terminate(self) -> None:
        self.stop_process()
        super().terminate()


class P4SwitchNode(FabricSwitch):
    """The built-in pure-Python v1model target (`python -m p4switch`)."""

    target = "p4switch"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "p4switch"]
        cmd += [self.json_path] if self.json_path else ["--no-p4"]
        cmd += self.iface_args()
        cmd += ["--device-id", str(self.device_id), "--grpc-server-addr", self.grpc_addr,
                "--cpu-port", str(self.cpu_port)]
        if self.log_console:
            cmd.append("--log-console")
        return cmd


class Bmv2SwitchNode(FabricSwitch):
    """BMv2 `simple_switch_grpc`; target options go after `--` as it requires."""

    target = "bmv2"
    start_timeout = 30.0

    def command(self) -> list[str]:
        cmd = ["simple_switch_grpc"]
        cmd += [self.json_path] if self.json_path else ["--no-p4"]
        cmd += self.iface_args()
        cmd += ["--device-id", str(self.device_id)]
        if self.thrift_port is not None:
            # Each instance needs its own Thrift port (the default 9090 clashes).
            cmd += ["--thrift-port", str(self.thrift_port)]
        if self.log_console:
            cmd.append("--log-console")
        cmd += ["--", "--grpc-server-addr", self.grpc_addr, "--cpu-port", str(self.cpu_port)]
        return cmd


SWITCH_CLASSES: dict[str, type[FabricSwitch]] = {
    "p4switch": P4SwitchNode,
    "bmv2": Bmv2SwitchNode,
}

# Tools each target needs on PATH (the compiler, then the switch).
_TOOLS = {"bmv2": ("p4c-bm2-ss", "simple_switch_grpc"), "p4switch": ()}


def target_missing(target: str) -> list[str]:
    """The tools `target` needs that are not on PATH (empty: it can run)."""
    return [t for t in _TOOLS[target] if shutil.which(t) is None]


def resolve_target(name: str) -> str:
    """`auto` -> "bmv2" when BMv2 and p4c are on PATH, else "p4switch"; others unchanged."""
    if name == "auto":
        return "bmv2" if not target_missing("bmv2") else "p4switch"
    if name not in SWITCH_CLASSES:
        raise ValueError(f"unknown target {name!r} (choose from auto, {', '.join(SWITCH_CLASSES)})")
    return name
