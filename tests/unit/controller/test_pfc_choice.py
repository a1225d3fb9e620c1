"""Where a fabric's PFC runs (`aizone up --pfc native|program`): the choice, its default per
target, the refusals, and how it reaches the daemon's command line.

p4switch has a PFC of its own (its traffic manager) and runs it by default; BMv2 has none,
so it runs the programs' (p4/include/control/pfc.p4) and refuses `native`. A program
without the PFC tables is refused when its switches have PFC ports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.build import CompiledProgram
from controller.daemon import check_program_pfc, program_pfc
from controller.daemon_main import build_parser
from controller.errors import DaemonError
from controller.launch import DaemonOptions
from topologies.addressing import plan_addresses
from topologies.errors import NetworkError
from topologies.spec import load_spec
from topologies.targets import Pfc

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "topologies" / "ai_zone_small.yaml"


def test_each_target_has_its_default_and_takes_what_it_can_run() -> None:
    """None: native on p4switch, the programs' on BMv2; "program" on both; "native" on p4switch."""
    assert program_pfc("p4switch") is False and program_pfc("bmv2") is True
    assert program_pfc("p4switch", Pfc.PROGRAM) is True
    assert program_pfc("p4switch", "native") is False
    assert program_pfc("bmv2", "program") is True


def test_native_pfc_on_bmv2_is_refused_saying_what_to_use() -> None:
    with pytest.raises(NetworkError, match=r"--pfc native: target bmv2 has no PFC of its own "
                                           r"\(only p4switch has\): use --pfc program"):
        program_pfc("bmv2", Pfc.NATIVE)
    with pytest.raises(NetworkError, match=r"--pfc both: unknown PFC choice \(choose from "
                                           r"native, program\)"):
        program_pfc("p4switch", "both")


def _program(tmp: Path, role: str, p4info: str) -> CompiledProgram:
    (tmp / f"{role}.p4info.txtpb").write_text(p4info)
    return CompiledProgram(role=role, target="p4switch", source=tmp / f"{role}.p4",
                           device_config=tmp / f"{role}.json",
                           p4info=tmp / f"{role}.p4info.txtpb")


def test_a_program_without_the_pfc_tables_is_refused_where_ports_have_pfc(tmp_path: Path) -> None:
    """rtsw's P4Info names the five PFC tables, ctsw's lacks pfc_hold: ctsw is named."""
    plan = plan_addresses(load_spec(SMALL))
    tables = ["FabricIngress.pfc.pfc_honour", "FabricEgress.pfc.pfc_hold",
              "FabricIngress.pfc.pfc_xoff", "FabricEgress.pfc.pfc_port",
              "FabricIngress.pfc.pfc_drain"]
    full = "".join(f'tables {{ preamble {{ id: {i} name: "{t}" }} }}\n'
                   for i, t in enumerate(tables))
    partial = "".join(f'tables {{ preamble {{ id: {i} name: "{t}" }} }}\n'
                      for i, t in enumerate(tables) if "hold" not in t)
    check_program_pfc({"rtsw": _program(tmp_path, "rtsw", full),
                       "ctsw": _program(tmp_path, "ctsw", full)}, plan)
    with pytest.raises(DaemonError, match=r"ctsw\.p4: the ctsw program has no PFC of its own "
                                          r"\(no table FabricEgress\.pfc\.pfc_hold"):
        check_program_pfc({"rtsw": _program(tmp_path, "rtsw", full),
                           "ctsw": _program(tmp_path, "ctsw", partial)}, plan)


def test_the_choice_reaches_the_daemon_and_its_config() -> None:
    """`up --pfc program` -> `--pfc program` on the daemon's line -> `DaemonConfig.pfc`;
    none given: none passed, the target's default; re-attaching passes none."""
    argv = DaemonOptions(topology=SMALL, target="p4switch", pfc="program").argv()
    assert argv[argv.index("--pfc") + 1] == "program"
    assert "--pfc" not in DaemonOptions(topology=SMALL).argv()
    assert "--pfc" not in DaemonOptions(topology=None, attach=True, pfc="program").argv()
    args = build_parser().parse_args(argv[argv.index("--topology"):])
    assert args.pfc is Pfc.PROGRAM
    assert build_parser().parse_args(["--topology", str(SMALL)]).pfc is None
