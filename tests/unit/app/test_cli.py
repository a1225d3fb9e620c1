"""Tests for aizone.cli: the parser, help from docstrings, exit codes that need no root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aizone import cli

ROOT = Path(__file__).resolve().parents[3]

COMMANDS = [("up", cli.cmd_up), ("down", cli.cmd_down), ("status", cli.cmd_status),
            ("check", cli.cmd_check), ("stats", cli.cmd_stats), ("routes", cli.cmd_routes),
            ("mode", cli.cmd_mode), ("link", cli.cmd_link), ("exec", cli.cmd_exec),
            ("shell", cli.cmd_shell), ("trace", cli.cmd_trace), ("run", cli.cmd_run),
            ("plan", cli.cmd_plan), ("demo", cli.cmd_demo)]


def test_parser_is_built_apart_from_main() -> None:
    """build_parser() gives every subcommand, with defaults that need no flags."""
    parser = cli.build_parser()
    args = parser.parse_args(["demo"])
    assert args.func is cli.cmd_demo
    assert args.topology == Path("topologies/ai_zone_small.yaml") and args.target == "auto"
    up = parser.parse_args(["up", "topologies/ai_zone_small.yaml", "--mode", "pin"])
    assert up.topo == Path("topologies/ai_zone_small.yaml") and up.mode == "pin"


@pytest.mark.parametrize("command,fn", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_each_subcommand_help_is_its_docstring(command: str, fn, capsys) -> None:
    """`aizone COMMAND --help` prints the function's docstring."""
    with pytest.raises(SystemExit) as exc:
        cli.build_parser().parse_args([command, "--help"])
    assert exc.value.code == 0
    first = fn.__doc__.strip().splitlines()[0]
    assert " ".join(first.split()) in " ".join(capsys.readouterr().out.split())


def test_target_choices_come_from_the_registry() -> None:
    """--target accepts auto and every registered switch class, nothing else."""
    assert cli.TARGET_CHOICES == ("auto", "p4switch", "bmv2")
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["up", "--target", "tofino"])


@pytest.mark.parametrize("argv,flag", [(["demo", "--size", "0"], "--size"),
                                       (["run", "allreduce", "--size", "lots"], "--size"),
                                       (["mode", "ospf"], "mode"),
                                       (["link", "sideways", "rtsw1", "ctsw1"], "state")],
                         ids=["size-range", "size-unit", "mode", "link-state"])
def test_invalid_arguments_are_usage_errors(argv: list[str], flag: str, capsys) -> None:
    """Bad values are usage errors (exit 2) that name the argument."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


def test_sizes_take_binary_units() -> None:
    """4096, 64K, 4M and 1G as bytes."""
    assert [cli._size(s) for s in ("4096", "64K", "4M", "1G", "2MiB")] == [
        4096, 65536, 4 << 20, 1 << 30, 2 << 20]


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
    assert cli.main(["topo", "show", str(bad)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("(and 1 more)")


def test_plan_prints_tables(capsys) -> None:
    """`aizone plan` shows switches and hosts for people."""
    assert cli.main(["plan", "--topology", str(ROOT / "topologies" / "rack.yaml")]) == 0
    out = capsys.readouterr().out
    assert "rtsw1" in out and "10.0.0.3/31" in out


def test_topo_show_json_needs_no_daemon_and_no_root(capsys) -> None:
    """`aizone topo show --json` answers from the file alone: counts and oversubscription."""
    assert cli.main(["topo", "show", str(ROOT / "topologies" / "two_zones.yaml"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"]["rtsw"] == 4 and data["counts"]["atsw"] == 1


@pytest.mark.parametrize("argv", [["status"], ["check"], ["mode", "pin"], ["routes"],
                                  ["exec", "h1", "true"]],
                         ids=["status", "check", "mode", "routes", "exec"])
def test_commands_without_a_daemon_say_so(argv: list[str], capsys, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """No daemon answering: status says nothing runs (exit 0); the others fail in one line."""
    monkeypatch.setenv("AIZONE_STATE_DIR", str(tmp_path))
    code = cli.main(argv)
    captured = capsys.readouterr()
    if argv == ["status"]:
        assert code == 0 and "no fabric is running" in captured.out
        return
    assert code == 1
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("aizone: error: no fabric is running")
