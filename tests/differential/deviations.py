"""The one list of intended differences between p4switch and BMv2, each with its reason.

The differential harness compares everything else byte for byte, and every
entry here says what it covers:

* `applies` (an input frame, and `programs` when only some programs are
  concerned): such inputs are run on their own after the counters are read,
  and p4switch's output is checked against `expect` (the frame it must
  send for that input, or None for nothing); BMv2's is not compared;
* `mask` (with `programs`): both targets' output frames of those programs
  are compared with the bytes it leaves out blanked;
* neither: the difference is not in frames (a P4Runtime answer, a counter
  field, a table's size); the test or generator named in `reason` checks
  or respects it.

A difference not covered here fails the run. `docs/p4switch.md` shows this
table; its test (`test_deviations.py`) keeps the two the same.

Names defined here: `Deviation`, `DEVIATIONS`, `covering`, `masked`, `expected`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Deviation:
    name: str
    p4switch: str  # what p4switch does
    bmv2: str  # what BMv2 does
    reason: str
    applies: Callable[[bytes], bool] | None = None  # to an input frame
    expect: Callable[[bytes], bytes | None] | None = None  # p4switch's output for such an input
    programs: tuple[str, ...] = ()  # the programs it concerns (empty: every program)
    mask: Callable[[bytes], bytes] | None = None  # output frame -> the frame as compared

    def concerns(self, program: str) -> bool:
        return not self.programs or program in self.programs


# link_monitor's probe (EtherType 0x0812): ethernet (14), probe (1), then the
# probe_data element this switch pushed: bos/swid, port, byte_cnt (6 bytes),
# last_time and cur_time (48 bits each)
_PROBE_TIMES = slice(21, 33)


def _probe_times_blanked(frame: bytes) -> bytes:
    if len(frame) >= _PROBE_TIMES.stop and frame[12:14] == b"\x08\x12":
        return frame[:_PROBE_TIMES.start] + bytes(_PROBE_TIMES.stop - _PROBE_TIMES.start) + frame[_PROBE_TIMES.stop:]
    return frame


# tuples.p4 parses a pair header (a, b: 16 bits each) after EtherType
# 0x9000-0x90ff and swaps it with `hdr.pair = { hdr.pair.b, hdr.pair.a }`
def _tuples_pair(frame: bytes) -> bool:
    return len(frame) >= 18 and 0x9000 <= struct.unpack_from(">H", frame, 12)[0] <= 0x90FF


def _tuples_swapped(frame: bytes) -> bytes | None:
    return frame[:14] + frame[16:18] + frame[14:16] + frame[18:]


def _hashes_blanked(frame: bytes) -> bytes:
    """hash_invalid_header.p4's output: its res header (h16, h32: 6 bytes; then ck, verr) after the
    valid ones of ethernet (14), ipv4 (20, EtherType 0x0800), tcp or udp (8, by protocol 6 / 17)."""
    at, n = 14, len(frame) - 9  # res is 9 bytes; n: the length of the frame that came in
    if n >= 34 and frame[12:14] == b"\x08\x00":
        at = 34
        if frame[23] in (6, 17) and n >= 42:
            at = 42
    if n < at:
        return frame
    return frame[:at] + bytes(6) + frame[at + 6:]


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        name="header-list-assignment",
        p4switch="`hdr.h = { ... }` makes hdr.h valid with the listed field values",
        bmv2="p4c-bm2-ss 1.2.4.8 builds the value in a temporary header it never makes valid (add_header "
             "goes to hdr.h), then assign_header copies the invalid temporary: hdr.h ends invalid",
        reason="P4-16 (operations on headers): a header assigned a list or structure expression is valid; "
               "BMv2 runs what p4c-bm2-ss miscompiles (tuples.p4's pair swap)",
        applies=_tuples_pair,
        expect=_tuples_swapped,
        programs=("tuples",),
    ),
    Deviation(
        name="invalid-header-fields",
        p4switch="the fields of a header that is not valid read as what the packet put there (0 when it "
                 "never was valid); hash() leaves them out of its input, as BMv2 does for checksums and "
                 "selector keys",
        bmv2="reads what they last held, possibly from an earlier packet; p4c-bm2-ss 1.2.4.8 copies "
             "hash() inputs into metadata first, so BMv2 hashes those values (zeros on a fresh pipeline, "
             "then the last TCP frame's ports for a UDP frame: test_constructs.py shows it)",
        reason="P4-16: reading a field of an invalid header gives an unspecified value, so no target can be "
               "matched (BMv2's value depends on the packets before); the corpus programs read only valid "
               "headers (tests/unit/pipeline/test_corpus.py checks), except hash_invalid_header.p4, whose hash results the harness blanks (its "
               "checksums are compared)",
        programs=("hash_invalid_header",),
        mask=_hashes_blanked,
    ),
    Deviation(
        name="table-size-with-entries",
        p4switch="a table with `entries` and no `size` holds P4Info's size (1024) entries",
        bmv2="holds only its initial entries (p4c-bm2-ss gives BMv2 their number as the size) and refuses "
             "inserts with UNKNOWN",
        reason="P4Info's table `size` is the control plane's contract (P4Runtime 1.4); p4c-bm2-ss gives "
               "BMv2 another size; the generator (generate.bmv2_room) writes only what BMv2 has room for",
    ),
    Deviation(
        name="counter-unit",
        p4switch="reads of a PACKETS counter give byte_count 0 (and packet_count 0 for a BYTES one)",
        bmv2="counts both whatever the unit",
        reason="P4Info's CounterSpec unit says which field is the counter's; the harness compares that "
               "field only (harness._canonical)",
    ),
    Deviation(
        name="read-unset-entity",
        p4switch="a ReadRequest with an Entity whose oneof is unset is answered INVALID_ARGUMENT",
        bmv2="answers UNKNOWN",
        reason="P4Runtime 1.4: a malformed request is INVALID_ARGUMENT; BMv2's server (PI) reports its "
               "failure to read the entity as UNKNOWN (test_p4runtime.py checks both answers)",
    ),
    Deviation(
        name="unnamed-digests",
        p4switch="a digest() of a list expression or a bit<W> (P4Info's digest_N, p4c's name) is enabled "
                 "by a DigestEntry and sends its data as a P4Data tuple or bitstring",
        bmv2="refuses the DigestEntry: INTERNAL 'Error when configuring digest with target'",
        reason="P4Runtime enables every digest its P4Info lists; p4c-bm2-ss 1.2.4.8 writes such a "
               "digest's learn list into BMv2's JSON as tuple_N (two calls may share one) while its "
               "P4Info names it digest_N, and BMv2's P4Runtime server finds the learn list by the "
               "digest's name (test_digests.py checks both)",
    ),
    Deviation(
        name="clock-values",
        p4switch="ingress/egress_global_timestamp count microseconds from p4switch's start",
        bmv2="count microseconds from BMv2's start",
        reason="v1model leaves the clock's origin to the target, so two switches never agree on it; the "
               "harness blanks the timestamps a program writes into frames (link_monitor's probe times)",
        programs=("link_monitor",),
        mask=_probe_times_blanked,
    ),
)


def covering(frame: bytes, program: str = "") -> Deviation | None:
    """The deviation that covers input `frame` of `program`, if any."""
    for d in DEVIATIONS:
        if d.applies is not None and d.concerns(program) and d.applies(frame):
            return d
    return None


def expected(frame: bytes, program: str = "") -> bytes | None:
    """What p4switch must send for an input a deviation covers (None: nothing)."""
    d = covering(frame, program)
    return d.expect(frame) if d is not None and d.expect is not None else None


def masked(program: str, frame: bytes) -> bytes:
    """An output frame of `program` as compared: the bytes a deviation leaves out blanked."""
    for d in DEVIATIONS:
        if d.mask is not None and program in d.programs:
            frame = d.mask(frame)
    return frame
