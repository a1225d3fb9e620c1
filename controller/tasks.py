"""The one owner of the daemon's background work: started, failed fast and cancelled in one place.

The daemon's periodic loops (the statistics poller, the link prober, the
switch supervisor) and its one-shot reactions (a reroute after a probe
saw a link change) all run as tasks of one `DaemonTasks`:

- `spawn(coro, name)` starts one and keeps it; a task that ends by itself
  is forgotten, one that raises is **fail-fast**: logged with its
  traceback and handed to `on_failure` (the daemon publishes it and stops,
  rather than run on without its statistics or its probes), unless it was
  `expendable` (a reroute that lost a race with the fabric stopping);
- `cancel_all()` is the single way they end: every task cancelled, then
  awaited, so nothing of a stopped fabric still runs when it returns.

The model is finsy's `SwitchTasks`, which owns a switch's tasks the same
way.

Names defined here: `DaemonTasks`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["DaemonTasks"]

LOG = logging.getLogger("aizone.tasks")


class DaemonTasks:
    """The daemon's background tasks (see the module docstring)."""

    def __init__(self, on_failure: Callable[[str, BaseException], None] | None = None) -> None:
        self.on_failure = on_failure
        self._tasks: dict[asyncio.Task[Any], bool] = {}  # task -> expendable
        self._closing = False

    @property
    def names(self) -> list[str]:
        """The names of the tasks running now."""
        return sorted(t.get_name() for t in self._tasks if not t.done())

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str, *,
              expendable: bool = False) -> asyncio.Task[Any]:
        """Run `coro` as a task owned here; see the module docstring for how it may end."""
        if self._closing:
            coro.close()
            raise RuntimeError(f"the daemon is stopping: {name} is not started")
        task = asyncio.create_task(coro, name=name)
        self._tasks[task] = expendable
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        expendable = self._tasks.pop(task, False)
        if task.cancelled() or self._closing:
            return
        exc = task.exception()
        if exc is None:
            return
        LOG.error("background task %s failed", task.get_name(), exc_info=exc)
        if not expendable and self.on_failure is not None:
            self.on_failure(task.get_name(), exc)

    async def cancel_all(self) -> None:
        """Cancel every task and wait until each has ended; no new one starts after this."""
        self._closing = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
