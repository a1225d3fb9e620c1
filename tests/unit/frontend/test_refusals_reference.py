"""Programs p4switch refuses at compile time are refused by p4c-bm2-ss too, unless listed with the reason.

Every program of the invalid corpus goes through p4c-bm2-ss: it must fail
(p4c writes no BMv2 JSON), and where p4c's words are recorded (`P4C_WORDS`)
it must say them. `P4C_REFUSES_WITH_P4INFO` names those p4c refuses only
when asked for P4Info, which p4switch always builds. `P4C_ACCEPTS` would
list the programs p4c-bm2-ss 1.2.4.8 compiles that p4switch's front end
still refuses, each with the reason (corpus/warn holds those that compile
with a warning); the test fails when p4c starts refusing one of
them, so the list cannot go stale.
Skips, with the reason, where p4c-bm2-ss is not installed
(`/opt/p4tools/bin` or PATH).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.frontend.errors import P4Error

HERE = Path(__file__).resolve().parent
INVALID = sorted((HERE / "corpus" / "invalid").glob("*.p4"))
P4C = shutil.which("p4c-bm2-ss", path=os.pathsep.join(["/opt/p4tools/bin", os.environ.get("PATH", "")]))

# stem -> what p4c-bm2-ss says when it refuses the program
P4C_WORDS = {
    "user_extern_function": "count_port: unknown extern function",
    "user_extern_object": "Unknown extern method add from type Tally",
    "no_actions_property": "t: expected 'actions' property",
}
# stem -> why p4switch refuses a program p4c-bm2-ss 1.2.4.8 compiles
P4C_ACCEPTS: dict[str, str] = {
    "digest_typedef_type_arg": "p4c names a digest after a typedef given as its type argument (mac_t), "
                               "which p4switch's P4Info does not: refused rather than named otherwise",
}
# programs p4c-bm2-ss refuses only when asked for P4Info (--p4runtime-files), with these words; p4switch
# always describes a program in P4Info (its P4Runtime server needs one), so it refuses them outright
P4C_REFUSES_WITH_P4INFO = {
    "anonymous_table_property": "has an anonymous table property 'implementation' with no name annotation, "
                                "which is not supported by P4Runtime",
}

pytestmark = pytest.mark.skipif(P4C is None, reason="p4c-bm2-ss not installed (/opt/p4tools/bin or PATH)")


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_p4c_refuses_what_p4switch_refuses(path: Path, tmp_path: Path) -> None:
    """p4switch's front end refuses the program; p4c-bm2-ss does too (with its words), or it is listed."""
    with pytest.raises(P4Error):
        compile_file(path)
    assert P4C is not None
    args = [P4C, "-o", str(tmp_path / "out.json"), str(path)]
    if path.stem in P4C_REFUSES_WITH_P4INFO:
        args += ["--p4runtime-files", str(tmp_path / "out.p4info.txtpb")]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    refused = run.returncode != 0
    if path.stem in P4C_ACCEPTS:
        assert not refused, f"p4c-bm2-ss now refuses {path.name}: drop it from P4C_ACCEPTS ({run.stderr})"
        pytest.skip(f"p4c-bm2-ss accepts it: {P4C_ACCEPTS[path.stem]}")
    assert refused, f"p4c-bm2-ss compiles {path.name}, which p4switch refuses"
    words = P4C_WORDS.get(path.stem) or P4C_REFUSES_WITH_P4INFO.get(path.stem)
    if words:
        assert words in run.stderr
