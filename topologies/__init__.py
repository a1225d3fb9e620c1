"""Fabric topologies: the spec (YAML presets), its addressing plan, its graph, its Mininet network.

Topology is data, the network is runtime: `load_spec` -> `plan_addresses` ->
(`build_graph` and `summarize` for analysis | `FabricNet` to run it in
Mininet with a switch class from `SWITCH_CLASSES`, then `FabricRuntime` to
act on it, also from `run.json` after a restart). `check_runnable` says
whether a plan is small enough to run here. The runtime names
(`FabricNet`, `FabricTopo`, `FabricRuntime`, `P4SwitchNode`,
`Bmv2SwitchNode`, `SWITCH_CLASSES`, `NetworkError`, `cleanup`) import
Mininet, so they load on first use: code that only needs addresses does not
pay for it.
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
from .ports import PortSettings, SwitchSettings, switch_settings
from .spec import (
    FabricSpec,
    LinkSpec,
    QosSpec,
    SpecError,
    TrafficClass,
    check_programs,
    load_spec,
    parse_spec,
)
from .summary import MAX_PROCESSES, check_runnable, render_summary, summarize

_RUNTIME = {
    "FabricNet": "net",
    "FabricTopo": "net",
    "FabricRuntime": "attach",
    "P4SwitchNode": "nodes",
    "Bmv2SwitchNode": "nodes",
    "SWITCH_CLASSES": "nodes",
    "NetworkError": "nodes",
    "SwitchRecord": "nodes",
    "cleanup": "runstate",
}


def __getattr__(name: str) -> Any:
    if name in _RUNTIME:
        import importlib

        return getattr(importlib.import_module(f".{_RUNTIME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MAX_PROCESSES",
    "SWITCH_CLASSES",
    "AddressPlan",
    "Bmv2SwitchNode",
    "FabricNet",
    "FabricRuntime",
    "FabricSpec",
    "FabricTopo",
    "HostPlan",
    "LinkPlan",
    "LinkSpec",
    "NetworkError",
    "NicPlan",
    "P4SwitchNode",
    "PortPlan",
    "PortSettings",
    "QosSpec",
    "SpecError",
    "SwitchPlan",
    "SwitchRecord",
    "SwitchSettings",
    "TrafficClass",
    "build_graph",
    "check_programs",
    "check_runnable",
    "cleanup",
    "load_spec",
    "parse_spec",
    "plan_addresses",
    "render_summary",
    "summarize",
    "switch_settings",
]
