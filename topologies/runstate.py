"""The record of the running fabric, and the removal of what a run left behind.

A running network writes `run.json` in the state folder (`$AIZONE_STATE_DIR`,
else `/run/aizone`; never a folder under /tmp that any user could have made
first), root's and mode 0700: the owner process, its switches
(`switchproc.SwitchRecord`: name, role, exact command line, port settings, gRPC
/ Thrift / ctl ports, log, pid), its hosts (shell pid, network namespace
inode and pinned name), the pinned namespaces, the root-namespace
interfaces it made, and free-form `meta` the controller adds (P4Info paths,
topology file). `aizone status` reads it to find the switches;
`topologies.attach` rebuilds its runtime access from it; `cleanup()` reads
it to remove leftovers.

Host namespaces are pinned as `/run/netns/aizone-<host>` (`pin_netns`, a
bind mount by `ip netns attach`), so they outlive the process that built
them: a daemon killed with SIGKILL leaves a fabric a new daemon can attach
to. `remove_netns` ends the processes inside a pinned namespace and unpins
it; the namespace, and with it the host end of each veth, then goes.

`cleanup()` removes, and only removes, what is ours:
- processes whose environment carries `AIZONE_RUN` (every switch process,
  every Mininet host shell of a run, every host command started through
  `topologies.attach`, and what those started), and processes still inside
  a recorded or pinned host network namespace;
- the pinned namespaces (recorded ones; with no `token`, every
  `/run/netns/aizone-*`);
- root-namespace interfaces recorded in the state file, and interfaces named
  like our switch ports (`rtsw<N>-eth<P>`, `ctsw..`, `atsw..`); their tc
  qdiscs go with them;
- the state file.
It never calls `mn -c` (which needs Open vSwitch) and never kills by name.

Names defined here: `RunState`, `CleanupReport`, `state_dir`, `read_state`,
`write_state`, `update_state`, `clear_state`, `cleanup`, `check_trusted`, `owner_alive`, `proc_start`,
`zombie_or_gone`, `process_exited` (a process gone, or dead and not yet reaped),
`pin_netns`, `remove_netns`, `remove_control_files`, `pinned_netns`, `netns_name`, `root_links`,
`OUR_INTF`, `NETNS_DIR`, `NETNS_PREFIX`; for a server of a cluster fabric, `run_pids`
(the run's processes there), `serving_pid` and `read_arrivals_only_serving` (a BMv2
switch there found by its gRPC port and set to read arriving frames only).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import NetworkError, SwitchStartError
from .firewall import release
from .switchproc import RUN_ENV, proc_start, read_arrivals_only

__all__ = [
    "CONTROL_DIR",
    "NETNS_DIR",
    "NETNS_PREFIX",
    "OUR_INTF",
    "CleanupReport",
    "RunState",
    "check_trusted",
    "cleanup",
    "clear_state",
    "netns_name",
    "owner_alive",
    "pin_netns",
    "pinned_netns",
    "proc_start",
    "process_exited",
    "read_arrivals_only_serving",
    "read_state",
    "remove_control_files",
    "remove_netns",
    "root_links",
    "run_pids",
    "serving_pid",
    "state_dir",
    "update_state",
    "write_state",
    "zombie_or_gone",
]

OUR_INTF = re.compile(r"^(rtsw|ctsw|atsw)\d+-eth\d+$")
STATE_FILE = "run.json"
CONTROL_DIR = "switches"  # the switches' local sockets (0700)
PKI_DIR = "pki"  # the run's CA and certificates (topologies.pki)
NETNS_DIR = Path("/run/netns")  # where `ip netns` keeps named namespaces
NETNS_PREFIX = "aizone-"


def state_dir() -> Path:
    """Where `run.json` lives (created on demand by writers, mode 0700).

    `$AIZONE_STATE_DIR`, else `/run/aizone`. A folder that exists must be
    trusted (`NetworkError` otherwise): owned by root or by this user, and
    writable by nobody else, so no other user can plant a socket or a
    `run.json` that root would then act on.
    """
    env = os.environ.get("AIZONE_STATE_DIR")
    path = Path(env) if env else Path("/run/aizone")
    check_trusted(path)
    return path


def check_trusted(path: Path) -> None:
    """Raise `NetworkError` when `path` exists but another user could have made or changed it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise NetworkError(f"{path}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise NetworkError(f"{path}: the state folder is not a folder (a link or a file "
                           f"someone put there): remove it")
    if st.st_uid not in (0, os.geteuid()):
        raise NetworkError(f"{path}: the state folder belongs to uid {st.st_uid}, not to "
                           f"root or you: it is not trusted (remove it)")
    if st.st_mode & 0o022:
        raise NetworkError(f"{path}: the state folder is writable by other users (mode "
                           f"{st.st_mode & 0o777:o}): it is not trusted (chmod 700 it)")


@dataclass(kw_only=True)
class RunState:
    """What `run.json` holds (mutable: the runner fills it in as it goes)."""

    owner_pid: int
    owner_start: str  # /proc/<pid>/stat start time, so a reused pid is not taken for ours
    token: str
    name: str
    target: str
    switches: list[dict[str, Any]] = field(default_factory=list)  # SwitchRecord.to_json()
    hosts: list[dict[str, Any]] = field(default_factory=list)
    netns: list[str] = field(default_factory=list)  # pinned host namespaces
    interfaces: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    ready: bool = False


def owner_alive(state: RunState) -> bool:
    """Is the process that wrote `state` still running (not a reused pid, not a zombie)?

    A killed daemon stays a zombie until its parent (often init, which in a
    container may be slow to reap) collects it; it is dead all the same.
    """
    return proc_start(state.owner_pid) == state.owner_start and not zombie_or_gone(state.owner_pid)


def read_state(directory: Path | None = None) -> RunState | None:
    """The RunState in `directory` (default `state_dir()`); None when absent or unreadable."""
    path = (directory or state_dir()) / STATE_FILE
    try:
        data = json.loads(path.read_text())
        return RunState(**data)
    except (OSError, ValueError, TypeError):
        return None


def write_state(state: RunState, directory: Path | None = None) -> Path:
    """Write `state` as run.json in `directory` (default `state_dir()`), atomically."""
    d = directory or state_dir()
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = d / STATE_FILE
    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(asdict(state), indent=2))
    tmp.replace(path)  # atomic: a reader never sees half a file
    return path


def clear_state(directory: Path | None = None) -> None:
    """Remove run.json from `directory` (default `state_dir()`), if it is there."""
    (directory or state_dir()).joinpath(STATE_FILE).unlink(missing_ok=True)


@contextlib.contextmanager
def _locked(directory: Path | None) -> Iterator[None]:
    # The folder itself is locked: run.json is replaced on every write (a
    # lock on it would be on the old file), and no lock file is left behind.
    d = directory or state_dir()
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def update_state(change: Callable[[RunState], None],
                 directory: Path | None = None) -> RunState | None:
    """Read run.json, apply `change` to it and write it back, under a lock.

    Writers that each change their own part (the daemon its `meta`,
    `topologies.attach` a restarted switch's record) do not undo each
    other's changes. Returns the new state, None when there is no run.json.
    """
    with _locked(directory):
        state = read_state(directory)
        if state is None:
            return None
        change(state)
        write_state(state, directory)
        return state


# --- pinned host namespaces ----------------------------------------------------


def netns_name(host: str) -> str:
    """The pinned namespace of a host: "aizone-<host>" (in /run/netns)."""
    return f"{NETNS_PREFIX}{host}"


def pin_netns(name: str, pid: int) -> None:
    """Pin the network namespace of `pid` as /run/netns/<name> (`ip netns attach`)."""
    out = subprocess.run(["ip", "netns", "attach", name, str(pid)], capture_output=True, text=True)
    if out.returncode != 0:
        raise NetworkError(f"cannot pin the network namespace of pid {pid} as {NETNS_DIR / name}: "
                           f"{out.stderr.strip()}")


def pinned_netns() -> list[str]:
    """Our pinned namespaces present now (names under /run/netns starting "aizone-")."""
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(NETNS_PREFIX))
    except OSError:
        return []


def _netns_inode(name: str) -> int | None:
    try:
        return os.stat(NETNS_DIR / name).st_ino
    except OSError:
        return None


def remove_netns(names: list[str]) -> list[str]:
    """End the processes inside these pinned namespaces and unpin them; returns those removed."""
    present = [n for n in names if (NETNS_DIR / n).exists()]
    inodes = {ino for ino in (_netns_inode(n) for n in present) if ino is not None}
    root = os.stat("/proc/self/ns/net").st_ino
    inodes.discard(root)  # never: a stale mount of the root namespace would take us all
    if inodes:
        _kill_all(_pids_in(inodes))
    for name in present:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    return present


# --- cleanup -------------------------------------------------------------------


@dataclass
class CleanupReport:
    """What `cleanup` removed."""

    stopped_owner: int | None = None
    killed: list[int] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    state_removed: bool = False
    firewall: bool = False  # the control ports' nftables table (topologies.firewall)

    @property
    def anything(self) -> bool:
        """Whether cleanup removed or stopped anything at all."""
        return bool(self.stopped_owner or self.killed or self.interfaces or self.namespaces
                    or self.state_removed or self.firewall)


def _marker(env: bytes) -> str | None:
    """The value of AIZONE_RUN in a /proc/<pid>/environ blob, or None."""
    key = RUN_ENV.encode() + b"="
    for item in env.split(b"\0"):
        if item.startswith(key):
            return item[len(key):].decode(errors="replace")
    return None


def _pids_in(netns_inodes: set[int]) -> list[int]:
    """Processes inside these network namespaces, marked or not."""
    return _marked_pids(netns_inodes, by_marker=False)


def _marked_pids(netns_inodes: set[int], token: str | None = None, *,
                 by_marker: bool = True) -> list[int]:
    """Our processes: marked with AIZONE_RUN (= `token` if given), or in a recorded netns."""
    me = os.getpid()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == me:
            continue
        mark = None
        if by_marker:
            try:
                mark = _marker((entry / "environ").read_bytes())
            except OSError:
                pass
        ours = mark is not None and (token is None or mark == token)
        if not ours and netns_inodes:
            try:
                ours = os.stat(entry / "ns" / "net").st_ino in netns_inodes
            except OSError:
                ours = False
        if ours:
            out.append(pid)
    return out


def run_pids(token: str) -> list[int]:
    """This machine's processes marked with run `token` (their AIZONE_RUN), this one left
    out: what a server of a cluster fabric runs for the run."""
    return _marked_pids(set(), token)


def serving_pid(token: str, grpc_port: int) -> int | None:
    """The process of run `token` serving P4Runtime on `grpc_port`: one of its arguments is
    "<address>:<grpc_port>" (a switch on its own server, found there)."""
    suffix = f":{grpc_port}"
    for pid in run_pids(token):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(a.endswith(suffix) and " " not in a and a.count(":") == 1 for a in argv):
            return pid
    return None


def read_arrivals_only_serving(token: str, grpc_port: int, ports: int,
                               timeout: float) -> None:
    """`switchproc.read_arrivals_only` for the switch of run `token` serving `grpc_port` here:
    what a switch's own server runs (over ssh) when the switch's pid on the controller's
    machine is its ssh session."""
    deadline = time.monotonic() + timeout
    while (pid := serving_pid(token, grpc_port)) is None:
        if time.monotonic() > deadline:
            raise SwitchStartError(f"no switch of this run serves gRPC port {grpc_port}")
        time.sleep(0.1)
    read_arrivals_only(f"the switch on gRPC port {grpc_port}", pid, ports, deadline)


def _kill_all(pids: list[int], timeout: float = 3.0) -> list[int]:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if proc_start(p) and not zombie_or_gone(p)]
        if alive:
            time.sleep(0.05)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return pids


def zombie_or_gone(pid: int) -> bool:
    """Whether `pid` is gone, or a zombie (dead, not yet reaped by its parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def process_exited(pid: int) -> bool:
    """Gone, or a zombie none of whose threads still run: its sockets and files are closed.

    A multithreaded process's leader turns zombie before its other threads
    have exited, and they hold the process's files (its ports) until then; a
    zombie is reaped by its parent, which for a daemon is init (in a container
    it may take seconds).
    """
    if not zombie_or_gone(pid):
        return False
    try:
        return len(os.listdir(f"/proc/{pid}/task")) <= 1
    except OSError:
        return True


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
    """Remove our processes, namespaces, interfaces and state file left by earlier runs.

    A run whose owner is still alive is asked to stop (SIGTERM, it tears its
    network down itself) when `stop_running`; otherwise `NetworkError` says
    it is running. Safe to call when nothing is left (it then does nothing).
    With `token`, only processes of that run (and no interfaces or
    namespaces by name pattern, only recorded ones) are touched.
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
    namespaces = set(state.netns if state else [])
    if token is None:
        namespaces |= set(pinned_netns())
    inodes = {int(h["netns_inode"]) for h in (state.hosts if state else []) if h.get("netns_inode")}
    inodes |= {ino for ino in (_netns_inode(n) for n in namespaces) if ino is not None}
    inodes.discard(os.stat("/proc/self/ns/net").st_ino)
    report.killed = _kill_all(_marked_pids(inodes, token))
    # Interfaces before namespaces: deleting the root end of a veth takes its
    # peer at once, where a namespace's own teardown runs later in the kernel.
    recorded = set(state.interfaces if state else [])
    for name in root_links():
        if name in recorded or (token is None and OUR_INTF.match(name)):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
            report.interfaces.append(name)
    report.namespaces = remove_netns(sorted(namespaces))
    if token is None or state is not None:
        report.firewall = remove_control_files(directory or state_dir())
    if state is not None:
        clear_state(directory)
        report.state_removed = True
    return report


def remove_control_files(directory: Path) -> bool:
    """The run's firewall table, CA and switch sockets gone; True if there was a table."""
    released = release()
    for name in (PKI_DIR, CONTROL_DIR):
        shutil.rmtree(directory / name, ignore_errors=True)
    return released
