"""Every program of the front end's valid corpus runs on the pipeline (random frames, no errors)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

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


@pytest.mark.skipif(not (CORPUS / "tuples.p4").exists(), reason="corpus program missing")
def test_list_assignment_reads_all_values_before_writing():
    """hdr.pair = {hdr.pair.b, hdr.pair.a} swaps the two fields."""
    with PortHarness(compile_file(CORPUS / "tuples.p4")) as h:
        frame = bytes.fromhex("010000000002020000000001") + b"\x90\x00" + b"\x00\x01\x00\x02" + b"pay"
        (port, data), = h.send(1, frame)
        assert data[14:18] == b"\x00\x02\x00\x01"
