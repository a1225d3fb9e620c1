"""The Python API (`aizone.Fabric`) on a real fabric (--target): the docs' example, the CLI's values.

- `docs/examples/fabric_session.py` (the documented session as a script)
  brings ai_zone_small up, runs an AllReduce in pin and in ecmp, fails and
  restores an uplink, and leaves nothing behind;
- on a fabric the CLI started, `Fabric.attach()` reads the same status and
  routes the CLI prints, and a mode it sets is the mode the CLI then shows;
- an exception inside `with Fabric.up(...)` still tears the fabric down.

The API drives the daemon, the same on every target: marked `one_target`, `make test` runs
these on the built-in target only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fabric_support import ROOT, aizone, assert_clean, leftovers

from aizone import Fabric
from controller.client import ApiClient, ApiError

ZONE = ROOT / "topologies" / "ai_zone_small.yaml"
RACK = ROOT / "topologies" / "rack.yaml"
EXAMPLE = ROOT / "docs" / "examples" / "fabric_session.py"


@pytest.mark.one_target
def test_the_documented_session_runs_as_a_script(target: str, build_dir: Path) -> None:
    before = leftovers()
    run = subprocess.run([sys.executable, str(EXAMPLE), str(ZONE), "--target", target,
                          "--build-dir", str(build_dir)], capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["fabric"] == "ai_zone_small"
    assert set(summary["jobs"]) == {"pin", "ecmp"}
    for mode, job in summary["jobs"].items():
        assert job["time_s"] > 0 and job["busbw_gbps"] > 0, (mode, job)
    assert summary["jobs"]["pin"]["id"] < summary["jobs"]["ecmp"]["id"]
    link = summary["link_down"]["link"]
    assert summary["link_down"]["failed"] == [link] and summary["link_up"]["failed"] == []
    assert summary["link_up"]["link"] == link
    assert_clean(before)


@pytest.mark.one_target
def test_attach_reads_what_the_cli_prints(target: str, build_dir: Path) -> None:
    before = leftovers()
    up = aizone("up", str(RACK), "--target", target, "--build-dir", str(build_dir), "--json")
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        with Fabric.attach() as fabric:
            assert not fabric.owned
            cli_status = json.loads(aizone("status", "--json").stdout)
            status = fabric.status()
            assert (status.name, status.mode, status.target) == (
                cli_status["name"], cli_status["mode"], cli_status["target"])
            cli_routes = json.loads(aizone("routes", "--json").stdout)
            assert fabric.routes().model_dump() == cli_routes
            new = "pin" if status.mode != "pin" else "ecmp"
            answer = fabric.set_mode(new)
            assert answer.mode == new and answer.previous == status.mode
            assert json.loads(aizone("status", "--json").stdout)["mode"] == new
            with pytest.raises(ApiError, match="mode: Input should be 'pin', 'ecmp' or "
                                               "'eecmp'") as bad:
                fabric.set_mode("spray")
            assert bad.value.status == 422
        # leaving the block of an attached fabric leaves it up
        with ApiClient() as c:
            assert c.alive()
    finally:
        down = aizone("down")
        assert down.returncode == 0, down.stderr
    assert_clean(before)


@pytest.mark.one_target
def test_an_exception_in_the_block_still_tears_down(target: str, build_dir: Path) -> None:
    before = leftovers()
    with pytest.raises(RuntimeError, match="a script failed"):
        with Fabric.up(RACK, target=target, build_dir=build_dir) as fabric:
            assert fabric.owned and fabric.status().phase == "up"
            raise RuntimeError("a script failed")
    with ApiClient() as c:
        assert not c.alive()
    assert_clean(before)
