"""Tests for topologies.runstate: the state file and the removal of a dead run's processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from topologies.errors import NetworkError, SwitchStartError
from topologies.runstate import (
    RunState,
    cleanup,
    netns_name,
    owner_alive,
    proc_start,
    read_arrivals_only_serving,
    read_state,
    serving_pid,
    state_dir,
    update_state,
    write_state,
)
from topologies.switchproc import RUN_ENV


def state(pid: int, start: str | None = None) -> RunState:
    return RunState(owner_pid=pid, owner_start=start if start is not None else proc_start(pid),
                    token="t0", name="rack", target="p4switch")


def test_state_round_trips(tmp_path: Path) -> None:
    """write_state then read_state gives the same record."""
    s = state(os.getpid())
    s.switches = [{"name": "rtsw1", "grpc_addr": "127.0.0.1:50001", "device_id": 1}]
    write_state(s, tmp_path)
    assert read_state(tmp_path) == s


def test_missing_or_corrupt_state_reads_as_none(tmp_path: Path) -> None:
    """No file, or garbage in it: None (never an exception)."""
    assert read_state(tmp_path) is None
    (tmp_path / "run.json").write_text("{not json")
    assert read_state(tmp_path) is None


def test_owner_alive_sees_through_pid_reuse() -> None:
    """Our own pid is alive; the same pid with another start time is not."""
    assert owner_alive(state(os.getpid()))
    assert not owner_alive(state(os.getpid(), start="1"))


def test_cleanup_refuses_a_live_owner(tmp_path: Path) -> None:
    """stop_running=False and a live owner that is not us: NetworkError, file kept."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        write_state(state(sleeper.pid), tmp_path)
        with pytest.raises(NetworkError, match="already running"):
            cleanup(stop_running=False, directory=tmp_path)
        assert read_state(tmp_path) is not None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_cleanup_ends_marked_processes_of_a_dead_run_only(tmp_path: Path) -> None:
    """Processes carrying this run's marker end; an unmarked one lives; the file goes."""
    token = f"test{os.getpid()}"
    marked = subprocess.Popen(["sleep", "30"], env={**os.environ, RUN_ENV: token})
    other = subprocess.Popen(["sleep", "30"])
    try:
        dead = state(os.getpid(), start="1")  # an owner that no longer exists
        dead.token = token
        write_state(dead, tmp_path)
        report = cleanup(directory=tmp_path, token=token)
        assert marked.pid in report.killed and other.pid not in report.killed
        assert report.state_removed and read_state(tmp_path) is None
        marked.wait(5)
        time.sleep(0.1)
        assert other.poll() is None
    finally:
        for p in (marked, other):
            if p.poll() is None:
                p.kill()
            p.wait()


def test_cleanup_with_nothing_left_does_nothing(tmp_path: Path) -> None:
    """No state, no marked processes of this token: an empty report."""
    report = cleanup(directory=tmp_path, token="no-such-run")
    assert not report.anything


def test_update_state_changes_one_part_and_keeps_the_rest(tmp_path: Path) -> None:
    """Two writers, each with its own part: the daemon's meta survives a switch record update."""
    s = state(os.getpid())
    s.switches = [{"name": "rtsw1", "pid": 10}]
    write_state(s, tmp_path)
    update_state(lambda st: st.meta.update(mode="eecmp"), tmp_path)
    update_state(lambda st: st.switches[0].update(pid=11), tmp_path)
    got = read_state(tmp_path)
    assert got is not None and got.meta == {"mode": "eecmp"} and got.switches[0]["pid"] == 11


def test_update_state_without_a_run_changes_nothing(tmp_path: Path) -> None:
    """No run.json: None, and no file is made."""
    assert update_state(lambda st: st.meta.update(x=1), tmp_path) is None
    assert read_state(tmp_path) is None


def test_pinned_namespace_names() -> None:
    """Host h3 is pinned as aizone-h3."""
    assert netns_name("h3") == "aizone-h3"


def test_a_state_folder_other_users_could_write_is_refused(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """$AIZONE_STATE_DIR world-writable, or owned by another user: state_dir() refuses it."""
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    monkeypatch.setenv("AIZONE_STATE_DIR", str(loose))
    with pytest.raises(NetworkError, match="writable by other users"):
        state_dir()
    if os.geteuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 65534, 65534)  # nobody's
        monkeypatch.setenv("AIZONE_STATE_DIR", str(foreign))
        with pytest.raises(NetworkError, match="belongs to uid 65534"):
            state_dir()
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    monkeypatch.setenv("AIZONE_STATE_DIR", str(link))
    with pytest.raises(NetworkError, match="not a folder"):
        state_dir()
    fine = tmp_path / "fine"
    fine.mkdir(mode=0o700)
    monkeypatch.setenv("AIZONE_STATE_DIR", str(fine))
    assert state_dir() == fine


def test_a_switch_on_its_server_is_found_by_run_and_grpc_port() -> None:
    """`serving_pid`: the process marked with the run's token whose argument is the gRPC
    address; another run's token, another port, or the port inside a longer word: none."""
    code = "import time; time.sleep(30)"
    env = {**os.environ, RUN_ENV: "tok-a"}
    argv = [sys.executable, "-c", code, "--grpc-server-addr", "127.0.0.1:59871"]
    ours = subprocess.Popen(argv, env=env)
    # A command line that only mentions the port inside a longer argument (an ssh -L).
    other = subprocess.Popen([sys.executable, "-c", code, "-L", "127.0.0.1:59871:127.0.0.1:59871"],
                             env=env)
    try:
        deadline = time.monotonic() + 10
        while serving_pid("tok-a", 59871) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert serving_pid("tok-a", 59871) == ours.pid
        assert serving_pid("tok-b", 59871) is None
        assert serving_pid("tok-a", 59872) is None
    finally:
        for p in (ours, other):
            p.kill()
            p.wait()
    with pytest.raises(SwitchStartError, match="no switch of this run serves gRPC port 59871"):
        read_arrivals_only_serving("tok-a", 59871, 4, 0.3)
