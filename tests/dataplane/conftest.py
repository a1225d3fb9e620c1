"""Fixtures of the dataplane suite: the target, compiled programs, one switch per module.

- `target` (session): `--target` (tests/conftest.py), else `$AIZONE_TARGET`,
  else p4switch; skips with the reason when the target's tools are missing
  or we are not root (veths and raw sockets).
- `role` (module): the module's `ROLE` (default rtsw); a module may
  override it, e.g. parametrized over several roles.
- `sut` (module): one `SwitchUnderTest` running that role with the options its `switch_options(target)` gives
  (default: one queue, no shaping), on `PORTS` veth ports.
- `dp` (function): the base fixture: a `Dataplane` whose writes are undone
  after the test, with the ports' receive queues and packet-ins emptied
  before it.
- `native_pfc`: skips a test on targets without native PFC (BMv2).

Names defined here: the fixtures above, `PORTS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.build import CompiledProgram
from controller.errors import BuildError
from topologies.targets import resolve_target, target_missing

from .helpers import Dataplane
from .switch import SwitchOptions, SwitchUnderTest, TargetUnavailable, build_program

PORTS = 5


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.root)


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> str:
    wanted = (request.config.getoption("--target", default=None)
              or os.environ.get("AIZONE_TARGET") or "p4switch")
    chosen = resolve_target(str(wanted))
    missing = target_missing(chosen)
    if missing:
        pytest.skip(f"target {chosen} needs {', '.join(missing)} on PATH")
    if os.geteuid() != 0:
        pytest.skip("dataplane tests need root (veth pairs, raw sockets)")
    return chosen


@pytest.fixture(scope="session")
def program(target: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Callable[[str], CompiledProgram]:
    """role -> p4/<role>.p4 compiled for the target (once per session)."""
    out = tmp_path_factory.mktemp(f"p4-{target}")
    built: dict[str, CompiledProgram] = {}

    def get(role: str) -> CompiledProgram:
        if role not in built:
            try:
                built[role] = build_program(role, target, out)
            except BuildError as exc:
                pytest.fail(str(exc))
        return built[role]

    return get


@pytest.fixture(scope="module")
def role(request: pytest.FixtureRequest) -> str:
    """The switch role a module tests: its `ROLE` (a module may override this fixture)."""
    return getattr(request.module, "ROLE", "rtsw")


@pytest.fixture(scope="module")
def sut(request: pytest.FixtureRequest, target: str, program: Callable[[str], CompiledProgram],
        tmp_path_factory: pytest.TempPathFactory, role: str) -> Iterator[SwitchUnderTest]:
    make_options = getattr(request.module, "switch_options", None)
    options = make_options(target) if make_options else SwitchOptions()
    s = SwitchUnderTest(target, program(role), ports=PORTS, options=options,
                        log_dir=tmp_path_factory.mktemp("switch-logs"))
    try:
        s.start()
    except TargetUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def dp(sut: SwitchUnderTest) -> Iterator[Dataplane]:
    assert sut.alive(), f"the switch process has died: {sut.log_tail()}"
    assert sut.ports is not None and sut.session is not None
    sut.ports.clear()
    sut.session.drain()
    d = Dataplane(sut)
    try:
        yield d
    finally:
        d.undo()


@pytest.fixture
def native_pfc(target: str) -> None:
    if target != "p4switch":
        pytest.skip("native PFC (PAUSE frames consumed by the target, XOFF/XON sent upstream) "
                    "is a p4switch feature; BMv2 has no PFC")
