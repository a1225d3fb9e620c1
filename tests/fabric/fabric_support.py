"""Helpers for fabric tests: leftover checks and running the aizone CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from topologies.runstate import OUR_INTF, read_state, root_links

ROOT = Path(__file__).resolve().parents[2]


def marked_processes() -> list[str]:
    """Processes carrying the aizone run marker (cmdlines)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if env.startswith(b"AIZONE_RUN=") or b"\0AIZONE_RUN=" in env:
            out.append(f"{entry.name}: {cmd}")
    return out


def our_namespaces() -> list[str]:
    """Network namespaces (by inode) that hold a marked process other than the root one.

    Mininet's host namespaces are anonymous: they live as long as a process
    in them does, so "no namespace left" means no process of ours holds one.
    Other projects' processes on a shared machine are not counted.
    """
    root = os.stat("/proc/self/ns/net").st_ino
    out = set()
    for line in marked_processes():
        pid = line.split(":", 1)[0]
        try:
            ino = os.stat(f"/proc/{pid}/ns/net").st_ino
        except OSError:
            continue
        if ino != root:
            out.add(str(ino))
    return sorted(out)


def leftovers() -> dict[str, list[str]]:
    """What a finished run must not leave: processes, namespaces, interfaces, state file."""
    return {
        "processes": marked_processes(),
        "netns": our_namespaces(),
        "interfaces": [n for n in root_links() if OUR_INTF.match(n)],
        "pinned": pinned_namespaces(),
        "state": ["run.json"] if read_state() is not None else [],
    }


def assert_clean(before: dict[str, list[str]] | None = None) -> None:
    now = leftovers()
    if before is not None:
        now = {k: [x for x in v if x not in before.get(k, [])] for k, v in now.items()}
    assert now == {k: [] for k in now}, f"leftovers: {now}"


def aizone(*args: str, user: str | None = None, timeout: float = 600,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the aizone CLI (`python -m aizone.cli`), optionally as another user."""
    cmd = [sys.executable, "-m", "aizone.cli", *args]
    if user:
        # The user keeps only the right to read any directory, so that a checkout
        # under a private directory (mktemp -d is 0700) still imports.
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user if user != 'nobody' else 'nogroup'}",
               "--clear-groups", "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", *cmd]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def pinned_namespaces() -> list[str]:
    """Host namespaces pinned under /run/netns by aizone (aizone-<host>)."""
    d = Path("/run/netns")
    return sorted(p.name for p in d.iterdir() if p.name.startswith("aizone-")) if d.is_dir() else []


def in_host(host: str, *argv: str) -> list[str]:
    """A command line that runs `argv` inside a running fabric's host (its pinned namespace)."""
    return ["ip", "netns", "exec", f"aizone-{host}", *argv]


def agent(host: str, *args: str) -> list[str]:
    """`python -m traffic.agent ARGS` inside `host`."""
    return in_host(host, sys.executable, "-m", "traffic.agent", *args)


def last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            try:
                data: dict[str, Any] = json.loads(line)
                return data
            except ValueError:
                continue
    raise AssertionError(f"no JSON in {text[-500:]!r}")


class Flow:
    """One RoCEv2 flow between two hosts of a running fabric, with the traffic agent.

    The receiver starts first (it says when it listens); `run()` sends and
    returns (sender report, receiver report).
    """

    def __init__(self, src: str, src_intf: str, dst: str, dst_intf: str, dst_ip: str, *,
                 messages: int, size: int = 1024, qps: str = "17", rate_mbps: float | None = None,
                 extra: tuple[str, ...] = (), tmp: Path) -> None:
        self.src, self.src_intf, self.dst, self.dst_intf = src, src_intf, dst, dst_intf
        self.dst_ip, self.messages, self.size, self.qps = dst_ip, messages, size, qps
        self.rate_mbps, self.extra, self.tmp = rate_mbps, extra, tmp
        self.receiver: subprocess.Popen[str] | None = None

    def start_receiver(self, timeout: float = 60) -> None:
        ready = self.tmp / f"ready-{self.dst}-{os.getpid()}-{time.monotonic_ns()}"
        self.receiver = subprocess.Popen(
            agent(self.dst, "recv", "--iface", self.dst_intf, "--messages", str(self.messages),
                  "--timeout", str(timeout), "--json", "--ready-file", str(ready)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not ready.exists():
            if self.receiver.poll() is not None or time.monotonic() > deadline:
                out, err = self.receiver.communicate(timeout=10)
                raise AssertionError(f"receiver did not start: {out} {err}")
            time.sleep(0.05)

    def send(self, timeout: float = 120) -> dict[str, Any]:
        argv = ["send", "--iface", self.src_intf, "--dst-ip", self.dst_ip, "--qps", self.qps,
                "--messages", str(self.messages), "--size", str(self.size), "--json",
                *self.extra]
        if self.rate_mbps:
            argv += ["--rate-mbps", str(self.rate_mbps)]
        proc = subprocess.run(agent(self.src, *argv), capture_output=True, text=True,
                              timeout=timeout)
        return last_json(proc.stdout + proc.stderr)

    def received(self, timeout: float = 120) -> dict[str, Any]:
        assert self.receiver is not None
        out, err = self.receiver.communicate(timeout=timeout)
        return last_json(out + err)

    def run(self) -> tuple[dict[str, Any], dict[str, Any]]:
        self.start_receiver()
        sent = self.send()
        return sent, self.received()
