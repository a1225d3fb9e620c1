"""The switch targets a fabric can run on, and where its PFC can run: names only, no Mininet.

`TARGETS` names the targets (`topologies.nodes.SWITCH_CLASSES` has one
Mininet node class per name, in this order); `target_missing` says which
of a target's tools are not on PATH, `resolve_target` turns `auto` into
one; `Pfc` is the `--pfc` choice. The `aizone` command builds its parser
from these, so they import nothing heavier than the standard library.

Names defined here: `TARGETS`, `Pfc`, `target_missing`, `resolve_target`.
"""

from __future__ import annotations

import shutil
from enum import StrEnum

__all__ = ["TARGETS", "Pfc", "resolve_target", "target_missing"]

# Tools each target needs on PATH (the compiler, then the switch), by target.
_TOOLS: dict[str, tuple[str, ...]] = {"p4switch": (), "bmv2": ("p4c-bm2-ss", "simple_switch_grpc")}

TARGETS: tuple[str, ...] = tuple(_TOOLS)
"""The targets: "p4switch" (built in) and "bmv2" (BMv2's simple_switch_grpc)."""


def target_missing(target: str) -> list[str]:
    """The tools `target` needs that are not on PATH (empty: it can run)."""
    return [t for t in _TOOLS[target] if shutil.which(t) is None]


class Pfc(StrEnum):
    """Where a fabric's PFC runs (`aizone up --pfc`; None: the target's default)."""

    NATIVE = "native"
    """The target's traffic manager (p4switch's 802.1Qbb; BMv2 has none)."""
    PROGRAM = "program"
    """The role programs' own (p4/include/control/pfc.p4), configured over P4Runtime."""


def resolve_target(name: str) -> str:
    """`auto` -> "bmv2" when BMv2 and p4c are on PATH, else "p4switch"; others unchanged."""
    if name == "auto":
        return "bmv2" if not target_missing("bmv2") else "p4switch"
    if name not in TARGETS:
        raise ValueError(f"unknown target {name!r} (choose from auto, {', '.join(TARGETS)})")
    return name
