"""Fixtures for the topology tests that build real networks (marked `root`).

- `target` (session): `--target`, else `$AIZONE_TARGET`, else p4switch;
  skips with the reason when the target's tools are missing.
- `state_dir`: a private state folder for run.json (`$AIZONE_STATE_DIR`),
  so a test never touches a real run's state file.

Tests marked `root` skip with the reason when not run as root; run them
under `flock /tmp/aizone-net.lock`, the lock every fabric test takes, so two runs
never build networks at the same time.

Names defined here: `target`, `state_dir`, `pytest_collection_modifyitems`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.provides import chosen_target


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `root` skip, saying why, when not run as root."""
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="needs root (network namespaces, veths, tc)")
    for item in items:
        if item.get_closest_marker("root") and Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> str:
    """The switch target: --target, else $AIZONE_TARGET, else p4switch."""
    return chosen_target(request.config, "p4switch")


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    d = tmp_path / "state"
    monkeypatch.setenv("AIZONE_STATE_DIR", str(d))
    yield d
