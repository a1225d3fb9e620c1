"""Control-plane state of a running program, in target terms (no protobuf).

This is the vocabulary between the P4Runtime server (which translates
P4Runtime entities into these objects using the P4Info) and the pipeline
(which matches packets against them). Values are Python ints; names are the
P4Info fully-qualified names (`cp_name` in the IR).

Names defined here: `FieldMatch` (one key component), `ActionCall`,
`TableEntry`, `Member`, `Group`, `MulticastGroup`, `Replica`,
`CloneSession`, `StateError` (with a `Code` the server maps to a gRPC
status), and the `Device` protocol that the pipeline implements.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol


class Code(enum.IntEnum):
    """google.rpc.Code values a state operation can fail with (P4Runtime spec §12)."""

    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13


class StateError(Exception):
    """A write/read the state refuses; nothing was changed."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, kw_only=True)
class FieldMatch:
    """One key component of a table entry, canonical (value already masked).

    kind: "exact" (value), "lpm" (value, prefix_len), "ternary" (value, mask),
    "range" (value=low, high), "optional" (value). A ternary/lpm/range/optional
    field that is a don't-care is simply absent from `TableEntry.match`.
    """

    kind: str
    value: int
    mask: int = 0
    prefix_len: int = 0
    high: int = 0


@dataclass(frozen=True, kw_only=True)
class ActionCall:
    """An action with its action-data arguments, in parameter order."""

    action: str  # cp_name
    args: tuple[int, ...] = ()


@dataclass(kw_only=True)
class TableEntry:
    """A table entry.

    `match` maps key index (position in the table's key list) to a FieldMatch;
    absent indexes are wildcards. Exactly one of `action`, `member_id`,
    `group_id`, `action_set` is set for tables with an implementation;
    plain tables use `action`. `action_set` is a one-shot selector action set:
    (ActionCall, weight) pairs.
    """

    match: dict[int, FieldMatch]
    priority: int = 0
    action: ActionCall | None = None
    member_id: int | None = None
    group_id: int | None = None
    action_set: tuple[tuple[ActionCall, int], ...] | None = None
    is_default: bool = False
    idle_timeout_ns: int = 0
    metadata: bytes = b""
    # Direct resources, read/written by the server through the entry.
    counter_packets: int = 0
    counter_bytes: int = 0
    meter_config: tuple[int, int, int, int] | None = None  # cir, cburst, pir, pburst
    # Idle timeout: time.monotonic_ns() of the last hit (or of the insert), kept by
    # the pipeline for tables with `support_timeout`; 0 where it is not tracked.
    last_hit_ns: int = 0


@dataclass(kw_only=True)
class Member:
    """An action profile member: its id and the action it runs."""

    member_id: int
    action: ActionCall


@dataclass(kw_only=True)
class Group:
    """An action selector group: (member_id, weight) pairs; `max_size` 0: the profile's limit."""

    group_id: int
    members: list[tuple[int, int]] = field(default_factory=list)  # (member_id, weight)
    max_size: int = 0


@dataclass(frozen=True, kw_only=True)
class Replica:
    """One copy made by the replication engine: egress port and instance (egress_rid)."""

    egress_port: int
    instance: int  # egress_rid


@dataclass(kw_only=True)
class MulticastGroup:
    """A multicast group: the replicas each packet sent to it becomes."""

    group_id: int
    replicas: list[Replica]


@dataclass(kw_only=True)
class CloneSession:
    """A clone session: its replicas, class of service and truncation length (bytes)."""

    session_id: int
    replicas: list[Replica]
    class_of_service: int = 0
    packet_length_bytes: int = 0  # 0: no truncation


class Device(Protocol):
    """What the P4Runtime server needs from a running pipeline.

    Every mutating method is atomic with respect to packets (a packet sees the
    state before or after it) and raises StateError leaving state unchanged.
    Tables/externs are named by cp_name. A Device is created from an IR
    program; `load(program)` swaps the whole program (SetForwardingPipelineConfig
    COMMIT), dropping all state.
    """

    # tables
    def table_insert(self, table: str, entry: TableEntry) -> None:
        """Add an entry (StateError when one with its key exists or the table is full)."""
    def table_modify(self, table: str, entry: TableEntry) -> None:
        """Replace the action of an existing entry (StateError when there is none)."""
    def table_delete(self, table: str, entry: TableEntry) -> None:
        """Remove the entry with this key (StateError when there is none)."""
    def table_set_default(self, table: str, action: ActionCall | None) -> None:
        """Set the default action; None resets it to the program's default."""
    def table_entries(self, table: str, copy: bool = True) -> Iterable[TableEntry]:
        """The entries; copy=False may return a live read-only view."""
    def table_default(self, table: str) -> TableEntry:
        """The default entry, with its direct counter (misses) and meter config."""
    def table_write_many(self, table: str,
                         ops: list[tuple[str, TableEntry]]) -> list[StateError | None]:
        """Apply already-validated ("insert" | "modify" | "delete", entry) ops in order under
        one lock; one result per op, a failed op changes nothing."""
    def direct_counter_write(self, table: str, entry: TableEntry, packets: int,
                             bytes_: int) -> None:
        """Set an entry's direct counter (`entry.is_default`: the default entry's)."""
    def direct_meter_set(self, table: str, entry: TableEntry,
                         config: tuple[int, int, int, int] | None) -> None:
        """Configure an entry's direct meter (None: unconfigured, all GREEN)."""

    # action profiles / selectors (by implementation cp_name)
    def member_insert(self, profile: str, member: Member) -> None:
        """Add a member to an action profile."""
    def member_modify(self, profile: str, member: Member) -> None:
        """Replace an action profile member."""
    def member_delete(self, profile: str, member_id: int) -> None:
        """Remove an action profile member (refused while it is referenced)."""
    def members(self, profile: str) -> Iterable[Member]:
        """The members of an action profile."""
    def group_insert(self, profile: str, group: Group) -> None:
        """Add a group to an action selector."""
    def group_modify(self, profile: str, group: Group) -> None:
        """Replace an action selector group."""
    def group_delete(self, profile: str, group_id: int) -> None:
        """Remove an action selector group (refused while an entry uses it)."""
    def groups(self, profile: str) -> Iterable[Group]:
        """The groups of an action selector."""

    # indexed externs
    def counter_read(self, counter: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of one index of an indexed counter."""
    def counter_write(self, counter: str, index: int, packets: int, bytes_: int) -> None:
        """Set (packets, bytes) of one index of an indexed counter."""
    def register_read(self, register: str, index: int) -> int:
        """The value at one index of a register."""
    def register_write(self, register: str, index: int, value: int) -> None:
        """Set the value at one index of a register."""
    def meter_set(self, meter: str, index: int, config: tuple[int, int, int, int] | None) -> None:
        """Configure one index of an indexed meter (None: unconfigured, all GREEN)."""

    # packet replication engine
    def mcast_group_set(self, group: MulticastGroup | None, group_id: int) -> None:
        """Install a multicast group under `group_id` (None: remove it)."""
    def clone_session_set(self, session: CloneSession | None, session_id: int) -> None:
        """Install a clone session under `session_id` (None: remove it)."""

    # packets
    def process(self, ingress_port: int, data: bytes) -> None:
        """Run one packet through the whole pipeline; output goes to the ports."""
    def set_packet_in_handler(self, fn: Callable[[bytes, dict[str, int]], None]) -> None:
        """fn(payload, metadata_by_name) for packets sent to the CPU port."""
    def packet_out(self, payload: bytes, metadata: dict[str, int]) -> None:
        """Inject a PacketOut (payload after the packet_out header is re-built by the pipeline)."""


__all__ = ["FieldMatch", "ActionCall", "TableEntry", "Member", "Group", "MulticastGroup",
           "Replica", "CloneSession", "StateError", "Code", "Device"]
