"""The aizone controller: P4Runtime sessions, route computation, bring-up, demo, CLI.

Public surface: `SwitchSession` (one P4Runtime session), `P4Schema` (names
<-> ids), `FabricController` (all switches of a plan), `compute_routes`,
`bring_up`, `run_demo`, and the exceptions (`ControllerError` and its
subclasses). The `aizone` console script is `controller.cli:main`.
"""

from __future__ import annotations

from .entities import Action, Exact, Group, Lpm, Member, TableEntry, Ternary
from .errors import BuildError, ControllerError, P4RuntimeError, SchemaError, WriteError
from .fabric import FabricController
from .p4info import P4Schema
from .p4rt import SwitchSession
from .routes import SwitchEntries, compute_all, compute_routes

__all__ = [
    "Action",
    "BuildError",
    "ControllerError",
    "Exact",
    "FabricController",
    "Group",
    "Lpm",
    "Member",
    "P4RuntimeError",
    "P4Schema",
    "SchemaError",
    "SwitchEntries",
    "SwitchSession",
    "TableEntry",
    "Ternary",
    "WriteError",
    "compute_all",
    "compute_routes",
]
