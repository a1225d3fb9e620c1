"""Controller roles: what a named role may write, read and receive (P4Runtime spec §5.3-5.4).

P4Runtime leaves the role definition scheme out of scope (`Role.config` is an
`Any` agreed on out of band). p4switch implements the one open-source servers
use, Stratum's `stratum.P4RoleConfig`:

    message P4RoleConfig {
      message PacketFilter { uint32 metadata_id = 1; bytes value = 2; }
      repeated uint32 exclusive_p4_ids = 1;
      repeated uint32 shared_p4_ids = 2;
      PacketFilter packet_in_filter = 3;
      bool receives_packet_ins = 4;
      bool can_push_pipeline = 5;
    }

What is enforced:

* The default role (name "") and a named role without a config have full
  pipeline access. A config on the default role, a config of any other type,
  or one whose exclusive ids another role already claims, is INVALID_ARGUMENT
  on the arbitration update (the stream ends, §5.4).
* A role with a config may Write only entities whose P4 id (table, action
  profile, counter, meter, register, digest, value set; the table for direct
  counters/meters) is in its exclusive or shared ids; other updates fail with
  PERMISSION_DENIED, one by one. Entities without a P4 id (multicast groups,
  clone sessions) are outside every configured role.
* SetForwardingPipelineConfig needs `can_push_pipeline`.
* PacketIns go to a configured role's primary only with
  `receives_packet_ins`, and only packets whose metadata `metadata_id` equals
  `value` when a `packet_in_filter` is set. Digests and idle-timeout
  notifications go to it only for its digests and tables.
* A ReadRequest naming a role returns only that role's entities (wildcards
  are narrowed to them); an unknown role name is NOT_FOUND.

Names defined here: `P4RoleConfig` (the message class, to build configs),
`ROLE_CONFIG_TYPE`, `RoleAccess`, `parse_role_config`, `entity_p4_id`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from p4switch.translate import INVALID_ARGUMENT, P4RTError


def _build_message_class() -> Any:
    """stratum.P4RoleConfig from a descriptor built here, in a private pool (no generated code)."""
    f = descriptor_pb2.FileDescriptorProto(name="p4switch/p4_role_config.proto", package="stratum",
                                           syntax="proto3")
    m = f.message_type.add(name="P4RoleConfig")
    pf = m.nested_type.add(name="PacketFilter")
    F = descriptor_pb2.FieldDescriptorProto
    pf.field.add(name="metadata_id", number=1, type=F.TYPE_UINT32, label=F.LABEL_OPTIONAL)
    pf.field.add(name="value", number=2, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
    m.field.add(name="exclusive_p4_ids", number=1, type=F.TYPE_UINT32, label=F.LABEL_REPEATED)
    m.field.add(name="shared_p4_ids", number=2, type=F.TYPE_UINT32, label=F.LABEL_REPEATED)
    m.field.add(name="packet_in_filter", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                type_name=".stratum.P4RoleConfig.PacketFilter")
    m.field.add(name="receives_packet_ins", number=4, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL)
    m.field.add(name="can_push_pipeline", number=5, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("stratum.P4RoleConfig"))


P4RoleConfig = _build_message_class()
ROLE_CONFIG_TYPE = "type.googleapis.com/stratum.P4RoleConfig"


@dataclass(frozen=True, kw_only=True)
class RoleAccess:
    """A parsed role config (see module docstring)."""

    exclusive: frozenset[int]
    shared: frozenset[int]
    receives_packet_ins: bool = False
    can_push_pipeline: bool = False
    packet_in_filter: tuple[int, int] | None = None  # (metadata id, value as an int)

    def allows(self, p4_id: int | None) -> bool:
        """Whether the P4 object with id `p4_id` is the role's (exclusive or shared); None: no."""
        return p4_id is not None and (p4_id in self.exclusive or p4_id in self.shared)

    def wants_packet_in(self, metadata: Any) -> bool:
        """Whether the role gets a packet-in with this metadata (its filter, if any)."""
        if not self.receives_packet_ins:
            return False
        if self.packet_in_filter is None:
            return True
        mid, value = self.packet_in_filter
        return any(m.metadata_id == mid and int.from_bytes(m.value, "big") == value for m in metadata)


def parse_role_config(role_name: str, config: Any) -> RoleAccess | None:
    """The access a (role name, Role.config Any or None) grants; None is full access."""
    if config is None:
        return None
    if not role_name:
        raise P4RTError(INVALID_ARGUMENT, "the default role has full pipeline access: "
                        "it takes no role config")
    if config.type_url.rpartition("/")[2] != "stratum.P4RoleConfig":
        raise P4RTError(INVALID_ARGUMENT, f"role config {config.type_url!r} is not a "
                        f"stratum.P4RoleConfig (the role scheme p4switch implements)")
    msg = P4RoleConfig()
    try:
        msg.ParseFromString(config.value)
    except Exception as e:
        raise P4RTError(INVALID_ARGUMENT, f"role config does not decode: {e}") from None
    flt = None
    if msg.HasField("packet_in_filter"):
        flt = (msg.packet_in_filter.metadata_id, int.from_bytes(msg.packet_in_filter.value, "big"))
    return RoleAccess(exclusive=frozenset(msg.exclusive_p4_ids), shared=frozenset(msg.shared_p4_ids),
                      receives_packet_ins=msg.receives_packet_ins,
                      can_push_pipeline=msg.can_push_pipeline, packet_in_filter=flt)


# Entity oneof name -> field holding its P4 id (None: the entity has no P4 id).
_ID_FIELD = {
    "table_entry": "table_id",
    "action_profile_member": "action_profile_id",
    "action_profile_group": "action_profile_id",
    "counter_entry": "counter_id",
    "meter_entry": "meter_id",
    "register_entry": "register_id",
    "digest_entry": "digest_id",
    "value_set_entry": "value_set_id",
    "extern_entry": "extern_id",
    "packet_replication_engine_entry": None,
}


def entity_p4_id(which: str, msg: Any) -> int | None:
    """The P4 id an entity belongs to (0 for a wildcard; None when it has none)."""
    if which in ("direct_counter_entry", "direct_meter_entry"):
        return msg.table_entry.table_id
    name = _ID_FIELD.get(which)
    return getattr(msg, name) if name else None


__all__ = ["P4RoleConfig", "ROLE_CONFIG_TYPE", "RoleAccess", "parse_role_config", "entity_p4_id"]
