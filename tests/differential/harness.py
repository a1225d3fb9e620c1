"""One differential run of a program: writes, packet batches and counters on both targets, compared.

`Run(rig, compiled, seed)` loads the program on both switches; `write(updates)`
applies the same P4Runtime writes to both and reports updates whose status
differs; `batch(frames)` sends a batch to both and reports every port whose
frames differ (inputs a deviation covers are run apart and checked against
the deviation's expectation); on a difference the batch's inputs are replayed
one by one to name the first input that differs by itself. `counters()`
reads every counter and direct counter back from both and reports those that
differ. Every report is a string; an empty list is agreement.

Names defined here: `Run`.
"""

from __future__ import annotations

from p4switch.proto import p4r

from .deviations import covering
from .generate import counter_reads
from .rig import CPU, Compiled, Outputs, Rig

QUEUE_FIELDS = ("enq_qdepth", "deq_qdepth", "deq_timedelta")


def _hex(b: bytes, limit: int = 96) -> str:
    return b[:limit].hex() + ("..." if len(b) > limit else "")


def _port_name(p: int) -> str:
    return "cpu (packet-in)" if p == CPU else f"port {p}"


def _describe(bm: Outputs, ps: Outputs) -> list[str]:
    out = []
    for p in sorted(set(bm) | set(ps)):
        a, b = bm.get(p, []), ps.get(p, [])
        if a == b:
            continue
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        out.append(f"{_port_name(p)}: BMv2 sent {len(a)} frames, p4switch {len(b)}; first difference at #{first}: "
                   f"BMv2 {_hex(a[first]) if first < len(a) else '-'} p4switch {_hex(b[first]) if first < len(b) else '-'}")
    return out


class Run:
    def __init__(self, rig: Rig, compiled: Compiled) -> None:
        self.rig = rig
        self.compiled = compiled
        self.unsettled = 0  # batches after which a switch kept sending (not compared)
        # a program that reads queue occupancy sees the load, and the load
        # differs (BMv2 is slower): such programs get their frames spaced out
        text = compiled.bmv2_json.decode()
        self.gap = 0.003 if any(f'"{f}"' in text for f in QUEUE_FIELDS) else 0.0
        rig.load(compiled)

    def write(self, updates: list[p4r.Update]) -> list[str]:
        codes = self.rig.write(updates)
        bm, ps = codes["bmv2"], codes["p4switch"]
        return [f"{self.compiled.name}: update {i} ({u.type and p4r.Update.Type.Name(u.type)} "
                f"{u.entity.WhichOneof('entity')}): BMv2 code {a}, p4switch code {b}: {u.entity}"
                for i, (u, a, b) in enumerate(zip(updates, bm, ps, strict=True)) if a != b]

    def batch(self, frames: list[tuple[int, bytes]]) -> list[str]:
        normal = [(p, f) for p, f in frames if covering(f) is None]
        special = [(p, f) for p, f in frames if covering(f) is not None]
        diffs: list[str] = []
        if normal:
            out = self.rig.exchange(normal, gap=self.gap)
            if not self.rig.settled:
                self.unsettled += 1
            elif out["bmv2"] != out["p4switch"]:
                diffs += [f"{self.compiled.name}: {d}" for d in _describe(out["bmv2"], out["p4switch"])]
                diffs += self._first_culprit(normal)
        if special:
            out = self.rig.exchange(special)
            if out["p4switch"]:
                names = sorted({d.name for _, f in special if (d := covering(f)) is not None})
                diffs.append(f"{self.compiled.name}: deviation {', '.join(names)}: p4switch was expected to send "
                             f"nothing but sent {_describe({}, out['p4switch'])}")
        return diffs

    def _first_culprit(self, frames: list[tuple[int, bytes]], limit: int = 12) -> list[str]:
        for port, frame in frames[:limit]:
            out = self.rig.exchange([(port, frame)], quiet=0.08)
            if out["bmv2"] != out["p4switch"]:
                return [f"{self.compiled.name}: alone, input on port {port} {_hex(frame, 200)} differs: "
                        + "; ".join(_describe(out["bmv2"], out["p4switch"]))]
        return [f"{self.compiled.name}: no single input of the batch differs alone (state or order)"]

    def counters(self) -> list[str]:
        reads = counter_reads(self.compiled.p4info)
        if not reads:
            return []
        got = {}
        for name, session in self.rig.sessions():
            ents = []
            for e in reads:  # one read each: a target refusing one kind must not hide the others
                try:
                    ents += session.read([e])
                except Exception as err:  # noqa: BLE001 - reported as a difference below
                    ents.append(p4r.Entity())
                    got.setdefault(f"{name}-errors", []).append(f"{e}: {err}")
            got[name] = _canonical(ents)
        diffs = []
        for key in sorted(set(got["bmv2"]) | set(got["p4switch"])):
            a, b = got["bmv2"].get(key), got["p4switch"].get(key)
            if a != b:
                diffs.append(f"{self.compiled.name}: counter {key}: BMv2 {a}, p4switch {b}")
        for name in ("bmv2", "p4switch"):
            diffs += [f"{self.compiled.name}: {name} read failed: {e}" for e in got.get(f"{name}-errors", [])]
        return diffs


def _canonical(entities: list[p4r.Entity]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for e in entities:
        which = e.WhichOneof("entity")
        if which == "counter_entry":
            c = e.counter_entry
            out[f"{c.counter_id}[{c.index.index}]"] = (c.data.packet_count, c.data.byte_count)
        elif which == "direct_counter_entry":
            d = e.direct_counter_entry
            te = d.table_entry
            match = sorted(m.SerializeToString().hex() for m in te.match)
            key = f"{te.table_id}{{{','.join(match)}}}/{te.priority}{'/default' if te.is_default_action else ''}"
            out[key] = (d.data.packet_count, d.data.byte_count)
    return out
