"""The deviations tables in docs/p4switch.md and p4switch/README.md are `deviations.DEVIATIONS`, row for row."""

from __future__ import annotations

from pathlib import Path

import pytest

from .deviations import DEVIATIONS, covering, expected, masked

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "docs" / "p4switch.md", REPO / "p4switch" / "README.md"]


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_deviations_table_matches_the_docs(doc: Path) -> None:
    """Each deviation is one row of the page's table, with the same words; no other rows."""
    text = doc.read_text()
    table = text.split("<!-- deviations:begin -->")[1].split("<!-- deviations:end -->")[0]
    rows = [line for line in table.strip().splitlines()[2:]]
    assert rows == [f"| {d.name} | {d.p4switch} | {d.bmv2} | {d.reason} |" for d in DEVIATIONS]


def test_a_pause_frame_is_compared_like_any_frame() -> None:
    """No deviation covers MAC control: without native PFC (--pfc) p4switch hands PFC and
    PAUSE frames to the program, as BMv2 does (the programs do PFC themselves)."""
    pause = bytes.fromhex("0180c2000001" "020000000001" "8808" "0101") + bytes(44)
    assert covering(pause, "basic") is None


def test_the_pair_swap_is_covered_for_tuples_only() -> None:
    """header-list-assignment: a parsed pair (EtherType 0x9000-0x90ff) of tuples.p4; p4switch swaps it."""
    frame = bytes.fromhex("010000000001" "020000000002" "9001" "aaaa" "bbbb" "cc")
    assert covering(frame, "tuples") is not None
    assert expected(frame, "tuples") == bytes.fromhex("010000000001" "020000000002" "9001" "bbbb" "aaaa" "cc")
    assert covering(frame, "basic") is None
    assert covering(frame[:16], "tuples") is None  # too short to hold a pair: not parsed, not covered


def test_hash_results_are_blanked_where_they_sit() -> None:
    """invalid-header-fields: h16 and h32 of hash_invalid_header's res header, after ethernet/ipv4/udp."""
    eth_ipv4 = bytes.fromhex("020000000001" "020000000002" "0800") + bytes([0x45, 0, 0, 28]) + bytes(5) + b"\x11" \
        + bytes(10)
    udp = bytes.fromhex("1234" "12b7" "0008" "0000")
    res = bytes.fromhex("aaaa" "bbbbbbbb" "cccc" "01")
    out = masked("hash_invalid_header", eth_ipv4 + udp + res + b"p")
    assert out == eth_ipv4 + udp + bytes(6) + bytes.fromhex("cccc" "01") + b"p"
    assert masked("basic", eth_ipv4 + udp + res) == eth_ipv4 + udp + res
