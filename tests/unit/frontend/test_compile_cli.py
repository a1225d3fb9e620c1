"""The p4switch-compile CLI: outputs, formats, errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from finsy.proto import p4i
from google.protobuf import json_format

from p4switch import ir
from p4switch.compile import main

CORPUS = Path(__file__).resolve().parent / "corpus"
BASIC = str(CORPUS / "valid" / "basic.p4")


def test_writes_program_and_p4info_in_every_format(tmp_path: Path) -> None:
    """-o writes the program file; --p4runtime-files writes text, JSON and binary P4Info."""
    out = tmp_path / "b.json"
    txt, js, bn = tmp_path / "b.p4info.txtpb", tmp_path / "b.p4info.json", tmp_path / "b.p4info.bin"
    rc = main([BASIC, "-o", str(out), "--p4runtime-files", f"{txt},{js},{bn}", "--arch", "v1model", "--std", "p4-16", "--target", "bmv2"])
    assert rc == 0
    program, info_text = ir.from_json(out.read_text())
    assert program.arch == "v1model" and "tables" in info_text
    assert txt.read_text() == info_text
    from_json = json_format.Parse(js.read_text(), p4i.P4Info())
    from_bin = p4i.P4Info.FromString(bn.read_bytes())
    assert from_json == from_bin
    assert from_bin.tables[0].preamble.name == "MyIngress.ipv4_lpm"


def test_error_is_one_line_with_caret_and_exit_1(tmp_path: Path, capsys) -> None:
    """A bad program prints file:line:col: error: ..., the source line and a caret; exit 1."""
    bad = CORPUS / "invalid" / "undeclared.p4"
    rc = main([str(bad), "-o", str(tmp_path / "x.json")])
    err = capsys.readouterr().err.splitlines()
    assert rc == 1
    assert err[0] == f"{bad}:3:19: error: nosuch: declaration not found"
    assert err[2].index("^") == 18
    assert not (tmp_path / "x.json").exists()


def test_warnings_print_as_p4c_and_the_program_is_written(tmp_path: Path, capsys) -> None:
    """What p4c compiles with a warning compiles: each warning one line (file:line:col: warning: ...), exit 0."""
    src = CORPUS / "valid" / "p4c_lenient.p4"
    lines = src.read_text().splitlines()

    def at(text: str) -> str:
        """file:line:col of the first source line starting with `text` (its first non-blank column)."""
        n = next(i for i, line in enumerate(lines) if line.strip().startswith(text))
        return f"{src}:{n + 1}:{len(lines[n]) - len(lines[n].lstrip()) + 1}"

    rc = main([str(src), "-o", str(tmp_path / "x.json")])
    err = capsys.readouterr().err.splitlines()
    assert rc == 0 and (tmp_path / "x.json").exists()
    # each warning: its line, the source line, a caret under the column
    assert err[0::3] == [
        f"{at('table by_a')}: warning: table by_a: selector keys without an action_selector implementation "
        "are ignored",
        f"{at('psa_idle_timeout')}: warning: Unknown table property: psa_idle_timeout",
        f"{at('dc.count();')}: warning: direct_counter.count: called outside an action, where it does nothing",
    ]
    assert err[1] == "    table by_a {" and err[2] == "    ^"
    assert err[4].strip() == "psa_idle_timeout = 7;" and err[5] == "        ^"


def test_a_digest_p4info_names_is_a_warning_as_p4c_prints_it(tmp_path: Path, capsys) -> None:
    """A digest of a list: the warning that names it digest_N comes while P4Info is built, and
    prints like the front end's (line, source line, caret), not as a Python warning."""
    src = CORPUS / "warn" / "digest_of_unnamed_data.p4"
    rc = main([str(src), "-o", str(tmp_path / "x.json"), "--p4runtime-files", str(tmp_path / "x.txtpb")])
    err = capsys.readouterr().err.splitlines()
    assert rc == 0 and (tmp_path / "x.txtpb").exists()
    assert err[0::3] == [f"{src}:{line}:{col}: warning: digest: its data's type has no name: P4Info calls this "
                         f"digest digest_{n}" for n, (line, col) in enumerate([(7, 25), (11, 9), (14, 9), (28, 13), (30, 13)])]
    assert err[1].startswith("action global_learn() { digest(1, { 16w7 }); }") and err[2] == " " * 24 + "^"
    assert "P4Warning" not in "\n".join(err)


def test_missing_input_is_a_clear_error(tmp_path: Path, capsys) -> None:
    """A missing source file is one line and exit 1, no traceback."""
    rc = main([str(tmp_path / "nope.p4"), "-o", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.strip().endswith("no such file")
    assert "Traceback" not in err


def test_defines_and_include_dirs_reach_the_preprocessor(tmp_path: Path) -> None:
    """-D and -I work like p4c's."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "size.p4").write_text("#define TABLE_SIZE 77\n")
    src = Path(BASIC).read_text().replace("size = 1024;", "size = TABLE_SIZE; size2 = X;").replace(" size2 = X;", "")
    src = '#include "size.p4"\n' + src
    prog = tmp_path / "p.p4"
    prog.write_text(src)
    rc = main([str(prog), "-o", str(tmp_path / "p.json"), "-I", str(tmp_path / "inc"), "--p4runtime-files", str(tmp_path / "p.json2.json")])
    assert rc == 0
    info = json.loads((tmp_path / "p.json2.json").read_text())
    assert info["tables"][0]["size"] == "77"


def test_enum_key_fails_only_when_p4runtime_output_is_asked(tmp_path: Path, capsys) -> None:
    """A plain-enum key: exit 1 with --p4runtime-files (p4c fails there too); without it, a warning and exit 0."""
    from tests.unit.frontend.test_p4info_generation import ENUM_KEY

    src = tmp_path / "enum_key.p4"
    src.write_text(ENUM_KEY)
    rc = main([str(src), "-o", str(tmp_path / "a.json"), "--p4runtime-files", str(tmp_path / "a.txtpb")])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith(f"{src}:14:17: error: m.c: a table key of type Color")
    rc = main([str(src), "-o", str(tmp_path / "b.json")])
    err = capsys.readouterr().err
    assert rc == 0 and f"{src}:14:17: warning: no P4Info embedded" in err
    assert ir.from_json((tmp_path / "b.json").read_text())[1] == ""


def test_name_the_switch_would_refuse_fails_at_compile_time(tmp_path: Path, capsys) -> None:
    """An @name p4c lets through but p4switch's loader refuses ("my table") fails here, exit 1,
    naming it and where, and no program file is written."""
    src = tmp_path / "odd.p4"
    text = Path(BASIC).read_text()
    assert "table ipv4_lpm {" in text
    src.write_text(text.replace("table ipv4_lpm {", '@name("my table") table ipv4_lpm {'))
    out = tmp_path / "odd.json"
    rc = main([str(src), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and not out.exists()
    assert "p4switch would refuse this program" in err and "'MyIngress.my table' is not a P4 name" in err
    assert f"(near {src}:" in err
