"""The ssh sessions of a fabric spread over several servers, and which hosts run elsewhere.

`ssh_base()` is the start of every ssh command aizone runs towards another
server: batch mode (never a password prompt), a connect timeout, and `-F
$AIZONE_SSH_CONFIG` when that variable names a config file (the tests'
servers use one; without it ssh reads the user's own). `remote_argv(server,
argv, env)` runs `argv` as root on `server` with `env` set there (ssh does
not carry the environment across), optionally forwarding Unix sockets from
this machine to that server in the same session. `remote_nodes(meta)` reads,
from a run's metadata (`run.json`, written by `topologies.cluster.ClusterNet`), the
switches and hosts that run on a server other than this machine, so run-time access
(`topologies.attach`) reaches them through ssh. `wait_remote_ready(record,
proc, server, ...)` is `switchproc.wait_ready` for a switch started there
through ssh (at its start and at every restart): its forwarded gRPC port
answers, and BMv2's port sockets are set there to read arriving frames only.

`ssh_run(server, script)` runs a shell script there and `ssh_python(server,
code, *args)` a Python snippet (with this machine's interpreter path: every
server has the same install), raising `ClusterError` when ssh itself fails.
`clock_offset(server)` reads how far that server's wall clock is from this
machine's, as NTP does: over one open session, a few exchanges of "your
time?", each timed here, the one with the shortest round trip kept
(offset = its answer - the middle of the round trip, give or take half the
round trip).

Names defined here: `SSH_CONFIG_ENV`, `ClusterError`, `ClockReading`, `ssh_base`,
`remote_argv`, `remote_nodes`, `quote`, `ssh_run`, `ssh_python`, `clock_offset`,
`last_error`, `wait_forwarded`, `wait_remote_ready`.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import NetworkError, SwitchStartError
from .switchproc import SwitchRecord

__all__ = ["SSH_CONFIG_ENV", "ClockReading", "ClusterError", "clock_offset", "last_error",
           "quote", "remote_argv", "remote_nodes", "ssh_base", "ssh_python", "ssh_run",
           "wait_forwarded", "wait_remote_ready"]

SSH_CONFIG_ENV = "AIZONE_SSH_CONFIG"
# Seconds an ssh session may take to connect before a server counts as unreachable.
_CONNECT_TIMEOUT = 10


class ClusterError(NetworkError):
    """A server of a cluster fabric cannot take part (unreachable, different install)."""


def ssh_base() -> list[str]:
    """The ssh command every cluster session starts with: batch mode, `-F $AIZONE_SSH_CONFIG`."""
    cmd = ["ssh"]
    config = os.environ.get(SSH_CONFIG_ENV)
    if config:
        if not Path(config).is_file():
            raise ClusterError(f"{SSH_CONFIG_ENV}={config}: no such ssh config file")
        cmd += ["-F", config]
    return cmd + ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={_CONNECT_TIMEOUT}"]


def quote(text: str) -> str:
    """`text` as one word of a POSIX shell command line (what ssh hands the remote shell)."""
    return "'" + text.replace("'", "'\\''") + "'"


def remote_argv(server: str, argv: list[str], env: Mapping[str, str], *,
                tty: bool = False, unix_forwards: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The local command that runs `argv` as root on `server` with `env` set there.

    `tty`: a pseudo-terminal on the server, so the command is hung up (SIGHUP) when
    the local ssh ends; without it the command may outlive its session.
    `unix_forwards`: (here, there) pairs of Unix socket paths; a connection to `here`
    reaches `there` on the server through this ssh session (`ssh -L here:there`, the
    local socket made with mode 0600 and an old file there replaced; ssh exits if it
    cannot listen).
    """
    forwards: list[str] = []
    if unix_forwards:
        forwards = ["-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes",
                    "-o", "StreamLocalBindMask=0177"]
        for here, there in unix_forwards:
            forwards += ["-L", f"{here}:{there}"]
    return [*ssh_base(), *(["-tt"] if tty else []), *forwards, f"root@{server}", "env",
            *(quote(f"{k}={v}") for k, v in env.items()), *(quote(a) for a in argv)]


def ssh_run(server: str, script: str, *, timeout: float = 60.0,
            stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the shell `script` on `server` as root; `ClusterError` when ssh itself fails
    (unreachable, refused, no answer within `timeout`), else its result."""
    try:
        out = subprocess.run([*ssh_base(), f"root@{server}", script], input=stdin,
                             capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"server {server}: no answer over ssh within {timeout:.0f} s") from None
    if out.returncode == 255:
        why = out.stderr.decode(errors="replace").strip().splitlines()
        raise ClusterError(f"server {server}: ssh failed: {why[-1] if why else 'exit 255'} "
                           f"(is sshd running there and root's key authorised? "
                           f"{SSH_CONFIG_ENV} names the ssh config to use)")
    return out


def ssh_python(server: str, code: str, *args: object, timeout: float = 60.0,
               stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run Python `code` with `args` (its sys.argv[1:]) and `stdin` on `server` as root, with
    this machine's interpreter path and PATH (`ssh_run`; every server has the same install)."""
    return ssh_run(server, f"env PATH={quote(os.environ.get('PATH', ''))} "
                           f"{quote(sys.executable)} -c {quote(code)} "
                           + " ".join(quote(str(a)) for a in args), timeout=timeout, stdin=stdin)


@dataclass(frozen=True, kw_only=True)
class ClockReading:
    """A server's wall clock against this machine's."""

    offset_s: float  # the server's time minus this machine's (positive: it is ahead)
    uncertainty_s: float  # half the round trip of the exchange it comes from


# Answers each line it reads with its wall clock: the far end of `clock_offset`.
_CLOCK_ECHO = "import sys, time\nfor _ in sys.stdin:\n    print(repr(time.time()), flush=True)\n"


def clock_offset(server: str, *, samples: int = 8, timeout: float = 30.0) -> ClockReading:
    """`server`'s wall clock (`time.time()` there) against this machine's, over one ssh session
    (see the module docstring); `ClusterError` when the session does not answer."""
    argv = [*ssh_base(), f"root@{server}",
            f"{quote(sys.executable)} -u -c {quote(_CLOCK_ECHO)}"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    best: tuple[float, float] | None = None  # (round trip, offset)
    deadline = time.monotonic() + timeout
    try:
        for _ in range(samples):
            t0 = time.time()
            proc.stdin.write(b"?\n")
            proc.stdin.flush()
            # The first answer also waits for the session to open.
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if not ready:
                raise ClusterError(f"server {server}: its clock did not answer over ssh within "
                                   f"{timeout:.0f} s")
            line = proc.stdout.readline()
            t1 = time.time()
            if not line:
                why = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace")
                raise ClusterError(f"server {server}: cannot read its clock over ssh: "
                                   f"{(why.strip().splitlines() or ['no answer'])[-1]}")
            trip = t1 - t0
            offset = float(line) - (t0 + t1) / 2
            if best is None or trip < best[0]:
                best = (trip, offset)
    except (BrokenPipeError, ValueError) as exc:
        raise ClusterError(f"server {server}: cannot read its clock over ssh: {exc}") from None
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert best is not None
    return ClockReading(offset_s=best[1], uncertainty_s=best[0] / 2)


def last_error(out: subprocess.CompletedProcess[bytes]) -> str:
    """The last line a failed remote command wrote to stderr, or its exit status."""
    why = out.stderr.decode(errors="replace").strip().splitlines()
    return why[-1] if why else f"exit {out.returncode}"


def remote_nodes(meta: Mapping[str, Any]) -> dict[str, str]:
    """node -> server for the switches and hosts a run placed on another server than
    this machine."""
    servers = meta.get("servers") or []
    placement = meta.get("placement") or {}
    if len(servers) < 2:
        return {}
    return {node: server for node, server in placement.items() if server != servers[0]}


def wait_forwarded(name: str, port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Return once the switch behind the ssh forward of `port` accepts a connection.

    The local end listens as soon as ssh is connected; while nothing listens on the
    server, ssh accepts and closes at once. A TLS server waits for the client's hello,
    so a connection that stays open, silent, for a moment is the switch itself.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            raise SwitchStartError(f"{name}: its ssh session exited with code {code} at start")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.settimeout(0.5)
                if s.recv(1) != b"":
                    return
        except TimeoutError:
            return
        except OSError:
            pass
        time.sleep(0.2)
    raise SwitchStartError(f"{name}: no switch answered on forwarded port {port} within "
                           f"{timeout:.0f} s")


_ARRIVALS_ONLY = (
    "import sys\n"
    "from topologies.runstate import read_arrivals_only_serving as f\n"
    "f(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))\n"
)


def wait_remote_ready(record: SwitchRecord, proc: subprocess.Popen[bytes], server: str, *,
                      ports: int, reads_outgoing: bool, timeout: float) -> None:
    """`switchproc.wait_ready` for a switch started on `server` through ssh (`proc`, here):
    its forwarded gRPC port answers, and, for a target that reads its own ports' outgoing
    frames (BMv2), its `ports` packet sockets are set to read arriving frames only,
    there, on the switch's own process (`runstate.read_arrivals_only_serving`)."""
    t0 = time.monotonic()
    wait_forwarded(record.name, record.grpc_port, proc, timeout)
    if not reads_outgoing:
        return
    left = max(1.0, timeout - (time.monotonic() - t0))
    try:
        out = ssh_python(server, _ARRIVALS_ONLY, record.token, record.grpc_port, ports,
                         f"{left:.1f}", timeout=left + 15)
    except ClusterError as exc:
        raise SwitchStartError(f"{record.name}: {exc}") from None
    if out.returncode != 0:
        raise SwitchStartError(f"{record.name} on server {server}: cannot set its port "
                               f"sockets to read arriving frames only: {last_error(out)}")
