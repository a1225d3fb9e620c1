"""The fabric programs themselves (p4/*.p4, no switch): profiles, and what p4c says of them.

The role programs are include/fabric.p4 with profile defines: the RTSW's
P4Info is the spine's plus exactly the ARP responder, and CTSW and ATSW
are one pipeline. p4c-bm2-ss (the reference compiler) compiles each with
one warning only, the one that does not matter: it ignores `default_action`
on the selector table `next_hop`, whose default is the constant NoAction
that P4Runtime requires there (the program drops a miss itself, see
p4/include/control/routing.p4 and the next-hop scenarios).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from finsy import P4Schema

from .switch import P4_DIR, build_program

ROLES = ("rtsw", "ctsw", "atsw")
KNOWN_WARNING = re.compile(r"Target does not support default_action for "
                           r"FabricIngress\.routing\.next_hop \(due to action profiles\)")


COMPILERS = ("p4switch", "bmv2")


def _names(schema: P4Schema) -> set[str]:
    out: set[str] = set()
    for kind in ("tables", "actions", "counters", "direct_counters", "registers",
                 "action_profiles"):
        out |= {f"{kind}:{obj.name}" for obj in getattr(schema, kind)}
    return out


def _need(target: str) -> None:
    if target == "bmv2" and not shutil.which("p4c-bm2-ss"):
        pytest.skip("p4c-bm2-ss is not on PATH")


@pytest.mark.parametrize("target", COMPILERS)
def test_rtsw_profile_adds_exactly_the_arp_responder(target: str, tmp_path: Path) -> None:
    """rtsw = the spine pipeline + FabricIngress.arp (table, actions, counter); ctsw = atsw."""
    _need(target)
    names = {r: _names(P4Schema(build_program(r, target, tmp_path).p4info)) for r in ROLES}
    assert names["ctsw"] == names["atsw"]
    assert names["rtsw"] - names["ctsw"] == {
        "tables:FabricIngress.arp.arp_reply", "actions:FabricIngress.arp.reply",
        "actions:FabricIngress.arp.ignore", "direct_counters:FabricIngress.arp.arp_counter"}
    assert names["ctsw"] <= names["rtsw"]


@pytest.mark.parametrize("role", ROLES)
def test_p4c_warns_only_about_the_selector_default(role: str, tmp_path: Path) -> None:
    """p4c-bm2-ss compiles the role with no warning but the known, harmless one."""
    _need("bmv2")
    proc = subprocess.run(["p4c-bm2-ss", "--p4v", "16", "--p4runtime-files",
                           str(tmp_path / f"{role}.p4info.txtpb"), "-o",
                           str(tmp_path / f"{role}.json"), str(P4_DIR / f"{role}.p4")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in (proc.stderr + proc.stdout).splitlines()
                if "warning" in ln.lower() or "error" in ln.lower()]
    assert len(warnings) == 1 and KNOWN_WARNING.search(warnings[0]), warnings


@pytest.mark.parametrize("target", COMPILERS)
def test_next_hop_default_is_the_constant_noaction(target: str, tmp_path: Path) -> None:
    """The selector table's default entry is the constant NoAction (P4Runtime 9.1.4)."""
    _need(target)
    table = P4Schema(build_program("rtsw", target, tmp_path).p4info).tables[
        "FabricIngress.routing.next_hop"]
    assert table.const_default_action is not None
    assert table.const_default_action.name == "NoAction"
