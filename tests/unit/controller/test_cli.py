"""Tests for controller.cli: the parser, help from docstrings, exit codes that need no root."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller import cli

ROOT = Path(__file__).resolve().parents[3]


def test_parser_is_built_apart_from_main() -> None:
    """build_parser() gives every subcommand, with defaults that need no flags."""
    parser = cli.build_parser()
    args = parser.parse_args(["demo"])
    assert args.func is cli.cmd_demo
    assert args.topology == Path("topologies/rack.yaml") and args.target == "auto"


@pytest.mark.parametrize("command,fn", [("up", cli.cmd_up), ("down", cli.cmd_down),
                                        ("status", cli.cmd_status), ("demo", cli.cmd_demo),
                                        ("plan", cli.cmd_plan)],
                         ids=["up", "down", "status", "demo", "plan"])
def test_each_subcommand_help_is_its_docstring(command: str, fn, capsys) -> None:
    """`aizone COMMAND --help` prints the function's docstring."""
    with pytest.raises(SystemExit) as exc:
        cli.build_parser().parse_args([command, "--help"])
    assert exc.value.code == 0
    first = fn.__doc__.strip().splitlines()[0]
    assert first in " ".join(capsys.readouterr().out.split())


def test_target_choices_come_from_the_registry() -> None:
    """--target accepts auto and every registered switch class, nothing else."""
    assert cli.TARGET_CHOICES == ("auto", "p4switch", "bmv2")
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["up", "--target", "tofino"])


def test_invalid_combination_goes_through_parser_error(capsys) -> None:
    """--size out of range is a usage error (exit 2)."""
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", "--size", "0"])
    assert exc.value.code == 2
    assert "--size" in capsys.readouterr().err


def test_bad_topology_is_exit_2_with_one_line(tmp_path: Path, capsys) -> None:
    """main() maps SpecError to exit 2 and one stderr line."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("racks:\n  - hosts: 0\n")
    assert cli.main(["plan", "--topology", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"aizone: error: {bad}: racks.0.hosts: value must be >= 1"]


def test_several_problems_still_print_one_line(tmp_path: Path, capsys) -> None:
    """Two invalid keys: the first one, and how many more."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("racks:\n  - hosts: 0\n    nics: 0\n")
    assert cli.main(["plan", "--topology", str(bad)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("(and 1 more)")


def test_plan_prints_tables(capsys) -> None:
    """`aizone plan` shows switches and hosts for people."""
    assert cli.main(["plan", "--topology", str(ROOT / "topologies" / "rack.yaml")]) == 0
    out = capsys.readouterr().out
    assert "rtsw1" in out and "10.0.0.3/31" in out
