"""Starting, following and stopping the controller daemon from another process.

`aizone up`, `aizone demo`, the experiments and the tests start a fabric the
same way: `start_daemon(...)` spawns `python -m controller.daemon_main` in its
own session (it outlives the caller), `follow(child, on_event)` waits for
its API and relays its bring-up events until the fabric is up (returning
the daemon's status) or raises `NetworkError` with the daemon's reason;
`stop_daemon(pid)` asks it to stop and waits. `orphan()` is the state of a
fabric whose daemon died while its switches still run (a daemon started
with `attach=True` takes it over).

`bring_up(...)` and `tear_down()` are the whole of `aizone up` and
`aizone down` without their output, for the CLI and the Python API
(`aizone.fabric`) alike.

Names defined here: `DaemonOptions`, `start_daemon`, `follow`,
`stop_daemon`, `orphan`, `already_up`, `daemon_log`, `bring_up`,
`will_attach`, `tear_down`, `DEFAULT_TOPOLOGY`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topologies.errors import NetworkError
from topologies.nodes import uses_native_pfc
from topologies.runstate import RunState, owner_alive, process_exited, read_state, state_dir

from .client import ApiClient, socket_path

__all__ = ["DEFAULT_TOPOLOGY", "DaemonOptions", "already_up", "bring_up", "daemon_log", "follow",
           "orphan", "start_daemon", "stop_daemon", "tear_down", "will_attach"]

# What `up` brings up when given no topology (and no fabric waits to be re-attached).
DEFAULT_TOPOLOGY = Path(__file__).resolve().parents[1] / "topologies" / "rack.yaml"


@dataclass(frozen=True, kw_only=True)
class DaemonOptions:
    """How `start_daemon` starts the daemon (its flags; `DaemonConfig` describes them)."""

    topology: Path | None
    target: str = "auto"
    mode: str | None = None
    pfc: str | None = None  # "native" | "program" (`topologies.targets.Pfc`); None: the target's
    build_dir: Path | None = None
    api_host: str = "127.0.0.1"
    api_port: int = 8400
    api_allow_hosts: tuple[str, ...] = ()
    switch_log: bool = False
    attach: bool = False
    pcap_dir: Path | None = None  # capture every switch port from the start (`up --pcap`)
    servers: tuple[str, ...] = ()  # the machines to spread it over (`up --servers`)

    def argv(self) -> list[str]:
        """The daemon's command line (`attach` leaves out the topology, target, PFC and pcap)."""
        cmd = [sys.executable, "-m", "controller.daemon_main"]
        if self.attach:
            cmd.append("--attach")
        else:
            assert self.topology is not None
            cmd += ["--topology", str(self.topology.resolve()), "--target", self.target]
            if self.pfc:
                cmd += ["--pfc", self.pfc]
        if self.mode:
            cmd += ["--mode", self.mode]
        if self.build_dir:
            cmd += ["--build-dir", str(self.build_dir.resolve())]
        cmd += ["--api-host", self.api_host, "--api-port", str(self.api_port)]
        for name in self.api_allow_hosts:
            cmd += ["--api-allow-host", name]
        if self.switch_log:
            cmd.append("--switch-log")
        if self.pcap_dir and not self.attach:
            cmd += ["--pcap", str(self.pcap_dir.resolve())]
        if self.servers and not self.attach:
            cmd += ["--servers", ",".join(self.servers)]
        return cmd


def daemon_log() -> Path:
    """Where the daemon's stdout and stderr go: `<state dir>/daemon.out`."""
    return state_dir() / "daemon.out"


def already_up() -> str | None:
    """Why a new fabric cannot start here because one is up (its daemon answers), else None."""
    with ApiClient() as c:
        if not c.alive():
            return None
        st = c.get("/status")
    return (f"fabric {st.get('name')!r} is already up (daemon pid {st.get('pid')}): "
            f"run `aizone down` first")


def orphan() -> RunState | None:
    """The state of a fabric whose daemon died (switches may still run), else None."""
    state = read_state()
    if state is None or owner_alive(state) or not state.ready or not state.meta.get("daemon"):
        return None
    return state


def start_daemon(options: DaemonOptions) -> subprocess.Popen[bytes]:
    """Spawn the daemon in its own session; its output goes to `daemon_log()`."""
    log = daemon_log()
    log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)  # an older one may have been made wider
    with os.fdopen(fd, "wb") as out:
        return subprocess.Popen(options.argv(), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=out, start_new_session=True)


def _last_error(log: Path) -> str:
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return f"see {log}"
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or [f"see {log}"])[-1].split("error: ", 1)[-1]


def _wait_for_api(child: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise NetworkError(f"the controller daemon exited at start: "
                               f"{_last_error(daemon_log())}")
        if socket_path().exists():
            with ApiClient() as c:
                if c.alive():
                    return
        time.sleep(0.1)
    raise NetworkError(f"the controller daemon did not open its API within {timeout:.0f} s "
                       f"(log: {daemon_log()})")


Relay = Callable[[str, dict[str, Any]], None]


def follow(child: subprocess.Popen[bytes], on_event: Relay | None = None, *,
           timeout: float = 300) -> dict[str, Any]:
    """Relay the daemon's events until the fabric is up; its status, or `NetworkError`."""
    _wait_for_api(child, timeout=60)
    with ApiClient() as c:
        for kind, event in c.events(replay=True, timeout=timeout):
            data = event["data"]
            if on_event is not None:
                on_event(kind, data)
            if kind == "progress" and data.get("step") == "up":
                break
            if kind == "failed":
                raise NetworkError(data.get("error", "bring-up failed"))
            if kind == "down":
                raise NetworkError(f"the daemon stopped during bring-up: "
                                   f"{_last_error(daemon_log())}")
        else:
            raise NetworkError(f"the daemon went away during bring-up: "
                               f"{_last_error(daemon_log())}")
        status: dict[str, Any] = c.get("/status")
    return status


def stop_daemon(pid: int, timeout: float = 60) -> bool:
    """SIGTERM the daemon and wait for it to go; True if it went."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        # Not our child (`aizone up` left it to init): done once it is a zombie whose
        # threads have all exited, whenever init gets to reap it.
        if process_exited(pid):
            return True
        time.sleep(0.1)
    return False


def bring_up(options: DaemonOptions, on_event: Relay | None = None
             ) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """`aizone up`: the daemon started (or re-attached) and followed until the fabric is up.

    `options.topology` None: re-attach to a fabric whose daemon died, else the
    default topology. A fabric whose daemon died and the same (or no) topology
    is re-attached; another topology is refused. Bad input (topology file,
    programs, tools) is said before anything starts (`controller.preflight`).
    Returns the daemon process and its status; Ctrl-C stops the daemon.
    """
    from dataclasses import replace

    if os.geteuid() != 0:
        raise NetworkError("aizone up needs root (network namespaces, veths): run it with sudo")
    busy = already_up()
    if busy:
        raise NetworkError(busy)
    topology = options.topology
    left = orphan()
    attach = _attaches(left, topology)
    if left is not None and not attach:
        raise NetworkError(f"fabric {left.name!r} is still running without its daemon: "
                           f"`aizone up` re-attaches to it, `aizone down` removes it")
    if topology is None:
        topology = DEFAULT_TOPOLOGY
    if attach and options.pfc:
        assert left is not None
        raise NetworkError(f"fabric {left.name!r} is re-attached with the PFC it runs: "
                           f"leave out --pfc, or `aizone down` it first")
    if not attach:
        from .preflight import prepare

        # A bad file, a missing program, a fabric too large to emulate here, a missing
        # tool or native PFC on a target without it: said before anything starts.
        chosen = prepare(topology, options.target)[2]
        uses_native_pfc(chosen, options.pfc)
    child = start_daemon(replace(options, topology=None if attach else topology, attach=attach))
    try:
        info = follow(child, on_event)
    except BaseException:
        stop_daemon(child.pid)
        raise
    return child, info


def will_attach(topology: Path | None) -> bool:
    """Would `bring_up` re-attach (a fabric whose daemon died, of this or no topology)?"""
    return _attaches(orphan(), topology)


def _attaches(left: RunState | None, topology: Path | None) -> bool:
    if left is None:
        return False
    return topology is None or Path(topology).resolve() == Path(left.meta.get("topology", ""))


def tear_down(servers: tuple[str, ...] = ()) -> dict[str, Any]:
    """`aizone down`: the daemon asked to stop, then whatever aizone left removed; with
    `servers` (this machine first) and no record of a run left, on the other ones too."""
    from topologies.runstate import cleanup, read_state

    from .errors import ControllerError

    if os.geteuid() != 0:
        raise NetworkError("aizone down needs root (it deletes interfaces and processes): "
                           "run it with sudo")
    stopped = None
    with ApiClient() as c:
        if c.alive():
            pid = c.get("/status").get("pid")
            with contextlib.suppress(ControllerError):
                c.post("/shutdown")
            if pid and stop_daemon(pid, 60):
                stopped = pid
    # A run still recorded now was not stopped by its daemon (it died, or never answered):
    # what it placed on other servers is ended there too, from its record.
    left = read_state()
    report = cleanup(stop_running=True)
    cleaned: dict[str, str] = {}
    if left is not None and len(left.meta.get("servers") or []) > 1:
        from topologies.cluster import cleanup_servers

        cleaned = cleanup_servers(left)
    elif left is None and len(servers) > 1:
        # No record: the controller's machine lost it (a crash); the user names the servers.
        from topologies.cluster import cleanup_orphans

        cleaned = cleanup_orphans(list(servers[1:]))
    return {"stopped_daemon": stopped, "stopped_owner": report.stopped_owner,
            "killed": report.killed, "interfaces": report.interfaces,
            "state_removed": report.state_removed, "servers": cleaned}
