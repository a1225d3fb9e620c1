"""Packets per second of p4switch (and BMv2) on p4/rtsw.p4 with 1k routes and an 8-member ECMP group.

Two figures, never assertions:

* memory: the pipeline alone (in-memory ports, one queue per port: the
  synchronous path), UDP packets to random routed destinations; best of
  several rounds (the machine is shared) and the median.
* veth (root): the `p4switch` command on two veth pairs whose other ends
  sit in two network namespaces, routes programmed over P4Runtime; one
  namespace sends frames through a raw socket for a bounded time and the
  other end's interface counter says how many got through. Two figures:
  unpaced (the sender blasts as fast as it can: the switch competes with an
  overload it must drop in the kernel) and paced (offered load in steps;
  the highest rate that loses under 0.1%, a fairer maximum; a target whose
  unpaced rate is below `--pace-start` is stepped from half that rate in
  tenths of it). The unpaced
  blast through a trivial raw-socket Python forwarder gives the baseline
  ratio. With BMv2 on PATH (simple_switch_grpc, p4c-bm2-ss), the same
  measurements run on it too, side by side (`--targets` chooses). The
  switches are programmed over P4Runtime with finsy. Namespaces, veths and
  processes are removed whatever happens. Target `p4switch-tm` is p4switch
  with a fabric's traffic-manager flags (8 priority queues, a port speed
  that does not limit here, 128-packet queues): every frame through the
  traffic manager, as in a fabric. Target `p4switch-per-frame` is p4switch
  with `--port-io per-frame`: its ports take and send one frame per system
  call in Python instead of up to 64 with `recvmmsg` and `sendmmsg`
  (`p4switch._rawio`).
* CPU per frame: the switch process's CPU time (user + system, from
  /proc) over the frames it forwarded, unpaced and at a fixed offered load
  (`--cpu-rate`, default 2,000 frames/s: about what one switch of
  `ai_zone_small` forwards in `bench/fabric_capacity.py`; these UDP frames
  are 120 bytes).
* `standalone_cpu(target, rates)`, which `bench/fabric_capacity.py` calls:
  one target alone on the veths forwarding full RoCEv2 frames
  (`roce_frame`: the fabric's 1,082-byte data frames) at each offered
  rate, and its CPU per frame, so that a fabric's CPU per switch frame is
  set beside one switch's at the same frames/s, in the same run.
* `--only sizes`: the same standalone figure for RoCEv2 frames of each
  `--payloads` size in turn (jumbo veths above 1,024 bytes): whether
  fewer, larger frames carry more bytes for the same CPU.

    .venv/bin/python bench/pps.py [--packets N] [--routes N] [--program l3|rtsw]
                                  [--only memory|veth] [--seconds S] [--targets T,T]
                                  [--pace-start PPS] [--pace-step PPS] [--pace-max PPS]
                                  [--pace-seconds S] [--cpu-rate PPS]
    .venv/bin/python bench/pps.py --only sizes [--payloads 1024,4096] [--size-rates 1000,3000]
                                  [--size-rounds N] [--targets p4switch-tm,bmv2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from p4switch.frontend import compile_file
from p4switch.pipeline import Switch
from p4switch.pipeline.state import ActionCall, FieldMatch, Group, Member, TableEntry

REPO = Path(__file__).resolve().parents[1]

SELECTOR = "FabricIngress.routing.ecmp_selector"
SET_OUTPUT = "FabricIngress.routing.set_output"
NEXT_HOP = "FabricIngress.routing.next_hop"
IPV4_ROUTE = "FabricIngress.routing.ipv4_route"
SET_NEXT_ID = "FabricIngress.routing.set_next_id"


def udp_frame(dst: int, sport: int) -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    ip = ".".join(str(dst >> s & 0xFF) for s in (24, 16, 8, 0))
    return bytes(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02") / IP(src="10.0.0.1", dst=ip, ttl=64)
                 / UDP(sport=sport, dport=4000) / (b"x" * 64))


def roce_frame_bytes(payload: int = 1024) -> int:
    """The length of `roce_frame`'s frame with `payload` bytes: `ROCE_FRAME` holds 1,024."""
    from topologies.mtu import ROCE_FRAME

    return ROCE_FRAME - 1024 + payload


def roce_frame(dst: int, sport: int, dqpn: int, payload: int = 1024) -> bytes:
    """A RoCEv2 RDMA WRITE Middle frame of `ROCE_FRAME` bytes (1,024 bytes of payload and the
    ICRC; `payload` bytes make it that much longer) to `dst`, UDP source port `sport`, QP
    `dqpn`: the bulk of a fabric's data frames (`traffic.builders.rdma_write`, as the hosts'
    agents' tests build them)."""
    from traffic.builders import rdma_write
    from traffic.endpoint import Endpoint

    ip = ".".join(str(dst >> s & 0xFF) for s in (24, 16, 8, 0))
    frame = bytes(rdma_write(src=Endpoint(mac="00:00:00:00:00:02", ip="10.0.0.1", port=sport),
                             dst=Endpoint(mac="00:00:00:00:00:01", ip=ip, qpn=dqpn),
                             psn=0, payload=bytes(payload), position="middle", ecn=2))
    if len(frame) != roce_frame_bytes(payload):
        raise AssertionError(f"a RoCEv2 frame of {len(frame)} bytes, not {roce_frame_bytes(payload)}")
    return frame


JUMBO_MTU = 9000


def route_prefixes(n: int, rng: random.Random) -> list[int]:
    """n distinct /24 prefixes in 10.0.0.0/8."""
    return [(10 << 24) | (r << 8) for r in sorted(set(rng.sample(range(1 << 16), n)))]


def setup_rtsw(sw: Switch, routes: list[int], port_of=lambda m: m + 1) -> None:
    for m in range(8):
        sw.member_insert(SELECTOR, Member(member_id=m + 1, action=ActionCall(
            action=SET_OUTPUT, args=(port_of(m), 0x020000000000 + m, 0x020000000100 + m))))
    sw.group_insert(SELECTOR, Group(group_id=1, members=[(m + 1, 1) for m in range(8)]))
    sw.table_insert(NEXT_HOP, TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    for r in routes:
        sw.table_insert(IPV4_ROUTE, TableEntry(
            match={0: FieldMatch(kind="lpm", value=r, prefix_len=24)},
            action=ActionCall(action=SET_NEXT_ID, args=(1,))))


def setup_l3(sw: Switch, routes: list[int]) -> None:
    sw.table_insert("MyIngress.nhop", TableEntry(
        match={0: FieldMatch(kind="exact", value=1)},
        action=ActionCall(action="MyIngress.forward", args=(0x020000000001, 0x020000000002, 3))))
    for r in routes:
        sw.table_insert("MyIngress.ipv4_lpm", TableEntry(
            match={0: FieldMatch(kind="lpm", value=r, prefix_len=24)},
            action=ActionCall(action="MyIngress.set_nhop", args=(1,))))


# ---------------------------------------------------------------- in memory
def bench_memory(args: argparse.Namespace) -> None:
    rng = random.Random(1)
    routes = route_prefixes(args.routes, rng)
    if args.program == "rtsw":
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
    rounds = max(1, args.rounds)
    per = max(256, args.packets // rounds)
    times = []
    process = sw.process
    for _ in range(rounds):
        t0 = time.perf_counter()
        for i in range(per):
            process(1, frames[i & 255])
        times.append((time.perf_counter() - t0) / per)
    best, med = min(times), statistics.median(times)
    print(f"[memory] program: {Path(prog.source).name}, routes: {len(routes)} "
          f"(installed in {t_setup * 1e3:.0f} ms)")
    print(f"[memory] packets: {per * rounds}, transmitted: {sent[0]}, "
          f"drops/errors: {sw.stats['dropped']}/{sw.stats['errors']}")
    print(f"[memory] best {1 / best:,.0f} packets/s ({best * 1e6:.2f} us/packet), "
          f"median {1 / med:,.0f} packets/s ({med * 1e6:.2f} us/packet) over {rounds} rounds")
    sw.close()


# ---------------------------------------------------------------- through veths
NS_TX, NS_RX = "ppsbench-tx", "ppsbench-rx"
# root end (switch port) / namespace end
VETHS = {1: ("ppsb1", "ppsb1n", NS_TX), 2: ("ppsb2", "ppsb2n", NS_RX)}

# Unpaced (rate 0): as fast as it can. Paced: the frames due by now (rate x elapsed) are
# sent in a burst, then a short sleep, so the offered load is the rate give or take 1 ms.
SENDER = r"""
import socket, sys, time
iface, path, secs, rate = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
data = open(path, "rb").read()
frames, i = [], 0
while i < len(data):
    n = int.from_bytes(data[i:i + 2], "big"); frames.append(data[i + 2:i + 2 + n]); i += 2 + n
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
s.bind((iface, 0))
send = s.send
sent = 0
clock = time.monotonic
start = clock()
end = start + secs
nf = len(frames)
if rate <= 0:
    while clock() < end:
        for f in frames:
            try:
                send(f)
            except OSError:
                pass
        sent += nf
else:
    while True:
        now = clock()
        if now >= end:
            break
        due = int((now - start) * rate) - sent
        if due <= 0:
            time.sleep(0.0002)
            continue
        for k in range(sent, sent + due):
            try:
                send(frames[k % nf])
            except OSError:
                pass
        sent += due
print(sent)
"""

# The baseline: receive on one raw socket, send on the other, nothing else.
FORWARDER = r"""
import socket, sys
a = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)); a.bind((sys.argv[1], 0))
b = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0); b.bind((sys.argv[2], 0))
a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
recv, send = a.recv, b.send
while True:
    f = recv(65535)
    try:
        send(f)
    except OSError:
        pass
"""


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def _veth_up(mtu: int | None = None) -> None:
    _veth_down()
    for ns in (NS_TX, NS_RX):
        _run("ip", "netns", "add", ns)
    for root, peer, ns in VETHS.values():
        _run("ip", "link", "add", root, "type", "veth", "peer", "name", peer)
        _run("ip", "link", "set", peer, "netns", ns)
        for dev, where in ((root, ()), (peer, ("ip", "netns", "exec", ns))):
            # no IPv6 chatter (RS, MLD) on the measured links
            _run(*where, "sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1", check=False)
            if mtu is not None:
                _run(*where, "ip", "link", "set", dev, "mtu", str(mtu))
            _run(*where, "ip", "link", "set", dev, "up")


def _veth_down() -> None:
    for ns in (NS_TX, NS_RX):
        _run("ip", "netns", "del", ns, check=False)  # takes the peers, hence the pairs, along
    for root, _, _ in VETHS.values():
        _run("ip", "link", "del", root, check=False)


def _rx_packets() -> int:
    root, peer, ns = VETHS[2]
    out = _run("ip", "-n", ns, "-s", "-j", "link", "show", peer).stdout
    return int(json.loads(out)[0]["stats64"]["rx"]["packets"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(addr: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    host, port = addr.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the switch exited with {proc.returncode} at start")
        try:
            with socket.create_connection((host, int(port)), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the switch did not open {addr}")


def _program_switch(addr: str, build: Path, routes: list[int], target: str) -> None:
    from finsy import (
        P4ActionProfileGroup,
        P4ActionProfileMember,
        P4IndirectAction,
        P4Member,
        P4TableAction,
        P4TableEntry,
        P4TableMatch,
    )

    from controller.build import compile_program
    from controller.syncswitch import SyncSwitch

    prog = compile_program(REPO / "p4" / "rtsw.p4", build, role="rtsw", target=target)
    with SyncSwitch("bench", addr, device_id=1, p4info=prog.p4info,
                    p4blob=prog.device_config) as s:
        s.insert([P4ActionProfileMember(SELECTOR, member_id=m + 1, action=P4TableAction(
            SET_OUTPUT, port=2, src_mac=0x020000000000 + m, dst_mac=0x020000000100 + m))
            for m in range(8)])
        s.insert([P4ActionProfileGroup(SELECTOR, group_id=1, max_size=8,
                                       members=[P4Member(m, weight=1) for m in range(1, 9)])])
        s.insert([P4TableEntry(NEXT_HOP, match=P4TableMatch(next_id=1),
                               action=P4IndirectAction(group_id=1))])
        s.insert([P4TableEntry(IPV4_ROUTE, match=P4TableMatch(dst_addr=(r, 24)),
                               action=P4TableAction(SET_NEXT_ID, next_id=1)) for r in routes])


def _blast(frames_file: Path, seconds: float, rate: float = 0) -> tuple[int, int, float]:
    """Send for `seconds` (at `rate` frames/s, 0: unpaced) from the tx namespace:
    (offered, received at the far end, seconds)."""
    before = _rx_packets()
    t0 = time.monotonic()
    out = _run("ip", "netns", "exec", NS_TX, sys.executable, "-c", SENDER, VETHS[1][1],
               str(frames_file), str(seconds), str(rate)).stdout
    dt = time.monotonic() - t0
    time.sleep(0.3)  # let the forwarder drain what it already holds
    return int(out.strip() or 0), _rx_packets() - before, dt


def _paced(frames_file: Path, args: argparse.Namespace) -> tuple[float, list[tuple[float, float]]]:
    """Offered load in steps: the highest rate (frames/s) that lost < 0.1%, and every (rate, loss).

    Stops after two failing steps in a row (one may be a hiccup of the shared machine).
    """
    best, steps, fails = 0.0, [], 0
    rate = float(args.pace_start)
    while rate <= args.pace_max and fails < 2:
        offered, got, _ = _blast(frames_file, args.pace_seconds, rate)
        loss = 1 - got / offered if offered else 1.0
        steps.append((rate, loss))
        if loss < 0.001:
            best, fails = rate, 0
        else:
            fails += 1
        rate += args.pace_step
    return best, steps


def _settle(timeout: float = 30.0) -> None:
    """Wait until the far end's counter stops moving: the switch has drained its backlog."""
    last, deadline = _rx_packets(), time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.3)
        now = _rx_packets()
        if now == last:
            return
        last = now


def _cpu_seconds(pid: int) -> float:
    """CPU seconds of a process's live threads so far, to the nanosecond (each thread's
    schedstat). /proc/<pid>/stat counts in clock ticks (10 ms): over 3 s at 530 frames/s
    that is 6 us a frame, a tenth of the figure. A switch's threads here live through the
    whole measurement, so none that ended is left out."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # the thread ended meanwhile
            pass
    return total / 1e9


def _warm(frames_file: Path, timeout: float = 20.0) -> bool:
    """Wait until frames get through (the pipeline is programmed and running)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _blast(frames_file, 0.2)[1] > 0:
            return True
    return False


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def _switch_command(target: str, addr: str) -> list[str]:
    ports = ["-i", f"1@{VETHS[1][0]}", "-i", f"2@{VETHS[2][0]}"]
    if target == "bmv2":
        return ["simple_switch_grpc", "--no-p4", *ports, "--device-id", "1", "--thrift-port",
                str(_free_port()), "--log-level", "warn", "--", "--grpc-server-addr", addr]
    tm = []
    if target == "p4switch-tm":  # a fabric's flags: every frame through the traffic manager
        tm = ["--priority-queues", "8", "--port-speed", "10", "--queue-depth", "128"]
    if target == "p4switch-per-frame":  # the ports without batched I/O (p4switch._rawio)
        tm = ["--port-io", "per-frame"]
    return [str(Path(sys.executable).with_name("p4switch")), "--no-p4", *ports, "--device-id", "1",
            "--grpc-server-addr", addr, *tm]


@contextlib.contextmanager
def _running(target: str, frames_file: Path, tmp: str, routes: list[int]) -> Iterator[subprocess.Popen]:
    """`target` started on the veths, programmed with `routes`, frames getting through; stopped
    on leaving."""
    addr = f"127.0.0.1:{_free_port()}"
    switch = None
    try:
        with open(Path(tmp) / f"{target}.log", "wb") as log:
            switch = subprocess.Popen(_switch_command(target, addr), stdout=log,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _wait_port(addr, switch)
        _program_switch(addr, Path(tmp) / f"build-{target}", routes,
                        "bmv2" if target == "bmv2" else "p4switch")
        if not _warm(frames_file):
            raise RuntimeError(f"no frame got through {target} (see its log)")
        yield switch
    finally:
        _stop(switch)


def _cpu_per_frame(switch: subprocess.Popen, frames_file: Path, seconds: float,
                   rate: float) -> tuple[float, float, float]:
    """Offer `rate` frames/s for `seconds` after the switch drained what it held: (frames/s
    through, us of the switch process's CPU per frame through, share of a core)."""
    _settle()  # an earlier blast's backlog must not count as this run's frames
    cpu0 = _cpu_seconds(switch.pid)
    _offered, got, dt = _blast(frames_file, seconds, rate)
    cpu = _cpu_seconds(switch.pid) - cpu0
    return got / dt, cpu / max(got, 1) * 1e6, cpu / dt


def _veth_target(target: str, frames_file: Path, tmp: str, routes: list[int],
                 args: argparse.Namespace) -> float:
    """Measure one target through the veths; returns its unpaced pps."""
    with _running(target, frames_file, tmp, routes) as switch:
        cpu0 = _cpu_seconds(switch.pid)
        offered, got, dt = _blast(frames_file, args.seconds)
        cpu = _cpu_seconds(switch.pid) - cpu0
        pps = got / dt
        print(f"[veth] {target} rtsw.p4, {len(routes)} routes, ECMP 8: unpaced: offered "
              f"{offered / dt:,.0f} pps, through {pps:,.0f} pps ({got} frames in {dt:.1f} s), "
              f"{cpu / max(got, 1) * 1e6:.1f} us CPU/frame")
        if args.cpu_rate > 0:
            through, us, share = _cpu_per_frame(switch, frames_file, args.seconds, args.cpu_rate)
            print(f"[veth] {target} at {args.cpu_rate:,.0f} pps offered: through {through:,.0f} pps, "
                  f"{us:.1f} us CPU/frame ({share:.0%} of a core)")
        if args.pace_step > 0:
            paced = args
            if pps < args.pace_start:
                # A slower target (BMv2 here): steps of a tenth of its unpaced rate, from half.
                step = max(500.0, round(pps / 10, -2))
                paced = argparse.Namespace(**{**vars(args), "pace_start": max(step, round(pps / 2, -3)),
                                              "pace_step": step})
            best, steps = _paced(frames_file, paced)
            print(f"[veth] {target} paced steps (pps: loss): "
                  + ", ".join(f"{r / 1000:.0f}k: {loss:.2%}" for r, loss in steps))
            print(f"[veth] {target} paced: highest offered load with < 0.1% loss: {best:,.0f} pps "
                  f"({paced.pace_seconds:g} s steps of {paced.pace_step:,.0f} pps)")
        return pps


def standalone_cpu(target: str, rates: list[float], seconds: float = 3.0,
                   routes: int = 1000, payload: int = 1024) -> dict[float, float]:
    """What one switch alone spends per frame, to set beside a fabric's figure
    (`bench/fabric_capacity.py`): `target` (p4switch-tm: the `p4switch` command with a
    fabric's traffic-manager flags; bmv2) on the veths, rtsw.p4 with `routes` routes and an
    8-member ECMP group, forwarding full RoCEv2 frames (`ROCE_FRAME` bytes: a 1,024-byte
    payload, as the fabric's data frames) at each offered rate (frames/s) for `seconds`;
    returns rate -> us of the switch process's CPU per frame through. `payload`: the frames'
    RDMA payload instead (above 1,024 bytes the veths get a jumbo MTU). Needs root."""
    rng = random.Random(1)
    prefixes = route_prefixes(routes, rng)
    frames = [roce_frame(r | rng.randrange(1, 255), rng.randrange(1024, 65535),
                         rng.randrange(1, 1 << 24), payload) for r in prefixes[:256]]
    out: dict[float, float] = {}
    with _veths(frames, JUMBO_MTU if payload > 1024 else None) as (tmp, frames_file), \
            _running(target, frames_file, tmp, prefixes) as switch:
        for rate in rates:
            out[rate] = round(_cpu_per_frame(switch, frames_file, seconds, rate)[1], 1)
    return out


@contextlib.contextmanager
def _veths(frames: list[bytes], mtu: int | None = None) -> Iterator[tuple[str, Path]]:
    """The veths and namespaces up (at `mtu`, if given), and `frames` in a file the sender
    reads: (a scratch folder, the file); all of it removed on leaving."""
    with tempfile.TemporaryDirectory(prefix="ppsbench-") as tmp:
        frames_file = Path(tmp) / "frames.bin"
        frames_file.write_bytes(b"".join(len(f).to_bytes(2, "big") + f for f in frames))
        try:
            _veth_up(mtu)
            yield tmp, frames_file
        finally:
            _veth_down()


def _targets(spec: str, tag: str) -> list[str]:
    """The targets `spec` names (comma-separated), bmv2 left out, with a word, when it is not
    on PATH."""
    targets = [t for t in spec.split(",") if t]
    if "bmv2" in targets and not (shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss")):
        print(f"[{tag}] bmv2 skipped: simple_switch_grpc and p4c-bm2-ss are not on PATH")
        targets.remove("bmv2")
    return targets


def bench_veth(args: argparse.Namespace) -> None:
    if os.geteuid() != 0:
        print("[veth] skipped: needs root (network namespaces, raw sockets)")
        return
    targets = _targets(args.targets, "veth")
    rng = random.Random(1)
    routes = route_prefixes(args.routes, rng)
    frames = [udp_frame(r | rng.randrange(1, 255), rng.randrange(1024, 65535)) for r in routes[:256]]
    fwd = None
    measured: dict[str, float] = {}
    with _veths(frames) as (tmp, frames_file):
        try:
            for target in targets:
                measured[target] = _veth_target(target, frames_file, tmp, routes, args)
            fwd = subprocess.Popen([sys.executable, "-c", FORWARDER, VETHS[1][0], VETHS[2][0]],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if not _warm(frames_file):
                raise RuntimeError("no frame got through the raw-socket forwarder")
            offered, got, dt = _blast(frames_file, args.seconds)
            fwd_pps = got / dt
            print(f"[veth] raw-socket Python forwarder: offered {offered / dt:,.0f} pps, "
                  f"through {fwd_pps:,.0f} pps")
            ratios = [f"{t} / forwarder: {pps / fwd_pps:.2f}" for t, pps in measured.items()]
            for t in ("p4switch", "p4switch-tm"):
                if t in measured and measured.get("bmv2"):
                    ratios.append(f"{t} / BMv2: {measured[t] / measured['bmv2']:.2f}")
            print("[veth] " + "; ".join(ratios))
        finally:
            _stop(fwd)


def bench_sizes(args: argparse.Namespace) -> None:
    """CPU per frame against the frame's size: `standalone_cpu` at each `--payloads` size in
    turn, `--size-rounds` times, each target at each `--size-rates` offered load."""
    if os.geteuid() != 0:
        print("[sizes] skipped: needs root (network namespaces, raw sockets)")
        return
    payloads = [int(p) for p in args.payloads.split(",") if p]
    rates = [float(r) for r in args.size_rates.split(",") if r]
    targets = [t for t in _targets(args.targets, "sizes") if t != "p4switch"]
    for target in targets:
        for rnd in range(args.size_rounds):
            for payload in payloads:
                got = standalone_cpu(target, rates, routes=args.routes, payload=payload)
                cells = ", ".join(f"{r:,.0f}/s: {us} us" for r, us in got.items())
                print(f"[sizes] {target} round {rnd + 1}, {payload}-byte payload "
                      f"({roce_frame_bytes(payload)}-byte frames): {cells}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=50000, help="in-memory packets (all rounds)")
    ap.add_argument("--rounds", type=int, default=5, help="in-memory rounds (best and median)")
    ap.add_argument("--routes", type=int, default=1000)
    ap.add_argument("--program", choices=["rtsw", "l3"], default="rtsw", help="in-memory program")
    ap.add_argument("--only", choices=["memory", "veth", "sizes"],
                    help="run one benchmark (sizes: CPU per RoCEv2 frame by its size; only "
                         "when named)")
    ap.add_argument("--payloads", default="1024,4096", help="sizes: RDMA payloads (bytes)")
    ap.add_argument("--size-rates", default="1000,3000", help="sizes: offered loads (frames/s)")
    ap.add_argument("--size-rounds", type=int, default=2, help="sizes: rounds, sizes alternating")
    ap.add_argument("--seconds", type=float, default=5.0, help="veth blast duration")
    ap.add_argument("--pace-start", type=float, default=20000, help="paced veth: first offered load (pps)")
    ap.add_argument("--pace-step", type=float, default=5000, help="paced veth: step (pps); 0: no paced run")
    ap.add_argument("--pace-max", type=float, default=150000, help="paced veth: highest offered load (pps)")
    ap.add_argument("--pace-seconds", type=float, default=2.0, help="paced veth: seconds per step")
    ap.add_argument("--cpu-rate", type=float, default=2000,
                    help="veth: offered load (pps) of the CPU-per-frame run; 0: none")
    ap.add_argument("--targets", default="p4switch,p4switch-tm,bmv2",
                    help="veth: targets to measure, in order (p4switch, p4switch-tm: with a "
                         "fabric's traffic-manager flags, p4switch-per-frame: without batched "
                         "port I/O, bmv2; default p4switch, p4switch-tm and bmv2; bmv2 is "
                         "skipped when it is not on PATH)")
    args = ap.parse_args()
    if args.only in (None, "memory"):
        bench_memory(args)
    if args.only in (None, "veth"):
        bench_veth(args)
    if args.only == "sizes":
        bench_sizes(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
