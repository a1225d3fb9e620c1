"""Tests for controller.build: compiling with p4switch-compile, caching, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.build import compile_program
from controller.errors import BuildError

ROOT = Path(__file__).resolve().parents[3]


def test_compile_writes_device_config_and_p4info(tmp_path: Path) -> None:
    """Both outputs exist; an unchanged program is not compiled again."""
    first = compile_program(ROOT / "p4" / "rtsw.p4", tmp_path, role="rtsw")
    assert first.device_config.stat().st_size > 0 and first.p4info.stat().st_size > 0
    assert not first.cached
    again = compile_program(ROOT / "p4" / "rtsw.p4", tmp_path, role="rtsw")
    assert again.cached and again.device_config == first.device_config


def test_a_changed_include_recompiles(tmp_path: Path) -> None:
    """Editing any .p4 under the program's folder invalidates the cache."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "inc.p4").write_text("const bit<8> X = 1;\n")
    prog = (ROOT / "p4" / "rtsw.p4").read_text()
    (src / "prog.p4").write_text(prog.replace('#include "include/', f'#include "{ROOT}/p4/include/'))
    out = tmp_path / "out"
    assert not compile_program(src / "prog.p4", out, role="rtsw").cached
    (src / "inc.p4").write_text("const bit<8> X = 2;\n")
    assert not compile_program(src / "prog.p4", out, role="rtsw").cached


def test_a_broken_program_names_file_line_col(tmp_path: Path) -> None:
    """A syntax error: BuildError with the compiler's file:line:col line."""
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\ncontrol C() { apply { x = ; } }\n")
    with pytest.raises(BuildError, match=r"bad.p4:2:\d+: error"):
        compile_program(bad, tmp_path / "out", role="rtsw")


def test_a_missing_source_is_a_build_error(tmp_path: Path) -> None:
    """No such file: BuildError naming it."""
    with pytest.raises(BuildError, match="nope.p4 not found"):
        compile_program(tmp_path / "nope.p4", tmp_path, role="rtsw")
