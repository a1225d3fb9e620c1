"""Header unions in stacks and structs, struct lookahead, struct-typed header fields.

Programs: the corpus's union_stack.p4 and lookahead_struct.p4; the expected
frames are worked out by hand from them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

VALID = Path(__file__).resolve().parents[1] / "frontend" / "corpus" / "valid"
ETH = bytes.fromhex("020000000001" "020000000002" "1234")


@pytest.fixture(scope="module")
def unions():
    with PortHarness(compile_file(VALID / "union_stack.p4")) as h:
        yield h


# sel = (k0 1: us[0] is an a_t, k1 2: us[1] is a b_t, op); then us[0].a.x = 0x11, us[1].b.y = 0x2233
@pytest.mark.parametrize(("op", "after"), [
    (0, "11" "2233"),  # nothing assigned: the stack as parsed
    (1, "11" "2233" "11"),  # one = us[0]: one.a valid
    (2, "2233" "2233"),  # us[0] = us[1]: us[0] holds the b_t, its a_t invalid
    (3, "2233" "11" "2234"),  # swapped through keep.u; one = keep.u and one.b.y + 1
    (4, "11" "2233" "5a"),  # a union in a struct local made valid and copied out
], ids=["parsed", "copy-element-out", "element-to-element", "swap-through-struct", "struct-local"])
def test_union_elements_copy_as_whole_values(unions, op: int, after: str) -> None:
    """Whole-union assignments keep which member is valid; the deparser emits the valid member."""
    frame = ETH + bytes([1, 2, op]) + bytes.fromhex("11" "2233") + b"pay"
    assert unions.send(1, frame) == [(2, ETH + bytes([1, 2, op]) + bytes.fromhex(after) + b"pay")]


@pytest.fixture(scope="module")
def lookahead():
    with PortHarness(compile_file(VALID / "lookahead_struct.p4")) as h:
        yield h


def test_struct_lookahead_selects_and_is_kept(lookahead) -> None:
    """peek (kind 1, len 4, tag 0xaa) picks `long`; flags 0x80 (f0 set): v + 1, rest = len 4."""
    frame = ETH + bytes.fromhex("14aa1234" "8005") + b"pay"
    want = bytes.fromhex("020000000001" "0200000000aa" "1234") + bytes.fromhex("14aa1234" "8406") + b"pay"
    assert lookahead.send(1, frame) == [(2, want)]


def test_struct_header_field_assigned_as_a_whole(lookahead) -> None:
    """kind 2 picks `short`; flags 0xc0 (f0, f1): v + 1, then f1 sets flags to {0, 0, 0x3f}."""
    frame = ETH + bytes.fromhex("27bb" "c007") + b"pay"
    want = bytes.fromhex("020000000001" "0200000000bb" "1234") + bytes.fromhex("27bb" "3f08") + b"pay"
    assert lookahead.send(1, frame) == [(2, want)]


def test_lookahead_does_not_consume(lookahead) -> None:
    """kind 3: no header extracted; the looked-ahead tag still reaches the ingress (src low byte)."""
    frame = ETH + bytes.fromhex("33cc") + b"pay"
    want = bytes.fromhex("020000000001" "0200000000cc" "1234") + bytes.fromhex("33cc") + b"pay"
    assert lookahead.send(1, frame) == [(2, want)]
