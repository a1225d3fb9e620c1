"""Tests for aizone.demo's report and controller.check's reading of ping."""

from __future__ import annotations

import subprocess

import pytest

from aizone.demo import DemoReport
from controller.check import Pair, _ping, ping_pairs
from topologies.addressing import plan_addresses
from topologies.spec import parse_spec


def test_report_is_ok_only_when_every_check_passed() -> None:
    """No check: not ok; all passed: ok; one failed: not ok, and the JSON says which."""
    r = DemoReport(topology="t")
    assert not r.ok
    r.add("a", True, "fine")
    assert r.ok
    r.add("b", False, "broken")
    assert not r.ok
    data = r.to_json()
    assert data["ok"] is False
    assert [c["name"] for c in data["checks"] if not c["ok"]] == ["b"]


def test_pairs_cover_every_nic_of_every_ordered_host_pair() -> None:
    """3 hosts x 2 NICs: 3*2 ordered pairs x 2 NICs = 12 pings, NIC k to NIC k."""
    spec = parse_spec({"name": "t", "racks": [{"count": 1, "hosts": 3, "nics": 2}]})
    pairs = ping_pairs(plan_addresses(spec))
    assert len(pairs) == 12
    assert Pair(src="h1", src_ip="10.0.0.3", dst="h2", dst_ip="10.0.0.7") in pairs
    assert not [p for p in pairs if p.src == p.dst]


class _Fabric:
    """Runs the command given (a real process) instead of in a host's namespace."""

    def __init__(self, stdout: str) -> None:
        self.stdout = stdout

    def host_run(self, host: str, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run(["printf", "%s", self.stdout], capture_output=True, text=True,
                              timeout=timeout)


IPUTILS = ("--- 10.0.0.3 ping statistics ---\n1 packets transmitted, 1 received, "
           "0% packet loss, time 0ms\nrtt min/avg/max/mdev = 0.512/0.700/0.912/0.163 ms\n")
LOST = "1 packets transmitted, 0 received, 100% packet loss, time 0ms\n"


@pytest.mark.parametrize(("out", "ok", "rtt"), [(IPUTILS, True, 0.7), (LOST, False, None),
                                                ("", False, None)],
                         ids=["answered", "lost", "no-output"])
def test_ping_reads_iputils_summary(out: str, ok: bool, rtt: float | None) -> None:
    """Answered, lost and silent pings, from iputils' summary lines."""
    import asyncio

    got = asyncio.run(_ping(_Fabric(out), Pair(src="h1", src_ip="1.1.1.1", dst="h2",
                                               dst_ip="10.0.0.3")))
    assert got["ok"] is ok and got["rtt_ms"] == rtt
