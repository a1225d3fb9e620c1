"""An in-memory Device for the server tests, and the small program it runs.

`FakeDevice` implements the `p4switch.pipeline.state.Device` protocol with
the same state semantics as the pipeline (counters survive table_modify,
`direct_counter_write`/`direct_meter_set`
write direct resources, StateError codes), and a toy
data plane: an EtherType 0x88b6 frame sends digest `learn_t`; a frame whose destination MAC is in table `ingress.mac` goes to
that entry's port; a broadcast frame goes to the CPU (packet-in with its
ingress port); a packet-out goes to its `egress_port`.

`make_program_file()` returns a p4switch program file (IR + P4Info text) for
`p4info_small.txtpb`, so the server can be tested before the front end and
the pipeline exist.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

from p4switch import ir
from p4switch.pipeline.state import (
    ActionCall,
    CloneSession,
    Code,
    Group,
    Member,
    MulticastGroup,
    StateError,
    TableEntry,
)

HERE = os.path.dirname(__file__)
P4INFO_PATH = os.path.join(HERE, "p4info_small.txtpb")

TABLES = {  # cp_name -> (key names, size, const, default action)
    "ingress.ipv4_lpm": (["hdr.ipv4.dstAddr"], 1024, False, "NoAction"),
    "ingress.acl": (["hdr.ipv4.srcAddr", "hdr.ipv4.protocol", "meta.l4_port", "meta.vrf"], 64, False, "NoAction"),
    "ingress.mac": (["hdr.ethernet.dstAddr"], 4, False, "NoAction"),
    "ingress.const_tbl": (["hdr.ethernet.etherType"], 8, True, "ingress.drop"),
    "ingress.ecmp": (["meta.ecmp_id"], 64, False, "NoAction"),
    "ingress.keyless": ([], 1, False, "NoAction"),
}


def p4info_text() -> str:
    with open(P4INFO_PATH) as f:
        return f.read()


def make_program(tables: dict | None = None) -> ir.Program:
    tables = TABLES if tables is None else tables
    locals_: list = []
    for name, (keys, size, _const, default) in tables.items():
        locals_.append(ir.Table(
            name=name.split(".")[-1], cp_name=name,
            keys=[ir.KeyElement(expr=ir.Constant(value=0, type=ir.BitsType(width=8)),
                                match_kind="exact", name=k) for k in keys],
            actions=[], default_action=ir.ActionRef(action=default), size=size))
    ctrl = ir.Control(name="ingress", params=[], ctor_params=[], locals=locals_,
                      apply=ir.Block(stmts=[]))
    return ir.Program(arch="v1model", source="small.p4", types={}, errors=["NoError"],
                      match_kinds=["exact"], constants={}, functions=[], actions=[],
                      pipeline={"ig": ir.ControlInstance(name="ingress", uid="ig", cp_name="ingress",
                                                         decl=ctrl)})


def make_program_file(p4info: str | None = None) -> bytes:
    return ir.to_json(make_program(), p4info_text() if p4info is None else p4info).encode()


def _err(code: Code, msg: str) -> StateError:
    return StateError(code, msg)


class FakeDevice:
    """See module docstring."""

    CPU_PORT = 255

    def __init__(self, program: ir.Program, transmit: Callable[[int, bytes], None]) -> None:
        self.program = program
        self.transmit = transmit
        self.tables: dict[str, dict[tuple, TableEntry]] = {t: {} for t in TABLES}
        self.defaults = {t: ActionCall(action=d) for t, (_, _, _, d) in TABLES.items()}
        # const table: two const entries, as the program would have them
        from p4switch.pipeline.state import FieldMatch

        for et in (0x0800, 0x86DD):
            e = TableEntry(match={0: FieldMatch(kind="exact", value=et)}, action=ActionCall(action="ingress.drop"))
            self.tables["ingress.const_tbl"][self._key(e)] = e
        self._members: dict[int, Member] = {}
        self._groups: dict[int, Group] = {}
        self.counters = {"ingress.port_counter": [(0, 0)] * 16, "ingress.pkt_counter": [(0, 0)] * 4}
        self.registers = {"ingress.reg": [0] * 8}
        self.meter_cfg: dict[tuple[str, int], tuple] = {}
        self.mcast: dict[int, MulticastGroup] = {}
        self.clone: dict[int, CloneSession] = {}
        self.packet_in: Callable | None = None
        self.digest: Callable | None = None
        self.value_sets: dict[str, list[tuple[int, int]]] = {}
        self.closed = False

    @staticmethod
    def _key(e: TableEntry) -> tuple:
        return frozenset(e.match.items()), e.priority

    def _table(self, table: str) -> dict[tuple, TableEntry]:
        if table not in self.tables:
            raise _err(Code.NOT_FOUND, f"no table {table}")
        return self.tables[table]

    def _refs(self, kind: str, oid: int) -> bool:
        for e in self.tables["ingress.ecmp"].values():
            if (kind == "m" and e.member_id == oid) or (kind == "g" and e.group_id == oid):
                return True
        return False

    # tables ------------------------------------------------------------------
    def table_insert(self, table: str, entry: TableEntry) -> None:
        t = self._table(table)
        if TABLES[table][2]:
            raise _err(Code.PERMISSION_DENIED, "const table")
        if self._key(entry) in t:
            raise _err(Code.ALREADY_EXISTS, "entry exists")
        if len(t) >= TABLES[table][1]:
            raise _err(Code.RESOURCE_EXHAUSTED, "table full")
        if entry.member_id is not None and entry.member_id not in self._members:
            raise _err(Code.NOT_FOUND, "no such member")
        if entry.group_id is not None and entry.group_id not in self._groups:
            raise _err(Code.NOT_FOUND, "no such group")
        t[self._key(entry)] = dataclasses.replace(entry, match=dict(entry.match))

    def table_modify(self, table: str, entry: TableEntry) -> None:
        t = self._table(table)
        old = t.get(self._key(entry))
        if old is None:
            raise _err(Code.NOT_FOUND, "no such entry")
        new = dataclasses.replace(entry, match=dict(entry.match), counter_packets=old.counter_packets,
                                  counter_bytes=old.counter_bytes)
        if entry.meter_config is None:
            new.meter_config = old.meter_config
        t[self._key(entry)] = new

    def table_delete(self, table: str, entry: TableEntry) -> None:
        t = self._table(table)
        if TABLES[table][2]:
            raise _err(Code.PERMISSION_DENIED, "const table")
        if t.pop(self._key(entry), None) is None:
            raise _err(Code.NOT_FOUND, "no such entry")

    def _live(self, table: str, entry: TableEntry) -> TableEntry:
        e = self._table(table).get(self._key(entry))
        if e is None:
            raise _err(Code.NOT_FOUND, "no such entry")
        return e

    def direct_counter_write(self, table: str, entry: TableEntry, packets: int, bytes_: int) -> None:
        e = self._live(table, entry)
        e.counter_packets, e.counter_bytes = packets, bytes_

    def direct_meter_set(self, table: str, entry: TableEntry, config) -> None:
        self._live(table, entry).meter_config = config

    def table_set_default(self, table: str, action: ActionCall | None) -> None:
        self._table(table)
        self.defaults[table] = action or ActionCall(action=TABLES[table][3])

    def table_entries(self, table: str):
        return [dataclasses.replace(e, match=dict(e.match)) for e in self._table(table).values()]

    def table_default(self, table: str) -> TableEntry:
        return TableEntry(match={}, action=self.defaults[table], is_default=True)

    # profiles ----------------------------------------------------------------
    def member_insert(self, profile: str, member: Member) -> None:
        if member.member_id in self._members:
            raise _err(Code.ALREADY_EXISTS, "member exists")
        self._members[member.member_id] = member

    def member_modify(self, profile: str, member: Member) -> None:
        if member.member_id not in self._members:
            raise _err(Code.NOT_FOUND, "no such member")
        self._members[member.member_id] = member

    def member_delete(self, profile: str, member_id: int) -> None:
        if member_id not in self._members:
            raise _err(Code.NOT_FOUND, "no such member")
        if self._refs("m", member_id) or any(member_id in dict(g.members) for g in self._groups.values()):
            raise _err(Code.FAILED_PRECONDITION, "member in use")
        del self._members[member_id]

    def members(self, profile: str):
        return list(self._members.values())

    def group_insert(self, profile: str, group: Group) -> None:
        if group.group_id in self._groups:
            raise _err(Code.ALREADY_EXISTS, "group exists")
        self._groups[group.group_id] = group

    def group_modify(self, profile: str, group: Group) -> None:
        if group.group_id not in self._groups:
            raise _err(Code.NOT_FOUND, "no such group")
        self._groups[group.group_id] = group

    def group_delete(self, profile: str, group_id: int) -> None:
        if group_id not in self._groups:
            raise _err(Code.NOT_FOUND, "no such group")
        if self._refs("g", group_id):
            raise _err(Code.FAILED_PRECONDITION, "group in use")
        del self._groups[group_id]

    def groups(self, profile: str):
        return list(self._groups.values())

    # externs -------------------------------------------------------------------
    def counter_read(self, counter: str, index: int) -> tuple[int, int]:
        return self.counters[counter][index]

    def counter_write(self, counter: str, index: int, packets: int, bytes_: int) -> None:
        self.counters[counter][index] = (packets, bytes_)

    def register_read(self, register: str, index: int) -> int:
        return self.registers[register][index]

    def register_write(self, register: str, index: int, value: int) -> None:
        self.registers[register][index] = value

    def meter_set(self, meter: str, index: int, config) -> None:
        self.meter_cfg[(meter, index)] = config

    def value_set_write(self, value_set: str, members: list[tuple[int, int]]) -> None:
        self.value_sets[value_set] = list(members)

    def mcast_group_set(self, group: MulticastGroup | None, group_id: int) -> None:
        if group is None:
            self.mcast.pop(group_id, None)
        else:
            self.mcast[group_id] = group

    def clone_session_set(self, session: CloneSession | None, session_id: int) -> None:
        if session is None:
            self.clone.pop(session_id, None)
        else:
            self.clone[session_id] = session

    # packets ---------------------------------------------------------------------
    def process(self, ingress_port: int, data: bytes) -> None:
        dst = int.from_bytes(data[:6], "big")
        if data[12:14] == b"\x88\xb6" and self.digest is not None:  # "learn" frames
            self.digest("learn_t", {"src_mac": int.from_bytes(data[6:12], "big"), "port": ingress_port})
            return
        if dst == 0xFFFFFFFFFFFF:
            if self.packet_in is not None:
                self.packet_in(data, {"ingress_port": ingress_port, "_pad": 0})
            return
        from p4switch.pipeline.state import FieldMatch

        e = self.tables["ingress.mac"].get((frozenset({(0, FieldMatch(kind="exact", value=dst))}), 0))
        if e is not None and e.action is not None and e.action.action == "ingress.set_port":
            self.transmit(e.action.args[0], data)

    def set_digest_handler(self, fn) -> None:
        self.digest = fn

    def set_packet_in_handler(self, fn) -> None:
        self.packet_in = fn

    def packet_out(self, payload: bytes, metadata: dict[str, int]) -> None:
        self.transmit(metadata["egress_port"], payload)

    def close(self) -> None:
        self.closed = True
