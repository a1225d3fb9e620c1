"""Fixtures for the traffic tests: hosts joined in memory (``hosts``: NICs, an ideal
switch, jobs run on a virtual clock), and network namespaces, veths and host agents
for the agent tests (``lab``, root)."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.provides import unavailable
from traffic.collectives import Rank
from traffic.memnet import MemNet
from traffic.nic import Nic, NicConfig
from traffic.runner import JobRun
from traffic.schema import HostReport, Job

REPO = Path(__file__).resolve().parents[3]
PYTHON = sys.executable  # the venv's python: the one running the tests
_serial = itertools.count()


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


# -- in-memory hosts (traffic.memnet): the transport without root


@dataclass
class MemHosts:
    """Hosts h0..h{n-1}, one NIC each (hK-eth0, 10.8.0.K+1), joined by an ideal switch."""

    net: MemNet
    nics: dict[str, Nic]
    ranks: list[Rank]

    def run(self, jobs: dict[str, Job], *, limit: float = 120.0,
            deadline: float | None = None) -> dict[str, HostReport]:
        """Run one job per host until all end; their reports."""
        runs = {
            h: JobRun(job, {self.nics[h].name: self.nics[h]}, host=h, macs={}, now=self.net.now,
                      wall=1_000_000.0 + self.net.now, deadline=deadline, cpu=lambda: 0.0)
            for h, job in jobs.items()
        }
        for run in runs.values():
            self.net.add_ticker(run)
        self.net.run(lambda: all(r.done for r in runs.values()), limit=limit)
        return {h: r.report() for h, r in runs.items()}


def mem_hosts(n: int, *, rate_mbps: float = 10.0, delay: float = 5e-6, **nic: Any) -> MemHosts:
    net = MemNet(delay=delay)
    ranks = [
        Rank(host=f"h{i}", nic=f"h{i}-eth0", ip=f"10.8.0.{i + 1}", mac=f"02:00:00:00:08:{i + 1:02x}")
        for i in range(n)
    ]
    nics = {
        r.host: net.add(Nic(NicConfig(name=r.nic, mac=r.mac or "", ip=r.ip, rate_mbps=rate_mbps,
                                      **nic)))
        for r in ranks
    }
    return MemHosts(net=net, nics=nics, ranks=ranks)


@pytest.fixture
def hosts() -> Callable[..., MemHosts]:
    """hosts(n, rate_mbps=10, delay=5e-6, **NicConfig fields): in-memory hosts h0..h{n-1}."""
    return mem_hosts


# -- agents in network namespaces (root)


class Lab:
    """Network namespaces, veths and agents for one test; everything removed at the end."""

    def __init__(self, tmp: Path) -> None:
        self.tag = f"{os.getpid() % 10000}{next(_serial)}"
        self.tmp = tmp
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen[str]] = []

    def ns(self, name: str) -> str:
        full = f"aztl{self.tag}{name}"
        _ip("netns", "add", full)
        self.namespaces.append(full)
        _ip("-n", full, "link", "set", "lo", "up")
        return full

    def veth(self, ns_a: str, if_a: str, ns_b: str, if_b: str) -> None:
        """A veth pair with one end in each namespace, both up."""
        _ip("link", "add", if_a, "netns", ns_a, "type", "veth", "peer", "name", if_b, "netns", ns_b)
        _ip("-n", ns_a, "link", "set", if_a, "up")
        _ip("-n", ns_b, "link", "set", if_b, "up")

    def address(self, ns: str, ifname: str, cidr: str) -> None:
        _ip("-n", ns, "addr", "add", cidr, "dev", ifname)

    def bridge(self, ns: str, ports: list[str]) -> None:
        _ip("-n", ns, "link", "add", "br0", "type", "bridge")
        for port in ports:
            _ip("-n", ns, "link", "set", port, "master", "br0")
        _ip("-n", ns, "link", "set", "br0", "up")

    def popen(self, ns: str, *args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(["ip", "netns", "exec", ns, PYTHON, *args], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def agent(self, ns: str, host: str, nics: str, rate_mbps: float, *extra: str) -> Path:
        """Start ``python -m traffic.hostagent`` in ``ns``; its socket path once it answers ping."""
        from traffic.agentclient import AgentClient, AgentError

        sock = self.tmp / f"{host}.sock"
        proc = self.popen(ns, "-m", "traffic.hostagent", "--host", host, "--socket", str(sock),
                          "--nic", nics, "--rate-mbps", str(rate_mbps), *extra)
        client = AgentClient(sock)
        for _ in range(300):
            if proc.poll() is not None:
                break
            try:
                client.ping()
                return sock
            except AgentError:
                time.sleep(0.1)
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"agent {host} did not start: rc={proc.returncode} {out} {err}")

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    """Namespaces, veths, bridges and agents, all removed after the test (root only)."""
    if os.geteuid() != 0:
        unavailable("root", "needs root: network namespaces and raw sockets")
    if shutil.which("ip") is None:
        pytest.skip("needs iproute2's ip")
    tmp_path.chmod(0o755)
    the_lab = Lab(tmp_path)
    try:
        yield the_lab
    finally:
        the_lab.close()
