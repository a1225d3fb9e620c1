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


def _expected_all(path: Path, kind: str = "error") -> list[tuple[int, str]]:
    """(line, message) of every `// expect: KIND: message` comment, in line order."""
    found = [(lineno, m.group(1).strip()) for lineno, line in enumerate(path.read_text().splitlines(), start=1)
             if (m := re.search(rf"// expect: ({kind}: .*)$", line))]
    assert found, f"{path} has no '// expect: {kind}:' comment"
    return found


def _expected(path: Path, kind: str = "error") -> tuple[int, str]:
    return _expected_all(path, kind)[0]


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
    """A program p4c compiles, maybe with warnings: it compiles and its P4Info is built, warning
    once on each line a `// expect: warning:` comment names, with that message
    (``file:line:col: warning: ...``), and nowhere else; or not at all where the file says
    `// no warning`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build_p4info(compile_file(path))
    said = sorted((w.message for w in caught if isinstance(w.message, P4Warning)), key=lambda w: w.coord.line)
    assert [w for w in caught if not isinstance(w.message, P4Warning)] == []
    if "// no warning" in path.read_text():
        assert said == []
        return
    expected = _expected_all(path, "warning")
    assert len(said) == len(expected), [str(w) for w in said]
    for w, (line, message) in zip(said, expected, strict=True):
        assert str(w).startswith(f"{path}:{line}:") and str(w).endswith(message), str(w)


@pytest.mark.parametrize("path", PROJECT, ids=[p.stem for p in PROJECT])
def test_project_programs_compile(path: Path) -> None:
    """The project's switch programs (p4/*.p4) compile and yield a P4Info."""
    program = compile_file(path)
    info = build_p4info(program)
    assert info.tables
