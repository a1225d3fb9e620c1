"""Tests for aizone.cli and aizone.parser: the parser, help from docstrings, exit codes that
need no root."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aizone import cli, fabric_cmds, parser, traffic_cmds

ROOT = Path(__file__).resolve().parents[3]

COMMANDS = [("up", fabric_cmds.cmd_up), ("down", fabric_cmds.cmd_down),
            ("status", fabric_cmds.cmd_status), ("check", fabric_cmds.cmd_check),
            ("stats", fabric_cmds.cmd_stats), ("routes", fabric_cmds.cmd_routes),
            ("mode", fabric_cmds.cmd_mode), ("link", fabric_cmds.cmd_link),
            ("exec", fabric_cmds.cmd_exec), ("shell", fabric_cmds.cmd_shell),
            ("acl", fabric_cmds.cmd_acl), ("dashboard", fabric_cmds.cmd_dashboard),
            ("plan", fabric_cmds.cmd_plan), ("trace", traffic_cmds.cmd_trace),
            ("run", traffic_cmds.cmd_run), ("capture", traffic_cmds.cmd_capture),
            ("demo", traffic_cmds.cmd_demo)]


def test_parser_is_built_apart_from_main() -> None:
    """build_parser() gives every subcommand, with defaults that need no flags."""
    built = parser.build_parser()
    args = built.parse_args(["demo"])
    assert args.func is traffic_cmds.cmd_demo
    assert args.topology == Path("topologies/ai_zone_small.yaml") and args.target == "auto"
    up = built.parse_args(["up", "topologies/ai_zone_small.yaml", "--mode", "pin"])
    assert up.topo == Path("topologies/ai_zone_small.yaml") and up.mode == "pin"


def test_the_command_loads_no_network_or_numeric_library_before_it_runs() -> None:
    """Every `aizone` call imports `aizone.cli` and builds the parser: in a fresh interpreter
    that loads none of Mininet, scapy, numpy, networkx or matplotlib (the commands that need
    one load it when they run), and the targets the parser offers are the node classes'."""
    code = ("import json, sys\n"
            "from aizone.cli import main\n"
            "from aizone.parser import TARGET_CHOICES, build_parser\n"
            "build_parser()\n"
            "print(json.dumps([sorted(sys.modules), TARGET_CHOICES]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True, cwd=ROOT)
    loaded, targets = json.loads(out.stdout)
    heavy = ("mininet", "scapy", "numpy", "networkx", "matplotlib", "grpc", "finsy")
    assert sorted(m for m in loaded if m.split(".")[0] in heavy) == []
    assert "aizone.parser" in loaded and "topologies.targets" in loaded
    from topologies.nodes import SWITCH_CLASSES

    assert targets == ["auto", *SWITCH_CLASSES]
    assert all(cls.target == name for name, cls in SWITCH_CLASSES.items())


@pytest.mark.parametrize("command,fn", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_each_subcommand_help_is_its_docstring(command: str, fn, capsys) -> None:
    """`aizone COMMAND --help` prints the function's docstring."""
    with pytest.raises(SystemExit) as exc:
        parser.build_parser().parse_args([command, "--help"])
    assert exc.value.code == 0
    first = fn.__doc__.strip().splitlines()[0]
    assert " ".join(first.split()) in " ".join(capsys.readouterr().out.split())


def test_target_choices_come_from_the_registry() -> None:
    """--target accepts auto and every registered switch class, nothing else."""
    assert parser.TARGET_CHOICES == ("auto", "p4switch", "bmv2")
    with pytest.raises(SystemExit):
        parser.build_parser().parse_args(["up", "--target", "tofino"])


@pytest.mark.parametrize("argv,flag", [(["demo", "--size", "0"], "--size"),
                                       (["run", "allreduce", "--size", "lots"], "--size"),
                                       (["mode", "ospf"], "mode"),
                                       (["link", "sideways", "rtsw1", "ctsw1"], "state"),
                                       (["trace", "h1"], "SRC and DST"),
                                       (["trace", "h1", "h2", "--job", "3"], "--job"),
                                       (["trace", "h1", "h2", "--connection", "r0>r1"],
                                        "--connection"),
                                       (["trace", "h1", "h2", "--qps", "0"], "--qps")],
                         ids=["size-range", "size-unit", "mode", "link-state", "trace-no-dst",
                              "trace-job-and-pair", "trace-connection-no-job", "trace-qps"])
def test_invalid_arguments_are_usage_errors(argv: list[str], flag: str, capsys) -> None:
    """Bad values are usage errors (exit 2) that name the argument."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["run", "allreduce", "--size", "64K"], ["demo", "--size", "64K"],
                                  ["model", "topologies/rack.yaml", "--size", "64K"]],
                         ids=["run", "demo", "model"])
def test_every_size_flag_uses_the_one_parser(argv: list[str]) -> None:
    """`aizone run`, `demo` and `model` read --size the same way."""
    assert parser.build_parser().parse_args(argv).size == 65536


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


def test_topo_show_servers_places_by_the_expected_loads(capsys) -> None:
    """`aizone topo show --servers a,b --json`: the switches' work from the reference ring
    (tests/unit/controller/test_expectedload.py): 16 host cables x 10 Mb/s at their RTSW,
    8 uplinks x both ends, 20 Mb/s a rack: 160 + 160 = 320 Mb/s, 160 a server; one uplink
    per rack crosses, each at the model's load, not its 20 Mb/s rate."""
    topo = str(ROOT / "topologies" / "ai_zone_small.yaml")
    assert cli.main(["topo", "show", topo, "--servers", "a,b", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    loads = data["switch_load_mbps"]
    assert set(loads) == {"a", "b"}
    assert sum(loads.values()) == pytest.approx(320.0)
    assert max(loads.values()) <= 160.0 * 1.05
    assert len(data["crossing"]) == 4
    assert all(0 < c["load_mbps"] < 20.0 for c in data["crossing"]), data["crossing"]
    assert cli.main(["topo", "show", topo, "--servers", "a,b"]) == 0
    text = capsys.readouterr().out
    assert "frames/s" in text and "expected loads: a ring AllReduce over every NIC" in text


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
