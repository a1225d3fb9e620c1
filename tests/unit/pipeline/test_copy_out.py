"""Copy-out of out/inout action arguments: on `exit`, from tables that bind them, on stack elements.

The program is the corpus's exit_copy_out.p4; every expected frame below is
worked out by hand from it (op byte, index byte, a, b, then three items).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness
from p4switch.pipeline.state import ActionCall, FieldMatch, TableEntry

PROGRAM = Path(__file__).resolve().parents[1] / "frontend" / "corpus" / "valid" / "exit_copy_out.p4"
ETH = bytes.fromhex("020000000001" "020000000002" "1234")
ITEMS = bytes([1, 2, 3, 4, 5, 6])


def _frame(op: int, idx: int, a: int, b: int, items: bytes = ITEMS) -> bytes:
    return ETH + bytes([op, idx, a, b]) + items + b"pay"


@pytest.fixture
def switch():
    with PortHarness(compile_file(PROGRAM)) as h:
        sw = h.switch
        sw.table_insert("I.t_exit", TableEntry(match={0: FieldMatch(kind="exact", value=5)},
                                               action=ActionCall(action="I.set_and_exit", args=(0x22,))))
        sw.table_insert("I.t_exit2", TableEntry(match={0: FieldMatch(kind="exact", value=5)},
                                                action=ActionCall(action="I.set_and_exit", args=(0x33,))))
        sw.table_insert("I.t_stack", TableEntry(match={0: FieldMatch(kind="ternary", value=0x10, mask=0xF0)},
                                                priority=1, action=ActionCall(action="I.setbyte", args=(0x44,))))
        sw.table_insert("I.t_after", TableEntry(match={0: FieldMatch(kind="ternary", value=0x20, mask=0xF0)},
                                                priority=1, action=ActionCall(action="I.add", args=())))
        yield h


def test_exit_in_a_directly_called_action_copies_its_inout_argument_out(switch) -> None:
    """op 1: set_and_exit(hdr.op.b, 0x11) writes b and exits: b is 0x11, the +0x80 after never runs."""
    assert switch.send(1, _frame(1, 0, 5, 0)) == [(2, _frame(1, 0, 5, 0x11))]


def test_exit_in_a_table_action_copies_the_bound_argument_out(switch) -> None:
    """op 2: t_exit hits and runs set_and_exit bound to hdr.op.b: b is 0x22, `a = 0xee` never runs."""
    assert switch.send(1, _frame(2, 0, 5, 0)) == [(2, _frame(2, 0, 5, 0x22))]


def test_a_miss_runs_the_default_and_the_control_goes_on(switch) -> None:
    """op 2, a = 6: t_exit misses (noop), a becomes 0xee and b gets +0x80."""
    assert switch.send(1, _frame(2, 0, 6, 1)) == [(2, _frame(2, 0, 0xEE, 0x81))]


def test_exit_after_a_table_apply_keeps_the_table_actions_writes(switch) -> None:
    """op 6: t_exit2 runs set_and_exit bound to hdr.op.a (0x33), then `exit`."""
    assert switch.send(1, _frame(6, 0, 5, 0)) == [(2, _frame(6, 0, 0x33, 0))]


def test_an_inout_stack_element_field_argument(switch) -> None:
    """op 3: add(hdr.items[1].v) makes it 4; b gets +0x80."""
    assert switch.send(1, _frame(3, 1, 0, 0)) == [(2, _frame(3, 1, 0, 0x80, bytes([1, 2, 4, 4, 5, 6])))]


def test_a_header_stack_element_passed_inout_to_an_exiting_action(switch) -> None:
    """op 4: set_exit_hdr(hdr.items[2]) sets its w to 0x55 and exits (no +0x80)."""
    assert switch.send(1, _frame(4, 2, 0, 0)) == [(2, _frame(4, 2, 0, 0, bytes([1, 2, 3, 4, 5, 0x55])))]


def test_an_exiting_action_copies_its_header_argument_over_its_direct_writes(switch) -> None:
    """op 7: alias_exit(hdr.items[0]) writes items[0].v = 0x99 directly, then it.w = 0x66 and exits:
    the copy-out of `it` (v 1, w 0x66) replaces the direct write (P4-16 §6.8 copy-in/copy-out)."""
    assert switch.send(1, _frame(7, 0, 5, 0)) == [(2, _frame(7, 0, 5, 0, bytes([1, 0x66, 3, 4, 5, 6])))]


def test_an_exiting_action_copies_its_out_header_back(switch) -> None:
    """op 8: make_exit(out hdr.items[1]) makes a valid {0x42, 0x43} and exits: items[1] is that."""
    assert switch.send(1, _frame(8, 0, 5, 0)) == [(2, _frame(8, 0, 5, 0, bytes([1, 2, 0x42, 0x43, 5, 6])))]


def test_an_exiting_sub_control_copies_its_header_and_scalar_arguments_out(switch) -> None:
    """op 9: sub.apply(hdr.items[2], hdr.op.a) sets w 0x31 and x 0x32, then exits (no +0x80)."""
    assert switch.send(1, _frame(9, 0, 5, 0)) == [(2, _frame(9, 0, 0x32, 0, bytes([1, 2, 3, 4, 5, 0x31])))]


def test_stack_element_keyed_tables_with_bound_arguments_in_a_switch(switch) -> None:
    """op 5: items[0].v 0x11 hits t_stack (setbyte bound to items[1].w: 0x44), so t_after runs:
    items[1].v 0x23 hits add bound to items[2].v (5 -> 6)."""
    items = bytes([0x11, 2, 0x23, 4, 5, 6])
    assert switch.send(1, _frame(5, 0, 0, 0, items)) == \
        [(2, _frame(5, 0, 0, 0x80, bytes([0x11, 2, 0x23, 0x44, 6, 6])))]


def test_a_miss_in_the_switch_takes_the_other_case(switch) -> None:
    """op 5: items[0].v 0x01 misses t_stack: its noop case sets a to 0x77."""
    items = bytes([0x01, 2, 0x23, 4, 5, 6])
    assert switch.send(1, _frame(5, 0, 0, 0, items)) == [(2, _frame(5, 0, 0x77, 0x80, items))]


# ---------------------------------------------------------------------- run-time stack indices
INDEX_PROGRAM = PROGRAM.parent / "stack_index_arg.p4"


@pytest.fixture(scope="module")
def indexed():
    with PortHarness(compile_file(INDEX_PROGRAM)) as h:
        yield h


@pytest.mark.parametrize(("op", "idx", "items"), [
    (1, 1, "0102" "0404" "0506"),  # add(items[1].v): 3 -> 4
    (2, 2, "0102" "0304" "0507"),  # bump(items[2]): w 6 -> 7
    (3, 0, "0177" "0304" "0506"),  # items[0].w = 0x77
    (1, 3, "0102" "0304" "0506"),  # out of range: the copy-out writes nothing
    (2, 200, "0102" "0304" "0506"),
    (3, 9, "0102" "0304" "0506"),  # a direct write out of range does nothing
], ids=["field-arg", "header-arg", "write", "field-arg-out-of-range", "header-arg-out-of-range",
        "write-out-of-range"])
def test_run_time_stack_index(indexed, op: int, idx: int, items: str) -> None:
    """In range the element is read and written; out of range the packet goes on unchanged."""
    frame = ETH + bytes([op, idx]) + bytes.fromhex("0102" "0304" "0506") + b"pay"
    assert indexed.send(1, frame) == [(2, ETH + bytes([op, idx]) + bytes.fromhex(items) + b"pay")]
