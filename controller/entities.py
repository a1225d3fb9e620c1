"""Forwarding state as plain values: what the controller intends and what it reads back.

Route and QoS computation produce these frozen dataclasses (P4Info names,
not ids; ints, not bytes); `controller.wire` turns them into finsy's
entities for the wire and turns what a switch returns back into the same
values, so "what we intend" and "what the switch holds" compare with `==`
(and hash, for diffs) whatever the byte padding.

Names defined here: `Exact`, `Lpm`, `Ternary`, `Match`, `Action`,
`TableEntry`, `Member`, `Group`, `CloneSession`, `Entity`, `UpdateKind`,
`describe`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Action",
    "CloneSession",
    "Entity",
    "Exact",
    "Group",
    "Lpm",
    "Member",
    "TableEntry",
    "Ternary",
    "UpdateKind",
    "describe",
]

# What a write does to an entity (P4Runtime's Update.Type, by name).
UpdateKind = Literal["insert", "modify", "delete"]


@dataclass(frozen=True, kw_only=True)
class Exact:
    """An exact match: the field equals `value`."""

    value: int


@dataclass(frozen=True, kw_only=True)
class Lpm:
    """A longest-prefix match: the first `prefix_len` bits of the field equal `value`'s."""

    value: int
    prefix_len: int


@dataclass(frozen=True, kw_only=True)
class Ternary:
    """A ternary match: the field's bits set in `mask` equal `value`'s."""

    value: int
    mask: int


Match = Exact | Lpm | Ternary


@dataclass(frozen=True, kw_only=True)
class Action:
    """An action call: full action name and (param name, int value) pairs."""

    name: str
    params: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, kw_only=True)
class TableEntry:
    """A table entry (or, with `is_default`, a table's default action).

    Exactly one of `action`, `member_id`, `group_id` is set: a direct action,
    or a reference into the table's action profile / selector.
    """

    table: str
    match: tuple[tuple[str, Match], ...] = ()
    action: Action | None = None
    member_id: int | None = None
    group_id: int | None = None
    priority: int = 0
    is_default: bool = False

    def key(self) -> tuple[str, tuple[tuple[str, Match], ...], int, bool]:
        """What identifies the entry in its table (for diffs and deletes)."""
        return (self.table, self.match, self.priority, self.is_default)


@dataclass(frozen=True, kw_only=True)
class Member:
    """An action profile member: an id and the action it runs."""

    profile: str
    member_id: int
    action: Action


@dataclass(frozen=True, kw_only=True)
class Group:
    """An action selector group: member ids (weight 1 each) and a size bound."""

    profile: str
    group_id: int
    members: tuple[int, ...]
    max_size: int = 0


@dataclass(frozen=True, kw_only=True)
class CloneSession:
    """A clone session of the packet replication engine: (egress port, instance) replicas,
    copies truncated to `packet_length_bytes` (0: whole)."""

    session_id: int
    replicas: tuple[tuple[int, int], ...]
    packet_length_bytes: int = 0


Entity = TableEntry | Member | Group | CloneSession


def describe(e: Entity) -> str:
    """One line for people, e.g. 'FabricIngress.routing.ipv4_route dst_addr=10.0.0.3/32'."""
    if isinstance(e, CloneSession):
        return f"clone session {e.session_id}"
    if isinstance(e, Member):
        return f"{e.profile} member {e.member_id}"
    if isinstance(e, Group):
        return f"{e.profile} group {e.group_id}"
    if e.is_default:
        return f"{e.table} default action"
    parts = []
    for name, m in e.match:
        if isinstance(m, Lpm):
            parts.append(f"{name}={_ip_or_int(m.value)}/{m.prefix_len}")
        elif isinstance(m, Ternary):
            parts.append(f"{name}={m.value:#x}&&&{m.mask:#x}")
        else:
            parts.append(f"{name}={_ip_or_int(m.value)}")
    return f"{e.table} {' '.join(parts)}".strip()


def _ip_or_int(n: int) -> str:
    if n > 0xFFFF and n <= 0xFFFFFFFF:
        return ".".join(str((n >> s) & 0xFF) for s in (24, 16, 8, 0))
    return str(n)
