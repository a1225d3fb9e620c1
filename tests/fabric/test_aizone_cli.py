"""Fabric tests for the `aizone` CLI: the demo end to end, up/status/down, and bad input.

Each bad-input case must print one line, exit non-zero and leave nothing
behind (no processes, veths, namespaces or state file).

All but the crash's cleanup (which ends the target's own processes and files) check the
CLI itself, the same on every target: marked `one_target`, `make test` runs them on the
built-in target only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fabric_support import ROOT, aizone, assert_clean, leftovers

from controller.client import ApiClient


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("aizone: error: "), lines[0]
    return lines[0]


def write(tmp_path: Path, text: str, name: str = "bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text.replace("@P4@", str(ROOT / "p4" / "rtsw.p4")))
    return path


@pytest.mark.one_target
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


@pytest.mark.one_target
def test_yaml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    """Broken YAML: exit 2, file:line:col."""
    bad = write(tmp_path, "racks: [\n")
    proc = aizone("up", "--topology", str(bad))
    assert proc.returncode == 2
    assert f"{bad}:" in one_line_error(proc)


@pytest.mark.one_target
def test_missing_p4_file_is_one_line(tmp_path: Path) -> None:
    """programs.rtsw pointing nowhere: exit 2, the key and the path, nothing left."""
    before = leftovers()
    bad = write(tmp_path, "racks: [{hosts: 2}]\nprograms: {rtsw: ../nowhere/rtsw.p4}\n")
    proc = aizone("demo", "--topology", str(bad))
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert "programs.rtsw" in line and "nowhere/rtsw.p4 not found" in line
    assert_clean(before)


@pytest.mark.one_target
def test_missing_topology_file_is_one_line(tmp_path: Path) -> None:
    """A topology path that does not exist: exit 2, named."""
    proc = aizone("up", "--topology", str(tmp_path / "none.yaml"))
    assert proc.returncode == 2
    assert "none.yaml: no such topology file" in one_line_error(proc)


@pytest.mark.one_target
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


@pytest.mark.one_target
@pytest.mark.parametrize("command", [["up"], ["demo"], ["down"]], ids=["up", "demo", "down"])
def test_not_root_is_one_line(command: list[str]) -> None:
    """As user nobody: exit 1, says to use sudo, nothing left."""
    before = leftovers()
    proc = aizone(*command, user="nobody")
    assert proc.returncode == 1
    assert "sudo" in one_line_error(proc)
    assert_clean(before)


@pytest.mark.one_target
def test_status_without_a_fabric_says_so() -> None:
    """`status --json` with nothing running: running false, exit 0."""
    proc = aizone("status", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["running"] is False


@pytest.mark.one_target
def test_down_with_nothing_running_is_fine() -> None:
    """`down` when nothing runs: exit 0."""
    proc = aizone("down")
    assert proc.returncode == 0, proc.stderr
    assert "nothing was running" in proc.stdout


@pytest.mark.one_target
def test_plan_prints_addresses_as_json() -> None:
    """`plan --json`: the rack's hosts and their addresses."""
    proc = aizone("plan", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert [h["nics"][0]["ip"] for h in plan["hosts"]] == ["10.0.0.1", "10.0.0.3"]


@pytest.mark.one_target
def test_demo_runs_the_main_job_and_never_needs_open_vswitch(tmp_path: Path, target: str,
                                                             build_dir: Path) -> None:
    """`aizone demo --json` passes every check, with OVS tools and `mn` shadowed by failing stubs."""
    before = leftovers()
    calls = tmp_path / "calls"
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("ovs-vsctl", "ovs-ofctl", "ovs-vswitchd", "ovsdb-server", "ovs-testcontroller",
                 "ovs-controller", "controller", "mn"):
        stub = fake / tool
        stub.write_text(f"#!/bin/sh\necho {tool} \"$@\" >> {calls}\nexit 1\n")
        stub.chmod(0o755)
    proc = aizone("demo", "--json", "--target", target, "--build-dir", str(build_dir),
                  "--size", "256K", env={"PATH": f"{fake}:{os.environ['PATH']}"})
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(proc.stdout[-3000:] + proc.stderr[-2000:]) from None
    failed = [(c["name"], c["detail"]) for c in report["checks"] if not c["ok"]]
    assert proc.returncode == 0 and failed == [], (failed, proc.stderr[-2000:])
    assert report["ok"] is True and report["target"] == target
    names = [c["name"] for c in report["checks"]]
    assert "every host pair: ping and RoCEv2" in names and "ring AllReduce over every NIC" in names
    assert report["run"]["result"]["ranks"] == 16 and report["run"]["result"]["bytes_ok"]
    assert not calls.exists(), calls.read_text()
    assert_clean(before)


@pytest.mark.one_target
def test_up_foreground_until_ctrl_c(target: str, build_dir: Path) -> None:
    """`up --foreground` stays until SIGINT; `status --json` sees it meanwhile; nothing is left."""
    before = leftovers()
    up = subprocess.Popen([sys.executable, "-m", "aizone.cli", "up", "--foreground", "--json",
                           "--target", target, "--build-dir", str(build_dir)], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert up.stdout is not None
        line = up.stdout.readline()
        assert line, up.stderr.read() if up.stderr else ""
        assert json.loads(line)["phase"] == "up"
        status = json.loads(aizone("status", "--json").stdout)
        assert status["running"] is True and status["name"] == "rack"
        assert [s["name"] for s in status["switches"]] == ["rtsw1"]
        up.send_signal(signal.SIGINT)
        assert up.wait(60) == 130
    finally:
        if up.poll() is None:
            up.kill()
        aizone("down")
    assert_clean(before)


@pytest.mark.one_target
def test_up_twice_is_refused_then_down_stops_it(target: str, build_dir: Path) -> None:
    """`up` returns once up; a second `up` says it is already up; `down` stops it, nothing left."""
    before = leftovers()
    proc = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir))
    try:
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["phase"] == "up"
        again = aizone("up", "--target", target, "--build-dir", str(build_dir))
        assert again.returncode == 1
        assert "already up" in one_line_error(again)
    finally:
        down = aizone("down")
    assert down.returncode == 0 and "stopped the fabric's daemon" in down.stdout
    assert_clean(before)


def test_down_after_the_daemon_was_killed_leaves_nothing(target: str, build_dir: Path) -> None:
    """SIGKILL the daemon: switches, agents and namespaces stay; `down` removes every one."""
    before = leftovers()
    proc = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir))
    assert proc.returncode == 0, proc.stderr
    os.kill(json.loads(proc.stdout)["pid"], signal.SIGKILL)
    left = leftovers()
    assert left["processes"] and left["pinned"] and left["interfaces"]
    down = aizone("down")
    assert down.returncode == 0, down.stderr
    assert_clean(before)


@pytest.mark.one_target
def test_ctrl_c_during_demo_tears_down(target: str, build_dir: Path) -> None:
    """SIGINT while the demo's AllReduce runs: exit 130, `interrupted`, no report, nothing left.

    The test follows the demo's daemon's events and sends the signal once
    its job reports every rank past its first step and not at its last: the
    fabric is up and carrying the demo's traffic. The demo must then take it
    all down by itself: what is left is looked at before anything else (an
    `aizone down`) could clean up after it.
    """
    before = leftovers()
    demo = subprocess.Popen([sys.executable, "-m", "aizone.cli", "demo", "--json", "--size", "4M",
                             "--target", target, "--build-dir", str(build_dir)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    clean = False
    try:
        assert demo.stderr is not None and demo.stdout is not None
        deadline = time.monotonic() + 120
        with ApiClient() as api:
            while not api.alive():  # the demo's daemon answers once it has started
                assert demo.poll() is None, "the demo ended before its daemon answered"
                assert time.monotonic() < deadline, "no daemon answered within 120 s"
                time.sleep(0.1)
            seen = []
            for _, event in api.events({"job"}, replay=True, timeout=600):
                job = event["data"]
                seen.append(job)
                assert job["phase"] in ("start", "running"), f"the job ended first: {seen}"
                if (job["phase"] == "running" and job["step"] is not None
                        and 1 <= job["step"] < job["steps"]):
                    break
            else:
                raise AssertionError(f"the event stream ended before the job ran: {seen}")
        demo.send_signal(signal.SIGINT)
        code = demo.wait(120)
        out, err = demo.stdout.read(), demo.stderr.read()
        assert code == 130, (code, out[-2000:], err[-2000:])
        assert "interrupted" in err and out == "", (out[-2000:], err[-2000:])
        with ApiClient() as api:
            assert not api.alive(), "the demo's daemon still answers"
        assert_clean(before)  # what the demo left by itself
        clean = True
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        if not clean:
            aizone("down")
