"""The p4switch command line: flags as simple_switch_grpc, one-line startup errors."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from p4switch.__main__ import _parse, build_parser

PY = sys.executable


def run_cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "p4switch", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                              os.path.dirname(os.path.abspath(__file__))))))


def test_parser_has_simple_switch_grpc_flags() -> None:
    """The BMv2 names and defaults are there."""
    args = build_parser().parse_args(["--no-p4"])
    assert args.grpc_server_addr == "127.0.0.1:9559"
    assert args.drop_port == 511
    assert args.device_id == 0
    assert args.cpu_port is None
    assert args.priority_queues == 1


def test_target_options_after_double_dash_are_accepted() -> None:
    """simple_switch_grpc style: general options, program, '--', target options."""
    args = _parse(["x.json", "-i", "1@veth1", "--device-id", "3", "--", "--grpc-server-addr",
                   "127.0.0.1:50001", "--cpu-port", "255"])
    assert (args.program, args.ports, args.device_id) == ("x.json", {1: "veth1"}, 3)
    assert (args.grpc_server_addr, args.cpu_port) == ("127.0.0.1:50001", 255)


def test_pcap_without_dir_means_current_directory() -> None:
    """--pcap takes an optional directory, '.' by default."""
    assert _parse(["--no-p4", "--pcap"]).pcap == "."


@pytest.mark.parametrize("argv", [
    [],
    ["--no-p4", "--cpu-port", "0"],
    ["--no-p4", "-i", "veth1"],
    ["--no-p4", "-i", "1@a", "-i", "1@b"],
    ["--no-p4", "--cpu-port", "5", "-i", "5@a"],
    ["--no-p4", "--log-console", "--log-file", "x"],
    ["--no-p4", "--grpc-server-ssl"],
], ids=["no-program", "cpu-port-0", "bad-interface", "port-twice", "cpu-port-interface",
        "log-console-and-file", "ssl-without-cert"])
def test_invalid_combinations_are_usage_errors(argv: list[str]) -> None:
    """Bad combinations exit 2 through parser.error()."""
    with pytest.raises(SystemExit) as e:
        _parse(argv)
    assert e.value.code == 2


def test_bad_program_file_is_one_line_error(tmp_path) -> None:
    """A file that is not a p4switch program: exit 1 and one line on stderr."""
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = run_cli(str(bad), "--grpc-server-addr", "127.0.0.1:0")
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "p4switch: error:" in r.stderr
    assert "program file" in r.stderr


def test_missing_program_file_is_one_line_error(tmp_path) -> None:
    """A program path that does not exist: exit 1."""
    r = run_cli(str(tmp_path / "nope.json"))
    assert r.returncode == 1 and r.stderr.startswith("p4switch: error: cannot read")


@pytest.mark.root
def test_missing_interface_is_one_line_error() -> None:
    """An -i interface that does not exist: exit 1 naming it."""
    r = run_cli("--no-p4", "-i", "1@nosuchif0", "--grpc-server-addr", "127.0.0.1:0")
    assert r.returncode == 1
    assert r.stderr.strip() == "p4switch: error: interface 'nosuchif0' (port 1) does not exist"


def test_address_in_use_is_one_line_error() -> None:
    """The gRPC address is taken: exit 1 with one line."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    try:
        r = run_cli("--no-p4", "--grpc-server-addr", f"127.0.0.1:{port}")
    finally:
        s.close()
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in r.stderr


def test_sigterm_stops_cleanly() -> None:
    """A running p4switch exits 0 on SIGTERM."""
    proc = subprocess.Popen([PY, "-m", "p4switch", "--no-p4", "--grpc-server-addr", "127.0.0.1:0",
                             "--log-console", "-L", "info"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        # It logs this line once it serves (its signal handlers are in place before that).
        lines = iter(proc.stdout.readline, "")
        serving = next((ln for ln in lines if "P4Runtime on 127.0.0.1:0" in ln), None)
        assert serving, proc.stderr.read() if proc.stderr else ""
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("flag,expected", [
    ("3", {None: {"priorities": [3]}}),
    ("2=3,4:100:300:forward", {2: {"priorities": [3, 4], "detection_ms": 100.0, "restoration_ms": 300.0,
                                   "action": "forward"}}),
], ids=["all-ports", "one-port-full"])
def test_pfc_watchdog_flag_maps_to_the_switch_option(flag: str, expected: dict) -> None:
    """--pfc-watchdog [PORT=]PRIOS[:DETECT_MS:RESTORE_MS:ACTION] becomes Switch(pfc_watchdog=...)."""
    from p4switch.__main__ import _switch_options

    assert _switch_options(_parse(["--no-p4", "--pfc-watchdog", flag]))["pfc_watchdog"] == expected


@pytest.mark.parametrize("flag", ["9", "3:100", "3:100:200:reboot", "3:0:200:drop", "x"],
                         ids=["priority-out-of-range", "two-fields", "bad-action", "zero-time", "not-a-number"])
def test_bad_pfc_watchdog_flag_is_a_usage_error(flag: str) -> None:
    """A malformed --pfc-watchdog exits 2 like any bad flag."""
    with pytest.raises(SystemExit) as e:
        _parse(["--no-p4", "--pfc-watchdog", flag])
    assert e.value.code == 2


def test_buffer_flags_map_to_the_switch_options() -> None:
    """--buffer-unit bytes and --shared-buffer SIZE[:ALPHA] become Switch(buffer_unit=...,
    shared_buffer=..., alpha=...); the defaults pass none of them."""
    from p4switch.__main__ import _switch_options

    opts = _switch_options(_parse(["--no-p4", "--buffer-unit", "bytes",
                                   "--shared-buffer", "2000000:0.5"]))
    assert (opts["buffer_unit"], opts["shared_buffer"], opts["alpha"]) == ("bytes", 2_000_000, 0.5)
    opts = _switch_options(_parse(["--no-p4", "--shared-buffer", "300"]))
    assert opts["shared_buffer"] == 300 and "alpha" not in opts and "buffer_unit" not in opts


@pytest.mark.parametrize("argv", [["--buffer-unit", "cells"], ["--shared-buffer", "0"],
                                  ["--shared-buffer", "100:0"], ["--shared-buffer", "100:x"]],
                         ids=["bad-unit", "empty-pool", "zero-alpha", "alpha-not-a-number"])
def test_bad_buffer_flag_is_a_usage_error(argv: list[str]) -> None:
    """A bad --buffer-unit or --shared-buffer exits 2 like any bad flag."""
    with pytest.raises(SystemExit) as e:
        _parse(["--no-p4", *argv])
    assert e.value.code == 2
