"""Static entries as a P4Runtime WriteRequest, as p4c's --p4runtime-entries-files writes them."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4r
from google.protobuf import json_format, text_format

from p4switch.compile import main
from p4switch.frontend import compile_file
from p4switch.frontend.entries import build_entries
from p4switch.p4info import build_p4info

CORPUS = Path(__file__).resolve().parent / "corpus"
ENTRIES = CORPUS / "valid" / "entries.p4"


@pytest.fixture(scope="module")
def entries():
    program = compile_file(ENTRIES)
    info = build_p4info(program)
    return info, build_entries(program, info)


def _by_table(info, req, name):
    tid = next(t.preamble.id for t in info.tables if t.preamble.name == name)
    return [u.entity.table_entry for u in req.updates if u.entity.table_entry.table_id == tid]


def test_every_entry_is_an_insert_in_table_order(entries) -> None:
    """One INSERT per entry; tables in P4Info order; tables without entries add nothing."""
    info, req = entries
    assert all(u.type == p4r.Update.INSERT for u in req.updates)
    ids = [u.entity.table_entry.table_id for u in req.updates]
    order = {t.preamble.id: i for i, t in enumerate(info.tables)}
    assert ids == sorted(ids, key=order.__getitem__)
    assert len(req.updates) == 4 + 3 + 2


def test_explicit_priorities_continue_down_by_one_and_drop_dont_cares(entries) -> None:
    """entries with `priority =`: kept; the one without gets the previous minus 1; `_` left out."""
    info, req = entries
    acl = _by_table(info, req, "MyIngress.acl")
    assert [e.priority for e in acl] == [100, 90, 10, 9]
    assert not any(e.is_const for e in acl)
    first = acl[0]
    assert [m.field_id for m in first.match] == [1, 2, 3]
    assert (first.match[0].ternary.value, first.match[0].ternary.mask) == (b"\x0a\x00\x00\x00", b"\xff\x00\x00\x00")
    assert first.match[1].optional.value == b"\x06"
    assert (first.match[2].range.low, first.match[2].range.high) == (b"\x00\x16", b"\x00\x16")
    deny = next(a.preamble.id for a in info.actions if a.preamble.name == "MyIngress.deny")
    assert first.action.action.action_id == deny and not first.action.action.params
    second = acl[1]
    assert [m.field_id for m in second.match] == [2, 3]
    to_port = second.action.action
    assert [(p.param_id, p.value) for p in to_port.params] == [(1, b"\x00\x03")]
    assert [m.field_id for m in acl[2].match] == [3]
    last = acl[3]
    assert [(m.field_id, m.ternary.value, m.ternary.mask) for m in last.match] == [
        (1, b"\x0a\x00\x00\x01", b"\xff\xff\xff\xff")]


def test_annotated_priorities_are_ignored_like_p4c(entries) -> None:
    """@priority on const entries is not P4Runtime's priority: p4c warns and counts down."""
    info, req = entries
    annotated = _by_table(info, req, "MyIngress.acl_annotated")
    assert [(e.priority, e.is_const) for e in annotated] == [(3, True), (2, True), (1, True)]


def test_non_const_exact_entries_have_no_priority_and_are_not_const(entries) -> None:
    """`entries` (P4 1.2.4) on an exact table: no priority, is_const false."""
    info, req = entries
    ports = _by_table(info, req, "MyIngress.ports")
    assert [(e.priority, e.is_const, e.match[0].exact.value) for e in ports] == [(0, False, b"\x00\x01"),
                                                                                 (0, False, b"\x00\x02")]


@pytest.mark.parametrize("suffix", [".txtpb", ".txt", ".json", ".bin"], ids=["txtpb", "txt", "json", "bin"])
def test_cli_writes_entries_in_the_format_of_the_suffix(tmp_path: Path, suffix: str, entries) -> None:
    """--p4runtime-entries-files writes the WriteRequest as text, JSON or binary by file suffix."""
    out = tmp_path / f"e{suffix}"
    rc = main([str(ENTRIES), "-o", str(tmp_path / "p.json"), "--p4runtime-entries-files", str(out)])
    assert rc == 0
    if suffix == ".bin":
        got = p4r.WriteRequest.FromString(out.read_bytes())
    elif suffix == ".json":
        got = json_format.Parse(out.read_text(), p4r.WriteRequest())
    else:
        got = text_format.Parse(out.read_text(), p4r.WriteRequest())
    assert got == entries[1]


def test_cli_deprecated_entries_file_uses_p4runtime_format(tmp_path: Path, entries) -> None:
    """--p4runtime-entries-file takes its format from --p4runtime-format, like p4c."""
    out = tmp_path / "entries.out"
    rc = main([str(ENTRIES), "-o", str(tmp_path / "p.json"), "--p4runtime-entries-file", str(out),
               "--p4runtime-format", "binary"])
    assert rc == 0
    assert p4r.WriteRequest.FromString(out.read_bytes()) == entries[1]


def test_named_action_arguments_go_to_their_parameters() -> None:
    """`stamp(b = 3, a = 4)` in const entries: a (param 1) is 4 and b (param 2) is 3, whatever the order."""
    program = compile_file(CORPUS / "valid" / "named_args.p4")
    info = build_p4info(program)
    rows = _by_table(info, build_entries(program, info), "I.low_bits")
    got = [[(p.param_id, p.value) for p in e.action.action.params] for e in rows]
    assert got == [[(1, b"\x04"), (2, b"\x03")], [(1, b"\x05"), (2, b"\x06")]]
