"""P4Runtime write/read throughput of p4switch's server.

Starts an in-process P4Runtime server (real gRPC on loopback), pushes a
program with one LPM route table, then inserts routes in batches of 1, 100
and 1000 updates per WriteRequest and reads them all back; prints entries/s
for each. Figures only, never asserts.

    .venv/bin/python bench/p4rt_write.py [--entries N] [--fake]

By default the program is tests/unit/server/route.p4 compiled by the
built-in front end and run by the real pipeline; `--fake` uses the in-memory
test device instead (measures the server alone).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from google.protobuf import text_format  # noqa: E402

from p4switch import ir  # noqa: E402
from p4switch.proto import p4i, p4r  # noqa: E402
from p4switch.server import P4RuntimeServer  # noqa: E402
from tests.unit.server.conftest import Client, load_p4info, update  # noqa: E402


def real_target() -> tuple[object, p4i.P4Info, bytes]:
    from p4switch.frontend import compile_file
    from p4switch.p4info import build_p4info
    from p4switch.pipeline import Switch

    program = compile_file(os.path.join(ROOT, "tests/unit/server/route.p4"))
    info = build_p4info(program)
    blob = ir.to_json(program, text_format.MessageToString(info)).encode()
    return (lambda prog, tx: Switch(prog, tx, cpu_port=255)), info, blob


def fake_target() -> tuple[object, p4i.P4Info, bytes]:
    from tests.unit.server.fakedevice import TABLES, FakeDevice, make_program_file

    TABLES["ingress.ipv4_lpm"] = (["hdr.ipv4.dstAddr"], 1 << 20, False, "NoAction")
    info = load_p4info()
    for t in info.tables:
        if t.preamble.name == "ingress.ipv4_lpm":
            t.size = 1 << 20
    return FakeDevice, info, make_program_file()


def route_entry(info: p4i.P4Info, i: int) -> p4r.TableEntry:
    table = next(t for t in info.tables if t.match_fields and t.match_fields[0].match_type == p4i.MatchField.LPM)
    act = next(a for a in info.actions if len(a.params) == 2)
    te = p4r.TableEntry(table_id=table.preamble.id)
    fm = te.match.add(field_id=table.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = (0x0A000000 + (i << 8)).to_bytes(4, "big"), 24
    te.action.action.action_id = act.preamble.id
    te.action.action.params.add(param_id=act.params[0].id, value=bytes([1 + i % 8]))
    te.action.action.params.add(param_id=act.params[1].id, value=(0x020000000000 + i).to_bytes(6, "big"))
    return te


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1000,
                    help="entries per batch size (default 1000; capped at the table size)")
    ap.add_argument("--fake", action="store_true", help="use the in-memory test device")
    args = ap.parse_args()
    factory, info, blob = fake_target() if args.fake else real_target()
    server = P4RuntimeServer(device_id=1, factory=factory, address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}")
    try:
        client.stream(10)
        table = next(t for t in info.tables if t.match_fields
                     and t.match_fields[0].match_type == p4i.MatchField.LPM)
        n = min(args.entries, table.size or args.entries)
        print(f"p4switch P4Runtime write/read, {n} LPM entries per run "
              f"({'fake device' if args.fake else 'real pipeline'})")
        for batch in (1, 100, 1000):
            client.set_pipeline(p4info=info, device_config=blob)  # start from empty tables
            entries = [route_entry(info, i) for i in range(n)]
            t0 = time.perf_counter()
            for i in range(0, n, batch):
                client.write(*[update("INSERT", table_entry=e) for e in entries[i:i + batch]])
            wt = time.perf_counter() - t0
            t0 = time.perf_counter()
            got = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=entries[0].table_id)))
            rt = time.perf_counter() - t0
            assert len(got) == n, f"read back {len(got)} of {n}"
            print(f"  batch {batch:>4}: write {n / wt:10.0f} entries/s   read back {n / rt:10.0f} entries/s")
    finally:
        client.close()
        server.stop(grace=0)


if __name__ == "__main__":
    main()
