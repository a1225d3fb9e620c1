"""The corpus: every valid program compiles; every invalid one fails with its expected error;
every program of corpus/warn compiles with the warning its `// expect: warning:` comment names
(on that line), or with none."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format

from p4switch import ir
from p4switch.frontend import P4Error, P4Warning, compile_file
from p4switch.p4info import build_p4info, p4info_text

CORPUS = Path(__file__).resolve().parent / "corpus"
REPO = Path(__file__).resolve().parents[3]
VALID = sorted((CORPUS / "valid").glob("*.p4"))
INVALID = sorted((CORPUS / "invalid").glob("*.p4"))
WARN = sorted((CORPUS / "warn").glob("*.p4"))
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


def _expected(path: Path, kind: str = "error") -> tuple[int, str]:
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        m = re.search(rf"// expect: ({kind}: .*)$", line)
        if m:
            return lineno, m.group(1).strip()
    raise AssertionError(f"{path} has no '// expect: {kind}:' comment")


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


@pytest.mark.parametrize("path", WARN, ids=[p.stem for p in WARN])
def test_questionable_program_compiles_with_its_warning(path: Path) -> None:
    """A program p4c compiles, maybe with a warning: it compiles, warning once on the expected line
    (``file:line:col: warning: ...``), or not at all where the file says `// no warning`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = compile_file(path)
    said = [w.message for w in caught if isinstance(w.message, P4Warning)]
    assert [w for w in caught if not isinstance(w.message, P4Warning)] == []
    build_p4info(program)
    if "// no warning" in path.read_text():
        assert said == []
        return
    line, message = _expected(path, "warning")
    assert len(said) == 1, [str(w) for w in said]
    assert str(said[0]).startswith(f"{path}:{line}:") and str(said[0]).endswith(message), str(said[0])


@pytest.mark.parametrize("path", PROJECT, ids=[p.stem for p in PROJECT])
def test_project_programs_compile(path: Path) -> None:
    """The project's switch programs (p4/*.p4) compile and yield a P4Info."""
    program = compile_file(path)
    info = build_p4info(program)
    assert info.tables
