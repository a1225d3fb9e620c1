"""ICMP echo from inside a host, for machines without `ping` (iputils).

`python -m controller.hostping 10.0.0.3 -c 3 -W 3` sends echo requests over
a raw ICMP socket and prints one JSON line: transmitted, received, rtts.
The demo prefers the system `ping` and falls back to this module.

Names defined here: `ping`, `main`.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import struct
import sys
import time
from collections.abc import Sequence

__all__ = ["main", "ping"]


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def ping(dst: str, count: int = 3, timeout: float = 3.0, interval: float = 0.2) -> dict[str, object]:
    """Send `count` echo requests to `dst`; replies are matched by id and sequence."""
    ident = os.getpid() & 0xFFFF
    rtts: list[float] = []
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as s:
        for seq in range(1, count + 1):
            payload = struct.pack("!d", time.monotonic()) + bytes(48)
            head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
            packet = struct.pack("!BBHHH", 8, 0, _checksum(head + payload), ident, seq) + payload
            sent = time.monotonic()
            s.sendto(packet, (dst, 0))
            deadline = sent + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                ready, _, _ = select.select([s], [], [], left)
                if not ready:
                    break
                data, addr = s.recvfrom(2048)
                ihl = (data[0] & 0x0F) * 4
                icmp_type, _code, _sum, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
                if icmp_type == 0 and rid == ident and rseq == seq and addr[0] == dst:
                    rtts.append((time.monotonic() - sent) * 1000)
                    break
            if seq < count:
                time.sleep(interval)
    return {"transmitted": count, "received": len(rtts),
            "avg_rtt_ms": round(sum(rtts) / len(rtts), 3) if rtts else None}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m controller.hostping", description=__doc__)
    p.add_argument("dst")
    p.add_argument("-c", "--count", type=int, default=3)
    p.add_argument("-W", "--timeout", type=float, default=3.0)
    p.add_argument("-i", "--interval", type=float, default=0.2)
    args = p.parse_args(argv)
    try:
        result = ping(args.dst, args.count, args.timeout, args.interval)
    except OSError as exc:
        print(json.dumps({"error": str(exc)}))
        return 1
    print(json.dumps(result))
    return 0 if result["received"] == result["transmitted"] else 1


if __name__ == "__main__":
    sys.exit(main())
