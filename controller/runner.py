"""Bring a fabric up (and down): spec -> checks -> compile -> Mininet -> pipelines -> routes.

`bring_up(topology, target=..., build_dir=...)` does every step of `aizone
up` and `aizone demo` and returns a `RunningFabric` (a context manager that
tears everything down on exit, also on exceptions and Ctrl-C). Checks that
can fail without changing anything run first, cheapest first: the spec and
its P4 files, root, target tools, a run already going, leftovers of a
crashed run (removed), free gRPC ports; only then the program is compiled
and the network built. A failure after that point tears down what was
started before the exception propagates.

`progress` is an optional callable `progress(step: str)` returning a
context manager around each step (the CLI shows a spinner with it).

Names defined here: `RunningFabric`, `bring_up`, `fabric`, `prepare`, `Step`,
`default_build_dir`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from topologies.addressing import AddressPlan, plan_addresses
from topologies.net import FabricNet, check_ports_free
from topologies.nodes import (
    SWITCH_CLASSES,
    Bmv2SwitchNode,
    NetworkError,
    resolve_target,
    target_missing,
)
from topologies.runstate import cleanup
from topologies.spec import FabricSpec, check_programs, load_spec

from .build import CompiledProgram, compile_roles
from .fabric import FabricController
from .routes import SwitchEntries

__all__ = ["RunningFabric", "Step", "bring_up", "default_build_dir", "fabric", "prepare"]

Step = Callable[[str], AbstractContextManager[object]]


def _no_progress(_: str) -> AbstractContextManager[object]:
    return contextlib.nullcontext()


def default_build_dir() -> Path:
    return Path(os.environ.get("AIZONE_BUILD_DIR", "build"))


@dataclass
class RunningFabric:
    """A fabric that is up: spec, plan, compiled programs, network and controller."""

    topology: Path
    spec: FabricSpec
    plan: AddressPlan
    target: str
    programs: dict[str, CompiledProgram]
    net: FabricNet
    ctl: FabricController
    installed: dict[str, SwitchEntries] = field(default_factory=dict)

    def down(self) -> None:
        """Close the sessions and stop the network (idempotent)."""
        try:
            self.ctl.close()
        finally:
            self.net.stop()

    def __enter__(self) -> RunningFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()


def prepare(topology: str | Path, target: str) -> tuple[FabricSpec, AddressPlan, str,
                                                         dict[str, Path]]:
    """Every check that changes nothing: spec, P4 files, root, target tools."""
    spec = load_spec(topology)
    plan = plan_addresses(spec)
    sources = check_programs(spec, plan.roles(), source=str(topology))
    if os.geteuid() != 0:
        raise NetworkError("aizone needs root for network namespaces and veths: "
                           "run it with sudo (e.g. sudo make demo)")
    chosen = resolve_target(spec.target if target == "auto" and spec.target != "auto"
                            else target)
    missing = target_missing(chosen)
    if missing:
        raise NetworkError(f"target {chosen} needs {', '.join(missing)} on PATH: install it or "
                           f"use --target p4switch")
    return spec, plan, chosen, sources


def bring_up(topology: str | Path, *, target: str = "auto", build_dir: str | Path | None = None,
             progress: Step | None = None, log_console: bool = False,
             mode: str | None = None) -> RunningFabric:
    """Start the fabric of `topology` and program it; see the module docstring."""
    step = progress or _no_progress
    topo_path = Path(topology)
    spec, plan, chosen, sources = prepare(topo_path, target)
    switch_cls = SWITCH_CLASSES[chosen]
    # A crashed run's leftovers go; a live run is an error (`aizone down`).
    cleanup(stop_running=False)
    check_ports_free(plan, thrift=issubclass(switch_cls, Bmv2SwitchNode))
    out = Path(build_dir) if build_dir else default_build_dir()
    out = out / plan.name / chosen
    with step(f"compiling {', '.join(str(p) for p in sources.values())} for {chosen}"):
        programs = compile_roles(sources, out, target=chosen)
    # Switches start without a program (--no-p4): the controller pushes it,
    # as P4Runtime wants, so both targets start the same way.
    net = FabricNet(plan, switch=switch_cls, log_dir=out / "logs", log_console=log_console,
                    meta={"topology": str(topo_path.resolve()), "build_dir": str(out.resolve()),
                          "p4info": {r: str(p.p4info.resolve()) for r, p in programs.items()},
                          "roles": {s.name: s.role for s in plan.switches}})
    ctl = FabricController(plan, programs)
    running = RunningFabric(topology=topo_path, spec=spec, plan=plan, target=chosen,
                            programs=programs, net=net, ctl=ctl)
    try:
        with step(f"starting {len(plan.switches)} switch(es) and {len(plan.hosts)} host(s) "
                  f"in Mininet ({chosen})"):
            net.start()
        with step("connecting P4Runtime sessions and pushing pipelines"):
            ctl.connect()
            ctl.push_pipelines()
        with step(f"installing routes ({mode or plan.mode})"):
            running.installed = ctl.install_routes(mode)
        net.update_meta(mode=mode or plan.mode)
    except BaseException:
        running.down()
        raise
    return running


@contextlib.contextmanager
def fabric(topology: str | Path, **kwargs: Any) -> Iterator[RunningFabric]:
    """`with fabric("topologies/rack.yaml") as f:` - bring up, yield, always tear down."""
    running = bring_up(topology, **kwargs)
    try:
        yield running
    finally:
        running.down()
