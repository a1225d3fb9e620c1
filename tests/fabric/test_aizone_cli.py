"""Fabric tests for the `aizone` CLI: the demo end to end, up/status/down, and bad input.

Each bad-input case must print one line, exit non-zero and leave nothing
behind (no processes, veths, namespaces or state file).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fabric_support import ROOT, aizone, assert_clean, leftovers

needs_compiler = pytest.mark.skipif(
    importlib.util.find_spec("p4switch.compile") is None,
    reason="p4switch-compile is not there yet")


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("aizone: error: "), lines[0]
    return lines[0]


def write(tmp_path: Path, text: str, name: str = "bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text.replace("@P4@", str(ROOT / "p4" / "rtsw.p4")))
    return path


@pytest.mark.parametrize("command", ["up", "demo"])
def test_bad_yaml_key_is_one_line_naming_file_and_key(tmp_path: Path, command: str) -> None:
    """An unknown key: exit 2, the file and the key in one line, nothing left."""
    before = leftovers()
    bad = write(tmp_path, "racks:\n  - hosts: 2\n    nicks: 1\n")
    proc = aizone(command, "--topology", str(bad))
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert f"{bad}: racks.0.nicks: unknown key" in line
    assert_clean(before)


def test_yaml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    """Broken YAML: exit 2, file:line:col."""
    bad = write(tmp_path, "racks: [\n")
    proc = aizone("up", "--topology", str(bad))
    assert proc.returncode == 2
    assert f"{bad}:" in one_line_error(proc)


def test_missing_p4_file_is_one_line(tmp_path: Path) -> None:
    """programs.rtsw pointing nowhere: exit 2, the key and the path, nothing left."""
    before = leftovers()
    bad = write(tmp_path, "racks: [{hosts: 2}]\nprograms: {rtsw: ../nowhere/rtsw.p4}\n")
    proc = aizone("demo", "--topology", str(bad))
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert "programs.rtsw" in line and "nowhere/rtsw.p4 not found" in line
    assert_clean(before)


def test_missing_topology_file_is_one_line(tmp_path: Path) -> None:
    """A topology path that does not exist: exit 2, named."""
    proc = aizone("up", "--topology", str(tmp_path / "none.yaml"))
    assert proc.returncode == 2
    assert "none.yaml: no such topology file" in one_line_error(proc)


@pytest.mark.parametrize("command", ["up", "demo"])
def test_grpc_port_in_use_is_one_line(tmp_path: Path, command: str) -> None:
    """Something listens on the switch's gRPC port: exit 1, says which port, nothing left."""
    before = leftovers()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        topo = write(tmp_path, f"racks: [{{hosts: 2}}]\nprograms: {{rtsw: @P4@}}\n"
                               f"switches: {{grpc_port_base: {port}}}\n")
        proc = aizone(command, "--topology", str(topo), "--build-dir", str(tmp_path / "b"))
    assert proc.returncode == 1
    line = one_line_error(proc)
    assert f"127.0.0.1:{port}" in line and "already in use" in line
    assert_clean(before)


@pytest.mark.parametrize("command", [["up"], ["demo"], ["down"]], ids=["up", "demo", "down"])
def test_not_root_is_one_line(command: list[str]) -> None:
    """As user nobody: exit 1, says to use sudo, nothing left."""
    before = leftovers()
    proc = aizone(*command, user="nobody")
    assert proc.returncode == 1
    assert "sudo" in one_line_error(proc)
    assert_clean(before)


def test_status_without_a_fabric_says_so() -> None:
    """`status --json` with nothing running: running false, exit 0."""
    proc = aizone("status", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["running"] is False


def test_down_with_nothing_running_is_fine() -> None:
    """`down` when nothing runs: exit 0."""
    proc = aizone("down")
    assert proc.returncode == 0, proc.stderr
    assert "nothing was running" in proc.stdout


def test_plan_prints_addresses_as_json() -> None:
    """`plan --json`: the rack's hosts and their addresses."""
    proc = aizone("plan", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert [h["nics"][0]["ip"] for h in plan["hosts"]] == ["10.0.0.1", "10.0.0.3"]


@needs_compiler
def test_demo_passes_twice_in_a_row(target: str, build_dir: Path) -> None:
    """`aizone demo` exits 0 with a summary; a second run right after does too."""
    before = leftovers()
    for _ in range(2):
        proc = aizone("demo", "--target", target, "--build-dir", str(build_dir))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "demo passed" in proc.stdout
        assert_clean(before)


@needs_compiler
def test_demo_json_reports_every_check(target: str, build_dir: Path) -> None:
    """`aizone demo --json`: ok, and the checks that ran."""
    proc = aizone("demo", "--json", "--target", target, "--build-dir", str(build_dir))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True
    names = [c["name"] for c in report["checks"]]
    assert "ping h1 -> h2" in names and "RDMA WRITE received intact" in names


@needs_compiler
def test_up_status_and_ctrl_c(target: str, build_dir: Path) -> None:
    """`up` runs until SIGINT; `status --json` sees it meanwhile; nothing is left after."""
    before = leftovers()
    up = subprocess.Popen([sys.executable, "-m", "controller.cli", "up", "--json", "--target",
                           target, "--build-dir", str(build_dir)], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert up.stdout is not None
        line = up.stdout.readline()
        assert line, up.stderr.read() if up.stderr else ""
        assert json.loads(line)["running"] is True
        status = aizone("status", "--json")
        assert status.returncode == 0, status.stderr
        data = json.loads(status.stdout)
        (sw,) = data["switches"]
        assert sw["up"] and sw["tables"]["FabricIngress.routing.ipv4_route"] == 3
        up.send_signal(signal.SIGINT)
        assert up.wait(60) == 130
    finally:
        if up.poll() is None:
            up.kill()
            aizone("down")
    assert_clean(before)


@needs_compiler
def test_up_detach_then_down(target: str, build_dir: Path) -> None:
    """`up --detach` returns once up; `down` stops it and leaves nothing."""
    before = leftovers()
    proc = aizone("up", "--detach", "--json", "--target", target, "--build-dir", str(build_dir))
    try:
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["running"] is True
        again = aizone("up", "--target", target, "--build-dir", str(build_dir))
        assert again.returncode == 1
        assert "already running" in one_line_error(again)
    finally:
        down = aizone("down")
    assert down.returncode == 0 and "stopped the running fabric" in down.stdout
    assert_clean(before)


@needs_compiler
def test_demo_never_needs_open_vswitch(tmp_path: Path, target: str, build_dir: Path) -> None:
    """With OVS tools and `mn` shadowed by failing stubs, the demo passes and calls none."""
    calls = tmp_path / "calls"
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("ovs-vsctl", "ovs-ofctl", "ovs-vswitchd", "ovsdb-server", "ovs-testcontroller",
                 "ovs-controller", "controller", "mn"):
        stub = fake / tool
        stub.write_text(f"#!/bin/sh\necho {tool} \"$@\" >> {calls}\nexit 1\n")
        stub.chmod(0o755)
    proc = aizone("demo", "--target", target, "--build-dir", str(build_dir),
                  env={"PATH": f"{fake}:{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not calls.exists(), calls.read_text()


@needs_compiler
def test_ctrl_c_during_demo_tears_down(target: str, build_dir: Path) -> None:
    """SIGINT while the demo runs: exit 130 and nothing left behind."""
    before = leftovers()
    demo = subprocess.Popen([sys.executable, "-m", "controller.cli", "demo", "--target", target,
                             "--build-dir", str(build_dir)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Wait until the network is being built or running, then interrupt.
        assert demo.stderr is not None
        for line in demo.stderr:
            if "starting" in line or "installing" in line:
                break
        demo.send_signal(signal.SIGINT)
        assert demo.wait(60) in (130, 0)
    finally:
        if demo.poll() is None:
            demo.kill()
            aizone("down")
    assert_clean(before)


@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_demo_crosses_the_spine_in_every_routing_mode(target: str, build_dir: Path,
                                                      mode: str) -> None:
    """ai_zone_small.yaml (4 RTSWs x 2 CTSWs): h1 reaches h4 through a CTSW in pin, ecmp and eecmp."""
    proc = aizone("demo", "--json", "--topology", str(ROOT / "topologies" / "ai_zone_small.yaml"),
                  "--mode", mode, "--target", target, "--build-dir", str(build_dir))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True and all(c["ok"] for c in report["checks"])
    sent = report["sender"]["packets"]
    spine_rx = sum(c["rx_packets"] for c in report["counters"] if c["switch"].startswith("ctsw"))
    # Every RoCEv2 packet and the pings crossed a spine switch on the way.
    assert spine_rx >= sent > 0
