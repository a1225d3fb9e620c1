"""Client arbitration: primary/backup controllers per (device, role).

Implements P4Runtime spec §6 ("Client Arbitration and Controller
Replication"): every StreamChannel that sent a successful
MasterArbitrationUpdate is a `Controller`; per (device_id, role name) the one
with the highest election id ever seen is primary. Every change of primary is
announced to the controllers of that role with the status codes the spec
prescribes (OK to the primary, ALREADY_EXISTS to backups when a primary
exists, NOT_FOUND when none does). The role config of the primary is parsed
into a `RoleAccess` (see `roles`), which Write, Read, SetForwardingPipelineConfig
and the stream notifications consult.

A `Controller`'s outgoing messages go through a thread-safe queue that the
stream's response iterator drains; `send` may be called from any thread
(forwarding, digests, idle scans, the stream's reader).

Names defined here: `Controller`, `Arbiter`, `STREAM_QUEUE_LIMIT`.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

from p4switch.proto import p4r, rpc_status
from p4switch.server.roles import RoleAccess, parse_role_config
from p4switch.translate import (
    ALREADY_EXISTS,
    FAILED_PRECONDITION,
    INVALID_ARGUMENT,
    NOT_FOUND,
    OK,
    PERMISSION_DENIED,
    P4RTError,
    uint128,
)

log = logging.getLogger("p4switch.server")

# Packet-ins beyond this many queued responses are dropped for that stream, so a
# slow controller never makes the forwarding thread wait.
STREAM_QUEUE_LIMIT = 4096


class Controller:
    """One StreamChannel: its arbitration state and its outgoing message queue."""

    def __init__(self) -> None:
        self.device_id = 0
        self.role = ""
        self.election_id: int | None = None  # None: unset, lower than any election id
        self.role_config: Any = None
        self.out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.dropped = 0

    def get(self) -> Any:
        """The next outgoing message (blocks until there is one)."""
        return self.out.get()

    def send(self, msg: Any, *, droppable: bool = False) -> None:
        """Queue a message for the stream (any thread); droppable ones are dropped when it is full."""
        if droppable and self.out.qsize() >= STREAM_QUEUE_LIMIT:
            self.dropped += 1
            return
        self.out.put(msg)


@dataclass
class _Role:
    controllers: list[Controller] = field(default_factory=list)
    primary: Controller | None = None
    highest: int | None = None  # election_id_past: highest ever seen
    role_config: Any = None
    access: RoleAccess | None = None  # parsed role_config; None: full access


class Arbiter:
    """Arbitration state of every (device_id, role) served by one server."""

    def __init__(self, device_ids: set[int]) -> None:
        self.device_ids = device_ids
        self._lock = threading.Lock()
        self._roles: dict[tuple[int, str], _Role] = {}

    # -- stream side --------------------------------------------------------

    def update(self, ctl: Controller | None, msg: p4r.MasterArbitrationUpdate,
               new: Controller) -> Controller:
        """Handle a MasterArbitrationUpdate; returns the (possibly new) live controller.

        `ctl` is None for the first update on a stream (then `new` is registered).
        Raises P4RTError with the code the stream must be terminated with.
        """
        role_name = msg.role.name if msg.HasField("role") else ""
        eid = uint128(msg.election_id) if msg.HasField("election_id") else None
        config = msg.role.config if msg.HasField("role") and msg.role.HasField("config") else None
        access = parse_role_config(role_name, config)  # INVALID_ARGUMENT ends the stream
        with self._lock:
            self._check_exclusive(msg.device_id, role_name, access)
            if ctl is None:
                if msg.device_id not in self.device_ids:
                    raise P4RTError(NOT_FOUND, f"unknown device id {msg.device_id}")
                role = self._roles.setdefault((msg.device_id, role_name), _Role())
                if eid is not None and any(c.election_id == eid for c in role.controllers):
                    raise P4RTError(INVALID_ARGUMENT, f"election id {eid} is already used by "
                                    f"another controller of role {role_name!r}")
                ctl = new
                ctl.device_id, ctl.role, ctl.election_id = msg.device_id, role_name, eid
                ctl.role_config = config
                role.controllers.append(ctl)
                was_primary = False
            else:
                if msg.device_id != ctl.device_id:
                    raise P4RTError(FAILED_PRECONDITION, "device id of a stream cannot change")
                if role_name != ctl.role:
                    raise P4RTError(FAILED_PRECONDITION,
                                    "role of a stream cannot change: open a new stream")
                role = self._roles[(ctl.device_id, ctl.role)]
                if eid is not None and any(c.election_id == eid for c in role.controllers if c is not ctl):
                    raise P4RTError(INVALID_ARGUMENT, f"election id {eid} is already used by "
                                    f"another controller of role {role_name!r}")
                was_primary = role.primary is ctl
                ctl.election_id = eid
                ctl.role_config = config
            if eid is not None and (role.highest is None or eid >= role.highest):
                if role.primary is not ctl:
                    log.info("device %d role %r: new primary, election id %d",
                             ctl.device_id, ctl.role, eid)
                role.primary = ctl
                role.highest = eid
                role.role_config = config
                role.access = access
                self._notify(ctl.device_id, ctl.role, role, role.controllers)
            else:
                if was_primary:
                    role.primary = None
                    self._notify(ctl.device_id, ctl.role, role, role.controllers)
                else:
                    self._notify(ctl.device_id, ctl.role, role, [ctl])
            return ctl

    def _check_exclusive(self, device_id: int, role_name: str, access: RoleAccess | None) -> None:
        """A role's exclusive ids must not belong to another role (lock held)."""
        if access is None:
            return
        for (d, name), other in self._roles.items():
            if d != device_id or name == role_name or other.access is None:
                continue
            a = other.access
            clash = (access.exclusive & (a.exclusive | a.shared)) | (a.exclusive & access.shared)
            if clash:
                raise P4RTError(INVALID_ARGUMENT, f"role config: P4 ids {sorted(clash)} are "
                                f"exclusive to role {name!r} or {role_name!r}")

    def remove(self, ctl: Controller) -> None:
        """The stream of `ctl` ended; if it was primary, tell the others."""
        with self._lock:
            role = self._roles.get((ctl.device_id, ctl.role))
            if role is None or ctl not in role.controllers:
                return
            role.controllers.remove(ctl)
            if role.primary is ctl:
                role.primary = None
                self._notify(ctl.device_id, ctl.role, role, role.controllers)

    def _notify(self, device_id: int, role_name: str, role: _Role, to: list[Controller]) -> None:
        for c in to:
            mau = p4r.MasterArbitrationUpdate(device_id=device_id)
            if role_name or role.role_config is not None:
                mau.role.name = role_name
                if role.role_config is not None:
                    mau.role.config.CopyFrom(role.role_config)
            if role.highest is not None:
                mau.election_id.high = role.highest >> 64
                mau.election_id.low = role.highest & ((1 << 64) - 1)
            if role.primary is c:
                mau.status.CopyFrom(rpc_status.Status(code=OK, message="primary"))
            elif role.primary is not None:
                mau.status.CopyFrom(rpc_status.Status(code=ALREADY_EXISTS,
                                                      message="a primary controller exists"))
            else:
                mau.status.CopyFrom(rpc_status.Status(code=NOT_FOUND, message="no primary controller"))
            c.send(p4r.StreamMessageResponse(arbitration=mau))

    # -- unary side ---------------------------------------------------------

    def check_primary(self, device_id: int, role_name: str, election_id: Any,
                      has_eid: bool) -> RoleAccess | None:
        """The primary's access; NOT_FOUND / PERMISSION_DENIED unless the request comes from it."""
        if device_id not in self.device_ids:
            raise P4RTError(NOT_FOUND, f"unknown device id {device_id}")
        with self._lock:
            role = self._roles.get((device_id, role_name))
            if role is None:
                if role_name:
                    raise P4RTError(NOT_FOUND, f"unknown role {role_name!r}")
                raise P4RTError(PERMISSION_DENIED, "no primary controller: open a StreamChannel "
                                "and arbitrate first")
            primary = role.primary
            if primary is None or not has_eid or primary.election_id != uint128(election_id):
                raise P4RTError(PERMISSION_DENIED, "not the primary controller for this role")
            return role.access

    def read_access(self, device_id: int, role_name: str) -> RoleAccess | None:
        """What a ReadRequest naming `role_name` may see (None: everything)."""
        if not role_name:
            return None
        with self._lock:
            role = self._roles.get((device_id, role_name))
            if role is None:
                raise P4RTError(NOT_FOUND, f"unknown role {role_name!r}")
            return role.access

    def primaries(self, device_id: int) -> list[tuple[Controller, RoleAccess | None]]:
        """The primary of every role of the device, with its access."""
        with self._lock:
            return [(r.primary, r.access) for (d, _), r in self._roles.items()
                    if d == device_id and r.primary]


__all__ = ["Controller", "Arbiter", "STREAM_QUEUE_LIMIT"]
