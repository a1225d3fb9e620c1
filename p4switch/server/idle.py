"""Idle-timeout notifications (P4Runtime spec §9.1.7 and §16.4).

`IdleScanner` runs a thread that, every `interval` seconds, asks the running
Device for the entries of every `support_timeout` table that have not been
hit for their `idle_timeout_ns` (`Switch.table_idle_entries(table, once=True)`:
each entry once per idle period) and hands them to `notify(table_id,
entries)`, which sends one `IdleTimeoutNotification` per table and scan.

The spec wants the server to "reset the timer" of a reported entry: without
a hit it is reported again one TTL later. The Device only reports an entry
again after a hit, so the scanner remembers what it reported and, once a
reported entry is due again, checks with `once=False` that it is still
there and still not hit since, and reports it again. That second query runs
only when something is due, so a table full of idle entries is not copied
on every scan.

Names defined here: `IdleScanner`, `SCAN_INTERVAL`, `Key`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from p4switch.pipeline.state import TableEntry

log = logging.getLogger("p4switch.server")

SCAN_INTERVAL = 0.1  # seconds; the spec's example scans every 10 ms, a hardware-speed figure

Key = tuple[Any, ...]


def _key(e: TableEntry) -> Key:
    return (frozenset(e.match.items()), e.priority)


class IdleScanner:
    """See module docstring.

    `tables()` returns [(table id, table name)] of the committed pipeline's
    idle-capable tables and its Device (or None); `notify(table_id, entries)`
    sends the notification (called from the scanner thread).
    """

    def __init__(self, tables: Callable[[], tuple[list[tuple[int, str]], Any]],
                 notify: Callable[[int, list[TableEntry]], None], interval: float = SCAN_INTERVAL) -> None:
        self.tables = tables
        self.notify = notify
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # table name -> {entry key: (reported at ns, idle_timeout_ns)}
        self._reported: dict[str, dict[Key, tuple[int, int]]] = {}
        self._device: Any = None

    def start(self) -> None:
        """Start the scanner thread (once; not after `close`)."""
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._loop, name="p4rt-idle", daemon=True)
                self._thread.start()

    def reset(self) -> None:
        """A new pipeline: forget what was reported."""
        with self._lock:
            self._reported.clear()

    def close(self) -> None:
        """Stop the scanner thread, waiting up to 2 s for it."""
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=2)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.scan()
            except Exception:  # a failing scan must not end idle notifications for good
                log.exception("idle-timeout scan failed")

    def scan(self, now_ns: int | None = None) -> None:
        """One scan over every idle-capable table (also callable directly, e.g. by tests)."""
        tables, dev = self.tables()
        fn = getattr(dev, "table_idle_entries", None)
        if fn is None or not tables:
            return
        with self._lock:
            if dev is not self._device:
                self._device = dev
                self._reported.clear()
            now = time.monotonic_ns() if now_ns is None else now_ns
            for tid, name in tables:
                out = list(fn(name, now, once=True))
                reported = self._reported.setdefault(name, {})
                for e in out:
                    reported[_key(e)] = (now, e.idle_timeout_ns)
                due = [k for k, (at, ttl) in reported.items() if now - at >= ttl]
                if due:
                    out.extend(self._again(fn, name, now, reported, due, {_key(e) for e in out}))
                if out:
                    self.notify(tid, out)

    @staticmethod
    def _again(fn: Callable[..., Any], name: str, now: int, reported: dict[Key, tuple[int, int]],
               due: list[Key], fresh: set[Key]) -> list[TableEntry]:
        """Reported entries due again: still present and not hit since their last report."""
        idle = {_key(e): e for e in fn(name, now, once=False)}
        again = []
        for k in due:
            e = idle.get(k)
            at, _ = reported[k]
            if e is None or e.last_hit_ns > at:
                del reported[k]  # deleted, or hit (the Device reports it after its next idle period)
            elif k not in fresh:
                reported[k] = (now, e.idle_timeout_ns)
                again.append(e)
        return again


__all__ = ["IdleScanner", "SCAN_INTERVAL"]
