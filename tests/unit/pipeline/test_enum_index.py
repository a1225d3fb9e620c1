"""Header-stack elements indexed by a serializable enum, a member and a variable (p4/enum_index.p4):
the index is the enum's value, as p4c takes it. Expected frames worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

PROGRAM = Path(__file__).resolve().parent / "p4" / "enum_index.p4"
ETH = bytes.fromhex("020000000001" "020000000002" "1234")


@pytest.fixture
def switch():
    with PortHarness(compile_file(PROGRAM)) as h:
        yield h


@pytest.mark.parametrize(("slot", "items"), [(0, b"\xee\x02\x73"), (1, b"\x01\xee\x73"),
                                             (2, b"\x01\x02\xfe")])
def test_the_slot_variable_and_the_last_member_pick_their_elements(switch, slot: int, items: bytes) -> None:
    """Items 01 02 03: the element at the frame's slot becomes ee, then items[Slot.LAST] gets
    | 0x70 (03 -> 73, or ee -> fe when the slot was LAST)."""
    sent = ETH + bytes([slot]) + b"\x01\x02\x03" + b"tail"
    assert switch.send(1, sent) == [(2, ETH + bytes([slot]) + items + b"tail")]
