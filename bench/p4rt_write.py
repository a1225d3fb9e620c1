"""P4Runtime write/read throughput of p4switch's server while it forwards packets, and of BMv2's.

p4switch: the server (real gRPC on loopback, the real pipeline running
tests/unit/server/route.p4 with a 64k-entry LPM table) runs in this process,
with a thread that pushes IPv4 packets through the pipeline at `--pps`
(0: as fast as it can), for each gRPC transport (the native one first, then
grpcio's server). BMv2: `simple_switch_grpc` (from PATH, when there) runs the
same program compiled by p4c-bm2-ss, with no ports (so no packet load).

The client is a separate process (as a controller would be), on finsy: a
primary `finsy.Switch` pushes the pipeline; the WriteRequests are encoded
through finsy's schema before the clock starts; it warms the connection up
with a fifth of them, empties the table, then inserts N routes in batches of
1, 100, 500 and 1000 updates per request and reads them all back (finsy
decodes what it reads). Prints entries/s for each, and the server's CPU
time per entry written (every thread of the server process but the packet
load's, from /proc/<pid>/task/*/schedstat, in ns), which shifts less with
the other work on the machine than the rates do. When both targets ran, a
summary: p4switch's rate over BMv2's per batch size (the first transport
measured). Figures only, never asserts.

    .venv/bin/python bench/p4rt_write.py [--entries N] [--pps PPS] [--transport T]
                                         [--target p4switch|bmv2|both] [--profile FILE]
    .venv/bin/python bench/p4rt_write.py --direct [--entries N]

`--direct` measures p4switch's write path alone, without gRPC, client or
packet load: `DeviceRuntime.write` in this process on the same program and
routes (WriteRequests decoded before the clock starts), inserting then
deleting `--entries` routes in batches of 100 and 500, five times; prints
the best thread CPU time per entry of each (collector included).

`--profile FILE` writes a cProfile of the p4switch server's Write calls
during the timed runs (FILE.<transport>; open it with `python -m pstats`).
cProfile follows one thread: each Write is profiled on the thread that runs
it (the client sends one request at a time). For the whole process, threads
and native frames included, use py-spy (`py-spy record --native -- python
bench/p4rt_write.py ...`).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BATCHES = (1, 100, 500, 1000)
TABLE_SIZE = 1 << 16
TABLE = "MyIngress.ipv4_route"
ACTION = "MyIngress.route"


def program_source(folder: Path) -> Path:
    """route.p4 with a bigger route table, written into `folder`."""
    with open(os.path.join(ROOT, "tests/unit/server/route.p4")) as f:
        src = f.read().replace("size = 1024;", f"size = {TABLE_SIZE};")
    path = folder / "route64k.p4"
    path.write_text(src)
    return path


def build_p4switch(source: Path, out: Path) -> tuple[Path, Path]:
    """(P4Info text file, program file) from p4switch-compile's front end."""
    from google.protobuf import text_format

    from p4switch import ir
    from p4switch.frontend import compile_file
    from p4switch.p4info import build_p4info

    program = compile_file(str(source))
    info = build_p4info(program)
    text = text_format.MessageToString(info)
    (out / "p4switch.p4info.txtpb").write_text(text)
    (out / "p4switch.json").write_text(ir.to_json(program, text))
    return out / "p4switch.p4info.txtpb", out / "p4switch.json"


def build_bmv2(source: Path, out: Path) -> tuple[Path, Path]:
    """(P4Info, BMv2 JSON) from p4c-bm2-ss."""
    info, blob = out / "bmv2.p4info.txtpb", out / "bmv2.json"
    subprocess.run(["p4c-bm2-ss", "--p4v", "16", "--p4runtime-files", str(info), "-o", str(blob),
                    str(source)], check=True, capture_output=True, text=True)
    return info, blob


def client_main(address: str, p4info: str, blob: str, n: int, conn) -> None:
    """The controller process: push the pipeline, write in batches, read back; send timings."""
    asyncio.run(_client(address, Path(p4info), Path(blob), n, conn))


async def _client(address: str, p4info: Path, blob: Path, n: int, conn) -> None:
    import logging

    import finsy
    from finsy import P4TableAction, P4TableEntry, P4TableMatch
    from finsy.p4entity import encode_updates

    logging.getLogger("finsy").setLevel(logging.ERROR)
    options = finsy.SwitchOptions(p4info=p4info, p4blob=blob, device_id=1, p4force=True)
    async with finsy.Switch("bench", address, options) as sw:
        entries = [+P4TableEntry(TABLE, match=P4TableMatch(dst_addr=(0x0A000000 + (i << 8), 24)),
                                 action=P4TableAction(ACTION, port=1 + i % 3,
                                                      dmac=0x020000000000 + i))
                   for i in range(n)]
        updates = encode_updates(entries, sw.p4info)
        for batch in BATCHES:
            requests = [updates[i:i + batch] for i in range(0, n, batch)]
            # Warm up with a fifth of the requests (gRPC's flow-control windows grow
            # with the traffic they see), then start from an empty table.
            for req in requests[:max(1, len(requests) // 5)]:
                await sw.write(req)
            await sw.delete_many([P4TableEntry(TABLE)])
            conn.send(("start", batch))
            conn.recv()
            t0 = time.perf_counter()
            for req in requests:
                await sw.write(req)
            wt = time.perf_counter() - t0
            conn.send(("written", None))  # the server's CPU count stops here
            t0 = time.perf_counter()
            got = [e async for e in sw.read(P4TableEntry(TABLE))]
            rt = time.perf_counter() - t0
            if len(got) != n:
                raise SystemExit(f"read back {len(got)} of {n}")
            conn.send(("end", (batch, n / wt, n / rt)))
            await sw.delete_many([P4TableEntry(TABLE)])
    conn.send(("done", None))


class PacketLoad:
    """A thread sending IPv4 packets that hit the routes through the pipeline at `pps` (0: flat out)."""

    def __init__(self, process, pps: float, frames: list[bytes]) -> None:
        self.frames = frames
        self.process = process
        self.pps = pps
        self.sent = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        frames, process, i = self.frames, self.process, 0
        gap = 1.0 / self.pps if self.pps else 0.0
        t = time.perf_counter()
        while not self.stop.is_set():
            process(1, frames[i & 255])
            i += 1
            if gap:
                t += gap
                d = t - time.perf_counter()
                if d > 0:
                    time.sleep(d)
        self.sent = i


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=5000, help="entries per batch size (default 5000)")
    ap.add_argument("--pps", type=float, default=2000,
                    help="packets/s p4switch forwards during the measurement (default 2000; 0: flat out)")
    ap.add_argument("--transport", choices=("native", "grpcio"),
                    help="p4switch: measure one gRPC transport only (default: both, native first)")
    ap.add_argument("--target", choices=("p4switch", "bmv2", "both"), default="both",
                    help="which server (default both: p4switch, then BMv2 when on PATH)")
    ap.add_argument("--profile", metavar="FILE", help="write a cProfile of the server's Write calls (FILE.<transport>)")
    ap.add_argument("--switch-interval", type=float, default=None, metavar="S",
                    help="sys.setswitchinterval for the server process (default: Python's 0.005)")
    ap.add_argument("--direct", action="store_true",
                    help="p4switch's DeviceRuntime.write alone, in this process: CPU per entry")
    args = ap.parse_args()
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)

    from scapy.all import IP, UDP, Ether, Raw

    from p4switch.server.transport import native_available

    n = min(args.entries, TABLE_SIZE)
    if args.direct:
        with tempfile.TemporaryDirectory(prefix="p4rtbench-") as tmp:
            direct(*build_p4switch(program_source(Path(tmp)), Path(tmp)), n)
        return
    rates: dict[str, Rates] = {}
    with tempfile.TemporaryDirectory(prefix="p4rtbench-") as tmp:
        source = program_source(Path(tmp))
        if args.target in ("p4switch", "both"):
            info, blob = build_p4switch(source, Path(tmp))
            frames = [bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:01:01")
                            / IP(dst=f"10.0.{i}.1") / UDP(dport=4791) / Raw(b"x" * 64))
                      for i in range(256)]
            transports = [args.transport] if args.transport else ["native", "grpcio"]
            if native_available() and not args.transport:
                print(f"(native transport not built: {native_available()}; grpcio only)")
                transports = ["grpcio"]
            for transport in transports:
                rates[f"p4switch ({transport})"] = run(transport, args, info, blob, frames, n)
        if args.target in ("bmv2", "both"):
            if not (shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss")):
                print("BMv2: skipped (simple_switch_grpc and p4c-bm2-ss are not on PATH)")
            else:
                rates["BMv2"] = run_bmv2(source, Path(tmp), n)
    summary(rates)


# batch size -> (write, read-back) entries/s, server CPU µs per entry written
Rates = dict[int, tuple[float, float, float]]


def summary(rates: dict[str, Rates]) -> None:
    """p4switch's rates over BMv2's, per batch size, when both were measured."""
    bmv2 = rates.get("BMv2")
    ours = next((k for k in rates if k.startswith("p4switch")), None)
    if bmv2 is None or ours is None:
        return
    print(f"{ours} / BMv2, same run:")
    for batch, (w, r, us) in rates[ours].items():
        bw, br, bus = bmv2[batch]
        print(f"  batch {batch:>4}: write {w / bw:5.2f}x ({w:8.0f} vs {bw:8.0f} entries/s)"
              f"   read back {r / br:5.2f}x   server CPU per entry {us / bus:5.2f}x")


def direct(info_path: Path, blob: Path, n: int) -> None:
    """DeviceRuntime.write without gRPC: best thread CPU per route inserted and deleted."""
    from google.protobuf import text_format

    from p4switch.pipeline import Switch
    from p4switch.proto import p4i, p4r
    from p4switch.server.runtime import DeviceRuntime

    info = p4i.P4Info()
    text_format.Parse(info_path.read_text(), info)
    rt = DeviceRuntime(1, lambda prog, tx: Switch(prog, tx, cpu_port=255), cpu_port=255)
    rt.set_pipeline(p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                    p4r.ForwardingPipelineConfig(p4info=info, p4_device_config=blob.read_bytes()))
    tid = next(t.preamble.id for t in info.tables if t.preamble.name == TABLE)
    aid = next(a.preamble.id for a in info.actions if a.preamble.name == ACTION)

    def update(i: int, kind: int) -> p4r.Update:
        u = p4r.Update(type=kind)
        te = u.entity.table_entry
        te.table_id = tid
        fm = te.match.add(field_id=1)
        fm.lpm.value = (0x0A000000 + (i << 8)).to_bytes(4, "big")
        fm.lpm.prefix_len = 24
        te.action.action.action_id = aid
        te.action.action.params.add(param_id=1, value=(1 + i % 3).to_bytes(2, "big").lstrip(b"\0"))
        te.action.action.params.add(param_id=2, value=(0x020000000000 + i).to_bytes(6, "big"))
        return u

    def requests(batch: int, kind: int) -> list[p4r.WriteRequest]:
        """Decoded from bytes, as a server gets them."""
        return [p4r.WriteRequest.FromString(p4r.WriteRequest(
            device_id=1, updates=[update(i, kind) for i in range(s, min(n, s + batch))]).SerializeToString())
            for s in range(0, n, batch)]

    print(f"p4switch DeviceRuntime.write in this process (no gRPC, no packet load): {n} LPM routes, "
          f"thread CPU per route, best of 5")
    try:
        for batch in (100, 500):
            ins, dels = requests(batch, p4r.Update.INSERT), requests(batch, p4r.Update.DELETE)
            best_i = best_d = float("inf")
            for _ in range(5):
                t0 = time.thread_time()
                for req in ins:
                    if any(rt.write(req.updates)):
                        raise SystemExit("an insert failed")
                t1 = time.thread_time()
                for req in dels:
                    if any(rt.write(req.updates)):
                        raise SystemExit("a delete failed")
                t2 = time.thread_time()
                best_i, best_d = min(best_i, (t1 - t0) / n), min(best_d, (t2 - t1) / n)
            print(f"  batch {batch:>4}: insert {best_i * 1e6:5.1f} µs/route   delete {best_d * 1e6:5.1f} µs/route")
    finally:
        rt.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ns(pid: int, skip: frozenset[int] = frozenset()) -> int:
    """CPU time (ns) of every thread of process `pid` but those in `skip` (schedstat's first field)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        if int(task) in skip:
            continue
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # the thread ended meanwhile
            pass
    return total


def _serve_client(address: str, info: Path, blob: Path, n: int, cpu: Callable[[], int],
                  around: tuple | None = None) -> list[tuple[int, float, float, float, float]]:
    """Run the client process against `address`; `around` = (start, stop) of a load per batch;
    `cpu()` the server's CPU time (ns). Returns (batch, write/s, read/s, load pps, server CPU
    µs per entry written) per batch."""
    here, there = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=client_main,
                                           args=(address, str(info), str(blob), n, there))
    proc.start()
    out = []
    try:
        while True:
            kind, _ = here.recv()
            if kind == "done":
                break
            load = around[0]() if around else None
            t0 = time.perf_counter()
            c0 = cpu()
            here.send("go")
            kind, _ = here.recv()  # "written"
            us = (cpu() - c0) / 1e3 / n
            kind, (batch, w, r) = here.recv()
            secs = time.perf_counter() - t0
            pps = around[1](load, secs) if around else 0.0
            out.append((batch, w, r, pps, us))
    finally:
        proc.join(10)
    return out


def run_bmv2(source: Path, tmp: Path, n: int) -> Rates:
    """simple_switch_grpc on the same program (p4c-bm2-ss), no ports; print and return the rates."""
    info, blob = build_bmv2(source, tmp)
    addr = f"127.0.0.1:{_free_port()}"
    log = open(tmp / "bmv2.log", "wb")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(["simple_switch_grpc", "--no-p4", "--device-id", "1", "--thrift-port",
                             str(_free_port()), "--log-level", "warn", "--", "--grpc-server-addr", addr,
                             "--cpu-port", "255"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", int(addr.rsplit(":", 1)[1])), 0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"simple_switch_grpc did not start (log: {tmp / 'bmv2.log'})") from None
                time.sleep(0.1)
        print(f"BMv2 simple_switch_grpc P4Runtime write/read: {n} LPM entries per run, client in "
              f"another process, no packet load (no ports)")
        out: Rates = {}
        for batch, w, r, _, us in _serve_client(addr, info, blob, n, lambda: cpu_ns(proc.pid)):
            print(f"  batch {batch:>4}: write {w:8.0f} entries/s   read back {r:8.0f} entries/s"
                  f"   server CPU {us:5.1f} µs/entry written")
            out[batch] = (w, r, us)
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


def run(transport: str, args: argparse.Namespace, info: Path, blob: Path, frames: list[bytes],
        n: int) -> Rates:
    """Serve with `transport`, let a client process write and read at each batch size; print and
    return the rates."""
    from p4switch.pipeline import Switch
    from p4switch.server import P4RuntimeServer

    sink = {"n": 0}

    def transmit(port: int, frame: bytes) -> None:  # count, don't keep
        sink["n"] += 1

    server = P4RuntimeServer(device_id=1, address="127.0.0.1:0", transmit=transmit, cpu_port=255,
                             factory=lambda prog, tx: Switch(prog, tx, cpu_port=255),
                             transport=transport).start()
    prof = None
    profiling = threading.Event()  # set while a timed run is under way
    if args.profile:
        import cProfile

        prof = cProfile.Profile()
        write = server.service.Write

        def profiled_write(request: Any, context: Any) -> Any:
            """The service's Write, under the profiler during the timed runs."""
            if prof is not None and profiling.is_set():
                return prof.runcall(write, request, context)
            return write(request, context)

        server.service.Write = profiled_write  # type: ignore[method-assign]

    loads: frozenset[int] = frozenset()  # the load thread's id, left out of the server's CPU

    def start_load() -> PacketLoad:
        nonlocal loads
        load = PacketLoad(server.process, args.pps, frames)
        sink["n"] = 0
        load.thread.start()
        assert load.thread.native_id is not None
        loads = frozenset({load.thread.native_id})
        time.sleep(0.2)  # let the load settle before the clock starts
        profiling.set()
        return load

    def stop_load(load: PacketLoad, secs: float) -> float:
        profiling.clear()
        load.stop.set()
        load.thread.join()
        return sink["n"] / secs

    print(f"p4switch P4Runtime write/read over the {transport} transport: {n} LPM entries per run, "
          f"client in another process, packet load {'flat out' if not args.pps else f'{args.pps:.0f} pps'}")
    out: Rates = {}
    try:
        for batch, w, r, pps, us in _serve_client(f"127.0.0.1:{server.port}", info, blob, n,
                                                  lambda: cpu_ns(os.getpid(), loads),
                                                  (start_load, stop_load)):
            print(f"  batch {batch:>4}: write {w:8.0f} entries/s   read back {r:8.0f} entries/s"
                  f"   server CPU {us:5.1f} µs/entry written   (forwarding {pps:.0f} pps meanwhile)")
            out[batch] = (w, r, us)
        return out
    finally:
        server.stop(grace=0)
        if prof is not None:
            prof.dump_stats(f"{args.profile}.{transport}")


if __name__ == "__main__":
    main()
