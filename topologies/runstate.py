"""The record of the running fabric, and the removal of what a crashed run left behind.

A running network writes `run.json` in the state folder (`$AIZONE_STATE_DIR`,
else `/run/aizone`, else `/tmp/aizone`): the owner process, its switches
(name, gRPC address, device id, pid), its hosts (shell pid and network
namespace inode), the root-namespace interfaces it made, and free-form
`meta` the controller adds (P4Info paths, topology file). `aizone status`
reads it to find the switches; `cleanup()` reads it to remove leftovers.

`cleanup()` removes, and only removes, what is ours:
- processes whose environment carries `AIZONE_RUN` (every switch process and
  every Mininet host shell of a run, and what those shells started), and
  processes still inside a recorded host network namespace;
- root-namespace interfaces recorded in the state file, and interfaces named
  like our switch ports (`rtsw<N>-eth<P>`, `ctsw..`, `atsw..`);
- the state file.
It never calls `mn -c` (which needs Open vSwitch) and never kills by name.

Names defined here: `RunState`, `CleanupReport`, `state_dir`, `read_state`,
`write_state`, `clear_state`, `cleanup`, `owner_alive`, `OUR_INTF`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .nodes import RUN_ENV, NetworkError

__all__ = [
    "OUR_INTF",
    "CleanupReport",
    "RunState",
    "cleanup",
    "clear_state",
    "owner_alive",
    "read_state",
    "state_dir",
    "write_state",
]

OUR_INTF = re.compile(r"^(rtsw|ctsw|atsw)\d+-eth\d+$")
STATE_FILE = "run.json"


def state_dir() -> Path:
    """Where `run.json` lives (created on demand by writers)."""
    env = os.environ.get("AIZONE_STATE_DIR")
    if env:
        return Path(env)
    run = Path("/run")
    if run.is_dir() and os.access(run, os.W_OK):
        return run / "aizone"
    return Path("/tmp/aizone")


@dataclass(kw_only=True)
class RunState:
    """What `run.json` holds (mutable: the runner fills it in as it goes)."""

    owner_pid: int
    owner_start: str  # /proc/<pid>/stat start time, so a reused pid is not taken for ours
    token: str
    name: str
    target: str
    switches: list[dict[str, Any]] = field(default_factory=list)
    hosts: list[dict[str, Any]] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    ready: bool = False


def _proc_start(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22 (starttime); the command in field 2 may contain spaces.
    return stat.rsplit(")", 1)[1].split()[19]


def proc_start(pid: int) -> str:
    return _proc_start(pid) or ""


def owner_alive(state: RunState) -> bool:
    """Is the process that wrote `state` still running (and not a reused pid)?"""
    return _proc_start(state.owner_pid) == state.owner_start


def read_state(directory: Path | None = None) -> RunState | None:
    path = (directory or state_dir()) / STATE_FILE
    try:
        data = json.loads(path.read_text())
        return RunState(**data)
    except (OSError, ValueError, TypeError):
        return None


def write_state(state: RunState, directory: Path | None = None) -> Path:
    d = directory or state_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / STATE_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(state), indent=2))
    tmp.replace(path)  # atomic: a reader never sees half a file
    return path


def clear_state(directory: Path | None = None) -> None:
    (directory or state_dir()).joinpath(STATE_FILE).unlink(missing_ok=True)


@dataclass
class CleanupReport:
    """What `cleanup` removed."""

    stopped_owner: int | None = None
    killed: list[int] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    state_removed: bool = False

    @property
    def anything(self) -> bool:
        return bool(self.stopped_owner or self.killed or self.interfaces or self.state_removed)


def _marker(env: bytes) -> str | None:
    """The value of AIZONE_RUN in a /proc/<pid>/environ blob, or None."""
    key = RUN_ENV.encode() + b"="
    for item in env.split(b"\0"):
        if item.startswith(key):
            return item[len(key):].decode(errors="replace")
    return None


def _marked_pids(netns_inodes: set[int], token: str | None = None) -> list[int]:
    """Our processes: marked with AIZONE_RUN (= `token` if given), or in a recorded netns."""
    me = os.getpid()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == me:
            continue
        try:
            mark = _marker((entry / "environ").read_bytes())
        except OSError:
            mark = None
        ours = mark is not None and (token is None or mark == token)
        if not ours and netns_inodes:
            try:
                ours = os.stat(entry / "ns" / "net").st_ino in netns_inodes
            except OSError:
                ours = False
        if ours:
            out.append(pid)
    return out


def _kill_all(pids: list[int], timeout: float = 3.0) -> list[int]:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _proc_start(p) is not None and not _zombie(p)]
        if alive:
            time.sleep(0.05)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return pids


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def root_links() -> list[str]:
    """Interface names in the root namespace (without the `@peer` suffix)."""
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split("@")[0])
    return names


def cleanup(*, stop_running: bool = True, directory: Path | None = None,
            owner_timeout: float = 30.0, token: str | None = None) -> CleanupReport:
    """Remove our processes, interfaces and state file left by earlier runs.

    A run whose owner is still alive is asked to stop (SIGTERM, it tears its
    network down itself) when `stop_running`; otherwise `NetworkError` says
    it is running. Safe to call when nothing is left (it then does nothing).
    With `token`, only processes of that run (and no interfaces by name
    pattern, only recorded ones) are touched.
    """
    report = CleanupReport()
    state = read_state(directory)
    if state is not None and owner_alive(state) and state.owner_pid != os.getpid():
        if not stop_running:
            raise NetworkError(
                f"aizone is already running (pid {state.owner_pid}, fabric {state.name!r}): "
                f"run `aizone down` first"
            )
        try:
            os.kill(state.owner_pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + owner_timeout
        while owner_alive(state) and time.monotonic() < deadline:
            time.sleep(0.1)
        if owner_alive(state):
            os.kill(state.owner_pid, signal.SIGKILL)
        report.stopped_owner = state.owner_pid
    inodes = {int(h["netns_inode"]) for h in (state.hosts if state else []) if h.get("netns_inode")}
    report.killed = _kill_all(_marked_pids(inodes, token))
    recorded = set(state.interfaces if state else [])
    for name in root_links():
        if name in recorded or (token is None and OUR_INTF.match(name)):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
            report.interfaces.append(name)
    if state is not None:
        clear_state(directory)
        report.state_removed = True
    return report
