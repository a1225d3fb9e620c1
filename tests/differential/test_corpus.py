"""The front end's valid corpus on p4switch and BMv2: generated entries, hypothesis frames, counters.

Each program gets random valid writes built from its P4Info (seeded by its
name), then `BATCHES` x `BATCH` frames drawn by hypothesis (seeded too) in
one exchange, then every counter is read back from both. Programs p4c's
BMv2 back end refuses, programs BMv2 refuses to load and programs it loads
but cannot run are skipped with their words (and fail if those change).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import differential
from .rig import Refused

CORPUS = Path(__file__).resolve().parents[1] / "unit" / "frontend" / "corpus" / "valid"
PROGRAMS = sorted(CORPUS.glob("*.p4"))
BATCHES, BATCH = 4, 120
# stem -> why p4c-bm2-ss cannot compile it (checked: compiling must fail)
P4C_REFUSES = {"control_flow": "p4c-bm2-ss: a table applied on two paths"}
# stem -> (what BMv2 logs when it loads the program, why it cannot run it)
BMV2_BREAKS = {
    "p4rt_names": ("No field 'dst' can be found in header type 'ipv4_t'",
                   "p4c-bm2-ss names the key on a header field declared `@name(\"dst\") bit<32> dst_addr` "
                   "by its @name while the header type keeps dst_addr: BMv2 cannot resolve the key, refuses "
                   "every entry and crashes (SIGSEGV) on the first lookup"),
    "stack_index_arg": ("Invalid 'type' in expression",
                        "BMv2 1.15.5 does not parse the JSON p4c-bm2-ss 1.2.4.8 writes for a header-stack "
                        "element at a run-time index: the action drops the packet and the next one crashes "
                        "BMv2 (SIGSEGV); tests/unit/pipeline/test_copy_out.py holds p4switch to P4-16 there"),
}
# stem -> (what BMv2 says when it refuses the pipeline, why)
BMV2_REFUSES = {
    "digest_learn": ("Packed type for digest too complex",
                     "BMv2's P4Runtime server (PI) takes only bit<W> members in a digest struct; "
                     "flow_digest_t has a bool"),
}


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_program_matches_bmv2(path: Path, rig, compiled) -> None:
    """Same writes and frames: the same write statuses, output frames per port and counters."""
    if path.stem in P4C_REFUSES:
        with pytest.raises(RuntimeError):
            compiled(path)
        pytest.skip(P4C_REFUSES[path.stem])
    prog = compiled(path)
    if path.stem in BMV2_BREAKS:
        words, why = BMV2_BREAKS[path.stem]
        rig.load(prog)
        assert words in rig.log_since_load("bmv2"), f"{path.stem}: BMv2 no longer logs {words!r}"
        pytest.skip(f"BMv2 cannot run it ({words}): {why}")
    try:
        run, diffs = differential(rig, prog, path.stem, BATCHES, BATCH)
    except Refused as e:
        words, why = BMV2_REFUSES.get(path.stem, ("", ""))
        assert e.target == "bmv2" and words and words in e.reason, f"{path.stem}: {e}"
        pytest.skip(f"BMv2 refuses the pipeline ({words}): {why}")
    assert path.stem not in BMV2_REFUSES, f"{path.stem}: BMv2 now loads it; drop it from BMV2_REFUSES"
    assert rig.alive() == {"bmv2": None, "p4switch": None}
    assert not diffs, "\n".join(diffs[:30])
    # Every frame that went in had its outputs compared: a run that compared nothing (every
    # input covered by a deviation, or a switch that never went quiet) cannot pass.
    assert run.unsettled == 0 and run.frames == run.offered > 0, (
        f"{path.stem}: {run.frames} of {run.offered} frames compared, {run.unsettled} "
        f"exchanges unsettled")
