"""The aizone controller: the intended state of a fabric, the daemon that keeps it, its API and CLI.

Public surface: the intent values (`TableEntry`, `Member`, `Group`,
`Action`, `Exact`, `Lpm`, `Ternary`), the pure computations
(`compute_routes`, `compute_all`, `compute_qos`, `FabricIntent`, `diff`),
the daemon's client (`ApiClient`; the daemon itself is `controller.daemon`), and the exceptions
(`ControllerError` and its subclasses). The `aizone` console script is
`aizone.cli:main`; `docs/architecture.md` maps the modules.
"""

from __future__ import annotations

from .client import ApiClient, ApiError, NotRunning
from .entities import Action, Exact, Group, Lpm, Member, TableEntry, Ternary
from .errors import BuildError, ControllerError, P4RuntimeError, SchemaError, WriteError
from .intent import FabricIntent, diff
from .qos import compute_qos
from .routes import SwitchEntries, compute_all, compute_routes

__all__ = [
    "Action",
    "ApiClient",
    "ApiError",
    "BuildError",
    "ControllerError",
    "Exact",
    "FabricIntent",
    "Group",
    "Lpm",
    "Member",
    "NotRunning",
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
