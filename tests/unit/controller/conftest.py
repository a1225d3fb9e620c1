"""Fixtures for controller unit tests: the compiled RTSW program and its P4Info (finsy's schema)."""

from __future__ import annotations

from pathlib import Path

import finsy as fy
import pytest

from controller.build import CompiledProgram, compile_program

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def rtsw_program(tmp_path_factory: pytest.TempPathFactory) -> CompiledProgram:
    """p4/rtsw.p4 compiled by p4switch-compile (once per session)."""
    return compile_program(ROOT / "p4" / "rtsw.p4", tmp_path_factory.mktemp("build"),
                           role="rtsw", target="p4switch")


@pytest.fixture(scope="session")
def schema(rtsw_program: CompiledProgram) -> fy.P4Schema:
    return fy.P4Schema(rtsw_program.p4info)
