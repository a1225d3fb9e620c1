"""The aizone controller: the intended state of a fabric, the daemon that keeps it, its API and CLI.

Public surface: the intent values (`TableEntry`, `Member`, `Group`,
`Action`, `Exact`, `Lpm`, `Ternary`), the pure computations
(`compute_routes` and its `SwitchEntries`, `compute_all`, `compute_qos`,
`FabricIntent`, `diff`),
and the exceptions (`ControllerError` and its subclasses). These names
load from their modules on first use, so importing the package, or one
module of it (`aizone`'s commands import the client), loads nothing else;
the core's modules (as the flow model and its Ray workers use them) load
numpy, networkx and the topology, never finsy, gRPC or HTTP
(`tests/unit/controller/test_core.py` holds that). The daemon's client is
`controller.client.ApiClient`, the daemon `controller.daemon`; the `aizone`
command is the application layer above (`aizone.cli`); `docs/architecture.md`
maps the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topologies.lazyexports import lazy_exports

if TYPE_CHECKING:
    from .entities import Action, Exact, Group, Lpm, Member, TableEntry, Ternary
    from .errors import BuildError, ControllerError, P4RuntimeError, SchemaError, WriteError
    from .intent import FabricIntent, diff
    from .qos import compute_qos
    from .routes import SwitchEntries, compute_all, compute_routes

__getattr__ = lazy_exports(__name__, {
    "Action": "entities",
    "Exact": "entities",
    "Group": "entities",
    "Lpm": "entities",
    "Member": "entities",
    "TableEntry": "entities",
    "Ternary": "entities",
    "BuildError": "errors",
    "ControllerError": "errors",
    "P4RuntimeError": "errors",
    "SchemaError": "errors",
    "WriteError": "errors",
    "FabricIntent": "intent",
    "diff": "intent",
    "compute_qos": "qos",
    "SwitchEntries": "routes",
    "compute_all": "routes",
    "compute_routes": "routes",
})


__all__ = [
    "Action",
    "BuildError",
    "ControllerError",
    "Exact",
    "FabricIntent",
    "Group",
    "Lpm",
    "Member",
    "P4RuntimeError",
    "SchemaError",
    "SwitchEntries",
    "TableEntry",
    "Ternary",
    "WriteError",
    "compute_all",
    "compute_qos",
    "compute_routes",
    "diff",
]
