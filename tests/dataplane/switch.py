"""One switch under test: its program, its process on veth ports, its P4Runtime sessions.

`SwitchUnderTest(target, program, ports=N, options=SwitchOptions(...))`
creates N veth pairs with unique names (`dp<id>s<port>` on the switch,
`dp<id>h<port>` for the test), starts the target's process with
simple_switch_grpc's flags (`--no-p4 -i P@IF --device-id D -- --grpc-server-addr
A --cpu-port 255 --priority-queues Q`), wins the P4Runtime arbitration,
pushes the program (one primary finsy session, `session.SyncSwitch`, which
also carries packet-ins and packet-outs) and opens the test's raw sockets. `stop()` undoes all of
it, whatever state `start()` reached.

Targets:

- `p4switch`: this environment's `p4switch`; the traffic manager extras of
  `SwitchOptions` (queue rate, port speed, PFC, buffer unit) are its own flags,
  and its control API listens on a Unix socket beside the log (`ctl`).
- `bmv2`: `simple_switch_grpc` from PATH. Queue rates are set after start
  with `simple_switch_CLI set_queue_rate` (BMv2 has no flag for them);
  port speed and PFC have no BMv2 equivalent, and tests that need them are
  skipped there (`needs_native_pfc`).

Names defined here: `SwitchOptions`, `SwitchUnderTest`, `TargetUnavailable`,
`CPU_PORT`, `build_program`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from controller.build import CompiledProgram, compile_program
from controller.syncswitch import SyncSwitch

from .ports import PortSet, Veths

__all__ = ["CPU_PORT", "SwitchOptions", "SwitchUnderTest", "TargetUnavailable", "build_program"]

CPU_PORT = 255
P4_DIR = Path(__file__).resolve().parents[2] / "p4"


class TargetUnavailable(Exception):
    """The target cannot run what was asked (a tool is missing); the message says what."""


@dataclass(frozen=True, kw_only=True)
class SwitchOptions:
    """Launch options; per-port maps are port -> value."""

    priority_queues: int = 1
    queue_rate: dict[int, float] = field(default_factory=dict)  # packets/s
    port_speed: dict[int, float] = field(default_factory=dict)  # Gb/s, p4switch only
    pfc: dict[int, str] = field(default_factory=dict)  # "3" or "3,4", p4switch only
    buffer_unit: str = "packets"  # what p4switch's traffic manager counts: packets | bytes


def build_program(role: str, target: str, out_dir: Path) -> CompiledProgram:
    """p4/<role>.p4 compiled for `target` (p4switch-compile or p4c-bm2-ss) into `out_dir`."""
    return compile_program(P4_DIR / f"{role}.p4", out_dir, role=role, target=target)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _p4switch_exe() -> list[str]:
    script = Path(sys.executable).parent / "p4switch"
    return [str(script)] if script.exists() else [sys.executable, "-m", "p4switch"]


class SwitchUnderTest:
    """A running switch process with its ports and sessions (see the module docstring)."""

    def __init__(self, target: str, program: CompiledProgram, *, ports: int,
                 options: SwitchOptions, log_dir: Path, device_id: int = 1) -> None:
        self.target = target
        self.program = program
        self.options = options
        self.device_id = device_id
        self.tag = f"dp{uuid.uuid4().hex[:6]}"
        self.port_numbers = list(range(1, ports + 1))
        self.veths = Veths((f"{self.tag}s{p}", f"{self.tag}h{p}") for p in self.port_numbers)
        self.grpc_addr = f"127.0.0.1:{_free_port()}"
        self.thrift_port = _free_port()
        self.log_path = log_dir / f"{self.tag}-{program.role}-{target}.log"
        self.ctl_path = log_dir / f"{self.tag}.ctl"
        self.proc: subprocess.Popen[bytes] | None = None
        self.session: SyncSwitch | None = None
        self.ports: PortSet | None = None

    # --- command line --------------------------------------------------------

    def command(self) -> list[str]:
        o = self.options
        general = ["--no-p4"]
        for p in self.port_numbers:
            general += ["-i", f"{p}@{self.tag}s{p}"]
        general += ["--device-id", str(self.device_id), "--thrift-port", str(self.thrift_port)]
        target_opts = ["--grpc-server-addr", self.grpc_addr, "--cpu-port", str(CPU_PORT)]
        if o.priority_queues != 1:
            target_opts += ["--priority-queues", str(o.priority_queues)]
        if self.target == "bmv2":
            return ["simple_switch_grpc", *general, "--", *target_opts]
        for flag, values in (("--queue-rate", o.queue_rate), ("--port-speed", o.port_speed),
                             ("--pfc", o.pfc)):
            for port, value in sorted(values.items()):
                target_opts += [flag, f"{port}={value}"]
        if o.buffer_unit != "packets":
            target_opts += ["--buffer-unit", o.buffer_unit]
        target_opts += ["--ctl-addr", f"unix:{self.ctl_path}"]
        return [*_p4switch_exe(), *general, "--", *target_opts]

    def ctl(self, req: dict) -> dict:
        """One request to p4switch's control API (`p4switch.ctl`); its answer, which must be ok."""
        if self.target != "p4switch":
            raise TargetUnavailable(f"the control API is p4switch's, not {self.target}'s")
        from p4switch.ctl import request

        reply = request(f"unix:{self.ctl_path}", req)
        assert reply.get("ok"), (req, reply)
        return reply

    # --- life cycle ------------------------------------------------------------

    def start(self) -> SwitchUnderTest:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        if self.target == "bmv2" and self.options.queue_rate and not shutil.which(
                "simple_switch_CLI"):
            raise TargetUnavailable("queue rates on bmv2 need simple_switch_CLI on PATH")
        self.veths.create()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._wait_grpc()
        self.session = SyncSwitch(f"{self.program.role}-{self.tag}", self.grpc_addr,
                                  device_id=self.device_id, p4info=self.program.p4info,
                                  p4blob=self.program.device_config).open()
        if self.target == "bmv2":
            self._bmv2_queue_rates()
        self.ports = PortSet({p: f"{self.tag}h{p}" for p in self.port_numbers}).open()

    def _wait_grpc(self, timeout: float = 60.0) -> None:
        host, port = self.grpc_addr.rsplit(":", 1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.target} exited with {self.proc.returncode} at start: "
                                   f"{self.log_tail()}")
            try:
                with socket.create_connection((host, int(port)), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.target} did not open {self.grpc_addr}: {self.log_tail()}")

    def _bmv2_queue_rates(self) -> None:
        cmds = [f"set_queue_rate {int(pps)} {port}"
                for port, pps in sorted(self.options.queue_rate.items())]
        if cmds:
            self.bmv2_cli(cmds)

    def bmv2_cli(self, commands: list[str]) -> str:
        """Run `commands` through simple_switch_CLI (BMv2's Thrift runtime); its output."""
        if self.target != "bmv2":
            raise TargetUnavailable(f"simple_switch_CLI is BMv2's, not {self.target}'s")
        if not shutil.which("simple_switch_CLI"):
            raise TargetUnavailable("simple_switch_CLI is not on PATH")
        proc = subprocess.run(["simple_switch_CLI", "--thrift-port", str(self.thrift_port)],
                              input="".join(c + "\n" for c in commands), text=True,
                              capture_output=True, timeout=30)
        if proc.returncode != 0 or "Error" in proc.stdout:
            raise RuntimeError(f"simple_switch_CLI {commands}: {proc.stdout.strip()} "
                               f"{proc.stderr.strip()}")
        return proc.stdout

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(text[-lines:]) or "(empty log)"

    def stop(self) -> None:
        for closer in (self.ports, self.session):
            if closer is not None:
                try:
                    closer.close()
                except Exception:  # noqa: BLE001 - tear down the rest regardless
                    pass
        self.ports = self.session = None
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            # Our own child, in its own session: signal its process group only.
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        self.veths.delete()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None
