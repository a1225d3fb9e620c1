"""Compile time of P4 programs with p4switch-compile's front end.

Prints, for p4/rtsw.p4, for the largest program under p4/ and
tests/unit/frontend/corpus/valid, and for a generated program of about
1,000 lines (headers, a parser state per header, a control per header with
tables, actions and counters, all applied), the wall-clock time of
preprocessing + parsing + checking + P4Info (best of N runs, after one
warm-up that also fills Lark's grammar cache). Figures only; nothing is
asserted.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from p4switch.frontend import compile_file
from p4switch.p4info import build_p4info

ROOT = Path(__file__).resolve().parents[1]


def _lines(path: Path) -> int:
    return sum(1 for _ in path.open())


def _time(path: Path, runs: int) -> float:
    compile_file(path, include_dirs=[path.parent])
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        build_p4info(compile_file(path, include_dirs=[path.parent]))
        best = min(best, time.perf_counter() - t0)
    return best


def generated_program(n_protocols: int = 16) -> str:
    """A v1model program of ~60 lines per protocol: n chained headers, each with
    its parser state, and a control with two tables, three actions, a counter."""
    out = ["#include <core.p4>", "#include <v1model.p4>", "",
           "header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }"]
    for i in range(n_protocols):
        out += [f"header proto{i}_t {{", "    bit<8>  kind;", "    bit<8>  flags;", "    bit<16> next;",
                "    bit<32> addr;", "    bit<32> value;", "}"]
    out += ["struct headers_t {", "    ethernet_t eth;"]
    out += [f"    proto{i}_t p{i};" for i in range(n_protocols)]
    out += ["}", "struct meta_t {", "    bit<32> acc;", "    bit<16> sel;", "    bool    hit;", "}", "",
            "parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {",
            "    state start {", "        pk.extract(h.eth);", "        transition select(h.eth.type) {"]
    out += [f"            16w0x{0x9000 + i:04x}: parse_p{i};" for i in range(n_protocols)]
    out += ["            default: accept;", "        }", "    }"]
    for i in range(n_protocols):
        nxt = [f"            16w0x{0x9000 + j:04x}: parse_p{j};" for j in range(i + 1, min(i + 3, n_protocols))]
        out += [f"    state parse_p{i} {{", f"        pk.extract(h.p{i});", f"        m.acc = m.acc + h.p{i}.value;",
                f"        transition select(h.p{i}.next) {{", *nxt, "            default: accept;", "        }", "    }"]
    out += ["}", ""]
    for i in range(n_protocols):
        out += [
            f"control Proto{i}(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{",
            "    counter(1024, CounterType.packets_and_bytes) stats;",
            "    action fwd(bit<9> port, bit<48> dmac) {",
            "        sm.egress_spec = port;",
            "        h.eth.dst = dmac;",
            f"        h.p{i}.flags = h.p{i}.flags | 8w1;",
            "    }",
            "    action rewrite(bit<32> addr) {",
            f"        h.p{i}.addr = addr;",
            f"        m.acc = m.acc ^ (addr >> 3) + (bit<32>)h.p{i}.kind;",
            "    }",
            "    action drop() { mark_to_drop(sm); }",
            "    table classify {",
            f"        key = {{ h.p{i}.kind: exact; h.p{i}.addr: lpm; }}",
            "        actions = { fwd; rewrite; drop; NoAction; }",
            "        default_action = NoAction();",
            "        size = 512;",
            "    }",
            "    table acl {",
            f"        key = {{ h.p{i}.addr: ternary; h.p{i}.value: range; sm.ingress_port: exact; }}",
            "        actions = { drop; NoAction; }",
            "        const default_action = NoAction();",
            "    }",
            "    apply {",
            f"        if (h.p{i}.isValid()) {{",
            "            switch (classify.apply().action_run) {",
            "                fwd: { m.hit = true; }",
            "                default: { m.hit = false; }",
            "            }",
            "            if (!m.hit && acl.apply().hit) {",
            "                stats.count((bit<32>)sm.ingress_port);",
            "            }",
            f"            m.sel = m.sel + (bit<16>)h.p{i}.value[15:0];",
            "        }",
            "    }",
            "}",
        ]
    out += ["control Ig(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {"]
    out += [f"    Proto{i}() proto{i};" for i in range(n_protocols)]
    out += ["    apply {"] + [f"        proto{i}.apply(h, m, sm);" for i in range(n_protocols)] + ["    }", "}"]
    out += ["control Eg(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }",
            "control VC(inout headers_t h, inout meta_t m) { apply { } }",
            "control CC(inout headers_t h, inout meta_t m) { apply { } }",
            "control D(packet_out pk, in headers_t h) { apply { pk.emit(h); } }",
            "V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;"]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--protocols", type=int, default=18, help="size of the generated program (~60 lines each)")
    args = ap.parse_args()
    programs = sorted(ROOT.glob("p4/*.p4")) + sorted((ROOT / "tests/unit/frontend/corpus/valid").glob("*.p4"))
    chosen = [p for p in programs if p.name == "rtsw.p4"]
    if programs:
        largest = max(programs, key=lambda p: p.stat().st_size)
        if largest not in chosen:
            chosen.append(largest)
    for p in chosen:
        secs = _time(p, args.runs)
        print(f"{p.relative_to(ROOT)}: {_lines(p)} lines, {secs * 1000:.1f} ms (best of {args.runs})")
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "generated.p4"
        gen.write_text(generated_program(args.protocols))
        secs = _time(gen, args.runs)
        print(f"generated ({args.protocols} protocols): {_lines(gen)} lines, {secs * 1000:.1f} ms (best of {args.runs})")


if __name__ == "__main__":
    main()
