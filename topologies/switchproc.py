"""A switch process on this machine: its record, its start, its readiness.

`SwitchRecord` is what `run.json` keeps of a switch (the exact command
line, its port settings, gRPC/Thrift/ctl ports, log, pid and the pid's
start time), so that `topologies.attach` can restart it identically without
the Mininet objects; `launch` starts a record's command in its own session,
marked with `RUN_ENV` (so `topologies.cleanup` finds leftovers of a crashed
run without matching on process names); `wait_ready` waits for its gRPC
port. The Mininet node classes (`topologies.nodes`) start their processes
with these, and `topologies.runstate` reads the records; neither Mininet
nor a target's code is imported here.

Names defined here: `RUN_ENV`, `SwitchRecord`, `launch`, `wait_ready`,
`read_arrivals_only`, `port_open`, `proc_start`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import SwitchStartError
from .ports import SwitchSettings
from .portsockets import ignore_outgoing

__all__ = ["RUN_ENV", "SwitchRecord", "launch", "port_open", "proc_start", "read_arrivals_only",
           "wait_ready"]

RUN_ENV = "AIZONE_RUN"
"""The environment variable every process of a fabric carries (its run token)."""


def port_open(host: str, port: int, timeout: float = 0.2) -> bool:
    """Whether a TCP connection to (host, port) succeeds within `timeout` seconds."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def proc_start(pid: int) -> str:
    """The start time of `pid` (/proc/<pid>/stat field 22), "" when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # The command in field 2 may contain spaces.
    return stat.rsplit(")", 1)[1].split()[19]


@dataclass(kw_only=True)
class SwitchRecord:
    """A switch process as `run.json` keeps it: enough to restart it with the same settings."""

    name: str
    role: str
    target: str
    argv: list[str]
    grpc_port: int
    device_id: int
    thrift_port: int | None = None
    ctl_port: int | None = None
    ctl_addr: str | None = None  # p4switch's control API: "unix:/PATH" (or "HOST:PORT")
    log: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # SwitchSettings.to_json()
    native_pfc: bool = False  # p4switch's traffic-manager PFC instead of the program's
    tls_dir: str | None = None  # the fabric's PKI (topologies.pki): P4Runtime is mutual TLS
    token: str = ""
    pid: int | None = None
    start: str = ""  # the pid's start time, so a reused pid is not taken for it

    @property
    def grpc_addr(self) -> str:
        """The switch's P4Runtime address, "127.0.0.1:<grpc_port>"."""
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def switch_settings(self) -> SwitchSettings:
        """The port settings kept in `settings`, as a SwitchSettings."""
        return SwitchSettings.from_json(self.settings)

    def to_json(self) -> dict[str, Any]:
        """The record as run.json stores it, `grpc_addr` included."""
        # grpc_addr too: `aizone status` and other readers of run.json use it.
        return {**asdict(self), "grpc_addr": self.grpc_addr}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SwitchRecord:
        """The record run.json stored; keys it does not know are ignored."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def launch(record: SwitchRecord) -> subprocess.Popen[bytes]:
    """Start `record.argv` in its own session, marked, logging to `record.log`.

    Sets `record.pid` and `record.start`; does not wait (see `wait_ready`).
    """
    env = dict(os.environ)
    env[RUN_ENV] = record.token or "1"
    env.setdefault("PYTHONUNBUFFERED", "1")
    if record.log:
        Path(record.log).parent.mkdir(parents=True, exist_ok=True)
        log = open(record.log, "ab")  # noqa: SIM115 - handed to the child
    else:
        log = open(os.devnull, "wb")  # noqa: SIM115
    try:
        proc = subprocess.Popen(record.argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)
    except FileNotFoundError as exc:
        raise SwitchStartError(f"{record.name}: cannot run {record.target}: {exc}") from None
    finally:
        log.close()
    record.pid, record.start = proc.pid, proc_start(proc.pid)
    return proc


def wait_ready(record: SwitchRecord, proc: subprocess.Popen[bytes], timeout: float, *,
               reads_outgoing: bool = False) -> None:
    """Return when the switch's gRPC port accepts connections; `SwitchStartError` otherwise.

    `reads_outgoing`: the target's port sockets also read what others send out of its
    ports (`FabricSwitch.reads_outgoing`); they are then set to read arrivals only.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            raise SwitchStartError(f"{record.name}: {record.target} exited with code {code} at "
                                   f"start{_log_hint(record.log)}")
        if port_open("127.0.0.1", record.grpc_port):
            if reads_outgoing:
                read_arrivals_only(record.name, proc.pid, record.argv.count("-i"), deadline,
                                   log=record.log)
            return
        time.sleep(0.1)
    raise SwitchStartError(f"{record.name}: {record.target} did not open gRPC port "
                           f"{record.grpc_port} within {timeout:.0f} s{_log_hint(record.log)}")


def read_arrivals_only(name: str, pid: int, ports: int, deadline: float, *,
                       log: str | None = None) -> None:
    """Set switch `name`'s (process `pid`'s) `ports` packet sockets to read arriving frames
    only (`portsockets.ignore_outgoing`); `SwitchStartError` by `deadline` (monotonic)."""
    # Set on those open so far (setting one twice changes nothing) until there is one per
    # port (BMv2 opens them before its gRPC server, but nothing says so).
    try:
        while ignore_outgoing(pid) < ports:
            if time.monotonic() > deadline:
                raise SwitchStartError(f"{name}: did not open its {ports} ports"
                                       f"{_log_hint(log)}")
            time.sleep(0.1)
    except OSError as exc:
        raise SwitchStartError(f"{name}: cannot set its port sockets to read "
                               f"arriving frames only: {exc}") from None


def _log_hint(log: str | None) -> str:
    if not log or not Path(log).exists():
        return ""
    lines = [ln for ln in Path(log).read_text(errors="replace").splitlines() if ln.strip()]
    last = f": {lines[-1].strip()}" if lines else ""
    return f"{last} (log: {log})"
