"""Every P4Runtime write the controller sent a switch, per switch, as text-format protobuf.

What the p4lang tutorials keep in `logs/<switch>-p4runtime-requests.txt`,
with the time and the reason of each write: `start` (bring-up),
`reconnect`, `mode ecmp`, `link down rtsw1:5-ctsw1:1`, `acl rtsw1`, ...
(the reason the daemon reconciled for), or `direct` for writes outside the
intent. One record per Write RPC:

    # 2026-12-02T07:30:00.123456Z reason="mode ecmp" updates=12
    updates {
      type: MODIFY
      entity { table_entry { ... } }
    }

Files live in the fabric's state folder (`<state dir>/p4rt/<switch>.txt`,
root's: the folder is 0700) and rotate at `max_bytes` with `backups` old
files kept, so a long-running fabric holds the latest few MiB per switch;
a new fabric starts them afresh, a daemon that re-attaches carries on.
Not logged: the statistics poller's register clears and the probes'
packet-outs (every second, they would push everything else out).
`read` gives the records back, oldest first; `aizone routes --history
SWITCH` shows them.

Names defined here: `WriteLog`, `WriteRecord`.
"""

from __future__ import annotations

import datetime as dt
import logging
import logging.handlers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import text_format

__all__ = ["WriteLog", "WriteRecord"]

_HEADER = re.compile(r'^# (\S+) reason="((?:[^"\\]|\\.)*)" updates=(\d+)$')


@dataclass(frozen=True, kw_only=True)
class WriteRecord:
    """One Write RPC: when, why, how many updates, and their text-format protobuf."""

    at: str  # ISO 8601, UTC
    reason: str
    updates: int
    text: str

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-able dict (`GET /routes/history/{switch}`)."""
        return {"at": self.at, "reason": self.reason, "updates": self.updates,
                "text": self.text}


class WriteLog:
    """The per-switch write logs under `directory` (see the module docstring)."""

    def __init__(self, directory: Path, *, max_bytes: int = 1 << 20, backups: int = 4,
                 fresh: bool = False) -> None:
        """`fresh`: a new fabric: the logs of the one before are removed first."""
        self.directory = directory
        self.max_bytes = max_bytes
        self.backups = backups
        self._loggers: dict[str, logging.Logger] = {}
        if fresh and directory.is_dir():
            for f in directory.glob("*.txt*"):
                f.unlink()

    def path(self, switch: str) -> Path:
        """The current log file of `switch`: `<directory>/<switch>.txt` (older ones: `.1`, ...)."""
        return self.directory / f"{switch}.txt"

    def _logger(self, switch: str) -> logging.Logger:
        log = self._loggers.get(switch)
        if log is None:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            log = logging.getLogger(f"aizone.p4rt.{id(self)}.{switch}")
            log.propagate = False
            log.setLevel(logging.INFO)
            handler = logging.handlers.RotatingFileHandler(
                self.path(switch), maxBytes=self.max_bytes, backupCount=self.backups,
                encoding="utf-8")
            handler.setFormatter(logging.Formatter("%(message)s"))
            log.addHandler(handler)
            self._loggers[switch] = log
        return log

    def record(self, switch: str, reason: str, updates: Sequence[Any]) -> None:
        """Log one Write of `updates` (`p4r.Update` messages) for `reason`."""
        at = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        quoted = reason.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
        body = "".join("updates {\n" + _indent(text_format.MessageToString(u)) + "}\n"
                       for u in updates)
        self._logger(switch).info("# %s reason=\"%s\" updates=%d\n%s", at, quoted,
                                  len(updates), body.rstrip("\n"))

    def read(self, switch: str, limit: int | None = None) -> list[WriteRecord]:
        """The records of `switch`, oldest first (the latest `limit` of them)."""
        for h in self._loggers.get(switch, logging.getLogger("-")).handlers:
            h.flush()
        files = [self.path(switch).with_name(f"{switch}.txt.{i}")
                 for i in range(self.backups, 0, -1)] + [self.path(switch)]
        out: list[WriteRecord] = []
        for f in files:
            try:
                text = f.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            out += _parse(text)
        return out[-limit:] if limit else out

    def close(self) -> None:
        """Close every log file; a later `record` opens them again."""
        for log in self._loggers.values():
            for h in list(log.handlers):
                h.close()
                log.removeHandler(h)
        self._loggers.clear()


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


def _parse(text: str) -> list[WriteRecord]:
    out: list[WriteRecord] = []
    head: re.Match[str] | None = None
    body: list[str] = []

    def flush() -> None:
        """Add the record being read, if any, to `out`."""
        if head is not None:
            reason = re.sub(r"\\(.)", r"\1", head.group(2))
            out.append(WriteRecord(at=head.group(1), reason=reason,
                                   updates=int(head.group(3)), text="\n".join(body)))

    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            flush()
            head, body = m, []
        elif head is not None:
            body.append(line)
    flush()
    return out
