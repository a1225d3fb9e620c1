"""Controls passed as constructor arguments, nested switches on action_run, enum masks in entries.

Program: the corpus's nested_action_run.p4; expected frames worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

PROGRAM = Path(__file__).resolve().parent / "corpus" / "valid" / "nested_action_run.p4"


@pytest.fixture(scope="module")
def program() -> ir.Program:
    return compile_file(PROGRAM)


def test_a_control_argument_becomes_a_named_sub_instance(program: ir.Program) -> None:
    """Wrap(Sub()) w1: w1 holds the Sub instance under its parameter's name, tables named after it."""
    ing = program.pipeline["ig"].decl
    w1 = next(x for x in ing.locals if isinstance(x, ir.ControlInstance) and x.name == "w1")
    inner = next(x for x in w1.decl.locals if isinstance(x, ir.ControlInstance))
    assert (inner.name, inner.decl.name, inner.cp_name) == ("inner", "Sub", "I.w1.inner")
    assert [t.cp_name for t in inner.decl.locals if isinstance(t, ir.Table)] == ["I.w1.inner.marks"]


def test_enum_members_are_values_and_masks_of_const_entries(program: ir.Program) -> None:
    """(Kind_t.A &&& Kind_t.HIGH): the entry's keyset is the member values 0x10 and 0xf0."""
    outer = next(t for t in program.pipeline["ig"].decl.locals if isinstance(t, ir.Table) and t.name == "outer")
    ks = outer.const_entries[0].keys[0]
    assert (ks.kind, ks.value.member, ks.mask.member) == ("mask", "A", "HIGH")


def _frame(dst_low: int, kind: int, y: int) -> bytes:
    return bytes([2, 0, 0, 0, 0, dst_low]) + bytes(6) + b"\x12\x34" + bytes([kind, 0, y]) + b"pay"


@pytest.mark.parametrize(("dst_low", "kind", "y", "src_low", "x", "y_out"), [
    (1, 0x13, 0, 0xB1, 1, 0x92),  # a1, inner hits b1 (y 0x11); w1's Sub marks 0x80; +1
    (2, 0x13, 0, 0xD1, 1, 0x81),  # a1, inner misses (default case); Sub marks 0x80; +1
    (1, 0x25, 4, 0x00, 2, 0x45),  # a2: w2 (Sub2: | 0x40), +1
    (1, 0x31, 0, 0xFF, 0, 0x00),  # neither entry: the outer default case
], ids=["inner-hit", "inner-default", "second-wrapper", "outer-default"])
def test_nested_switches_and_wrapped_controls(program: ir.Program, dst_low: int, kind: int, y: int,
                                              src_low: int, x: int, y_out: int) -> None:
    """The outer switch picks the case, the inner one runs in it, the passed control runs in Wrap."""
    with PortHarness(program) as h:
        (port, data), = h.send(1, _frame(dst_low, kind, y))
    assert (port, data[11], data[14:17]) == (2, src_low, bytes([kind, x, y_out]))
