"""The other servers' clocks, read again while a fabric over several servers runs.

`aizone up --servers` refuses a server whose wall clock is more than
`topologies.cluster.MAX_CLOCK_OFFSET_S` from this machine's
(`cluster.check_servers`), but a clock can drift afterwards (its time
service stopped, a VM paused). `ClockWatch` reads every other server's clock
again every `interval` seconds, as `up` did (`sshcmd.clock_offset`: a few
exchanges over one ssh session, the shortest round trip kept):

- every reading replaces that server's offset in `FabricRuntime.clock_offsets`
  (`aizone status`, `GET /status`) and in run.json, so a daemon that
  re-attaches starts from the latest;
- a server beyond the bound is kept in `off` with the reason, which
  `aizone status` shows and `aizone run` gives when it refuses a job
  (the ranks' start barrier is a wall-clock time, and a collective's span
  is read across hosts' clocks: both would be wrong by the offset);
- each change of a server's state (off, or back within the bound) is
  published as a `clock` event and logged.

A server that does not answer is logged and read again at the next round:
the switch supervisor and the probes are what notice a server gone.

Names defined here: `ClockWatch`, `CLOCK_INTERVAL_S`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from topologies.cluster import ClusterError, clock_too_far
from topologies.runstate import RunState, update_state
from topologies.sshcmd import clock_offset

__all__ = ["CLOCK_INTERVAL_S", "ClockWatch"]

LOG = logging.getLogger("aizone.clocks")

CLOCK_INTERVAL_S = 10.0  # one ssh session of a few exchanges per server each time


class ClockWatch:
    """Reads the clocks of `fabric`'s other servers every `interval` s (see the module
    docstring); `publish(kind, data)` sends the `clock` events."""

    def __init__(self, fabric: Any, publish: Callable[[str, dict[str, Any]], object], *,
                 interval: float = CLOCK_INTERVAL_S) -> None:
        self.fabric = fabric
        self.publish = publish
        self.interval = interval
        self.off: dict[str, str] = {}  # server -> why its clock is too far now

    def start(self, tasks: Any) -> None:
        """Run under the daemon's `DaemonTasks` (nothing to do on one machine)."""
        if len(self.fabric.servers) > 1:
            tasks.spawn(self._run(), "clocks")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.read_all()

    async def read_all(self) -> None:
        """One round: every other server's clock read, the records and `off` updated."""
        for server in self.fabric.servers[1:]:
            try:
                clock = await asyncio.to_thread(clock_offset, server)
            except ClusterError as exc:
                LOG.warning("%s (read again in %.0f s)", exc, self.interval)
                continue
            self.fabric.clock_offsets[server] = round(clock.offset_s, 4)
            why = clock_too_far(server, clock)
            was_off = server in self.off
            if why:
                self.off[server] = why
            else:
                self.off.pop(server, None)
            if bool(why) != was_off:
                (LOG.warning if why else LOG.info)(
                    "%s", why or f"server {server}: its clock is back within the bound "
                                 f"({clock.offset_s:+.3f} s)")
                self.publish("clock", {"server": server, "offset_s": round(clock.offset_s, 4),
                                       "uncertainty_s": round(clock.uncertainty_s, 4),
                                       "ok": not why, "error": why})
        offsets = dict(self.fabric.clock_offsets)

        def record(state: RunState) -> None:
            state.meta["clock_offsets"] = offsets

        await asyncio.to_thread(update_state, record)
