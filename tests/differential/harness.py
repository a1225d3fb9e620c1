"""One differential run of a program: writes, packet batches and counters on both targets, compared.

`Run(rig, compiled)` loads the program on both switches (`rig.Refused` when
one refuses it); `write(updates)` applies the same P4Runtime writes to both,
one request per dependency stage (members, groups, entries, defaults), and
reports updates whose status differs; `batch(frames)` sends the frames to
both in one exchange and reports every port whose frames differ, or that
none were compared because a switch never went quiet (inputs a
deviation covers are run apart and checked against the deviation's
expectation; output bytes a deviation leaves out are blanked on both). A
difference is looked at again after waiting longer for late frames, then
the inputs are replayed one by one to name the first that differs by
itself. `counters()` reads every counter and direct counter back from both
and reports those that differ. Every report is a string; an empty list is
agreement.

`differential(rig, prog, key, batches, size)` is a whole run: generated
writes, hypothesis frames seeded by `key`, counters.

Names defined here: `Run`, `stages`, `differential`.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from p4switch.proto import p4i, p4r

from .deviations import covering, expected, masked
from .generate import Pools, bmv2_room, counter_reads, frames, program_writes
from .rig import CPU, RATE, Compiled, Outputs, Rig

QUEUE_FIELDS = ("enq_qdepth", "deq_qdepth", "deq_timedelta")
LATE = 0.6  # seconds waited for late frames before a difference is reported
# seconds a switch still sending after an exchange gets to finish (a loaded machine's slower
# target catching up) before its batch counts as unsettled: one that never goes quiet
# (entries that recirculate or clone a packet for ever) has no output to compare, which
# `batch` reports as a difference (a run that compared nothing cannot pass)
CATCH_UP = 20.0


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


def _strictly_within(small: Outputs, big: Outputs) -> bool:
    """Is every frame of `small` also in `big` (as multisets, per port), and `big` larger?"""
    smaller = False
    for p in set(small) | set(big):
        a, b = Counter(small.get(p, [])), Counter(big.get(p, []))
        if a - b:
            return False
        smaller = smaller or bool(b - a)
    return smaller


def _common(a: bytes, b: bytes) -> int:
    """Length of the common prefix of two frames."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _kind(u: p4r.Update) -> int:
    which = u.entity.WhichOneof("entity")
    if which == "action_profile_member":
        return 0
    if which == "action_profile_group":
        return 1
    if which == "table_entry" and u.entity.table_entry.is_default_action:
        return 3
    return 2


def stages(updates: list[p4r.Update]) -> list[list[p4r.Update]]:
    """Consecutive updates of one dependency stage (members, groups, entries, defaults) together."""
    out: list[list[p4r.Update]] = []
    for u in updates:
        if out and _kind(out[-1][-1]) == _kind(u):
            out[-1].append(u)
        else:
            out.append([u])
    return out


class Run:
    def __init__(self, rig: Rig, compiled: Compiled, rate: float = 0.0) -> None:
        self.rig = rig
        self.rate = rate  # frames/s (0: the rig's RATE)
        self.compiled = compiled
        self.unsettled = 0  # batches after which a switch kept sending (reported, not compared)
        self.offered = 0  # frames no deviation covers, sent to both
        self.frames = 0  # of those, frames whose outputs were compared
        self.lost = False  # BMv2 sent a strict part of what p4switch sent: input lost in its ports
        # a program that reads queue occupancy sees the load, and the load
        # differs (BMv2 is slower): such programs get their frames spaced out
        text = compiled.bmv2_json.decode()
        self.gap = 0.003 if any(f'"{f}"' in text for f in QUEUE_FIELDS) else 0.0
        rig.load(compiled)

    def write(self, updates: list[p4r.Update]) -> list[str]:
        diffs = []
        done = 0
        for stage in stages(updates):
            codes = self.rig.write(stage)
            for i, (u, (a, am), (b, bm)) in enumerate(zip(stage, codes["bmv2"], codes["p4switch"], strict=True)):
                if a != b:
                    diffs.append(f"{self.compiled.name}: update {done + i} ({p4r.Update.Type.Name(u.type)} "
                                 f"{u.entity.WhichOneof('entity')}): BMv2 code {a} ({am!r}), p4switch code {b} "
                                 f"({bm!r}): {u.entity}")
            done += len(stage)
        return diffs

    def _outputs(self, out: dict[str, Outputs]) -> tuple[Outputs, Outputs]:
        name = self.compiled.name
        return tuple({p: sorted(masked(name, f) for f in fs) for p, fs in out[t].items()}  # type: ignore[return-value]
                     for t in ("bmv2", "p4switch"))

    def batch(self, frames: list[tuple[int, bytes]]) -> list[str]:
        """Frames no deviation covers, in one exchange, compared (see `covered` for the others)."""
        name = self.compiled.name
        normal = [(p, f) for p, f in frames if covering(f, name) is None]
        diffs: list[str] = []
        if not normal:
            return diffs
        self.offered += len(normal)
        bm, ps = self._outputs(self.rig.exchange(normal, gap=self.gap, rate=self.rate))
        if not self.rig.settled:
            bm, ps = self._outputs(self.rig.more(LATE, limit=CATCH_UP))
        if not self.rig.settled:
            self.unsettled += 1
            return [f"{name}: {len(normal)} frames not compared: a switch was still sending "
                    f"{CATCH_UP:.0f} s after they went in (a packet looping or cloned for ever?); "
                    f"the run's counters and deviation-covered frames are not compared either"]
        if bm != ps:
            bm, ps = self._outputs(self.rig.more(LATE))
        if bm != ps:
            self.lost = _strictly_within(bm, ps)
            diffs += [f"{name}: {d}" for d in _describe(bm, ps)]
            if not self.lost:
                diffs += self._first_culprit(normal, bm, ps)
        self.frames += len(normal)
        return diffs

    def covered(self, frames: list[tuple[int, bytes]]) -> list[str]:
        """Frames a deviation covers: p4switch's output checked against the deviation's `expect`.

        Run after the counters are compared: BMv2 counts these frames, and
        p4switch may not (a MAC-control frame never reaches its pipeline).
        Outputs are compared as one multiset over all ports.
        """
        name = self.compiled.name
        special = [(p, f) for p, f in frames if covering(f, name) is not None]
        if not special:
            return []
        out = self.rig.exchange(special, gap=self.gap, rate=self.rate)
        got = sorted(f for fs in out["p4switch"].values() for f in fs)
        want = sorted(e for _, f in special if (e := expected(f, name)) is not None)
        if got == want:
            return []
        names = sorted({d.name for _, f in special if (d := covering(f, name)) is not None})
        return [f"{name}: deviation {', '.join(names)}: p4switch was expected to send {len(want)} frames, "
                f"sent {len(got)}: " + "; ".join(_describe({0: want}, {0: got}))]

    def _first_culprit(self, frames: list[tuple[int, bytes]], bm: Outputs, ps: Outputs,
                       limit: int = 40) -> list[str]:
        """Replay inputs one by one, the likeliest first (those most like a frame that differs)."""
        odd = [f for p in set(bm) | set(ps) for f in set(bm.get(p, [])) ^ set(ps.get(p, []))]

        def likeness(item: tuple[int, bytes]) -> int:
            return max((_common(item[1], f) for f in odd), default=0)

        for port, frame in sorted(frames, key=likeness, reverse=True)[:limit]:
            a, b = self._outputs(self.rig.exchange([(port, frame)], quiet=0.05))
            if a != b:
                a, b = self._outputs(self.rig.more(LATE))
            if a != b:
                return [f"{self.compiled.name}: alone, input on port {port} {_hex(frame, 200)} differs: "
                        + "; ".join(_describe(a, b))]
        return [f"{self.compiled.name}: no single input of the {limit} likeliest differs alone (state or order)"]

    def counters(self) -> list[str]:
        reads = counter_reads(self.compiled.p4info)
        if not reads:
            return []
        units = _units(self.compiled.p4info)
        got: dict[str, dict[str, tuple[int, int]]] = {}
        errors: dict[str, list[str]] = {}
        for name, session in self.rig.sessions():
            ents = []
            for e in reads:  # one read each: a target refusing one kind must not hide the others
                try:
                    ents += session.read([e])
                except Exception as err:  # noqa: BLE001 - reported as a difference below
                    errors.setdefault(name, []).append(f"{e}: {err}")
            got[name] = _canonical(ents, units)
        diffs = []
        for key in sorted(set(got["bmv2"]) | set(got["p4switch"])):
            a, b = got["bmv2"].get(key), got["p4switch"].get(key)
            if a != b:
                diffs.append(f"{self.compiled.name}: counter {key}: BMv2 {a}, p4switch {b}")
        for name, errs in errors.items():
            diffs += [f"{self.compiled.name}: {name} read failed: {e}" for e in errs]
        return diffs


def _units(info: p4i.P4Info) -> dict[int, int]:
    """Counter id (indirect) or table id (direct) -> CounterSpec unit."""
    out = {c.preamble.id: c.spec.unit for c in info.counters}
    out.update({c.direct_table_id: c.spec.unit for c in info.direct_counters})
    return out


def _by_unit(data: p4r.CounterData, unit: int) -> tuple[int, int]:
    """(packets, bytes) with the field the unit does not count left out (deviation counter-unit)."""
    packets = data.packet_count if unit != p4i.CounterSpec.BYTES else 0
    nbytes = data.byte_count if unit != p4i.CounterSpec.PACKETS else 0
    return packets, nbytes


def _canonical(entities: list[p4r.Entity], units: dict[int, int]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for e in entities:
        which = e.WhichOneof("entity")
        if which == "counter_entry":
            c = e.counter_entry
            out[f"{c.counter_id}[{c.index.index}]"] = _by_unit(c.data, units.get(c.counter_id, 0))
        elif which == "direct_counter_entry":
            d = e.direct_counter_entry
            te = d.table_entry
            match = sorted(m.SerializeToString().hex() for m in te.match)
            key = f"{te.table_id}{{{','.join(match)}}}/{te.priority}{'/default' if te.is_default_action else ''}"
            out[key] = _by_unit(d.data, units.get(te.table_id, 0))
    return out


def differential(rig: Rig, prog: Compiled, key: str, batches: int, size: int) -> tuple[Run, list[str]]:
    """A whole run of `prog`: generated writes, `batches` x `size` hypothesis frames, counters.

    Writes and frames are seeded by `key`; the frames of every batch go out
    in one exchange. A run in which BMv2 only sent fewer frames (lost in its
    ports' capture rings on a loaded machine: `Run.lost`) is run again from
    the start, at a quarter of the rate, then at a sixteenth. Returns the
    run and every difference found.
    """
    for rate in (RATE, RATE / 4, RATE / 16):
        run, diffs = _attempt(rig, prog, key, batches, size, rate)
        if not run.lost:
            break
    return run, diffs


def _attempt(rig: Rig, prog: Compiled, key: str, batches: int, size: int,
             rate: float) -> tuple[Run, list[str]]:
    run = Run(rig, prog, rate)
    pools = Pools.from_bmv2_json(prog.bmv2_json)
    seed_value = zlib.crc32(key.encode())
    diffs = run.write(program_writes(prog.p4info, random.Random(seed_value), pools, bmv2_room(prog.bmv2_json)))
    drawn: list[tuple[int, bytes]] = []

    @seed(seed_value)
    @settings(max_examples=batches, database=None, deadline=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @given(st.lists(frames(pools), min_size=size, max_size=size))
    def draw(batch: list[tuple[int, bytes]]) -> None:
        drawn.extend(batch)

    draw()
    # hypothesis opens with its simplest example (one all-zero frame, many times): each input once
    drawn = list(dict.fromkeys(drawn))
    diffs += run.batch(drawn)
    if run.lost or run.unsettled:
        # counters count every frame of the run: after a batch that never went quiet
        # they hold a moment of a stream, not a result
        return run, diffs
    diffs += run.counters()
    diffs += run.covered(drawn)
    for name, code in rig.alive().items():
        if code is not None:
            diffs.append(f"{prog.name}: {name} exited with {code}; its log ends: {rig.log_tail(name)}")
    return run, diffs
