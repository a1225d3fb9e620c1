"""The corpus: every valid program compiles; every invalid one fails with its expected error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format

from p4switch import ir
from p4switch.frontend import P4Error, compile_file
from p4switch.p4info import build_p4info, p4info_text

CORPUS = Path(__file__).resolve().parent / "corpus"
REPO = Path(__file__).resolve().parents[3]
VALID = sorted((CORPUS / "valid").glob("*.p4"))
INVALID = sorted((CORPUS / "invalid").glob("*.p4"))
PROJECT = sorted((REPO / "p4").glob("*.p4"))


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_valid_program_compiles_and_round_trips(path: Path) -> None:
    """A valid program compiles; its IR survives the program file; its P4Info parses back."""
    program = compile_file(path)
    text = p4info_text(build_p4info(program))
    again, info_text = ir.from_json(ir.to_json(program, text))
    assert ir.to_json(again, info_text) == ir.to_json(program, text)
    parsed = text_format.Parse(info_text, p4i.P4Info())
    assert parsed.pkg_info.arch == "v1model"


def _expected(path: Path) -> tuple[int, str]:
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        m = re.search(r"// expect: (error: .*)$", line)
        if m:
            return lineno, m.group(1).strip()
    raise AssertionError(f"{path} has no '// expect:' comment")


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_program_reports_expected_error(path: Path) -> None:
    """An invalid program fails with the expected message on the expected line of its own file."""
    line, message = _expected(path)
    with pytest.raises(P4Error) as info:
        compile_file(path)
    err = info.value
    assert str(err).endswith(message), str(err)
    assert err.coord.file == str(path)
    assert err.coord.line == line
    assert str(err).startswith(f"{path}:{line}:")


@pytest.mark.parametrize("path", PROJECT, ids=[p.stem for p in PROJECT])
def test_project_programs_compile(path: Path) -> None:
    """The project's switch programs (p4/*.p4) compile and yield a P4Info."""
    program = compile_file(path)
    info = build_p4info(program)
    assert info.tables
