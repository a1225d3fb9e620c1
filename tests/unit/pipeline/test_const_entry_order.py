"""const entries match in BMv2's order: `@priority(N)` first (smallest wins), else position from 1."""

from __future__ import annotations

from pathlib import Path

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

PROGRAM = Path(__file__).resolve().parents[1] / "frontend" / "corpus" / "valid" / "const_entry_priority.p4"


def test_smallest_priority_annotation_wins_over_entry_order() -> None:
    """Key 0x01 matches all three entries: @priority(1) (the last one) wins, as on BMv2."""
    with PortHarness(compile_file(PROGRAM)) as h:
        (port, data), = h.send(2, b"\x01\x00")
        assert (port, data) == (1, b"\x01\x03")


def test_position_ranks_an_entry_without_annotation() -> None:
    """Key 0x02 matches only the catch-all (position 2): it runs."""
    with PortHarness(compile_file(PROGRAM)) as h:
        (port, data), = h.send(2, b"\x02\x00")
        assert (port, data) == (1, b"\x02\x02")
