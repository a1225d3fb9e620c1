"""Fabric topologies: the spec (YAML presets), its addressing plan, its graph, its Mininet network.

Topology is data, the network is runtime: `load_spec` -> `plan_addresses` ->
(`build_graph` and `summarize` for analysis | `FabricNet` to run it in
Mininet with a switch class from `SWITCH_CLASSES`, then `FabricRuntime` to
act on it, also from `run.json` after a restart). `check_runnable` says
whether a plan is small enough to run here. Every name
here loads from its module on first use (`lazyexports`): the runtime ones
(`FabricNet`, `FabricTopo`, `FabricRuntime`, `P4SwitchNode`,
`Bmv2SwitchNode`, `SWITCH_CLASSES`, `NetworkError`, `cleanup`) import
Mininet, the plan's networkx, and code that needs one module (the `aizone`
command, which reads `run.json`) pays for neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazyexports import lazy_exports

if TYPE_CHECKING:
    from .addressing import (
        AddressPlan,
        HostPlan,
        LinkPlan,
        NicPlan,
        PortPlan,
        SwitchPlan,
        plan_addresses,
    )
    from .attach import FabricRuntime
    from .errors import NetworkError
    from .graph import build_graph
    from .net import FabricNet, FabricTopo
    from .nodes import SWITCH_CLASSES, Bmv2SwitchNode, P4SwitchNode
    from .ports import PortSettings, SwitchSettings, switch_settings
    from .runstate import cleanup
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
    from .switchproc import SwitchRecord

__getattr__ = lazy_exports(__name__, {
    **dict.fromkeys(("AddressPlan", "HostPlan", "LinkPlan", "NicPlan", "PortPlan", "SwitchPlan",
                     "plan_addresses"), "addressing"),
    "build_graph": "graph",
    **dict.fromkeys(("PortSettings", "SwitchSettings", "switch_settings"), "ports"),
    **dict.fromkeys(("FabricSpec", "LinkSpec", "QosSpec", "SpecError", "TrafficClass",
                     "check_programs", "load_spec", "parse_spec"), "spec"),
    **dict.fromkeys(("MAX_PROCESSES", "check_runnable", "render_summary", "summarize"),
                    "summary"),
    **dict.fromkeys(("FabricNet", "FabricTopo"), "net"),
    "FabricRuntime": "attach",
    **dict.fromkeys(("P4SwitchNode", "Bmv2SwitchNode", "SWITCH_CLASSES"), "nodes"),
    "NetworkError": "errors",
    "SwitchRecord": "switchproc",
    "cleanup": "runstate",
})


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
