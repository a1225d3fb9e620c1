"""Helpers for fabric tests: leftover checks and running the aizone CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
        "state": ["run.json"] if read_state() is not None else [],
    }


def assert_clean(before: dict[str, list[str]] | None = None) -> None:
    now = leftovers()
    if before is not None:
        now = {k: [x for x in v if x not in before.get(k, [])] for k, v in now.items()}
    assert now == {k: [] for k in now}, f"leftovers: {now}"


def aizone(*args: str, user: str | None = None, timeout: float = 600,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the aizone CLI (`python -m controller.cli`), optionally as another user."""
    cmd = [sys.executable, "-m", "controller.cli", *args]
    if user:
        # The user keeps only the right to read any directory, so that a checkout
        # under a private directory (mktemp -d is 0700) still imports.
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user if user != 'nobody' else 'nogroup'}",
               "--clear-groups", "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", *cmd]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
