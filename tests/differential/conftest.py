"""Fixtures of the differential suite: one `Rig` (BMv2 and p4switch on veths) for the session.

The rig needs root, p4c-bm2-ss and simple_switch_grpc (from
/opt/p4tools/bin or PATH); without them every test here skips with the
reason. Run it under the network lock:
`flock /tmp/aizone-net.lock .venv/bin/python -m pytest tests/differential -q`.

Names defined here: `rig`, `compiled`, `pytest_collection_modifyitems`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .rig import Compiled, Rig, compile_both, tools_missing

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == HERE and Path(str(item.fspath)).name != "test_deviations.py":
            item.add_marker(pytest.mark.root)


@pytest.fixture(scope="session")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    missing = tools_missing()
    if missing:
        pytest.skip(missing)
    with Rig(tmp_path_factory.mktemp("rig")) as r:
        yield r


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Compiled]:
    out = tmp_path_factory.mktemp("compiled")

    def compile_(path: Path, include_dirs: tuple[Path, ...] = ()) -> Compiled:
        return compile_both(path, include_dirs, out / path.stem)

    return compile_
