"""The checks `aizone up` runs before it changes anything: spec, P4 files, root, target tools.

`prepare(topology, target)` reads and validates the topology, plans its
addresses, finds its P4 sources, refuses a fabric too large to emulate here,
checks root, and resolves the target (`auto`: BMv2 when its tools are on
PATH), that the target's tools are there and that the switches' gRPC (and
Thrift or control) ports are free. It raises `SpecError` (bad
input) or `NetworkError` (this machine cannot run it) and changes nothing.

Names defined here: `prepare`.
"""

from __future__ import annotations

import os
from pathlib import Path

from topologies.addressing import AddressPlan, plan_addresses
from topologies.errors import NetworkError
from topologies.net import check_ports_free
from topologies.nodes import SWITCH_CLASSES
from topologies.spec import FabricSpec, check_programs, load_spec
from topologies.summary import check_runnable
from topologies.targets import resolve_target, target_missing

__all__ = ["prepare"]


def prepare(topology: str | Path, target: str) -> tuple[FabricSpec, AddressPlan, str,
                                                         dict[str, Path]]:
    """(spec, plan, chosen target, P4 source per role); see the module docstring."""
    spec = load_spec(topology)
    plan = plan_addresses(spec)
    sources = check_programs(spec, plan.roles(), source=str(topology))
    check_runnable(plan)
    if os.geteuid() != 0:
        raise NetworkError("aizone needs root for network namespaces and veths: "
                           "run it with sudo (e.g. sudo make demo)")
    chosen = resolve_target(spec.target if target == "auto" and spec.target != "auto"
                            else target)
    missing = target_missing(chosen)
    if missing:
        raise NetworkError(f"target {chosen} needs {', '.join(missing)} on PATH: install it or "
                           f"use --target p4switch")
    cls = SWITCH_CLASSES[chosen]
    check_ports_free(plan, thrift="thrift" in cls.extra_ports, ctl="ctl" in cls.extra_ports)
    return spec, plan, chosen, sources
