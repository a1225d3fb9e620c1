"""Action profiles and selectors: the members and groups a table's entries point at.

An `ActionProfile` holds the members (an action with its data) and, for a
selector, the groups of members of an `action_profile` / `action_selector`
instance, numbered in BMv2's member handles; `select` picks a group's member
for a packet by the selector's hash.

Names defined here: `ActionProfile`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from typing import Any

from . import hashes
from .state import ActionCall, Code, Group, Member, StateError


class ActionProfile:
    """`action_profile` / `action_selector` state: members and (selector) groups.

    Every member has one or more BMv2 member *handles* (lowest free number
    when created). As PI does for BMv2, a member of weight w in a group is
    w handles: the extra copies are created (in member-id order) when a group
    first needs them and released when no group does. A selector picks
    ``hash % n`` among a group's n handles in handle order (BMv2
    `get_nth`). An empty group may exist but a table entry cannot point at it
    (BMv2 EMPTY_GRP); an entry whose group became empty hits and runs no
    action.
    """

    def __init__(self, name: str, size: int, *, selector: bool = False,
                 algorithm: str = "crc16", max_group_size: int = 0) -> None:
        self.name = name
        self.size = size
        self.selector = selector
        self.algorithm = algorithm
        self.max_group_size = max_group_size
        self.members: dict[int, Member] = {}
        self.handles: dict[int, list[int]] = {}  # member id -> its handles (copies for weights)
        self.groups: dict[int, Group] = {}
        self.group_lists: dict[int, list[ActionCall]] = {}
        self.refs: dict[tuple[str, int], int] = {}  # ("m"|"g", id) -> references
        # Bumped by every member/group change: tables cache each entry's choices
        # (result tuples) against it, so a packet never rebuilds them.
        self.version = 0

    # members ---------------------------------------------------------------
    def _free_handle(self) -> int:
        used = {h for hs in self.handles.values() for h in hs}
        return next(i for i in itertools.count() if i not in used)

    def member_insert(self, member: Member) -> None:
        """Add a member (StateError when its id exists or the profile is full)."""
        self.version += 1
        if member.member_id in self.members:
            raise StateError(Code.ALREADY_EXISTS, f"action profile '{self.name}': member {member.member_id} exists")
        if self.size and len(self.members) >= self.size:
            raise StateError(Code.RESOURCE_EXHAUSTED, f"action profile '{self.name}' is full ({self.size} members)")
        self.members[member.member_id] = member
        self.handles[member.member_id] = [self._free_handle()]

    def member_modify(self, member: Member) -> None:
        """Replace a member (StateError when there is none with its id)."""
        self.version += 1
        if member.member_id not in self.members:
            raise StateError(Code.NOT_FOUND, f"action profile '{self.name}': no member {member.member_id}")
        self.members[member.member_id] = member
        for gid, g in self.groups.items():
            if any(m == member.member_id for m, _ in g.members):
                self._rebuild_group(gid)

    def member_delete(self, member_id: int) -> None:
        """Remove a member (StateError when missing or still in a group or entry)."""
        self.version += 1
        if member_id not in self.members:
            raise StateError(Code.NOT_FOUND, f"action profile '{self.name}': no member {member_id}")
        if self.refs.get(("m", member_id)):
            raise StateError(Code.FAILED_PRECONDITION,
                       f"action profile '{self.name}': member {member_id} is still referenced")
        del self.members[member_id]
        del self.handles[member_id]

    # groups ----------------------------------------------------------------
    def _check_group(self, group: Group) -> None:
        if not self.selector:
            raise StateError(Code.INVALID_ARGUMENT, f"action profile '{self.name}' has no groups (not a selector)")
        seen = set()
        for mid, weight in group.members:
            if mid not in self.members:
                raise StateError(Code.NOT_FOUND, f"action profile '{self.name}': no member {mid}")
            if weight < 1:
                raise StateError(Code.INVALID_ARGUMENT, f"member {mid}: weight must be >= 1")
            if mid in seen:
                raise StateError(Code.INVALID_ARGUMENT, f"group {group.group_id}: duplicate member {mid} "
                                                  f"(use weights instead)")
            seen.add(mid)
        total = sum(w for _, w in group.members)
        limit = group.max_size or self.max_group_size
        if limit and total > limit:
            raise StateError(Code.RESOURCE_EXHAUSTED,
                       f"group {group.group_id}: total weight {total} exceeds max size {limit}")

    def _weights_in_use(self, mid: int) -> int:
        return max([1] + [w for g in self.groups.values() for m, w in g.members if m == mid])

    def _sync_handles(self, mids: Any) -> None:
        """Create the copies groups need (member-id order) and release unused ones (PI)."""
        for mid in sorted(mids):
            hs = self.handles.get(mid)
            if hs is None:
                continue
            need = self._weights_in_use(mid)
            while len(hs) > need:
                hs.pop()
            while len(hs) < need:
                hs.append(self._free_handle())

    def _rebuild_group(self, gid: int) -> None:
        g = self.groups[gid]
        slots = sorted((h, m) for m, w in g.members for h in self.handles[m][:w])
        self.group_lists[gid] = [self.members[m].action for _, m in slots]

    def _ref_group_members(self, group: Group, delta: int) -> None:
        for mid, _ in group.members:
            k = ("m", mid)
            self.refs[k] = self.refs.get(k, 0) + delta

    def group_insert(self, group: Group) -> None:
        """Add a group (StateError when its id exists or its members are not valid)."""
        self.version += 1
        if group.group_id in self.groups:
            raise StateError(Code.ALREADY_EXISTS, f"action profile '{self.name}': group {group.group_id} exists")
        self._check_group(group)
        group = dataclasses.replace(group, members=list(group.members))
        self.groups[group.group_id] = group
        self._ref_group_members(group, +1)
        self._sync_handles(m for m, _ in group.members)
        self._rebuild_group(group.group_id)

    def group_modify(self, group: Group) -> None:
        """Replace a group (StateError when there is none with its id)."""
        self.version += 1
        old = self.groups.get(group.group_id)
        if old is None:
            raise StateError(Code.NOT_FOUND, f"action profile '{self.name}': no group {group.group_id}")
        self._check_group(group)
        group = dataclasses.replace(group, members=list(group.members))
        self._ref_group_members(old, -1)
        self.groups[group.group_id] = group
        self._ref_group_members(group, +1)
        self._sync_handles({m for m, _ in group.members} | {m for m, _ in old.members})
        self._rebuild_group(group.group_id)

    def group_delete(self, group_id: int) -> None:
        """Remove a group (StateError when missing or still used by an entry)."""
        self.version += 1
        old = self.groups.get(group_id)
        if old is None:
            raise StateError(Code.NOT_FOUND, f"action profile '{self.name}': no group {group_id}")
        if self.refs.get(("g", group_id)):
            raise StateError(Code.FAILED_PRECONDITION,
                       f"action profile '{self.name}': group {group_id} is still referenced")
        self._ref_group_members(old, -1)
        del self.groups[group_id]
        del self.group_lists[group_id]
        self._sync_handles(m for m, _ in old.members)

    def select(self, actions: list[ActionCall], sel: Callable[[], bytes] | None) -> ActionCall | None:
        """The member for this packet: hash(selector input) % len(actions)."""
        if not actions:
            return None
        if len(actions) == 1 or sel is None:
            return actions[0]
        h = self._hash(sel())
        return actions[h % len(actions)]

    @property
    def _hash(self) -> Callable[[bytes], int]:
        return hashes.ALGORITHMS[self.algorithm]


__all__ = ["ActionProfile"]
