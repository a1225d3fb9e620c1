"""A two-port forwarding shim for the agent tests (root): the "link" between two hosts.

Runs in its own network namespace with two interfaces and forwards every
frame from one to the other (so ARP works), while it can

- drop the N-th RDMA WRITE packet going left -> right, once (a lost packet;
  this kernel has no netem to lose one for us),
- send a PFC PAUSE out of the left interface (towards the left host) right
  after forwarding the M-th WRITE packet left -> right,

and logs every RoCEv2 frame it forwards (monotonic time, direction, opcode,
PSN) and what it did, as JSON to ``--log`` when it gets SIGTERM.

    ip netns exec SHIM python tests/unit/traffic/shim.py --left L --right R \\
        [--drop-nth N] [--pause-after M --pause-quanta Q --pause-prio 3] \\
        --ready FILE --log FILE
"""

from __future__ import annotations

import argparse
import json
import select
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from traffic.frames import decode  # noqa: E402
from traffic.link import PacketSocket, iface_info  # noqa: E402
from traffic.pfc import pfc_frame  # noqa: E402

_WRITES = range(0x06, 0x0C)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--left", required=True)
    parser.add_argument("--right", required=True)
    parser.add_argument("--drop-nth", type=int)
    parser.add_argument("--pause-after", type=int)
    parser.add_argument("--pause-quanta", type=int, default=0xFFFF)
    parser.add_argument("--pause-prio", type=int, default=3)
    parser.add_argument("--ready", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    left, right = PacketSocket(args.left, rcvbuf=8 << 20), PacketSocket(args.right, rcvbuf=8 << 20)
    left_mac = iface_info(args.left).mac
    peer = {left.fileno(): (left, right, "lr"), right.fileno(): (right, left, "rl")}
    log: list[list[object]] = []
    events: dict[str, object] = {}
    writes = 0
    stop = {"now": False}

    def on_term(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_term)
    Path(args.ready).touch()
    while not stop["now"]:
        ready, _, _ = select.select([left, right], [], [], 0.2)
        for sock in ready:
            src, dst, way = peer[sock.fileno()]
            for frame in src.recv_batch(64, 9216):
                now = time.monotonic()
                rx = decode(frame)
                if rx is not None:
                    log.append([now, way, rx.opcode, rx.psn])
                    if way == "lr" and rx.opcode in _WRITES:
                        writes += 1
                        if writes == args.drop_nth:
                            events["dropped"] = {"time": now, "psn": rx.psn, "qp": rx.dqpn}
                            continue
                dst.try_send(frame)
                if way == "lr" and rx is not None and rx.opcode in _WRITES and \
                        writes == args.pause_after and "paused" not in events:
                    left.try_send(bytes(pfc_frame(left_mac, {args.pause_prio: args.pause_quanta})))
                    events["paused"] = {"time": time.monotonic(), "quanta": args.pause_quanta}
    Path(args.log).write_text(json.dumps({"frames": log, "events": events}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
