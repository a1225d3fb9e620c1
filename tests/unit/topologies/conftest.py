"""Fixtures for the topology tests that build real networks (marked `root`).

- `target` (session): `--target`, else `$AIZONE_TARGET`, else p4switch;
  skips with the reason when the target's tools are missing.
- `state_dir`: a private state folder for run.json (`$AIZONE_STATE_DIR`),
  so a test never touches a real run's state file.
- `netns_pair`: two throw-away namespaces joined by one veth pair, `azdtx`
  (192.0.2.1/24) in the first and `azdty` (192.0.2.2/24) in the second, up;
  deleted after the test.

Tests marked `root` skip with the reason when not run as root, and hold the
shared network lock while they run (`_network_lock`, `tests.provides.net_lock`:
waited for while another run holds it, held on when run under `flock
/tmp/aizone-net.lock`), so two runs never build networks at the same time.

Names defined here: `target`, `state_dir`, `netns_pair`, `pytest_collection_modifyitems`,
`_network_lock`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.provides import chosen_target, net_lock


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `root` skip, saying why, when not run as root."""
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="needs root (network namespaces, veths, tc)")
    for item in items:
        if item.get_closest_marker("root") and Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _network_lock(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked `root` (it builds a network) holds the shared network lock."""
    if request.node.get_closest_marker("root") is None:
        yield
        return
    with net_lock():
        yield


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> str:
    """The switch target: --target, else $AIZONE_TARGET, else p4switch."""
    return chosen_target(request.config, "p4switch")


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    d = tmp_path / "state"
    monkeypatch.setenv("AIZONE_STATE_DIR", str(d))
    yield d


@pytest.fixture
def netns_pair() -> Iterator[tuple[str, str]]:
    namespaces = (f"azdt{os.getpid() % 10000}a", f"azdt{os.getpid() % 10000}b")
    a, b = namespaces

    def sh(*argv: str) -> None:
        subprocess.run(argv, check=True, capture_output=True)

    for ns in namespaces:
        sh("ip", "netns", "add", ns)
    try:
        sh("ip", "link", "add", "azdtx", "netns", a, "type", "veth", "peer", "azdty", "netns", b)
        for ns, intf, ip in ((a, "azdtx", "192.0.2.1/24"), (b, "azdty", "192.0.2.2/24")):
            sh("ip", "-n", ns, "addr", "add", ip, "dev", intf)
            sh("ip", "-n", ns, "link", "set", intf, "up")
        yield a, b
    finally:
        for ns in namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
