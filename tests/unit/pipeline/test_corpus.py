"""Every program of the front end's valid corpus runs on the pipeline (random frames, no errors).

And none reads a field of a header that is not valid where it changes what
goes out: P4-16 leaves that value unspecified, BMv2 gives what the field
held for an earlier packet, so such a program would make the differential
suite (tests/differential/test_corpus.py) fail by the order of its frames.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness
from p4switch.pipeline.harness import stale_headers

CORPUS = Path(__file__).resolve().parents[1] / "frontend" / "corpus" / "valid"
PROGRAMS = sorted(CORPUS.glob("*.p4")) if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_program_runs_random_frames(path):
    """The program compiles to Python and 300 random frames raise nothing."""
    program = compile_file(path)
    if program.arch != "v1model":
        pytest.skip(f"{program.arch} is not run by the pipeline")
    rng = random.Random(path.stem)
    with PortHarness(program, cpu_port=255) as h:
        for _ in range(300):
            frame = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 160)))
            h.switch.process(rng.randrange(4), frame)
        assert h.switch.stats["errors"] == 0


# hash_invalid_header hashes invalid headers on purpose (deviation invalid-header-fields)
READS_INVALID = {"hash_invalid_header"}


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_program_output_never_rests_on_invalid_header_fields(path):
    """The same frames give the same outputs with headers that start as zeros and as leftovers.

    Frames of 14 to 47 bytes, as the differential harness sends none shorter than an
    Ethernet header; bytes mostly below 16, so that the programs' small constants (an
    op code, a table's key) come up in fields an earlier frame filled.
    """
    program = compile_file(path)
    if program.arch != "v1model" or path.stem in READS_INVALID:
        pytest.skip(f"{path.stem}: {program.arch}" if program.arch != "v1model" else "reads them on purpose")
    runs = []
    for stale in (False, True):
        rng = random.Random(path.stem)
        with PortHarness(program, cpu_port=255) as h:
            if stale:
                stale_headers(h.switch)
            runs.append([h.send(rng.randrange(4), bytes(
                rng.randrange(16) if rng.random() < 0.7 else rng.randrange(256)
                for _ in range(rng.randrange(14, 48)))) for _ in range(600)])
    differ = [i for i, (a, b) in enumerate(zip(*runs, strict=True)) if a != b]
    assert not differ, (f"{path.stem}: {len(differ)} of 600 frames go out otherwise when invalid headers "
                        f"hold an earlier packet's values (first: frame #{differ[0]})")


@pytest.mark.skipif(not (CORPUS / "tuples.p4").exists(), reason="corpus program missing")
def test_list_assignment_reads_all_values_before_writing():
    """hdr.pair = {hdr.pair.b, hdr.pair.a} swaps the two fields."""
    with PortHarness(compile_file(CORPUS / "tuples.p4")) as h:
        frame = bytes.fromhex("010000000002020000000001") + b"\x90\x00" + b"\x00\x01\x00\x02" + b"pay"
        (port, data), = h.send(1, frame)
        assert data[14:18] == b"\x00\x02\x00\x01"
