"""P4Info from p4switch equals p4c-bm2-ss's, entity by entity, for the whole valid corpus, the
programs of corpus/warn (which both compile, warning) and p4/*.p4; and ONOS
fabric.p4 from a p4c checkout when `$P4C_TESTDATA` names one.

Each program is compiled by both; every repeated field of P4Info (tables,
actions, profiles, counters, ... ) is compared as a set of entities keyed by
name (so order does not matter, ids and every field do), `pkg_info` and
`type_info` as messages, presence included. Skips, with the reason, where
p4c-bm2-ss is not installed (`/opt/p4tools/bin` or PATH).

p4c-bm2-ss writes the P4Info before its BMv2 back end runs, so a program the
back end refuses (a table applied on two paths, say) still has a reference
P4Info; `BACKEND_REFUSES` names those programs and the test checks that p4c
still refuses them, so the list cannot go stale. Where p4c warns about a
program of corpus/warn, p4switch warns on the same line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format

from p4switch.frontend import P4Warning, compile_file
from p4switch.p4info import build_p4info

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
VALID = sorted((HERE / "corpus" / "valid").glob("*.p4"))
WARN = sorted((HERE / "corpus" / "warn").glob("*.p4"))
ROLES = sorted((REPO / "p4").glob("*.p4"))
P4C = shutil.which("p4c-bm2-ss", path=os.pathsep.join(["/opt/p4tools/bin", os.environ.get("PATH", "")]))

# program stem -> why p4c-bm2-ss's BMv2 back end fails after writing P4Info
BACKEND_REFUSES = {
    "control_flow": "a table applied on two paths (BMv2's JSON has one next-table graph)",
}

pytestmark = pytest.mark.skipif(P4C is None, reason="p4c-bm2-ss not installed (/opt/p4tools/bin or PATH)")


def _includes(path: Path) -> list[Path]:
    return [REPO / "p4" / "include"] if path.parent == REPO / "p4" else []


def _reference(path: Path, tmp: Path) -> tuple[p4i.P4Info, subprocess.CompletedProcess[str]]:
    assert P4C is not None
    out = tmp / "ref.p4info.txtpb"
    args = [P4C, "-o", str(tmp / "ref.json"), "--p4runtime-files", str(out), str(path)]
    for d in _includes(path):
        args[1:1] = ["-I", str(d)]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.exists(), f"p4c-bm2-ss wrote no P4Info for {path.name}: {run.stderr}"
    return text_format.Parse(out.read_text(), p4i.P4Info()), run


def _differences(ref: p4i.P4Info, mine: p4i.P4Info) -> list[str]:
    """Every entity (or top-level message) that differs, in words."""
    out = []
    for f in p4i.P4Info.DESCRIPTOR.fields:
        if f.label != f.LABEL_REPEATED:
            if ref.HasField(f.name) != mine.HasField(f.name):
                out.append(f"{f.name}: present in p4c's {ref.HasField(f.name)}, in p4switch's {mine.HasField(f.name)}")
            elif getattr(ref, f.name) != getattr(mine, f.name):
                out.append(f"{f.name}:\np4c:\n{getattr(ref, f.name)}p4switch:\n{getattr(mine, f.name)}")
            continue
        a = {e.preamble.name: e for e in getattr(ref, f.name)}
        b = {e.preamble.name: e for e in getattr(mine, f.name)}
        assert len(a) == len(getattr(ref, f.name)) and len(b) == len(getattr(mine, f.name)), f"{f.name}: duplicate names"
        out.extend(f"{f.name} {n}: only in p4c's" for n in sorted(set(a) - set(b)))
        out.extend(f"{f.name} {n}: only in p4switch's" for n in sorted(set(b) - set(a)))
        out.extend(f"{f.name} {n}:\np4c:\n{a[n]}p4switch:\n{b[n]}" for n in sorted(set(a) & set(b)) if a[n] != b[n])
    return out


@pytest.mark.parametrize("path", VALID + WARN + ROLES, ids=[p.stem for p in VALID] + [f"warn/{p.stem}" for p in WARN]
                         + [f"p4/{p.stem}" for p in ROLES])
def test_p4info_equals_p4c(path: Path, tmp_path: Path) -> None:
    """p4switch-compile's P4Info is p4c-bm2-ss's: the same entities with the same ids and fields."""
    ref, run = _reference(path, tmp_path)
    if path.stem in BACKEND_REFUSES and path.parent != REPO / "p4":
        assert run.returncode != 0, f"p4c-bm2-ss now compiles {path.name}: drop it from BACKEND_REFUSES"
    else:
        assert run.returncode == 0, run.stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", P4Warning)
        mine = build_p4info(compile_file(path, include_dirs=_includes(path)))
    diffs = _differences(ref, mine)
    assert not diffs, "\n".join(diffs)
    if path in WARN:
        # p4c: "prog.p4(6): [--Wwarn=ignore-prop] warning: ..."
        p4c_lines = {int(n) for n in re.findall(rf"^{re.escape(path.name)}\((\d+)\): .*warning:", run.stderr, re.M)}
        mine_lines = {w.message.coord.line for w in caught if isinstance(w.message, P4Warning)}
        assert p4c_lines <= mine_lines, f"p4c warns on lines {sorted(p4c_lines)}: {run.stderr}"


# ONOS fabric.p4 as p4c's own tests keep it (testdata/p4_16_samples/fabric_20190420): not ours to copy,
# so it is read from a p4c checkout named by $P4C_TESTDATA (its p4_16_samples folder), in the profiles
# p4c builds (-D flags)
FABRIC_PROFILES = {"default": (), "spgw": ("WITH_SPGW",),
                   "spgw-int": ("WITH_SPGW", "WITH_INT_TRANSIT", "WITH_INT_SOURCE", "WITH_INT_SINK")}


@pytest.mark.parametrize("defines", FABRIC_PROFILES.values(), ids=list(FABRIC_PROFILES))
def test_p4info_equals_p4c_for_onos_fabric(defines: tuple[str, ...], tmp_path: Path) -> None:
    """ONOS fabric.p4: the same P4Info as p4c's (its five directly called @hidden actions left out)."""
    root = os.environ.get("P4C_TESTDATA")
    if not root:
        pytest.skip("$P4C_TESTDATA (p4c's testdata/p4_16_samples) not set: ONOS fabric.p4 is not in this repo")
    path = Path(root) / "fabric_20190420" / "fabric.p4"
    assert P4C is not None and path.is_file(), f"{path}: no such file"
    out = tmp_path / "ref.p4info.txtpb"
    run = subprocess.run([P4C, *(f"-D{d}" for d in defines), "-o", str(tmp_path / "ref.json"),
                          "--p4runtime-files", str(out), str(path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    ref = text_format.Parse(out.read_text(), p4i.P4Info())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", P4Warning)
        mine = build_p4info(compile_file(path, defines=defines))
    diffs = _differences(ref, mine)
    assert not diffs, "\n".join(diffs)


def test_the_comparison_sees_a_changed_id(tmp_path: Path) -> None:
    """The check itself: one changed action id is reported."""
    path = HERE / "corpus" / "valid" / "basic.p4"
    ref, _ = _reference(path, tmp_path)
    mine = build_p4info(compile_file(path))
    mine.actions[0].preamble.id += 1
    assert [d.split(":")[0] for d in _differences(ref, mine)] == [f"actions {mine.actions[0].preamble.name}"]
