"""Servers made on this machine for the cluster tests and bench: namespaces running sshd.

`NamespaceServers(count)` makes `count` "servers": each a network
namespace (`azsrv-<i>`) with its own sshd listening on that namespace's
address 10.251.0.<1+i>, joined to the root namespace (this machine, the
first server, 10.251.0.1) by a veth on one bridge (`azsrv0`), so every
server reaches every other one as real machines on one switch do. Mininet's
cluster code then runs for real against them: ssh sessions into the
server, remote host shells (`mnexec` through ssh), GRE tunnels between the
servers' addresses.

Everything ssh needs is made in a temporary folder and named explicitly,
never in root's ~/.ssh: a client key (ed25519), each server's host key, an
authorized_keys file, and an ssh client config (`ssh_config`) pointing at
the key and at a known_hosts file holding the servers' host keys. aizone
reads that config from `AIZONE_SSH_CONFIG` (`env()` gives it).

`NamespaceServers(count, clock_skew_s={i: seconds})` gives server i a wall
clock that far from this machine's: its sshd sets, for every session it
runs, libfaketime (`LD_PRELOAD`, Debian's libfaketime) with that offset, so
every program started there over ssh reads the skewed time, as on a real
server whose clock is off. `set_clock_skew(i, seconds)` does it later (a
clock that drifts while a fabric runs): the sessions opened after it read
the skewed time, those already open keep theirs; `None` puts it back.
`faketime_missing()` says why it cannot ("" when it can).

A namespace shares this machine's filesystem and processes, so the same
Python, Mininet and aizone are there: what this cannot show is real
cross-machine latency and bandwidth, and a server's own filesystem (see
docs/scale-out.md).

`stop()` ends every sshd, deletes the namespaces, the bridge and the
folder; it is idempotent, and `with NamespaceServers(2) as servers:` calls
it on any exit. `sshd_missing()` says why sshd cannot run here ("" when it
can).

Names defined here: `NamespaceServers`, `sshd_missing`, `faketime_missing`, `SSHD`,
`SSH_CONFIG_ENV`, `LIBFAKETIME`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from topologies.cluster import SSH_CONFIG_ENV

__all__ = ["LIBFAKETIME", "SSHD", "SSH_CONFIG_ENV", "NamespaceServers", "faketime_missing",
           "sshd_missing"]

SSHD = "/usr/sbin/sshd"
LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
_BRIDGE = "azsrv0"
_SUBNET = "10.251.0"
_NS_PREFIX = "azsrv-"


def sshd_missing() -> str:
    """Why sshd cannot run here ("" when it can): not installed, or not root."""
    if os.geteuid() != 0:
        return "servers in namespaces need root"
    for tool in (SSHD, shutil.which("ssh"), shutil.which("ssh-keygen")):
        if not tool or not Path(tool).exists():
            return f"{tool or 'ssh/ssh-keygen'} is not installed (Debian: openssh-server)"
    return ""


def faketime_missing() -> str:
    """Why a server's clock cannot be skewed here ("" when it can)."""
    if not Path(LIBFAKETIME).exists():
        return f"{LIBFAKETIME} is not installed (Debian: libfaketime; `make apt-test`)"
    return ""


def _run(*argv: str) -> str:
    out = subprocess.run(list(argv), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {out.stderr.strip() or out.stdout.strip()}")
    return out.stdout


class NamespaceServers:
    """`count` sshd servers in namespaces beside this machine (see the module docstring)."""

    def __init__(self, count: int, *, clock_skew_s: Mapping[int, float] | None = None) -> None:
        if count < 1:
            raise ValueError(f"NamespaceServers: count must be at least 1, not {count}")
        self.count = count
        self.clock_skew_s = dict(clock_skew_s or {})
        bad = sorted(i for i in self.clock_skew_s if not 0 <= i < count)
        if bad:
            raise ValueError(f"NamespaceServers: clock_skew_s names server {bad[0]}, not one "
                             f"of 0..{count - 1}")
        if self.clock_skew_s and faketime_missing():
            raise RuntimeError(faketime_missing())
        self.dir = Path(tempfile.mkdtemp(prefix="aizone-servers-"))
        self.addresses = [f"{_SUBNET}.{2 + i}" for i in range(count)]
        self.namespaces = [f"{_NS_PREFIX}{1 + i}" for i in range(count)]
        self.local = f"{_SUBNET}.1"
        self._sshd: list[subprocess.Popen[bytes]] = []

    @property
    def ssh_config(self) -> Path:
        """The ssh client config that reaches every server as root with the test's key."""
        return self.dir / "ssh_config"

    def sessions(self, i: int) -> int:
        """How many ssh sessions server i's sshd has accepted so far (its log)."""
        return (self.dir / f"sshd{i}.log").read_text(errors="replace").count("Accepted publickey")

    def env(self) -> dict[str, str]:
        """The environment entries aizone needs to reach these servers."""
        return {SSH_CONFIG_ENV: str(self.ssh_config)}

    # --- life ------------------------------------------------------------------

    def start(self) -> NamespaceServers:
        """Make the bridge, the namespaces and their sshd; stops what it made on failure."""
        try:
            self._keys()
            _run("ip", "link", "add", _BRIDGE, "type", "bridge")
            _run("ip", "addr", "add", f"{self.local}/24", "dev", _BRIDGE)
            _run("ip", "link", "set", _BRIDGE, "up")
            for i, (ns, address) in enumerate(zip(self.namespaces, self.addresses, strict=True)):
                self._server(i, ns, address)
            for address in self.addresses:
                self._wait_ssh(address)
        except BaseException:
            self.stop()
            raise
        return self

    def _keys(self) -> None:
        os.chmod(self.dir, 0o700)
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "aizone-test",
             "-f", str(self.dir / "id_ed25519"))
        (self.dir / "authorized_keys").write_text((self.dir / "id_ed25519.pub").read_text())
        known = []
        for i, address in enumerate(self.addresses):
            key = self.dir / f"host{i}_ed25519"
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", address, "-f", str(key))
            known.append(f"{address} {Path(f'{key}.pub').read_text().split(' ')[0]} "
                         f"{Path(f'{key}.pub').read_text().split(' ')[1]}")
        (self.dir / "known_hosts").write_text("\n".join(known) + "\n")
        self.ssh_config.write_text(
            f"Host {_SUBNET}.*\n"
            f"  User root\n"
            f"  IdentityFile {self.dir / 'id_ed25519'}\n"
            f"  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.dir / 'known_hosts'}\n"
            f"  StrictHostKeyChecking yes\n"
            f"  BatchMode yes\n"
            f"  ConnectTimeout 10\n")

    def _server(self, i: int, ns: str, address: str) -> None:
        veth = f"azsrv{1 + i}"
        _run("ip", "netns", "add", ns)
        _run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
        _run("ip", "link", "set", veth, "master", _BRIDGE, "up")
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        _run("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
        _run("ip", "-n", ns, "link", "set", "eth0", "up")
        config = self._write_config(i, address)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
        log = open(self.dir / f"sshd{i}.log", "wb")  # noqa: SIM115 - handed to the child
        try:
            self._sshd.append(subprocess.Popen(
                ["ip", "netns", "exec", ns, SSHD, "-D", "-e", "-f", str(config)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True))
        finally:
            log.close()

    def set_clock_skew(self, i: int, seconds: float | None) -> None:
        """From now on, every new ssh session on server i reads a wall clock `seconds` from
        this machine's (None: the true one), as a server whose clock drifted after `up`: its
        sshd reloads its config (SIGHUP); the sessions already open keep their clock."""
        if seconds is not None and faketime_missing():
            raise RuntimeError(faketime_missing())
        if seconds is None:
            self.clock_skew_s.pop(i, None)
        else:
            self.clock_skew_s[i] = seconds
        self._write_config(i, self.addresses[i])
        os.kill(self._sshd[i].pid, signal.SIGHUP)  # `ip netns exec` became sshd: same pid
        time.sleep(0.5)  # sshd re-executes itself, then listens again
        self._wait_ssh(self.addresses[i])

    def _write_config(self, i: int, address: str) -> Path:
        config = self.dir / f"sshd{i}_config"
        config.write_text(
            f"ListenAddress {address}\n"
            f"Port 22\n"
            f"HostKey {self.dir / f'host{i}_ed25519'}\n"
            f"PidFile {self.dir / f'sshd{i}.pid'}\n"
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}\n"
            f"PermitRootLogin prohibit-password\n"
            f"PasswordAuthentication no\n"
            f"KbdInteractiveAuthentication no\n"
            f"UsePAM no\n"
            f"StrictModes no\n"
            f"UseDNS no\n"
            f"PermitTunnel yes\n"
            f"AllowTcpForwarding yes\n"
            f"AllowStreamLocalForwarding yes\n"
            f"StreamLocalBindUnlink yes\n"
            f"MaxSessions 200\n"
            f"MaxStartups 200\n"
            # A session keeps the environment it needs: the run marker, PATH (target tools).
            f"PermitUserEnvironment no\n"
            f"AcceptEnv AIZONE_RUN\n"
            + (f"SetEnv LD_PRELOAD={LIBFAKETIME} FAKETIME={self.clock_skew_s[i]:+g}\n"
               if i in self.clock_skew_s else ""))
        return config

    def _wait_ssh(self, address: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((address, 22), timeout=0.5) as s:
                    if s.recv(4).startswith(b"SSH-"):
                        break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"sshd on {address} did not answer within {timeout:.0f} s "
                               f"(log: {self.dir})")
        out = subprocess.run(["ssh", "-F", str(self.ssh_config), address, "true"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise RuntimeError(f"ssh to {address} failed: {out.stderr.strip()}")

    def stop(self) -> None:
        """End every sshd and everything started through it; delete namespaces, bridge, folder."""
        for proc in self._sshd:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(10)
        self._sshd.clear()
        present = set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()
        for ns in self.namespaces:
            if ns in present:
                # Whatever still runs in the server (a session's leftover) ends with it.
                pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                                      text=True).stdout.split()
                for pid in pids:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError):
                        pass
                subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", _BRIDGE], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> NamespaceServers:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
