"""Entry priorities as p4c's EntryPriorities pass assigns them: IR, P4Runtime entries, pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.frontend.entries import build_entries
from p4switch.p4info import build_p4info
from p4switch.pipeline import PortHarness

PROGRAM = Path(__file__).resolve().parent / "corpus" / "valid" / "entry_priorities.p4"

# (table, [(IR priority, P4Runtime priority, is_const)] per entry); t1..t5 are
# the values p4c's front end prints for its own sample of these tables
EXPECTED = {
    "Ing.t1": [(10, 10, True), (20, 20, False), (30, 30, False), (40, 40, True), (40, 40, False), (50, 50, False)],
    "Ing.t2": [(11, 11, True), (21, 21, False), (31, 31, False), (41, 41, True), (40, 40, False), (50, 50, False)],
    "Ing.t3": [(11, 11, True), (12, 12, False), (13, 13, False), (14, 14, True), (13, 13, False), (14, 14, False)],
    "Ing.t4": [(2001, 2001, True), (2001, 2001, False), (2001, 2001, False), (2001, 2001, False),
               (2001, 2001, True), (2001, 2001, False)],
    "Ing.t5": [(1000, 1000, False), (900, 900, False), (800, 800, False), (700, 700, False),
               (901, 901, False), (801, 801, False)],
    "Ing.largest": [(3, 3, False), (2, 2, False), (1, 1, False)],
    "Ing.smallest": [(1, 1, False), (11, 11, False), (21, 21, False)],
    "Ing.exact_only": [(8, 0, False), (1, 0, True)],
    "Ing.annotated": [(None, 2, True), (None, 1, True)],
}


@pytest.fixture(scope="module")
def program() -> ir.Program:
    return compile_file(PROGRAM)


def _tables(program: ir.Program) -> dict[str, ir.Table]:
    ing = program.pipeline["ig"].decl
    return {t.cp_name: t for t in ing.locals if isinstance(t, ir.Table)}


@pytest.mark.parametrize("table", list(EXPECTED), ids=list(EXPECTED))
def test_ir_priorities_are_those_p4c_assigns(program: ir.Program, table: str) -> None:
    """ConstEntry.priority per entry (None in `const entries`: p4c assigns none); const per entry or table."""
    t = _tables(program)[table]
    got = [(e.priority, e.is_const or t.entries_const) for e in t.const_entries]
    assert got == [(p, c) for p, _, c in EXPECTED[table]]


@pytest.mark.parametrize("table", list(EXPECTED), ids=list(EXPECTED))
def test_p4runtime_entries_carry_the_priorities(program: ir.Program, table: str) -> None:
    """The entries WriteRequest: the IR priority (or the count-down for const entries), 0 without a ternary key."""
    info = build_p4info(program)
    req = build_entries(program, info)
    tid = next(t.preamble.id for t in info.tables if t.preamble.name == table)
    got = [(u.entity.table_entry.priority, u.entity.table_entry.is_const)
           for u in req.updates if u.entity.table_entry.table_id == tid]
    assert got == [(p, c) for _, p, c in EXPECTED[table]]


def _frame(which: int, src: int, etype: int) -> bytes:
    return (0x0A0000000000 | which).to_bytes(6, "big") + src.to_bytes(6, "big") + etype.to_bytes(2, "big") + b"x" * 46


# (selector byte, source MAC, EtherType, expected egress port)
PACKETS = {
    "t1-only-match": (1, 6, 0x1234, 6),
    "t1-exact-and-ternary": (1, 2, 0x1181, 2),
    "t5-computed-priority": (5, 3, 0x1ABC, 3),
    "largest-first-entry-wins": (6, 0, 0x0800, 1),
    "largest-second-entry": (6, 0, 0x0801, 2),
    "largest-catch-all": (6, 0, 0x0900, 3),
    # largest_priority_wins = false: the entry with the smallest priority (1) wins (P4-16), as on BMv2
    "smallest-priority-wins": (7, 0, 0x0800, 1),
    "exact-const-entry": (8, 0, 0x86DD, 2),
    "annotated-ignores-at-priority": (9, 0, 0x0800, 1),
    "annotated-catch-all": (9, 0, 0x0900, 2),
}


def test_pipeline_matches_on_the_assigned_priorities(program: ir.Program) -> None:
    """The built-in pipeline loads the entries and matches in their priority order (the smallest first
    where `largest_priority_wins` is false)."""
    with PortHarness(program) as h:
        got = {name: [port for port, _ in h.send(0, _frame(w, s, t))] for name, (w, s, t, _) in PACKETS.items()}
    assert got == {name: [want] for name, (*_, want) in PACKETS.items()}
