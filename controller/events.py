"""The daemon's event bus: what happened, for the API's event stream and for `aizone up`.

An event is a kind ("progress", "stats", "mode", "link", "reconciled",
"switch", "job", ...) and a JSON-able dict, stamped with a sequence number
and the wall-clock time. `EventBus.publish` never blocks: each subscriber
has a bounded queue and a slow one loses its oldest events (counted in the
subscriber's `dropped`, which the stream does not carry), so one stalled
browser cannot hold the daemon back. The last events are kept (`recent`)
so a client that connects late still sees how bring-up went.

Names defined here: `Event`, `EventBus`.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Event", "EventBus"]


@dataclass(frozen=True, kw_only=True)
class Event:
    """One thing that happened: its kind and data, sequence number and wall-clock time."""

    seq: int
    kind: str
    at: float
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON-able dict (the `data:` line of its server-sent event)."""
        return {"seq": self.seq, "kind": self.kind, "at": self.at, "data": self.data}


class _Subscriber:
    def __init__(self, size: int) -> None:
        self.queue: asyncio.Queue[Event] = asyncio.Queue(size)
        self.dropped = 0

    def put(self, event: Event) -> None:
        """Queue `event`, dropping the oldest queued events while the queue is full."""
        while True:
            try:
                self.queue.put_nowait(event)
                return
            except asyncio.QueueFull:
                self.queue.get_nowait()
                self.dropped += 1


class EventBus:
    """Publish events to every subscriber (see the module docstring)."""

    def __init__(self, keep: int = 500, queue_size: int = 1000) -> None:
        self._seq = 0
        self._recent: deque[Event] = deque(maxlen=keep)
        self._subs: set[_Subscriber] = set()
        self._queue_size = queue_size
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop subscribers live on (publishers on other threads hop onto it)."""
        self._loop = loop

    def publish(self, kind: str, data: dict[str, Any] | None = None) -> Event:
        """Send an event to every subscriber; thread-safe."""
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is not None and running is not loop:
            fut: Any = asyncio.run_coroutine_threadsafe(self._publish(kind, data or {}), loop)
            result: Event = fut.result(5)
            return result
        return self._do_publish(kind, data or {})

    async def _publish(self, kind: str, data: dict[str, Any]) -> Event:
        return self._do_publish(kind, data)

    def _do_publish(self, kind: str, data: dict[str, Any]) -> Event:
        self._seq += 1
        event = Event(seq=self._seq, kind=kind, at=time.time(), data=data)
        if kind != "stats":  # statistics are kept by the poller, not in the history
            self._recent.append(event)
        for sub in self._subs:
            sub.put(event)
        return event

    def recent(self, kinds: set[str] | None = None) -> list[Event]:
        """The kept events (statistics are not kept), oldest first; only `kinds` when given."""
        return [e for e in self._recent if kinds is None or e.kind in kinds]

    async def subscribe(self, *, replay: bool = False,
                        kinds: set[str] | None = None) -> AsyncIterator[Event]:
        """Events from now on (with `replay`, the kept ones first), as they come."""
        sub = _Subscriber(self._queue_size)
        self._subs.add(sub)
        try:
            if replay:
                for e in list(self._recent):
                    if kinds is None or e.kind in kinds:
                        yield e
            while True:
                e = await sub.queue.get()
                if kinds is None or e.kind in kinds:
                    yield e
        finally:
            self._subs.discard(sub)
