"""The 16-rack preset, `ai_zone_large` (20 switch processes, 32 hosts, 64 NICs), comes up on
this machine as a user brings it up and passes `aizone check`.

Its numbers are written out here from the preset's shape (16 racks x 2 hosts x 2 NICs
under 4 CTSWs), not taken from the code: 16 RTSWs then 4 CTSWs, every NIC pinging every
other host's NIC of the same index (32 hosts x 31 others x 2 NICs) and one RoCEv2 write
per ordered host pair (32 x 31).

Marked `one_target`: what it checks is that this machine carries the preset's size on the
built-in target; the switches' forwarding is the same as on the 4-rack preset, which
`make test` brings up on BMv2 too (tests/fabric/test_zone.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fabric_support import ROOT, aizone, assert_check_passes, assert_clean, leftovers

LARGE = ROOT / "topologies" / "ai_zone_large.yaml"


@pytest.mark.one_target
def test_the_16_rack_preset_comes_up_and_passes_check(target: str, build_dir: Path) -> None:
    before = leftovers()
    up = aizone("up", str(LARGE), "--target", target, "--build-dir", str(build_dir), "--json")
    try:
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr
        status = json.loads(up.stdout)
        assert status["name"] == "ai_zone_large"
        names = [s["name"] for s in status["switches"]]
        assert names == [f"rtsw{i}" for i in range(1, 17)] + [f"ctsw{i}" for i in range(1, 5)]
        assert len(status["hosts"]) == 32
        assert sum(len(h["nics"]) for h in status["hosts"]) == 64

        routes = aizone("routes", "--json")
        assert routes.returncode == 0, routes.stderr
        data = json.loads(routes.stdout)
        assert data["failed"] == []
        for name, sw in data["switches"].items():
            assert sw["matches_intent"], (name, sw["diff"])

        assert_check_passes(hosts=32, nics=2)
    finally:
        down = aizone("down")
        assert down.returncode == 0, down.stderr
        assert_clean(before)
