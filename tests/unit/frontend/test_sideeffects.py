"""Side-effect ordering: calls with out/inout arguments inside expressions run in P4-16's order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

PROGRAM = Path(__file__).resolve().parent / "corpus" / "valid" / "side_effect_calls.p4"
ETH = bytes.fromhex("020000000001" "020000000002" "88b5")


def _writing_calls(node: Any, out: list[Any], allowed: set[int]) -> None:
    """Every call with out/inout arguments under `node`, and the ids of those standing where the
    pipeline runs them (a call statement, the whole right-hand side of an assignment)."""
    if isinstance(node, dict):
        node = list(node.values())
    if isinstance(node, (list, tuple)):
        for x in node:
            _writing_calls(x, out, allowed)
        return
    if not hasattr(node, "__dataclass_fields__"):
        return
    if isinstance(node, ir.MethodCall) and any(a.direction in ("out", "inout") for a in node.args):
        out.append(node)
    if isinstance(node, ir.CallStmt):
        allowed.add(id(node.call))
    if isinstance(node, ir.Assign) and isinstance(node.rhs, ir.MethodCall):
        allowed.add(id(node.rhs))
    for name in node.__dataclass_fields__:
        if name not in ("type", "coord", "annotations"):
            _writing_calls(getattr(node, name), out, allowed)


@pytest.fixture(scope="module")
def program() -> ir.Program:
    return compile_file(PROGRAM)


def test_no_call_with_out_arguments_is_left_inside_an_expression(program: ir.Program) -> None:
    """After the pass, such calls only stand as statements or as the whole right-hand side."""
    calls: list[Any] = []
    allowed: set[int] = set()
    _writing_calls(program.pipeline, calls, allowed)
    assert len(calls) > 10
    assert [c.coord for c in calls if id(c) not in allowed] == []


def test_operands_calls_short_circuits_and_mux_follow_left_to_right_order(program: ir.Program) -> None:
    """Worked by hand for a=3 b=0 c=10 d=5 e=0 f=20 g=0 h=9 (see the program):

    parser: n = bump(h) -> h 10, n 10; select(bump(n)) -> n 11;
    b = bump(a) + a -> 4 + 4 = 8; c = c + bump(c) -> 10 + 11 = 21;
    a == 7 || step(d, 100) -> d 6, e |= 1; a != 9 && step(d, 50) -> d 7, e |= 2;
    m = b > 128 ? bump(f) : twice(g, a) -> g 4, m 8;
    h = twice(g, bump(f)) + g -> f 21, g 21, h 42 + 21 = 63; switch (bump(m)) -> m 9, e |= 8;
    src[7:0] = m = 9, src[15:8] = n = 11.
    """
    with PortHarness(program) as h:
        out = h.send(1, ETH + bytes([3, 0, 10, 5, 0, 20, 0, 9]) + b"payload")
    assert out == [(2, bytes.fromhex("020000000001" "020000000b09" "88b5")
                    + bytes([4, 8, 21, 7, 11, 21, 21, 63]) + b"payload")]


def test_a_short_circuit_skips_the_call(program: ir.Program) -> None:
    """a = 6 (bump makes it 7): `a == 7 || step(d, ...)` does not run step, so d moves once only."""
    with PortHarness(program) as h:
        (port, data), = h.send(1, ETH + bytes([6, 0, 0, 1, 0, 0, 0, 0]) + b"p")
    d, e = data[14 + 3], data[14 + 4]
    assert (port, d, e & 3) == (2, 2, 3)  # step ran once (the && one): d 1 -> 2
