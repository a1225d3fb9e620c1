"""A blocking handle on finsy's asyncio `Switch`, for tests and benches that are not asyncio.

It lives in the controller (not in tests/) so that `bench/` imports it as a
module of the project; the daemon itself stays on finsy's asyncio API.

`SyncSwitch(name, address, device_id=..., p4info=..., p4blob=...)` runs an
event loop in a helper thread and, in it, a `finsy.Switch` entered as a
context manager: `open()` returns once finsy has connected, won the
primary arbitration (election id `election_id`) and pushed the pipeline
(P4Info + device config, VERIFY_AND_COMMIT); every method then submits one
coroutine to that loop and waits for it. Entities are finsy's
(`P4TableEntry`, `P4ActionProfileMember`, `P4CounterEntry`,
`P4RegisterEntry`, ...), encoded and decoded through finsy's schema of the
program pushed, so names, not ids, go in and come out.

Packet-ins are read by a task of the loop into `packet_ins`, a
thread-safe queue; `packet_out(payload, **metadata)` sends one, metadata
fields not given (the header's padding) being 0. Write errors are finsy's
`P4ClientError` (one status per failed update); anything that does not
answer within `timeout` seconds raises `TimeoutError`.

Names defined here: `SyncSwitch`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import queue
import threading
from collections.abc import AsyncIterator, Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar, cast

import finsy
from finsy import P4PacketIn, P4PacketOut

__all__ = ["SyncSwitch"]

_T = TypeVar("_T")


class SyncSwitch:
    """One primary P4Runtime session on finsy, driven from synchronous code."""

    def __init__(self, name: str, address: str, *, device_id: int, p4info: Path,
                 p4blob: Path, election_id: int = 10, timeout: float = 30.0) -> None:
        self.name = name
        self.address = address
        self.timeout = timeout
        self.options = finsy.SwitchOptions(p4info=p4info, p4blob=p4blob, device_id=device_id,
                                           initial_election_id=election_id, p4force=True)
        self.packet_ins: queue.Queue[P4PacketIn] = queue.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._switch: finsy.Switch | None = None
        self._reader: asyncio.Task[None] | None = None

    # --- life cycle ------------------------------------------------------------

    def open(self) -> SyncSwitch:
        """Connect, become primary and push the pipeline; raises what finsy raised."""
        # finsy logs a miss of the gNMI service (neither target has one) as a warning.
        logging.getLogger("finsy").setLevel(logging.ERROR)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"finsy-{self.name}",
                                        daemon=True)
        self._thread.start()
        try:
            self._run(self._enter(), timeout=max(self.timeout, 90.0))
        except BaseException:
            self.close()
            raise
        return self

    async def _enter(self) -> None:
        switch = finsy.Switch(self.name, self.address, self.options)
        await switch.__aenter__()
        self._switch = switch
        self._reader = asyncio.create_task(self._read_packets(switch))

    async def _read_packets(self, switch: finsy.Switch) -> None:
        async for packet in switch.read_packets():
            self.packet_ins.put(packet)

    async def _exit(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None
        if self._switch is not None:
            switch, self._switch = self._switch, None
            await switch.__aexit__(None, None, None)
        # gRPC's asyncio calls may leave a task behind: end them before the loop closes.
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    def close(self) -> None:
        """End the session and the helper thread (safe to call more than once)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        if loop.is_running():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._exit(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        loop.close()

    def __enter__(self) -> SyncSwitch:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- calls -----------------------------------------------------------------

    def _run(self, coro: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
        if self._loop is None:
            coro.close()
            raise RuntimeError(f"{self.name}: the P4Runtime session is closed")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(self.timeout if timeout is None else timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"{self.name} ({self.address}): no answer within "
                               f"{self.timeout if timeout is None else timeout:g} s") from None

    @property
    def switch(self) -> finsy.Switch:
        if self._switch is None:
            raise RuntimeError(f"{self.name}: the P4Runtime session is not open")
        return self._switch

    @property
    def schema(self) -> finsy.P4Schema:
        """The P4Info of the program pushed, as finsy's schema."""
        return self.switch.p4info

    def insert(self, entities: Iterable[Any]) -> None:
        self._run(self.switch.insert(list(entities)))

    def modify(self, entities: Iterable[Any]) -> None:
        self._run(self.switch.modify(list(entities)))

    def delete(self, entities: Iterable[Any]) -> None:
        self._run(self.switch.delete(list(entities)))

    def write(self, updates: Iterable[Any]) -> None:
        """Mixed updates in one request: `+entity` inserts, `~entity` modifies, `-entity` deletes."""
        self._run(self.switch.write(list(updates)))

    def read(self, entity: Any) -> list[Any]:
        """Every entity the switch returns for `entity` (a wildcard where fields are unset)."""

        async def collect() -> list[Any]:
            # finsy types read() by its argument; one wildcard entity reads a stream.
            reply = cast(AsyncIterator[Any], cast(Any, self.switch).read(entity))
            return [e async for e in reply]

        return self._run(collect())

    def packet_out(self, payload: bytes, **metadata: int) -> None:
        cpm = self.schema.controller_packet_metadata["packet_out"]
        names = {m.name for m in cpm.metadata}
        unknown = sorted(set(metadata) - names)
        if unknown:
            raise ValueError(f"{self.name}: packet_out has no metadata {unknown}")
        full = {name: metadata.get(name, 0) for name in names}
        self._run(self.switch.write([P4PacketOut(payload, **full)]))

    def next_packet_in(self, timeout: float) -> P4PacketIn | None:
        try:
            return self.packet_ins.get(timeout=timeout)
        except queue.Empty:
            return None

    def drain(self) -> None:
        while not self.packet_ins.empty():
            self.packet_ins.get_nowait()
