"""The front end's valid corpus on p4switch and BMv2: generated entries, hypothesis frames, counters.

Each program gets random valid writes built from its P4Info (seeded by its
name), then `BATCHES` batches of `BATCH` frames drawn by hypothesis (seeded
too), then every counter is read back from both. Programs BMv2's back end
refuses are skipped with p4c's words.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from .generate import Pools, frames, program_writes
from .harness import Run

CORPUS = Path(__file__).resolve().parents[1] / "unit" / "frontend" / "corpus" / "valid"
PROGRAMS = sorted(CORPUS.glob("*.p4"))
BATCHES, BATCH = 4, 120
# stem -> why the reference cannot run it (checked: compile_both must fail)
BMV2_REFUSES = {"control_flow": "p4c-bm2-ss: a table applied on two paths"}


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_program_matches_bmv2(path: Path, rig, compiled) -> None:
    """Same writes and frames: the same write statuses, output frames per port and counters."""
    if path.stem in BMV2_REFUSES:
        with pytest.raises(RuntimeError):
            compiled(path)
        pytest.skip(BMV2_REFUSES[path.stem])
    prog = compiled(path)
    run = Run(rig, prog)
    pools = Pools.from_bmv2_json(prog.bmv2_json)
    rng = random.Random(zlib.crc32(path.stem.encode()))
    diffs = run.write(program_writes(prog.p4info, rng, pools))

    @seed(zlib.crc32(path.stem.encode()))
    @settings(max_examples=BATCHES, database=None, deadline=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @given(st.lists(frames(pools), min_size=BATCH, max_size=BATCH))
    def check(batch: list[tuple[int, bytes]]) -> None:
        diffs.extend(run.batch(batch))

    check()
    diffs += run.counters()
    assert rig.alive() == {"bmv2": None, "p4switch": None}
    assert not diffs, "\n".join(diffs[:30])
