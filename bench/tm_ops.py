"""CPU per packet of p4switch's traffic manager on the path a fabric's switch runs.

The traffic manager in driven mode (as `p4switch` runs it: `service()` on the
ports' thread, slack as in a fabric), with an RTSW's settings in a fabric:
8 priority queues, `--ports` ports at a port speed, the buffer counted in
bytes, PFC on priority 3 of every port with XOFF/XON/headroom in bytes. A
virtual clock stands in for time, so what is measured is the traffic
manager's own Python and nothing of the machine's timing: `--burst` packets
are queued (each to the next port round robin, from the port after it, as
a fabric's flows cross a switch), then `service()` runs, the clock moves by
one packet's time at the port speed, and `service()` runs again, until
`--packets` packets have left, each queued, admitted, charged to its
ingress priority group, scheduled and delivered. Prints the best of
`--repeat` runs' thread CPU time per packet. Figures only, never asserts.

    .venv/bin/python bench/tm_ops.py [--packets N] [--ports P] [--burst B] [--repeat R]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from p4switch.tm import TrafficManager  # noqa: E402
from p4switch.tmconfig import BufferConfig, PfcConfig, TmConfig  # noqa: E402

FRAME = 1_000  # bytes a packet
SPEED = 4e6  # bits/s a port: one packet every 2 ms


class _Driver:
    """A driver that never wakes anything: the bench calls `service()` itself."""

    def attach(self, service: Callable[[], float]) -> Callable[[], None]:
        return lambda: None

    def detach(self, service: Callable[[], float]) -> None:
        pass


class _Clock:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t


def run(packets: int, ports: int, burst: int) -> float:
    """Thread CPU seconds per packet of one run."""
    clock = _Clock()
    left: list[int] = []
    numbers = range(1, ports + 1)
    cfg = TmConfig(
        queues=8, port_depth={p: 161 * FRAME for p in numbers},
        port_speed_bps={p: SPEED for p in numbers},
        pfc={p: PfcConfig(priorities=frozenset({3}), xoff=16 * FRAME, xon=8 * FRAME,
                          headroom=7 * FRAME) for p in numbers},
        buffer=BufferConfig(unit="bytes"))
    tm = TrafficManager(lambda port, prio, item, depth: left.append(item), cfg,
                        send_raw=lambda port, frame: None, size_of=lambda item: FRAME,
                        clock=clock, driver=_Driver())
    step = FRAME * 8 / SPEED
    start = time.thread_time()
    sent = 0
    while sent < packets:
        for k in range(burst):
            n = sent + k
            tm.enqueue(1 + n % ports, 3, n, ingress_port=1 + (n + 1) % ports)
        sent += burst
        tm.service()
        clock.t += step
        tm.service()
    while tm.queued:
        clock.t += step
        tm.service()
    spent = time.thread_time() - start
    if len(left) != sent:
        raise SystemExit(f"tm_ops: {sent} packets queued, {len(left)} left: the bench is wrong")
    return spent / sent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--packets", type=int, default=60_000)
    p.add_argument("--ports", type=int, default=6, help="ports (an RTSW of ai_zone_small: 6)")
    p.add_argument("--burst", type=int, default=4, help="packets queued between services")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    best = min(run(args.packets, args.ports, args.burst) for _ in range(args.repeat))
    print(f"traffic manager, driven, {args.ports} ports x 8 queues, bytes, PFC on 3: "
          f"{best * 1e6:.2f} us CPU per packet (enqueue + service + deliver; best of "
          f"{args.repeat} x {args.packets:,})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
