"""What the `aizone` commands share for output: exit codes, `--json`, consoles, the bring-up view.

Commands print data for people with rich (`aizone.views`) or, with
`--json`, as one JSON document for programs (`emit_json`); progress and
errors go to stderr (`err_console`, `fail`: one line, `aizone: error:
...`). `UpProgress` shows the daemon's bring-up events (`up`, `demo`) as a
line per step and a bar per switch. `dashboard_url` is the dashboard's
address with the fabric's token.

Names defined here: `PROG`, `EXIT_OK`, `EXIT_FAIL`, `EXIT_INPUT`,
`EXIT_INTERRUPTED`, `emit_json`, `err_console`, `fail`, `dashboard_url`,
`UpProgress`, `describe_step`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from controller.access import read_token

__all__ = ["EXIT_FAIL", "EXIT_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "PROG", "UpProgress",
           "dashboard_url", "describe_step", "emit_json", "err_console", "fail"]

PROG = "aizone"
EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def err_console() -> Console:
    """A console on stderr (progress, notes), without highlighting guesses."""
    return Console(stderr=True, highlight=False)


def emit_json(args: argparse.Namespace, data: Any) -> bool:
    """Print `data` as JSON when --json was given; True if it was."""
    if getattr(args, "json", False):
        print(json.dumps(data, default=str))
        return True
    return False


def fail(message: str, code: int) -> int:
    """Print `message` as one `aizone: error:` line on stderr (its first line, and how many
    more); returns `code`."""
    lines = [ln for ln in str(message).splitlines() if ln.strip()] or ["unknown error"]
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    print(f"{PROG}: error: {lines[0]}{more}", file=sys.stderr, flush=True)
    return code


def dashboard_url(api: dict[str, Any]) -> str:
    """The dashboard's address with the fabric's token (root reads it from its 0600 file)."""
    token = read_token()
    base = str(api.get("url") or "")
    return f"{base}?token={token}" if token and base else base


class UpProgress:
    """Bring-up events as rich progress: a line per step, a bar per switch."""

    def __init__(self, console: Console, *, quiet: bool, attach: bool) -> None:
        self.attach = attach
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                                 console=console, disable=quiet)
        self.current: Any = None
        self.switches: dict[str, Any] = {}

    def __enter__(self) -> UpProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        """Show one daemon event: a step done or begun, a switch's phase or reconcile."""
        p = self.progress
        if kind == "progress":
            if self.current is not None:
                p.update(self.current, completed=1, total=1)
                self.current = None
            step = data["step"]
            if step == "up":
                return
            self.current = p.add_task(describe_step(step, data), total=1, note="")
            if step == "sessions":
                for name in data.get("names", []):
                    self.switches[name] = p.add_task(f"  {name}", total=1, note="connecting")
        elif kind == "switch" and data.get("switch") in self.switches:
            p.update(self.switches[data["switch"]], note=str(data.get("phase", "")))
        elif kind == "reconciled" and data["switch"] in self.switches:
            n = data["counts"]
            written = n["insert"] + n["modify"]
            note = (f"{written} written, {n['unchanged']} already there" if self.attach
                    else f"{written} entities")
            p.update(self.switches[data["switch"]], completed=1, note=note)


def describe_step(step: str, data: dict[str, Any]) -> str:
    """The line shown for bring-up step `step` (its name when not known)."""
    texts = {
        "api": "controller API",
        "checking": f"checking {data.get('topology', '')}",
        "compiling": f"compiling for {data.get('target', '')}",
        "network": f"{data.get('switches')} switch(es), {data.get('hosts')} host(s) in Mininet",
        "attached": f"re-attaching to {data.get('switches')} running switch(es)",
        "sessions": "P4Runtime sessions: pipelines and entries",
        "capturing": f"capturing {data.get('ports')} switch ports into {data.get('directory')}",
    }
    return texts.get(step, step)
