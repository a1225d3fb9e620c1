"""Priorities of a table's initial entries, as p4c's EntryPriorities pass assigns them.

P4-16 1.2.4 (section "Entries") lets non-const `entries` give some entries an
explicit `priority = N`, and computes the others from the table properties
`largest_priority_wins` (default true) and `priority_delta` (default 1).
p4c (frontends/p4/entryPriorities.cpp, read for behaviour) does it so:

* `const entries`: no entry may have a priority; none are assigned here
  (the P4Runtime serializer and the target count down from N to 1 in
  program order instead);
* non-const `entries`, none with a priority (whatever the key's match kinds):
  with `largest_priority_wins` the last entry gets 1 and each one before it
  `delta` more (the first entry has the largest number); without it the
  first entry gets 1, the next 1 + delta, and so on. The numbers go to
  P4Runtime unchanged, where the larger one wins;
* non-const `entries`, some with a priority: the key must have a match kind
  other than exact and lpm; the first entry must have one; an entry without
  one gets the previous entry's priority minus `delta` (plus `delta` when
  `largest_priority_wins` is false);
* p4c computes with 64-bit unsigned numbers and reports an overflow (in
  practice: a largest-wins computation going below 0, checked after every
  entry, the last one included); explicit priorities are read as 32-bit
  unsigned values.

p4c also warns about duplicate priorities and entries out of priority order;
warnings are not reported here.

Names defined here: `PriorityRules`, `assign_priorities`.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4switch import ir
from p4switch.frontend.errors import P4Error

_SIZE_T = 1 << 64  # p4c's size_t arithmetic
_UINT_MAX = (1 << 32) - 1  # p4c's Constant::asUnsigned()


@dataclass(frozen=True, kw_only=True)
class PriorityRules:
    """A table's `largest_priority_wins` and `priority_delta`, with the spec's defaults."""

    largest_wins: bool = True
    delta: int = 1


def _needs_priority(match_kind: str) -> bool:
    # p4c: any kind but exact and lpm may need priorities (match_kind is extensible)
    return match_kind not in ("exact", "lpm")


def assign_priorities(entries: list[ir.ConstEntry], explicit: list[int | None], keys: list[ir.KeyElement],
                      rules: PriorityRules, table: str, key_coord: ir.Coord, table_coord: ir.Coord) -> None:
    """Set `priority` on the non-const `entries` of `table` from their explicit priorities (raises `P4Error`)."""
    overflow = P4Error(table_coord, f"table {table}: Overflow in priority computation")
    if all(p is None for p in explicit):
        current = 1
        order = range(len(entries) - 1, -1, -1) if rules.largest_wins else range(len(entries))
        for i in order:
            entries[i].priority = current
            nxt = (current + rules.delta) % _SIZE_T
            if nxt < current:
                raise overflow
            current = nxt
        return
    if not any(_needs_priority(k.match_kind) for k in keys):
        raise P4Error(key_coord, "key match type does not require priorities, but some are specified")
    current = 0
    for i, (entry, prio) in enumerate(zip(entries, explicit, strict=True)):
        if prio is not None:
            if not 0 <= prio <= _UINT_MAX:
                raise P4Error(entry.coord, f"{prio}: Value too large for unsigned int")
            current = prio
        elif i == 0:
            raise P4Error(entry.coord, "entry must have a priority")
        entry.priority = current
        nxt = (current - rules.delta if rules.largest_wins else current + rules.delta) % _SIZE_T
        if (nxt > current) if rules.largest_wins else (nxt < current):
            raise overflow
        current = nxt


__all__ = ["PriorityRules", "assign_priorities"]
