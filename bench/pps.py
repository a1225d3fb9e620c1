"""Packets per second of the p4switch pipeline on an L3 program with 1k routes.

Runs p4/rtsw.p4 (ECMP next hops through an action selector) when it compiles,
else the pipeline tests' basic L3 program; sends UDP packets to random
routed destinations on the synchronous path (one queue per port) and prints
packets/s and microseconds per packet. A figure, never an assertion.

    .venv/bin/python bench/pps.py [--packets N] [--routes N] [--program l3|rtsw]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from p4switch.frontend import compile_file  # noqa: E402
from p4switch.pipeline import Switch  # noqa: E402
from p4switch.pipeline.state import ActionCall, FieldMatch, Group, Member, TableEntry  # noqa: E402


def udp_frame(dst: int, sport: int) -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    ip = ".".join(str(dst >> s & 0xFF) for s in (24, 16, 8, 0))
    return bytes(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02") / IP(src="10.0.0.1", dst=ip, ttl=64)
                 / UDP(sport=sport, dport=4000) / (b"x" * 64))


def setup_rtsw(sw: Switch, routes: list[int]) -> None:
    for m in range(8):
        sw.member_insert("FabricIngress.routing.ecmp_selector", Member(
            member_id=m + 1, action=ActionCall(action="FabricIngress.routing.set_output",
                                               args=(m + 1, 0x020000000000 + m, 0x020000000100 + m))))
    sw.group_insert("FabricIngress.routing.ecmp_selector",
                    Group(group_id=1, members=[(m + 1, 1) for m in range(8)]))
    sw.table_insert("FabricIngress.routing.next_hop", TableEntry(
        match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    for r in routes:
        sw.table_insert("FabricIngress.routing.ipv4_route", TableEntry(
            match={0: FieldMatch(kind="lpm", value=r, prefix_len=24)},
            action=ActionCall(action="FabricIngress.routing.set_next_id", args=(1,))))


def setup_l3(sw: Switch, routes: list[int]) -> None:
    sw.table_insert("MyIngress.nhop", TableEntry(
        match={0: FieldMatch(kind="exact", value=1)},
        action=ActionCall(action="MyIngress.forward", args=(0x020000000001, 0x020000000002, 3))))
    for r in routes:
        sw.table_insert("MyIngress.ipv4_lpm", TableEntry(
            match={0: FieldMatch(kind="lpm", value=r, prefix_len=24)},
            action=ActionCall(action="MyIngress.set_nhop", args=(1,))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=50000)
    ap.add_argument("--routes", type=int, default=1000)
    ap.add_argument("--program", choices=["rtsw", "l3"], default="rtsw")
    args = ap.parse_args()
    rng = random.Random(1)
    routes = sorted(set(rng.sample(range(1 << 16), args.routes)))
    routes = [(10 << 24) | (r << 8) for r in routes]
    if args.program == "rtsw" and (REPO / "p4" / "rtsw.p4").exists():
        prog = compile_file(REPO / "p4" / "rtsw.p4", include_dirs=[REPO / "p4" / "include"])
        setup = setup_rtsw
    else:
        prog = compile_file(REPO / "tests" / "unit" / "pipeline" / "p4" / "l3.p4")
        setup = setup_l3
    sent = [0]

    def transmit(port: int, data: bytes) -> None:
        sent[0] += 1

    sw = Switch(prog, transmit)
    t0 = time.perf_counter()
    setup(sw, routes)
    t_setup = time.perf_counter() - t0
    frames = [udp_frame(r | rng.randrange(1, 255), rng.randrange(1024, 65535)) for r in routes[:256]]
    for f in frames:  # warm up
        sw.process(1, f)
    sent[0] = 0
    n = args.packets
    t0 = time.perf_counter()
    for i in range(n):
        sw.process(1, frames[i & 255])
    dt = time.perf_counter() - t0
    print(f"program: {Path(prog.source).name}, routes: {len(routes)} "
          f"(installed in {t_setup * 1e3:.0f} ms)")
    print(f"packets: {n}, transmitted: {sent[0]}, drops/errors: {sw.stats['dropped']}/{sw.stats['errors']}")
    print(f"{n / dt:,.0f} packets/s, {dt / n * 1e6:.2f} us/packet")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
