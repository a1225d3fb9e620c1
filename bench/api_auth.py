"""What the API's access checks cost on `aizone stats`'s call: GET /api/v1/stats, guarded and not.

    .venv/bin/python bench/api_auth.py [--requests 2000] [--rounds 5]

The daemon's real `ApiServer` (uvicorn, one Unix socket and one loopback TCP
port) in front of a real `Daemon` holding a statistics snapshot of the
size `ai_zone_small` publishes; a client in another process (as the CLI
is) asks for `/api/v1/stats` over keep-alive connections:

- `unix`: the CLI's way (no token: the socket is root's);
- `tcp + token`: every request through `controller.access.AccessGuard`
  (Host check, constant-time token compare);
- `tcp, refused`: without the token (401 before any route runs).

Rounds alternate between the ways so that the machine's noise falls on all
of them alike; it prints each way's median latency and requests/s and the
ratio to the Unix socket, then the guard's own cost per request measured
in-process on a trivial app (no network). Figures only, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TOKEN = "bench-token-" + "x" * 32


def _snapshot() -> dict[str, Any]:
    """A statistics snapshot as large as ai_zone_small's (36 link directions, 6 switches)."""
    links = [{"id": f"rtsw{i}-eth{p}--ctsw{p - 4}-eth{i}", "dir": d, "bps": 1.23e6,
              "pps": 140.0, "util": 0.12} for i in range(1, 5) for p in (5, 6)
             for d in ("ab", "ba")]
    ports = {f"{p}/{c}": {"bps": 1e6, "depth": 3, "peak": 12, "pauses_tx": 4, "pauses_rx": 0,
                          "ecn": 0, "drops": 0} for p in range(1, 9) for c in range(8)}
    return {"at": time.time(), "links": links, "switches": {f"sw{i}": {"ports": ports}
                                                             for i in range(6)},
            "tiers": {"rtsw up": {"imbalance": 1.4}}}


def _serve(directory: str, port: int, ready: Any, stop: Any) -> None:
    from controller.api import ApiServer
    from controller.daemon import Daemon, DaemonConfig

    async def main() -> None:
        daemon = Daemon(DaemonConfig(topology=None))
        daemon.bus.bind(asyncio.get_running_loop())

        class _Stats:
            latest = _snapshot()

        daemon.stats = _Stats()  # type: ignore[assignment]
        server = ApiServer(daemon, host="127.0.0.1", port=port,
                           unix_path=Path(directory) / "api.sock", token=TOKEN)
        await server.start()
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.1)
        await server.stop()

    asyncio.run(main())


def _time(client: Any, n: int, headers: dict[str, str]) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = client.get("/api/v1/stats", headers=headers)
        out.append(time.perf_counter() - t0)
        r.read()
    return out


def _guard_alone(n: int) -> tuple[float, float]:
    """Microseconds per request of a trivial ASGI app, bare and behind AccessGuard."""
    from controller.access import AccessGuard, AccessPolicy

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    guarded = AccessGuard(app, AccessPolicy(token=TOKEN, host="127.0.0.1", port=8400))
    scope = {"type": "http", "method": "GET", "path": "/api/v1/stats", "query_string": b"",
             "headers": [(b"host", b"127.0.0.1:8400"),
                         (b"authorization", f"Bearer {TOKEN}".encode())]}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(_m: Any) -> None:
        pass

    async def run(target: Any) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            await target(dict(scope), receive, send)
        return (time.perf_counter() - t0) / n * 1e6

    bare = asyncio.run(run(app))
    return bare, asyncio.run(run(guarded))


def main() -> int:
    import httpx
    from rich.console import Console
    from rich.table import Table

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000, help="per way and round")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    console = Console(highlight=False)
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o700)
        with socket.socket() as probe:  # a free loopback port for the API
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        ctx = mp.get_context("spawn")
        ready, stop = ctx.Event(), ctx.Event()
        proc = ctx.Process(target=_serve, args=(d, port, ready, stop), daemon=True)
        proc.start()
        if not ready.wait(60):
            console.print("the API did not start")
            return 1
        ways = {
            "unix": (httpx.Client(transport=httpx.HTTPTransport(uds=f"{d}/api.sock"),
                                  base_url="http://aizone"), {}),
            "tcp + token": (httpx.Client(base_url=f"http://127.0.0.1:{port}"),
                            {"Authorization": f"Bearer {TOKEN}"}),
            "tcp, refused": (httpx.Client(base_url=f"http://127.0.0.1:{port}"), {}),
        }
        samples: dict[str, list[float]] = {w: [] for w in ways}
        for client, headers in ways.values():
            _time(client, 100, headers)  # warm up: connections, caches
        cpu0 = os.times()
        for _ in range(args.rounds):
            for way, (client, headers) in ways.items():
                samples[way] += _time(client, args.requests, headers)
        cpu1 = os.times()
        stop.set()
        proc.join(10)
    base = statistics.median(samples["unix"])
    table = Table(title=f"GET /api/v1/stats, {args.rounds} x {args.requests} requests per way")
    for col in ("way", "median ms", "p90 ms", "requests/s", "vs unix"):
        table.add_column(col, justify="right" if col != "way" else "left")
    for way, xs in samples.items():
        med = statistics.median(xs)
        p90 = statistics.quantiles(xs, n=10)[-1]
        table.add_row(way, f"{med * 1e3:.3f}", f"{p90 * 1e3:.3f}", f"{1 / med:,.0f}",
                      f"{med / base:.2f}x")
    console.print(table)
    bare, guarded = _guard_alone(20000)
    console.print(f"AccessGuard alone (in-process, no network): {bare:.1f} us per request "
                  f"bare, {guarded:.1f} us guarded: {guarded - bare:.1f} us of checks")
    load = os.getloadavg()[0]
    console.print(f"client CPU {cpu1.user - cpu0.user + cpu1.system - cpu0.system:.1f} s; "
                  f"load average {load:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
