"""The controller's entity values on the wire: conversion to and from finsy's entities.

Route and QoS computation produce `controller.entities` values (names and
ints, hashable, compared with `==`); the sessions talk P4Runtime through
finsy, whose entities encode themselves against the switch's P4Info. This
module is the one place that maps one onto the other:

- `to_finsy(entity)`: a `controller.entities` value -> a finsy entity
  (`P4TableEntry`, `P4ActionProfileMember`, `P4ActionProfileGroup`).
- `from_finsy(entity, schema)`: what a switch returned -> the value, with
  full P4Info names, ints for every field and parameter, match fields in
  P4Info order, so that "intended" and "read back" compare with `==`.
- `encode(entity, schema)`: its `p4r.Entity`, or `SchemaError` naming the
  entity when the P4Info cannot hold it (a name, a width, a match kind).
- `update(kind, entity)`: a finsy update (`+`, `~`, `-` of the entity).
- `write_error(switch, exc, what)`: a finsy `P4ClientError` from a Write as
  the controller's `WriteError`, one `UpdateError` per failed update.

Names defined here: `to_finsy`, `from_finsy`, `encode`, `update`,
`write_error`, `as_int`, `UpdateKind`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

import finsy as fy
from finsy.p4client import P4ClientError
from finsy.p4entity import P4Replica

from .entities import (
    Action,
    CloneSession,
    Entity,
    Exact,
    Group,
    Lpm,
    Match,
    Member,
    TableEntry,
    Ternary,
    UpdateKind,
    describe,
)
from .errors import SchemaError, UpdateError, WriteError

__all__ = ["UpdateKind", "as_int", "encode", "from_finsy", "to_finsy", "update", "write_error"]


def as_int(value: Any) -> int:
    """An int from what finsy decodes (int, IP address, MAC address, bytes)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        return int(value)
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SchemaError(f"cannot read {value!r} as an integer") from None


def _match_value(m: Match) -> Any:
    if isinstance(m, Exact):
        return m.value
    if isinstance(m, Lpm):
        return (m.value, m.prefix_len)
    return (m.value, m.mask)


def _action(a: Action) -> fy.P4TableAction:
    return fy.P4TableAction(a.name, **dict(a.params))


def to_finsy(e: Entity) -> Any:
    """The finsy entity for `e` (encoded later against the switch's P4Info)."""
    if isinstance(e, CloneSession):
        return fy.P4CloneSessionEntry(e.session_id, packet_length_bytes=e.packet_length_bytes,
                                      replicas=[(port, inst) for port, inst in e.replicas])
    if isinstance(e, Member):
        return fy.P4ActionProfileMember(e.profile, member_id=e.member_id, action=_action(e.action))
    if isinstance(e, Group):
        return fy.P4ActionProfileGroup(
            e.profile, group_id=e.group_id, max_size=e.max_size,
            members=[fy.P4Member(m, weight=1) for m in e.members])
    action: fy.P4TableAction | fy.P4IndirectAction | None
    if e.action is not None:
        action = _action(e.action)
    elif e.member_id is not None:
        action = fy.P4IndirectAction(member_id=e.member_id)
    elif e.group_id is not None:
        action = fy.P4IndirectAction(group_id=e.group_id)
    else:
        action = None
    match = fy.P4TableMatch({name: _match_value(m) for name, m in e.match}) if e.match else None
    return fy.P4TableEntry(e.table, match=match, action=action, priority=e.priority,
                           is_default_action=e.is_default)


def _action_from(schema: fy.P4Schema, a: fy.P4TableAction) -> Action:
    info = schema.actions[a.name]
    order = {p.name: i for i, p in enumerate(info.params)}
    params = sorted(((info.params[k].name, as_int(v)) for k, v in (a.args or {}).items()),
                    key=lambda kv: order.get(kv[0], len(order)))
    return Action(name=info.name, params=tuple(params))


def _match_from(table: Any, name: str, value: Any) -> Match:
    field = table.match_fields[name]
    kind = field.match_type.name
    if kind == "EXACT":
        return Exact(value=as_int(value))
    if kind == "LPM":
        v, plen = value
        return Lpm(value=as_int(v), prefix_len=int(plen))
    if kind == "TERNARY":
        v, mask = value
        return Ternary(value=as_int(v), mask=as_int(mask))
    raise SchemaError(f"{table.name}.{field.name}: {kind} matches are not used by the controller")


def from_finsy(e: Any, schema: fy.P4Schema) -> Entity:
    """The `controller.entities` value of an entity a switch returned."""
    if isinstance(e, fy.P4CloneSessionEntry):
        return CloneSession(session_id=e.session_id, packet_length_bytes=e.packet_length_bytes,
                            replicas=tuple(sorted(_replica(r) for r in e.replicas)))
    if isinstance(e, fy.P4ActionProfileMember):
        profile = schema.action_profiles[e.action_profile_id]
        if e.action is None:
            raise SchemaError(f"{profile.name} member {e.member_id} has no action")
        return Member(profile=profile.name, member_id=e.member_id,
                      action=_action_from(schema, e.action))
    if isinstance(e, fy.P4ActionProfileGroup):
        profile = schema.action_profiles[e.action_profile_id]
        return Group(profile=profile.name, group_id=e.group_id,
                     members=tuple(sorted(m.member_id for m in e.members or ())),
                     max_size=e.max_size)
    if not isinstance(e, fy.P4TableEntry):
        raise SchemaError(f"cannot read a {type(e).__name__} as a controller entity")
    table = schema.tables[e.table_id]
    order = {f.alias: i for i, f in enumerate(table.match_fields)}
    match = tuple(
        (table.match_fields[k].name, _match_from(table, k, v))
        for k, v in sorted((e.match or {}).items(), key=lambda kv: order.get(kv[0], len(order))))
    action = member = group = None
    if isinstance(e.action, fy.P4TableAction):
        action = _action_from(schema, e.action)
    elif isinstance(e.action, fy.P4IndirectAction):
        member, group = e.action.member_id, e.action.group_id
    return TableEntry(table=table.name, match=match, action=action, member_id=member,
                      group_id=group, priority=e.priority, is_default=e.is_default_action)


def _replica(r: Any) -> tuple[int, int]:
    if isinstance(r, P4Replica):
        return as_int(r.port), int(r.instance)
    if isinstance(r, tuple):
        return as_int(r[0]), int(r[1])
    return as_int(r), 0


def encode(e: Entity, schema: fy.P4Schema) -> Any:
    """The `p4r.Entity` of `e`; `SchemaError` (naming the entity) when the P4Info cannot hold it.

    Match kinds are checked too: finsy would take an exact value for an LPM
    field as a full-length prefix, which is not what an `Exact` means.
    """
    table = schema.tables.get(e.table) if isinstance(e, TableEntry) else None
    if isinstance(e, TableEntry) and table is not None:
        for name, m in e.match:
            field = table.match_fields.get(name)
            want = _KINDS[type(m)]
            kind = str(getattr(field.match_type, "name", field.match_type)) if field else want
            if kind != want:
                raise SchemaError(f"{describe(e)}: {name} is {kind}, not {want}")
    try:
        return to_finsy(e).encode(schema)
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        raise SchemaError(f"{describe(e)}: {exc}") from None


_KINDS: dict[type, str] = {Exact: "EXACT", Lpm: "LPM", Ternary: "TERNARY"}


def update(kind: UpdateKind, e: Entity) -> Any:
    """A finsy update of `e`: insert (+), modify (~) or delete (-)."""
    fe = to_finsy(e)
    if kind == "insert":
        return +fe
    if kind == "modify":
        return ~fe
    return -fe


def write_error(switch: str, exc: P4ClientError, what: Sequence[str]) -> WriteError:
    """A failed Write as a `WriteError` naming each failed update by index."""
    code = exc.code.name if exc.code is not None else "UNKNOWN"
    errors = [
        UpdateError(index=i, code=err.canonical_code.name, message=err.message,
                    what=what[i] if i < len(what) else "")
        for i, err in sorted(exc.details.items())
    ]
    if not errors:
        errors = [UpdateError(index=0, code=code, message=exc.message, what="(whole batch)")]
    return WriteError(switch, len(what), errors, code)
