"""Digest lists: buffering, de-duplication and acks (P4Runtime spec §9.9).

The data plane hands every `digest()` call to `DigestEngine.offer` (from the
forwarding thread; it only appends under a lock). Per digest id a buffer
collects distinct messages until `max_list_size` is reached or
`max_timeout_ns` has passed since the first one, then one `DigestList` goes
to the sink (the primary controller's stream). Messages sent but not yet
acknowledged stay in a cache for `ack_timeout_ns` and are not sent again;
a `DigestListAck` clears its list from the cache.

Names defined here: `DigestEngine`, `Config`, `ConfigLookup`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from p4switch.proto import p4d, p4r

Config = p4r.DigestEntry.Config
ConfigLookup = Callable[[int], "Config | None"]


@dataclass
class _Buffer:
    first_ns: int = 0
    items: list[tuple[bytes, p4d.P4Data]] = field(default_factory=list)
    keys: set[bytes] = field(default_factory=set)


class DigestEngine:
    """See module docstring. `config(digest_id)` returns the DigestEntry config or None (disabled)."""

    def __init__(self, sink: Callable[[p4r.DigestList], None], config: ConfigLookup) -> None:
        self.sink = sink
        self.config = config
        self._lock = threading.Condition()
        self._buffers: dict[int, _Buffer] = {}
        self._cache: dict[tuple[int, int], tuple[int, set[bytes]]] = {}  # (id, list) -> (sent_ns, keys)
        self._cached: dict[int, set[bytes]] = {}
        self._list_id = 0
        self._stop = False
        self._thread: threading.Thread | None = None

    def offer(self, digest_id: int, data: p4d.P4Data) -> None:
        """Buffer one digest message (a repeat of a buffered or unacked one is dropped)."""
        cfg = self.config(digest_id)
        if cfg is None:
            return
        key = data.SerializeToString(deterministic=True)
        ready = None
        with self._lock:
            if key in self._cached.get(digest_id, ()):
                return
            buf = self._buffers.setdefault(digest_id, _Buffer())
            if key in buf.keys:
                return
            if not buf.items:
                buf.first_ns = time.monotonic_ns()
            buf.items.append((key, data))
            buf.keys.add(key)
            if cfg.max_list_size == 1 or cfg.max_timeout_ns == 0 or (
                    cfg.max_list_size and len(buf.items) >= cfg.max_list_size):
                ready = self._take(digest_id, cfg)
            else:
                self._ensure_thread()
                self._lock.notify()
        if ready is not None:
            self.sink(ready)

    def _take(self, digest_id: int, cfg: Config) -> p4r.DigestList:
        buf = self._buffers.pop(digest_id)
        self._list_id += 1
        now = time.monotonic_ns()
        if cfg.ack_timeout_ns:
            self._cache[(digest_id, self._list_id)] = (now, buf.keys)
            self._cached.setdefault(digest_id, set()).update(buf.keys)
            self._ensure_thread()
        return p4r.DigestList(digest_id=digest_id, list_id=self._list_id,
                              data=[d for _, d in buf.items], timestamp=time.time_ns())

    def ack(self, digest_id: int, list_id: int) -> None:
        """A DigestListAck: forget list `list_id`, so its messages may be sent again."""
        with self._lock:
            self._uncache((digest_id, list_id))

    def _uncache(self, k: tuple[int, int]) -> None:
        entry = self._cache.pop(k, None)
        if entry is not None:
            self._cached.get(k[0], set()).difference_update(entry[1])

    def reset(self) -> None:
        """Forget buffers and the ack cache (new pipeline or new primary)."""
        with self._lock:
            self._buffers.clear()
            self._cache.clear()
            self._cached.clear()

    def _ensure_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="p4rt-digests", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            ready: list[p4r.DigestList] = []
            with self._lock:
                if self._stop:
                    return
                now = time.monotonic_ns()
                wait_ns = 100_000_000
                for did in list(self._buffers):
                    cfg = self.config(did)
                    if cfg is None:
                        del self._buffers[did]
                        continue
                    due = self._buffers[did].first_ns + cfg.max_timeout_ns
                    if now >= due:
                        ready.append(self._take(did, cfg))
                    else:
                        wait_ns = min(wait_ns, due - now)
                for k, (sent, _) in list(self._cache.items()):
                    cfg = self.config(k[0])
                    limit = cfg.ack_timeout_ns if cfg is not None else 0
                    if now - sent >= limit:
                        self._uncache(k)
                    else:
                        wait_ns = min(wait_ns, sent + limit - now)
                if not ready:
                    self._lock.wait(max(wait_ns, 100_000) / 1e9)
            for msg in ready:
                self.sink(msg)

    def close(self) -> None:
        """Stop the timer thread; buffered messages are not sent."""
        with self._lock:
            self._stop = True
            self._lock.notify()


__all__ = ["DigestEngine", "Config", "ConfigLookup"]
