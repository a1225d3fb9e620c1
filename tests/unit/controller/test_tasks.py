"""The daemon's task owner (controller.tasks): fail-fast, expendable tasks, one cancel path."""

from __future__ import annotations

import asyncio

import pytest

from controller.tasks import DaemonTasks


async def _boom() -> None:
    await asyncio.sleep(0.01)
    raise RuntimeError("the poller broke")


async def _forever(started: asyncio.Event, cancelled: list[str]) -> None:
    started.set()
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        cancelled.append("yes")
        raise


def test_a_task_that_raises_is_reported_by_name() -> None:
    """Fail-fast: the owner's on_failure gets the task's name and its exception."""
    failures: list[tuple[str, str]] = []

    async def main() -> None:
        tasks = DaemonTasks(on_failure=lambda name, exc: failures.append((name, str(exc))))
        task = tasks.spawn(_boom(), "stats")
        with pytest.raises(RuntimeError):
            await task
        await asyncio.sleep(0)  # done callbacks run on the next turn of the loop

    asyncio.run(main())
    assert failures == [("stats", "the poller broke")]


def test_an_expendable_task_that_raises_is_not_a_failure() -> None:
    """A reroute that fails is logged, not fatal."""
    failures: list[str] = []

    async def main() -> None:
        tasks = DaemonTasks(on_failure=lambda name, _exc: failures.append(name))
        task = tasks.spawn(_boom(), "reroute x", expendable=True)
        with pytest.raises(RuntimeError):
            await task
        await asyncio.sleep(0)

    asyncio.run(main())
    assert failures == []


def test_cancel_all_ends_every_task_and_refuses_new_ones() -> None:
    """Running tasks are cancelled and awaited; nothing starts after; no failure is reported."""
    cancelled: list[str] = []
    failures: list[str] = []
    names: list[list[str]] = []

    async def main() -> None:
        tasks = DaemonTasks(on_failure=lambda name, _exc: failures.append(name))
        started = [asyncio.Event(), asyncio.Event()]
        tasks.spawn(_forever(started[0], cancelled), "probes")
        tasks.spawn(_forever(started[1], cancelled), "supervise")
        await asyncio.gather(*(e.wait() for e in started))
        names.append(tasks.names)
        await tasks.cancel_all()
        names.append(tasks.names)
        with pytest.raises(RuntimeError, match="stopping"):
            tasks.spawn(_forever(asyncio.Event(), cancelled), "late")

    asyncio.run(main())
    assert names == [["probes", "supervise"], []]
    assert cancelled == ["yes", "yes"] and failures == []
