"""Fabric topologies: the spec (YAML presets), its addressing plan, its graph, its Mininet network.

Topology is data, the network is runtime: `load_spec` -> `plan_addresses` ->
(`build_graph` for analysis | `FabricNet` to run it in Mininet with a
switch class from `SWITCH_CLASSES`). The runtime names (`FabricNet`,
`FabricTopo`, `P4SwitchNode`, `Bmv2SwitchNode`, `SWITCH_CLASSES`,
`NetworkError`, `cleanup`) import Mininet, so they load on first use: code
that only needs addresses does not pay for it.
"""

from __future__ import annotations

from typing import Any

from .addressing import (
    AddressPlan,
    HostPlan,
    LinkPlan,
    NicPlan,
    PortPlan,
    SwitchPlan,
    plan_addresses,
)
from .graph import build_graph
from .spec import FabricSpec, SpecError, check_programs, load_spec, parse_spec

_RUNTIME = {
    "FabricNet": "net",
    "FabricTopo": "net",
    "P4SwitchNode": "nodes",
    "Bmv2SwitchNode": "nodes",
    "SWITCH_CLASSES": "nodes",
    "NetworkError": "nodes",
    "cleanup": "runstate",
}


def __getattr__(name: str) -> Any:
    if name in _RUNTIME:
        import importlib

        return getattr(importlib.import_module(f".{_RUNTIME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SWITCH_CLASSES",
    "AddressPlan",
    "Bmv2SwitchNode",
    "FabricNet",
    "FabricTopo",
    "NetworkError",
    "P4SwitchNode",
    "cleanup",
    "FabricSpec",
    "HostPlan",
    "LinkPlan",
    "NicPlan",
    "PortPlan",
    "SpecError",
    "SwitchPlan",
    "build_graph",
    "check_programs",
    "load_spec",
    "parse_spec",
    "plan_addresses",
]
