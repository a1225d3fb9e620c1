"""Fixtures for fabric tests (root, Mininet): the target, a build folder, leftover checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.provides import chosen_target, unavailable

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.root)


@pytest.fixture(scope="session", autouse=True)
def _need_root() -> None:
    if os.geteuid() != 0:
        unavailable("root", "fabric tests need root (network namespaces)")


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> str:
    """The switch target: --target if the suite defines it, else $AIZONE_TARGET, else auto."""
    return chosen_target(request.config, "auto")


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("build")


