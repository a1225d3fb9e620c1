"""A keyset for a single key written as a one-component list, `{ v }`: the same as `v`, in
a select and in const entries (the corpus's single_key_lists.p4; expected ports by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

PROGRAM = Path(__file__).resolve().parents[1] / "frontend" / "corpus" / "valid" / "single_key_lists.p4"
MACS = bytes.fromhex("020000000001" "020000000002")


@pytest.fixture
def switch():
    with PortHarness(compile_file(PROGRAM)) as h:
        yield h


@pytest.mark.parametrize(("tag", "port"), [(b"\x12\x34", 2), (b"\x56\x78", 3), (b"\x01\x02", 4),
                                           (b"\x34\x12", 1)])
def test_list_keysets_match_their_one_component(switch, tag: bytes, port: int) -> None:
    """EtherType 0x88b5 selects the tag state (`{16w0x88b5}`); the tag picks the port:
    `{(0x12 ++ 0x34)}` port 2, `{0x5678}` port 3, `0x0102` port 4, anything else 1."""
    frame = MACS + b"\x88\xb5" + tag + b"payload"
    assert switch.send(5, frame) == [(port, frame)]


def test_another_ethertype_is_not_parsed_as_a_tag(switch) -> None:
    """EtherType 0x88b6 misses `{16w0x88b5}`: no tag header, port 1 whatever follows."""
    frame = MACS + b"\x88\xb6" + b"\x12\x34" + b"payload"
    assert switch.send(5, frame) == [(1, frame)]
