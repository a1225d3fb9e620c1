"""Helpers for the topology tests that build real networks: what a run must not leave behind.

`leftovers()`: marked processes, pinned namespaces, our interfaces (their tc
qdiscs go with them), the state file; `assert_clean(before)` compares with
a snapshot taken before the test.

Names defined here: `marked_processes`, `leftovers`, `assert_clean`.
"""

from __future__ import annotations

import os
from pathlib import Path

from topologies.runstate import OUR_INTF, pinned_netns, read_state, root_links
from topologies.switchproc import RUN_ENV


def marked_processes() -> list[str]:
    out = []
    key = f"{RUN_ENV}=".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if env.startswith(key) or b"\0" + key in env:
            out.append(f"{entry.name}: {cmd}")
    return out


def leftovers() -> dict[str, list[str]]:
    return {
        "processes": marked_processes(),
        "netns": pinned_netns(),
        "interfaces": [n for n in root_links() if OUR_INTF.match(n)],
        "state": ["run.json"] if read_state() is not None else [],
    }


def assert_clean(before: dict[str, list[str]] | None = None) -> None:
    now = leftovers()
    if before is not None:
        now = {k: [x for x in v if x not in before.get(k, [])] for k, v in now.items()}
    assert now == {k: [] for k in now}, f"leftovers: {now}"
