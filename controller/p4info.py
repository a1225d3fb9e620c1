"""Names <-> ids through a P4Info: tables, match fields, actions, params, profiles, counters.

`P4Schema(p4info)` indexes a P4Info message once. Every look-up takes the
fully qualified name (`FabricIngress.routing.ipv4_route`) or the P4Info
alias (`ipv4_route`) when that is unique, and raises `SchemaError` naming
what was asked and, for a near miss, what exists.

Names defined here: `P4Schema`, `load_p4info`.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from google.protobuf import text_format

from .errors import SchemaError
from .proto import p4i

__all__ = ["P4Schema", "load_p4info"]


def load_p4info(path: str | Path) -> p4i.P4Info:
    """Read a P4Info file: text format (.txt, .txtpb, .pb.txt) or binary."""
    p = Path(path)
    data = p.read_bytes()
    info = p4i.P4Info()
    try:
        text_format.Parse(data.decode("utf-8"), info)
    except (UnicodeDecodeError, text_format.ParseError):
        try:
            info.ParseFromString(data)
        except Exception as exc:  # noqa: BLE001 - protobuf raises DecodeError and friends
            raise SchemaError(f"{path}: not a P4Info file ({exc.__class__.__name__})") from None
    return info


class _Index:
    """Objects of one kind by id, by full name and by (unique) alias."""

    def __init__(self, kind: str, objs: Any) -> None:
        self.kind = kind
        self.by_id: dict[int, Any] = {}
        self.by_name: dict[str, Any] = {}
        aliases: dict[str, list[Any]] = {}
        for obj in objs:
            pre = obj.preamble
            self.by_id[pre.id] = obj
            self.by_name[pre.name] = obj
            if pre.alias:
                aliases.setdefault(pre.alias, []).append(obj)
            # The last dotted component works too when unambiguous.
            aliases.setdefault(pre.name.rsplit(".", 1)[-1], []).append(obj)
        for alias, found in aliases.items():
            unique = {o.preamble.id: o for o in found}
            if len(unique) == 1 and alias not in self.by_name:
                self.by_name[alias] = found[0]

    def get(self, name: str | int) -> Any:
        if isinstance(name, int):
            try:
                return self.by_id[name]
            except KeyError:
                raise SchemaError(f"no {self.kind} with id {name}") from None
        try:
            return self.by_name[name]
        except KeyError:
            near = difflib.get_close_matches(name, list(self.by_name), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise SchemaError(f"no {self.kind} named {name!r} in the P4Info{hint}") from None

    def names(self) -> list[str]:
        return sorted(o.preamble.name for o in self.by_id.values())


class P4Schema:
    """Look-ups by name and by id over one P4Info."""

    def __init__(self, p4info: p4i.P4Info) -> None:
        self.p4info = p4info
        self.tables = _Index("table", p4info.tables)
        self.actions = _Index("action", p4info.actions)
        self.action_profiles = _Index("action profile", p4info.action_profiles)
        self.counters = _Index("counter", p4info.counters)
        self.direct_counters = _Index("direct counter", p4info.direct_counters)
        self.meters = _Index("meter", p4info.meters)
        self.registers = _Index("register", p4info.registers)

    @classmethod
    def from_file(cls, path: str | Path) -> P4Schema:
        return cls(load_p4info(path))

    # --- tables ------------------------------------------------------------

    def table(self, name: str | int) -> p4i.Table:
        return self.tables.get(name)

    def table_id(self, name: str | int) -> int:
        return self.table(name).preamble.id

    def table_name(self, table_id: int) -> str:
        return self.table(table_id).preamble.name

    def match_field(self, table: str | int, field: str | int) -> p4i.MatchField:
        t = self.table(table)
        for mf in t.match_fields:
            if mf.name == field or mf.id == field:
                return mf
        names = [mf.name for mf in t.match_fields]
        raise SchemaError(f"table {t.preamble.name} has no match field {field!r} (has {names})")

    def table_actions(self, table: str | int) -> list[str]:
        return [self.actions.get(ref.id).preamble.name for ref in self.table(table).action_refs]

    def implementation(self, table: str | int) -> str | None:
        """The action profile / selector a table uses, or None for a direct table."""
        impl = self.table(table).implementation_id
        return self.action_profiles.get(impl).preamble.name if impl else None

    # --- actions -----------------------------------------------------------

    def action(self, name: str | int) -> p4i.Action:
        return self.actions.get(name)

    def action_id(self, name: str | int) -> int:
        return self.action(name).preamble.id

    def action_name(self, action_id: int) -> str:
        return self.action(action_id).preamble.name

    def param(self, action: str | int, param: str | int) -> p4i.Action.Param:
        a = self.action(action)
        for p in a.params:
            if p.name == param or p.id == param:
                return p
        names = [p.name for p in a.params]
        raise SchemaError(f"action {a.preamble.name} has no parameter {param!r} (has {names})")

    def check_action_in_table(self, table: str | int, action: str | int) -> None:
        t = self.table(table)
        aid = self.action_id(action)
        if aid not in {ref.id for ref in t.action_refs}:
            raise SchemaError(
                f"action {self.action_name(aid)} is not an action of table {t.preamble.name}"
            )

    # --- other objects -----------------------------------------------------

    def action_profile(self, name: str | int) -> p4i.ActionProfile:
        return self.action_profiles.get(name)

    def action_profile_id(self, name: str | int) -> int:
        return self.action_profile(name).preamble.id

    def counter(self, name: str | int) -> p4i.Counter:
        return self.counters.get(name)

    def counter_id(self, name: str | int) -> int:
        return self.counter(name).preamble.id

    def counter_name(self, counter_id: int) -> str:
        return self.counter(counter_id).preamble.name

    def direct_counter(self, name: str | int) -> p4i.DirectCounter:
        return self.direct_counters.get(name)

    def summary(self) -> dict[str, list[str]]:
        """Every object's full name, by kind (for `status` and debugging)."""
        return {
            "tables": self.tables.names(),
            "actions": self.actions.names(),
            "action_profiles": self.action_profiles.names(),
            "counters": self.counters.names(),
            "direct_counters": self.direct_counters.names(),
        }
