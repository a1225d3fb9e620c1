"""Forwarding state as plain values, and their P4Runtime encoding.

Route computation produces these frozen dataclasses (names, not ids; ints
or address strings, not bytes); `encode_entity` turns one into a
`p4r.Entity` through a `P4Schema`, and `decode_entity` turns what a switch
returns back into the same dataclass, so "what we installed" and "what the
switch holds" compare with `==` whatever the byte padding.

Names defined here: `Exact`, `Lpm`, `Ternary`, `Action`, `TableEntry`,
`Member`, `Group`, `Entity`, `encode_entity`, `decode_entity`,
`describe`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from .errors import SchemaError
from .p4info import P4Schema
from .proto import p4i, p4r
from .values import decode, encode, to_int

__all__ = [
    "Action",
    "Entity",
    "Exact",
    "Group",
    "Lpm",
    "Member",
    "TableEntry",
    "Ternary",
    "decode_entity",
    "describe",
    "encode_entity",
]


@dataclass(frozen=True, kw_only=True)
class Exact:
    value: int


@dataclass(frozen=True, kw_only=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True, kw_only=True)
class Ternary:
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


Entity = TableEntry | Member | Group


def _action_pb(schema: P4Schema, action: Action) -> p4r.Action:
    info = schema.action(action.name)
    given = dict(action.params)
    wanted = [p.name for p in info.params]
    extra = sorted(set(given) - set(wanted))
    missing = [n for n in wanted if n not in given]
    if extra or missing:
        raise SchemaError(
            f"action {info.preamble.name}: "
            + (f"unknown parameter(s) {extra} " if extra else "")
            + (f"missing parameter(s) {missing}" if missing else "")
        )
    out = p4r.Action(action_id=info.preamble.id)
    for p in info.params:
        out.params.add(param_id=p.id, value=encode(given[p.name], p.bitwidth))
    return out


def _field_pb(schema: P4Schema, table: str, name: str, m: Match) -> p4r.FieldMatch:
    mf = schema.match_field(table, name)
    kind = p4i.MatchField.MatchType.Name(mf.match_type)
    fm = p4r.FieldMatch(field_id=mf.id)
    width = mf.bitwidth
    if isinstance(m, Exact):
        if kind != "EXACT":
            raise SchemaError(f"{table}.{name} is {kind}, not EXACT")
        fm.exact.value = encode(m.value, width)
    elif isinstance(m, Lpm):
        if kind != "LPM":
            raise SchemaError(f"{table}.{name} is {kind}, not LPM")
        if not 0 < m.prefix_len <= width:
            # A /0 is "don't care": P4Runtime wants the field omitted instead.
            raise SchemaError(f"{table}.{name}: prefix length {m.prefix_len} not in 1..{width}")
        mask = ((1 << m.prefix_len) - 1) << (width - m.prefix_len)
        fm.lpm.value = encode(to_int(m.value, width) & mask, width)
        fm.lpm.prefix_len = m.prefix_len
    else:
        if kind != "TERNARY":
            raise SchemaError(f"{table}.{name} is {kind}, not TERNARY")
        fm.ternary.value = encode(to_int(m.value, width) & to_int(m.mask, width), width)
        fm.ternary.mask = encode(m.mask, width)
    return fm


def encode_entity(schema: P4Schema, e: Entity) -> p4r.Entity:
    """The `p4r.Entity` for `e`; raises `SchemaError` for names or values the P4Info lacks."""
    if isinstance(e, Member):
        return p4r.Entity(action_profile_member=p4r.ActionProfileMember(
            action_profile_id=schema.action_profile_id(e.profile), member_id=e.member_id,
            action=_action_pb(schema, e.action)))
    if isinstance(e, Group):
        g = p4r.ActionProfileGroup(action_profile_id=schema.action_profile_id(e.profile),
                                   group_id=e.group_id, max_size=e.max_size)
        for mid in e.members:
            g.members.add(member_id=mid, weight=1)
        return p4r.Entity(action_profile_group=g)
    te = p4r.TableEntry(table_id=schema.table_id(e.table), priority=e.priority,
                        is_default_action=e.is_default)
    for name, m in e.match:
        te.match.append(_field_pb(schema, e.table, name, m))
    refs = [x is not None for x in (e.action, e.member_id, e.group_id)]
    if sum(refs) != 1:
        raise SchemaError(f"{e.table}: an entry needs exactly one of action, member, group")
    if e.action is not None:
        schema.check_action_in_table(e.table, e.action.name)
        te.action.action.CopyFrom(_action_pb(schema, e.action))
    elif e.member_id is not None:
        te.action.action_profile_member_id = e.member_id
    else:
        te.action.action_profile_group_id = cast(int, e.group_id)  # the one set (checked above)
    return p4r.Entity(table_entry=te)


def _action_from_pb(schema: P4Schema, a: p4r.Action) -> Action:
    info = schema.action(a.action_id)
    names = {p.id: p.name for p in info.params}
    params = tuple(sorted((names.get(p.param_id, str(p.param_id)), decode(p.value))
                          for p in a.params))
    # Keep the P4Info's parameter order, as route computation writes it.
    order = {p.name: i for i, p in enumerate(info.params)}
    return Action(name=info.preamble.name,
                  params=tuple(sorted(params, key=lambda kv: order.get(kv[0], 99))))


def decode_entity(schema: P4Schema, ent: p4r.Entity) -> Entity:
    """The dataclass for an entity read from a switch (inverse of `encode_entity`)."""
    which = ent.WhichOneof("entity")
    if which == "action_profile_member":
        m = ent.action_profile_member
        return Member(profile=schema.action_profile(m.action_profile_id).preamble.name,
                      member_id=m.member_id, action=_action_from_pb(schema, m.action))
    if which == "action_profile_group":
        g = ent.action_profile_group
        return Group(profile=schema.action_profile(g.action_profile_id).preamble.name,
                     group_id=g.group_id, members=tuple(sorted(m.member_id for m in g.members)),
                     max_size=g.max_size)
    if which != "table_entry":
        raise SchemaError(f"cannot decode a {which} entity")
    te = ent.table_entry
    table = schema.table_name(te.table_id)
    match: list[tuple[str, Match]] = []
    for fm in te.match:
        name = schema.match_field(te.table_id, fm.field_id).name
        kind = fm.WhichOneof("field_match_type")
        if kind == "exact":
            match.append((name, Exact(value=decode(fm.exact.value))))
        elif kind == "lpm":
            match.append((name, Lpm(value=decode(fm.lpm.value), prefix_len=fm.lpm.prefix_len)))
        elif kind == "ternary":
            match.append((name, Ternary(value=decode(fm.ternary.value),
                                        mask=decode(fm.ternary.mask))))
        else:
            raise SchemaError(f"{table}.{name}: {kind} matches are not supported here")
    order = {mf.name: i for i, mf in enumerate(schema.table(te.table_id).match_fields)}
    match.sort(key=lambda kv: order.get(kv[0], 99))
    kind = te.action.WhichOneof("type")
    action = member = group = None
    if kind == "action":
        action = _action_from_pb(schema, te.action.action)
    elif kind == "action_profile_member_id":
        member = te.action.action_profile_member_id
    elif kind == "action_profile_group_id":
        group = te.action.action_profile_group_id
    return TableEntry(table=table, match=tuple(match), action=action, member_id=member,
                      group_id=group, priority=te.priority, is_default=te.is_default_action)


def describe(e: Entity) -> str:
    """One line for people, e.g. 'FabricIngress.routing.ipv4_route dst_addr=10.0.0.3/32'."""
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
