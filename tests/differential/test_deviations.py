"""The deviations table in docs/p4switch.md is `deviations.DEVIATIONS`, row for row."""

from __future__ import annotations

from pathlib import Path

from .deviations import DEVIATIONS, covering

DOC = Path(__file__).resolve().parents[2] / "docs" / "p4switch.md"


def test_deviations_table_matches_the_docs() -> None:
    """Each deviation is one row of the docs' table, with the same words; no other rows."""
    text = DOC.read_text()
    table = text.split("<!-- deviations:begin -->")[1].split("<!-- deviations:end -->")[0]
    rows = [line for line in table.strip().splitlines()[2:]]
    assert rows == [f"| {d.name} | {d.p4switch} | {d.bmv2} | {d.reason} |" for d in DEVIATIONS]


def test_a_pause_frame_is_covered_and_an_ipv4_frame_is_not() -> None:
    """The MAC-control deviation covers EtherType 0x8808 only."""
    pause = bytes.fromhex("0180c2000001" "020000000001" "8808" "0101") + bytes(44)
    ipv4 = bytes.fromhex("0180c2000001" "020000000001" "0800") + bytes(46)
    assert covering(pause) is not None and covering(pause).name == "mac-control-consumed"
    assert covering(ipv4) is None
