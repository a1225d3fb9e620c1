"""Digests compared directly: the same frames through simple_switch_grpc and p4switch, the
DigestLists each sends on its stream.

The program (the front end's corpus/warn/digest_of_unnamed_data.p4) sends a digest of a
struct, of list expressions (a tuple: P4Info names the digest digest_N, p4c's numbering) and
of a bit<W>, from table actions, a global action and the apply block. Both targets get
p4c's P4Info; each digest is enabled with one message per list, then one frame makes each
digest once. Expected data is written here from the frames' bytes (P4Runtime's shortest
bytestrings), per the P4Info's type of each digest: a struct's members, a tuple's, or one
bitstring. BMv2 enables only the struct's digest: its JSON names the others' learn lists
tuple_N where P4Info says digest_N, and its P4Runtime server finds a learn list by the
digest's name (deviation unnamed-digests).
"""

from __future__ import annotations

from pathlib import Path

from p4switch.proto import p4d, p4r

from .deviations import DEVIATIONS
from .rig import TARGETS, Rig

PROGRAM = Path(__file__).resolve().parents[1] / "unit" / "frontend" / "corpus" / "warn" / "digest_of_unnamed_data.p4"
DST = bytes.fromhex("0a0000000001")
SRC = {"learn": bytes.fromhex("0a0000000010"), "learn_again": bytes.fromhex("0a0000000020"),
       "named": bytes.fromhex("0a0000000030"), "global_learn": bytes.fromhex("0a0000000040")}
PORT = 2


def _bits(value: int) -> p4d.P4Data:
    """P4Runtime's bytestring of `value`: big-endian, no leading zero byte (one byte for 0)."""
    return p4d.P4Data(bitstring=value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big"))


def _frame(src: bytes, etype: int) -> bytes:
    return DST + src + etype.to_bytes(2, "big") + bytes(46)


def _entry(info, action: str, src: bytes) -> p4r.Update:
    table = next(t for t in info.tables if t.preamble.name == "I.smac")
    act = next(a for a in info.actions if a.preamble.name.split(".")[-1] == action)
    e = p4r.TableEntry(table_id=table.preamble.id)
    e.match.add(field_id=1).exact.value = src.lstrip(b"\0")
    e.action.action.action_id = act.preamble.id
    return p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=e))


def _enable(digest_id: int) -> p4r.Update:
    return p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(digest_entry=p4r.DigestEntry(
        digest_id=digest_id, config=p4r.DigestEntry.Config(max_timeout_ns=0, max_list_size=1, ack_timeout_ns=10**9))))


def test_digests_of_a_struct_a_list_and_a_bitstring(rig: Rig, compiled) -> None:
    """A struct's digest is the same on both; the digests P4Info names digest_N send their
    tuple or bitstring from p4switch, and BMv2 refuses to enable them (deviation unnamed-digests)."""
    assert "unnamed-digests" in {d.name for d in DEVIATIONS}
    prog = compiled(PROGRAM)
    rig.load(prog)
    info = prog.p4info
    ids = {d.preamble.name: d.preamble.id for d in info.digests}
    unnamed = ["digest_0", "digest_1", "digest_2", "digest_3", "digest_4"]
    assert sorted(ids) == unnamed + ["learn_t"]
    setup = [_enable(ids["learn_t"])] + [_entry(info, a, SRC[a]) for a in ("learn_again", "named", "global_learn")]
    assert rig.write(setup) == {t: [(0, "")] * len(setup) for t in TARGETS}
    codes = rig.write([_enable(ids[n]) for n in unnamed])
    assert codes == {"bmv2": [(13, "Error when configuring digest with target")] * len(unnamed),
                     "p4switch": [(0, "")] * len(unnamed)}

    unknown = bytes.fromhex("0a0000000099")
    frames = [_frame(SRC["learn"], 0x0800), _frame(SRC["learn_again"], 0x0800), _frame(SRC["named"], 0x0800),
              _frame(SRC["global_learn"], 0x0800), _frame(unknown, 0x0801), _frame(unknown, 0x0802)]
    rig.exchange([(PORT, f) for f in frames], gap=0.05)

    def src_port(src: bytes) -> list[p4d.P4Data]:
        return [_bits(int.from_bytes(src, "big")), _bits(PORT)]

    named = {ids["learn_t"]: p4d.P4Data(struct=p4d.P4StructLike(members=src_port(SRC["named"])))}
    expected = {"bmv2": named, "p4switch": named | {
        ids["digest_1"]: p4d.P4Data(tuple=p4d.P4StructLike(members=src_port(SRC["learn"]))),
        ids["digest_2"]: p4d.P4Data(tuple=p4d.P4StructLike(members=src_port(SRC["learn_again"]))),
        ids["digest_0"]: p4d.P4Data(tuple=p4d.P4StructLike(members=[_bits(7)])),
        # the apply block's digest comes after the table's default learn(): the last one wins
        ids["digest_3"]: p4d.P4Data(tuple=p4d.P4StructLike(members=[
            _bits(0x0801), _bits(0), _bits(int.from_bytes(DST, "big"))])),
        ids["digest_4"]: _bits(int.from_bytes(DST, "big")),
    }}
    for name, session in rig.sessions():
        lists = session.digests(len(expected[name]), timeout=5.0)
        lists += session.digests(1, timeout=0.5)  # nothing more comes
        got = {d.digest_id: list(d.data) for d in lists}
        assert len(lists) == len(got), f"{name}: a digest sent twice: {lists}"
        assert got == {i: [data] for i, data in expected[name].items()}, f"{name}: {lists}"
