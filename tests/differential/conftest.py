"""Fixtures of the differential suite: one `Rig` (BMv2 and p4switch on veths) and compiled programs.

The rig needs root, p4c-bm2-ss and simple_switch_grpc (from
/opt/p4tools/bin or PATH); without them every test here skips with the
reason. It holds the shared network lock while its veths exist
(`tests.provides.net_lock`: waited for when another run holds it, already
held under `flock /tmp/aizone-net.lock`), so two runs do not break each other.

p4c-bm2-ss is the slow half of compiling: the programs the collected tests
name (their `path` parameter) are compiled by p4c ahead, one at a time in a
background thread while the rig runs the earlier ones, and its outputs are
kept by content in pytest's cache (`.pytest_cache/d/p4c-bm2-ss`), so an
unchanged program is not compiled by p4c again. p4switch's front end always
compiles afresh: it is what is under test.

Names defined here: `rig`, `compiled`, `include_dirs_for`, `pytest_collection_modifyitems`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.provides import net_lock, unavailable

from .rig import Compiled, P4cCache, P4cOutput, Rig, compile_both, tools_missing

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
_WANTED = pytest.StashKey[list[Path]]()


def include_dirs_for(path: Path) -> tuple[Path, ...]:
    """The -I directories a program needs: p4/include for the fabric's role programs."""
    return (REPO / "p4" / "include",) if path.resolve().parent == REPO / "p4" else ()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted: list[Path] = []
    for item in items:
        if Path(str(item.fspath)).parent != HERE:
            continue
        if Path(str(item.fspath)).name != "test_deviations.py":
            item.add_marker(pytest.mark.root)
        callspec = getattr(item, "callspec", None)
        path = callspec.params.get("path") if callspec is not None else None
        if isinstance(path, Path) and path not in wanted:
            wanted.append(path)
    config.stash[_WANTED] = wanted


@pytest.fixture(scope="session")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    missing = tools_missing()
    if missing:
        unavailable("bmv2", missing)
    with net_lock(), Rig(tmp_path_factory.mktemp("rig")) as r:
        yield r


@pytest.fixture(scope="session")
def compiled(request: pytest.FixtureRequest) -> Iterator[Callable[[Path], Compiled]]:
    """compile(path) -> Compiled; p4c's half started ahead for every program the run needs."""
    missing = tools_missing()
    if missing:
        unavailable("bmv2", missing)
    cache = getattr(request.config, "cache", None)  # absent with -p no:cacheprovider
    cache_dir = cache.mkdir("p4c-bm2-ss") if cache is not None else None
    p4c_cache = P4cCache(cache_dir)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="p4c")
    ahead: dict[Path, Future[P4cOutput]] = {
        p: pool.submit(p4c_cache.compile, p, include_dirs_for(p)) for p in request.config.stash.get(_WANTED, [])}

    def compile_(path: Path) -> Compiled:
        fut = ahead.get(path) or pool.submit(p4c_cache.compile, path, include_dirs_for(path))
        return compile_both(path, include_dirs_for(path), reference=fut.result())

    yield compile_
    pool.shutdown(wait=False, cancel_futures=True)
