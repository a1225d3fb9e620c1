"""One fabric over two servers (this machine and a namespace running sshd), Mininet's cluster mode.

`aizone up ai_zone_small --servers localhost,<server>` through the CLI, as a
user runs it: the switches the placement puts on the other server run in
that server's network namespace, started over ssh; every host pair passes
`aizone check` (ping and a RoCEv2 WRITE, through the VXLAN tunnels between
the servers); an uplink between the servers taken down reroutes (every pair
still answers) and comes back; `aizone down` leaves nothing here and nothing
on the server.
Skips, saying why, only where sshd cannot run (tests/fabric/servers_support.py); a failure
where the machine declares `sshd` in AIZONE_REQUIRE (tests/provides.py).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fabric.fabric_support import ROOT, aizone, assert_clean, leftovers
from tests.fabric.servers_support import NamespaceServers, sshd_missing
from tests.provides import unavailable
from topologies.runstate import read_state

SMALL = ROOT / "topologies" / "ai_zone_small.yaml"


@pytest.fixture(scope="module")
def servers() -> Iterator[NamespaceServers]:
    """One server beside this machine: a namespace with its own sshd."""
    why = sshd_missing()
    if why:
        unavailable("sshd", f"sshd cannot run here: {why}")
    with NamespaceServers(1) as made:
        yield made


def _server_processes(ns: str) -> dict[int, str]:
    """pid -> command line of every process in the server's namespace."""
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True,
                          check=True).stdout.split()
    out = {}
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        out[int(pid)] = cmd
    return out


def test_ai_zone_small_over_two_servers_passes_check_and_downs_clean(
        target: str, build_dir: Path, servers: NamespaceServers) -> None:
    """Switches run on both servers, every pair passes `check`, `down` leaves nothing on either."""
    before = leftovers()
    server, ns = servers.addresses[0], servers.namespaces[0]
    sshd_only = _server_processes(ns)
    env = servers.env()
    up = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir),
                "--servers", f"localhost,{server}", str(SMALL), env=env)
    try:
        assert up.returncode == 0, up.stderr[-2000:]
        state = read_state()
        assert state is not None
        placed = sorted(n for n, s in state.meta["placement"].items()
                        if s == server and not n.startswith("h"))
        assert placed, state.meta["placement"]
        # Each switch placed there runs in the server's namespace: its process is a child
        # of the server's sshd, with the switch's name among its ports' interfaces.
        there = [cmd for pid, cmd in _server_processes(ns).items() if pid not in sshd_only]
        for name in placed:
            assert any(f"@{name}-eth" in cmd for cmd in there), (name, there)
        check = aizone("check", "--json", env=env, timeout=900)
        data = json.loads(check.stdout)
        assert check.returncode == 0 and data["ok"], check.stdout[-3000:]
        _tunnel_link_down_reroutes_and_up_restores(state.meta["placement"], env)
    finally:
        down = aizone("down", env=env)
    assert down.returncode == 0, down.stderr
    assert_clean(before)
    assert sorted(_server_processes(ns)) == sorted(sshd_only)
    links = subprocess.run(["ip", "-n", ns, "-o", "link", "show"], capture_output=True,
                           text=True, check=True).stdout
    names = [ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines()]
    assert names == ["lo", "eth0"], links


def _tunnel_link_down_reroutes_and_up_restores(placement: dict[str, str],
                                               env: dict[str, str]) -> None:
    """An uplink between the servers (a VXLAN pair) down: rerouted, every pair still
    answers; up: back, nothing failed."""
    rtsw = sorted(n for n, s in placement.items() if n.startswith("rtsw"))[0]
    ctsw = sorted(n for n, s in placement.items()
                  if n.startswith("ctsw") and s != placement[rtsw])[0]
    proc = aizone("link", "down", rtsw, ctsw, "--json", env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    down = json.loads(proc.stdout)
    try:
        assert down["up"] is False and down["link"].startswith(f"{rtsw}-eth"), down
        # Rerouted: by this request, or already by the probes that saw the link die first.
        status = aizone("status", "--json", env=env)
        assert json.loads(status.stdout)["failed"] == [down["link"]], status.stdout[-2000:]
        check = aizone("check", "--json", "--no-roce", env=env, timeout=900)
        assert check.returncode == 0 and json.loads(check.stdout)["ok"], check.stdout[-3000:]
    finally:
        up = aizone("link", "up", rtsw, ctsw, "--json", env=env)
    assert up.returncode == 0, up.stderr[-2000:]
    assert json.loads(up.stdout)["up"] is True
    status = aizone("status", "--json", env=env)
    assert json.loads(status.stdout)["failed"] == [], status.stdout[-2000:]


def test_up_names_the_server_it_cannot_reach(target: str, build_dir: Path,
                                             servers: NamespaceServers) -> None:
    """A server no sshd answers on: `up` fails before building anything, naming that server."""
    before = leftovers()
    nobody = servers.addresses[0].rsplit(".", 1)[0] + ".99"
    up = aizone("up", "--json", "--target", target, "--build-dir", str(build_dir),
                "--servers", f"localhost,{nobody}", str(SMALL), env=servers.env())
    assert up.returncode == 1
    assert f"server {nobody}: ssh failed" in up.stderr, up.stderr[-2000:]
    assert_clean(before)
