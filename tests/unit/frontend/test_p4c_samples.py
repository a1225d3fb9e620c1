"""p4c's own v1model test programs, when `$P4C_TESTDATA` names a p4c checkout's
testdata/p4_16_samples: every program p4c-bm2-ss compiles, p4switch compiles too (its
loader reading the program file back), with p4c's P4Info entity by entity; the exceptions
are listed below with the reason, and the lists are checked so they cannot go stale.

p4c's programs are not ours to copy, so this runs only where a checkout is (skipped
otherwise, like ONOS fabric.p4 in test_p4info_reference.py); about 6 minutes for its
~470 programs on the 2-core build machine. Programs p4c-bm2-ss refuses are skipped with
its first error: many use what only a newer p4c has (for loops, `+=`), or what BMv2's back
end cannot lower.
"""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format
from test_p4info_reference import P4C, _differences

from p4switch import ir
from p4switch.frontend import P4Error, compile_file
from p4switch.p4info import P4InfoError, build_p4info

ROOT = os.environ.get("P4C_TESTDATA")
SAMPLES = sorted(p for p in Path(ROOT).glob("*.p4") if p.is_file()
                 and "v1model.p4" in p.read_text(errors="replace")) if ROOT else []

# stem -> why p4switch refuses a program p4c-bm2-ss compiles
REFUSED = {
    "issue1566-bmv2": "a control instance passed to two blocks (docs/p4switch.md: one owner per instance)",
    "issue2844-enum": "a control instance passed to two blocks (docs/p4switch.md: one owner per instance)",
    "issue4057": "indexing a value of tuple type",
    "parser-unroll-test1": "a run-time int<32> cast to the arbitrary-precision int, which p4c's parser "
                           "unrolling turns into constants",
    "nonstandard_table_names-bmv2": "@name strings that are not P4 names: p4switch's loader takes P4 "
                                    "names only (docs/p4switch.md, Untrusted input)",
}
# stem -> where p4switch's P4Info differs from p4c-bm2-ss 1.2.4.8's, and why it is left
P4INFO_DIFFERS = {
    "gauntlet_exit_combination_5-bmv2": "an action p4c's front end finds dead after an exit and drops",
    "issue2283_1-bmv2": "a `type` over a struct-typed header field as a match key",
    "issue2362-bmv2": "a table applied inside another table's key",
    "issue2735-bmv2": "a register declared through a typedef of register<T>: p4c 1.2.4.8 leaves it out",
}

pytestmark = [
    pytest.mark.skipif(P4C is None, reason="p4c-bm2-ss not installed (/opt/p4tools/bin or PATH)"),
    pytest.mark.skipif(not ROOT, reason="$P4C_TESTDATA (p4c's testdata/p4_16_samples) not set: "
                                        "p4c's programs are not in this repo"),
]


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_p4c_sample_compiles_with_p4cs_p4info(path: Path, tmp_path: Path) -> None:
    """What p4c-bm2-ss compiles, p4switch compiles, with the same P4Info (or is listed)."""
    assert P4C is not None
    out = tmp_path / "ref.p4info.txtpb"
    run = subprocess.run([P4C, "-I", str(path.parent), "-o", str(tmp_path / "ref.json"),
                          "--p4runtime-files", str(out), str(path)],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0 or not out.exists():
        assert path.stem not in REFUSED and path.stem not in P4INFO_DIFFERS, \
            f"p4c-bm2-ss refuses {path.name} now: drop it from the lists"
        first = next((ln for ln in run.stderr.splitlines() if "rror" in ln), run.stderr[:200])
        pytest.skip(f"p4c-bm2-ss refuses it: {first.strip()[:200]}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = compile_file(path, include_dirs=[path.parent])
            info = build_p4info(program)
            ir.from_json(ir.to_json(program, text_format.MessageToString(info)))
    except (P4Error, P4InfoError, ir.ProgramFileError):
        if path.stem in REFUSED:
            pytest.skip(f"p4switch refuses it: {REFUSED[path.stem]}")
        raise
    assert path.stem not in REFUSED, f"p4switch compiles {path.name} now: drop it from REFUSED"
    diffs = _differences(text_format.Parse(out.read_text(), p4i.P4Info()), info)
    if path.stem in P4INFO_DIFFERS:
        assert diffs, f"{path.name}'s P4Info equals p4c's now: drop it from P4INFO_DIFFERS"
        pytest.skip(f"P4Info differs: {P4INFO_DIFFERS[path.stem]}")
    assert not diffs, "\n".join(diffs)
