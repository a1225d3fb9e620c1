"""A value set of a one-field struct on a single select key (the corpus's
value_set_struct_key.p4): a member is the field's value; expected ports by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

PROGRAM = Path(__file__).resolve().parents[1] / "frontend" / "corpus" / "valid" / "value_set_struct_key.p4"
ETH = bytes.fromhex("020000000001" "020000000002" "1234")


@pytest.fixture
def switch():
    with PortHarness(compile_file(PROGRAM)) as h:
        yield h


def test_members_are_the_fields_values(switch) -> None:
    """Empty set: port 1. Members 0x0a000001 (exact) and 0xc0a80000/16: 0x0a000001 and
    0xc0a81234 go to port 2, 0x0a000002 stays on port 1."""
    def port(word: int) -> int:
        frame = ETH + word.to_bytes(4, "big") + b"payload"
        (out,) = switch.send(3, frame)
        assert out[1] == frame
        return out[0]

    assert port(0x0A000001) == 1
    switch.switch.value_set_write("MyParser.words", [(0x0A000001, -1), (0xC0A80000, 0xFFFF0000)])
    assert [port(w) for w in (0x0A000001, 0xC0A81234, 0x0A000002)] == [2, 2, 1]
