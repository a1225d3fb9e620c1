"""P4Runtime write/read throughput of p4switch's server while it forwards packets.

The server (real gRPC on loopback, the real pipeline running
tests/unit/server/route.p4 with a 64k-entry LPM table) runs in this process,
with a thread that pushes IPv4 packets through the pipeline at `--pps`
(0: as fast as it can). A client in a separate process (as a controller would
be) builds its WriteRequests before the clock starts, warms the connection up
with a fifth of them, then inserts N routes into empty tables in batches of
1, 100 and 1000 updates per request and reads them all back.
Prints entries/s for each, and the packets forwarded meanwhile, for each
gRPC transport (the native one first, then grpcio's server, so the two
compare in one run). Figures only, never asserts.

    .venv/bin/python bench/p4rt_write.py [--entries N] [--pps PPS] [--transport T] [--profile FILE]

`--profile FILE` writes a cProfile of the server process (open it with
`python -m pstats FILE`).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BATCHES = (1, 100, 500, 1000)
TABLE_SIZE = 1 << 16


def build_program() -> tuple[bytes, bytes]:
    """route.p4 with a bigger route table: (P4Info, program file)."""
    from google.protobuf import text_format

    from p4switch import ir
    from p4switch.frontend import compile_file
    from p4switch.p4info import build_p4info

    with open(os.path.join(ROOT, "tests/unit/server/route.p4")) as f:
        src = f.read().replace("size = 1024;", f"size = {TABLE_SIZE};")
    with tempfile.NamedTemporaryFile("w", suffix=".p4", delete=False) as f:
        f.write(src)
    try:
        program = compile_file(f.name)
    finally:
        os.unlink(f.name)
    info = build_p4info(program)
    return info.SerializeToString(), ir.to_json(program, text_format.MessageToString(info)).encode()


def route_entry(info, i: int):
    from p4switch.proto import p4i, p4r

    table = next(t for t in info.tables if t.match_fields and t.match_fields[0].match_type == p4i.MatchField.LPM)
    act = next(a for a in info.actions if len(a.params) == 2)
    te = p4r.TableEntry(table_id=table.preamble.id)
    fm = te.match.add(field_id=table.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = (0x0A000000 + (i << 8)).to_bytes(4, "big"), 24
    te.action.action.action_id = act.preamble.id
    te.action.action.params.add(param_id=act.params[0].id, value=bytes([1 + i % 3]))
    te.action.action.params.add(param_id=act.params[1].id, value=(0x020000000000 + i).to_bytes(6, "big"))
    return te


def client_main(address: str, info_bytes: bytes, blob: bytes, n: int, conn) -> None:
    """The controller process: set the pipeline, write in batches, read back; send timings."""
    from p4switch.proto import p4i, p4r
    from tests.unit.server.conftest import Client

    info = p4i.P4Info.FromString(info_bytes)
    client = Client(address)
    client.stream(10)
    table_id = route_entry(info, 0).table_id
    for batch in BATCHES:
        requests = []
        for i in range(0, n, batch):
            req = p4r.WriteRequest(device_id=1, role=client.role)
            req.election_id.low = client.election_id
            for j in range(i, min(n, i + batch)):
                req.updates.add(type=p4r.Update.INSERT).entity.table_entry.CopyFrom(route_entry(info, j))
            requests.append(req)
        # Warm up with a fifth of the requests (gRPC's flow-control windows grow
        # with the traffic they see; the first large requests on a fresh
        # connection wait for them), then start from empty tables.
        client.set_pipeline(p4info=info, device_config=blob)
        for req in requests[:max(1, len(requests) // 5)]:
            client.stub.Write(req)
        client.set_pipeline(p4info=info, device_config=blob)
        conn.send(("start", batch))
        conn.recv()
        t0 = time.perf_counter()
        for req in requests:
            client.stub.Write(req)
        wt = time.perf_counter() - t0
        t0 = time.perf_counter()
        got = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id)))
        rt = time.perf_counter() - t0
        if len(got) != n:
            raise SystemExit(f"read back {len(got)} of {n}")
        conn.send(("end", (batch, n / wt, n / rt)))
    client.close()
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
                    help="packets/s forwarded during the measurement (default 2000; 0: flat out)")
    ap.add_argument("--transport", choices=("native", "grpcio"),
                    help="measure one gRPC transport only (default: both, native first)")
    ap.add_argument("--profile", metavar="FILE", help="write a cProfile of the server process (FILE.<transport>)")
    ap.add_argument("--switch-interval", type=float, default=None, metavar="S",
                    help="sys.setswitchinterval for the server process (default: Python's 0.005)")
    args = ap.parse_args()
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)

    from scapy.all import IP, UDP, Ether, Raw

    from p4switch.server.transport import native_available

    info_bytes, blob = build_program()
    frames = [bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:01:01")
                    / IP(dst=f"10.0.{i}.1") / UDP(dport=4791) / Raw(b"x" * 64)) for i in range(256)]
    n = min(args.entries, TABLE_SIZE)
    transports = [args.transport] if args.transport else ["native", "grpcio"]
    if native_available() and not args.transport:
        print(f"(native transport not built: {native_available()}; grpcio only)")
        transports = ["grpcio"]
    for transport in transports:
        run(transport, args, info_bytes, blob, frames, n)


def run(transport: str, args: argparse.Namespace, info_bytes: bytes, blob: bytes, frames: list[bytes],
        n: int) -> None:
    """Serve with `transport`, let a client process write and read at each batch size; print the rates."""
    from p4switch.pipeline import Switch
    from p4switch.server import P4RuntimeServer

    sink = {"n": 0}

    def transmit(port: int, frame: bytes) -> None:  # count, don't keep
        sink["n"] += 1

    server = P4RuntimeServer(device_id=1, address="127.0.0.1:0", transmit=transmit, cpu_port=255,
                             factory=lambda prog, tx: Switch(prog, tx, cpu_port=255),
                             transport=transport).start()
    here, there = mp.Pipe()
    proc = mp.get_context("spawn").Process(
        target=client_main, args=(f"127.0.0.1:{server.port}", info_bytes, blob, n, there))
    proc.start()
    prof = None
    if args.profile:
        import cProfile

        prof = cProfile.Profile()
    print(f"p4switch P4Runtime write/read over the {transport} transport: {n} LPM entries per run, "
          f"client in another process, packet load {'flat out' if not args.pps else f'{args.pps:.0f} pps'}")
    try:
        while True:
            kind, _ = here.recv()
            if kind == "done":
                break
            load = PacketLoad(server.process, args.pps, frames)
            sink["n"] = 0
            load.thread.start()
            time.sleep(0.2)  # let the load settle before the clock starts
            t0 = time.perf_counter()
            if prof is not None:
                prof.enable()
            here.send("go")
            kind, (batch, w, r) = here.recv()  # "end": this batch size is written and read back
            if prof is not None:
                prof.disable()
            secs = time.perf_counter() - t0
            load.stop.set()
            load.thread.join()
            print(f"  batch {batch:>4}: write {w:8.0f} entries/s   read back {r:8.0f} entries/s"
                  f"   (forwarding {sink['n'] / secs:.0f} pps meanwhile)")
    finally:
        proc.join(10)
        server.stop(grace=0)
        if prof is not None:
            prof.dump_stats(f"{args.profile}.{transport}")


if __name__ == "__main__":
    main()
