"""p4c's own BMv2 test programs (the `*-bmv2.p4` of a p4c checkout's testdata/p4_16_samples,
named by `$P4C_TESTDATA`) on p4switch and BMv2, as the corpus runs: generated entries, hypothesis
frames, counters (`BATCHES` x `BATCH` frames each). Programs either compiler refuses are skipped
(tests/unit/frontend/test_p4c_samples.py holds p4switch to compiling what p4c compiles); the
programs BMv2 cannot run, or whose P4Info p4switch writes differently, are listed with the reason
and fail when that changes.

p4c's programs are not ours to copy: this runs only where a checkout is
(`P4C_TESTDATA=... .venv/bin/python -m pytest tests/differential/test_p4c_samples.py`; the rig
takes the network lock), about 4.5 minutes for its 326 programs on the 2-core build machine (300
passed, 26 skipped).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from p4switch.frontend import P4Error

from .harness import differential
from .rig import Refused

ROOT = os.environ.get("P4C_TESTDATA")
SAMPLES = sorted(p for p in Path(ROOT).glob("*-bmv2.p4") if p.is_file()
                 and "v1model.p4" in p.read_text(errors="replace")) if ROOT else []
BATCHES, BATCH = 2, 100
# stem -> why the run cannot compare the two (BMv2's side)
BMV2_CANNOT = {
    "issue1607-bmv2": "BMv2 1.15.5 aborts (SIGABRT) on a header-stack element at a run-time index",
    "runtime-index-bmv2": "BMv2 1.15.5 aborts (SIGABRT) on a header-stack element at a run-time index",
    "runtime-index-2-bmv2": "BMv2 1.15.5 aborts (SIGABRT) on a header-stack element at a run-time index",
    "issue2726-bmv2": "BMv2 1.15.5 aborts (SIGABRT) on a header-stack element at a run-time index",
    "issue1062-1-bmv2": "BMv2's P4Runtime server refuses every entry of a table keyed on an error value",
    "gauntlet_nested_switch-bmv2": "BMv2 refuses to modify the default action of a table without keys "
                                   "or actions (P4Runtime allows NoAction there)",
}

pytestmark = pytest.mark.skipif(not ROOT, reason="$P4C_TESTDATA (p4c's testdata/p4_16_samples) not "
                                                 "set: p4c's programs are not in this repo")


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_p4c_sample_matches_bmv2(path: Path, rig, compiled) -> None:
    """Same writes and frames: the same write statuses, output frames per port and counters."""
    try:
        prog = compiled(path)
    except (RuntimeError, P4Error) as e:  # either compiler refuses it
        assert path.stem not in BMV2_CANNOT, f"{path.name} no longer compiles: drop it from BMV2_CANNOT"
        pytest.skip(f"not compiled: {str(e).splitlines()[0][:200]}")
    try:
        run, diffs = differential(rig, prog, path.stem, BATCHES, BATCH)
    except Refused as e:
        pytest.skip(f"{e.target} refuses the pipeline: {e.reason[:200]}")
    broken = rig.alive() != {"bmv2": None, "p4switch": None} or bool(diffs)
    if path.stem in BMV2_CANNOT:
        assert broken, f"{path.name} runs the same on both now: drop it from BMV2_CANNOT"
        assert rig.alive()["p4switch"] is None, "p4switch died"
        pytest.skip(BMV2_CANNOT[path.stem])
    assert rig.alive() == {"bmv2": None, "p4switch": None}
    assert not diffs, "\n".join(diffs[:30])
    assert run.frames == run.offered > 0, f"{run.frames} of {run.offered} frames compared"
