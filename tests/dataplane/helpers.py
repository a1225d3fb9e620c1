"""What a dataplane test does to a switch: P4Runtime writes (undone afterwards), packets, counters.

`Dataplane(sut)` wraps one `SwitchUnderTest` for one test. Every write goes
through it and is journalled; `undo()` (called by the base fixture after
each test) deletes what was inserted and restores defaults and modified
entries, newest first, so the next test finds the switch as the program
left it. Only P4Runtime and the ports are used, never the target's inside.

Writes: `add_next_hop`, `add_ecmp_group`, `add_route`, `add_drop_route`,
`set_mode`, `add_arp_reply`, `map_dscp`, `map_tc_to_queue`,
`set_ecn_threshold`, `add_acl`. Packets: `send`, `expect`, `expect_none`,
`collect`, `packet_out`, `expect_packet_in`. Counters: `counter`,
`direct_counter`, `wait_counter`.

Names defined here: `Dataplane`, `NAMES`, `MODES`, `DROP`.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterable

from scapy.packet import Packet

from controller.entities import (
    Action,
    Entity,
    Exact,
    Group,
    Lpm,
    Member,
    TableEntry,
    Ternary,
    encode_entity,
)
from controller.p4rt import CounterValue, SwitchSession
from controller.proto import p4r

from .packets import flow_tag, peer_mac, switch_mac
from .ports import Mask, PortSet, Received
from .stream import PacketIn, PacketStream
from .switch import SwitchUnderTest

__all__ = ["DROP", "MODES", "NAMES", "Dataplane"]

_IG = "FabricIngress."
_EG = "FabricEgress."
NAMES = {
    "ipv4_route": _IG + "routing.ipv4_route",
    "ipv6_route": _IG + "routing.ipv6_route",
    "set_next_id": _IG + "routing.set_next_id",
    "drop_no_route": _IG + "routing.drop_no_route",
    "next_hop": _IG + "routing.next_hop",
    "set_output": _IG + "routing.set_output",
    "selector": _IG + "routing.ecmp_selector",
    "switch_config": _IG + "config.switch_config",
    "set_config": _IG + "config.set_config",
    "arp_reply": _IG + "arp.arp_reply",
    "reply": _IG + "arp.reply",
    "acl": _IG + "acl.acl",
    "dscp_to_tc": _IG + "qos.dscp_to_tc",
    "set_tc": _IG + "qos.set_tc",
    "tc_to_queue": _IG + "qos.tc_to_queue",
    "set_queue": _IG + "qos.set_queue",
    "ecn_threshold": _EG + "ecn.ecn_threshold",
    "set_ecn_threshold": _EG + "ecn.set_ecn_threshold",
    "rx_port": _IG + "counters.rx_port",
    "rx_port_tc": _IG + "counters.rx_port_tc",
    "drops": _IG + "counters.drops",
    "tx_port": _EG + "counters.tx_port",
    "tx_port_tc": _EG + "counters.tx_port_tc",
    "ecn_marked": _EG + "ecn.ecn_marked",
}
# MODE_* and DROP_* of p4/include/define.p4.
MODES = {"pin": 0, "ecmp": 1, "eecmp": 2}
DROP = {"no_route": 1, "ttl": 2, "pfc": 3, "acl": 4, "not_ip": 5, "parser": 6, "checksum": 7}
TCS = 8


class Dataplane:
    """One test's handle on the switch (see the module docstring)."""

    def __init__(self, sut: SwitchUnderTest) -> None:
        assert sut.session is not None and sut.stream is not None and sut.ports is not None
        self.sut = sut
        self.session: SwitchSession = sut.session
        self.stream: PacketStream = sut.stream
        self.ports: PortSet = sut.ports
        self.target = sut.target
        self._undo: list[Callable[[], None]] = []
        self._members: set[int] = set()
        self._next_ids: set[int] = set()

    # --- writes, journalled ----------------------------------------------------

    def insert(self, *entities: Entity) -> None:
        for e in entities:
            self.session.insert([e])
            self._undo.append(lambda e=e: self.session.delete([e]))

    def modify(self, entity: TableEntry | Group) -> None:
        """MODIFY an entry or group; the old one comes back on undo."""
        if isinstance(entity, Group):
            old = next(g for g in self.session.read_groups(entity.profile)
                       if g.group_id == entity.group_id)
        else:
            old = next(e for e in self.session.read_table(entity.table)
                       if isinstance(e, TableEntry) and e.key() == entity.key())
        self.session.modify([entity])
        self._undo.append(lambda: self.session.modify([old]))

    def set_default(self, table: str, action: Action) -> None:
        old = self.session.read_default(table)
        self.session.write([TableEntry(table=table, action=action, is_default=True)])
        if old is not None:
            self._undo.append(lambda: self.session.write([old]))

    def undo(self) -> None:
        """Undo every write of this test, newest first; raise after trying them all."""
        errors = []
        while self._undo:
            try:
                self._undo.pop()()
            except Exception as exc:  # noqa: BLE001 - report them all at the end
                errors.append(exc)
        self._members.clear()
        self._next_ids.clear()
        if errors:
            raise AssertionError(f"undoing the test's writes failed: {errors}")

    # --- forwarding state ------------------------------------------------------

    def add_member(self, port: int) -> int:
        """The selector member that sends out of `port` (member id = port)."""
        if port not in self._members:
            self.insert(Member(profile=NAMES["selector"], member_id=port, action=Action(
                name=NAMES["set_output"], params=(("port", port), ("src_mac", _mac(switch_mac(port))),
                                                  ("dst_mac", _mac(peer_mac(port)))))))
            self._members.add(port)
        return port

    def add_next_hop(self, port: int) -> int:
        """next_id = port -> that port's member (no hashing); returns the next_id."""
        self.add_member(port)
        if port not in self._next_ids:
            self.insert(TableEntry(table=NAMES["next_hop"], match=(("next_id", Exact(value=port)),),
                                   member_id=port))
            self._next_ids.add(port)
        return port

    def add_ecmp_group(self, group_id: int, ports: Iterable[int]) -> int:
        """A selector group over `ports` and next_id = group_id pointing at it."""
        members = tuple(self.add_member(p) for p in ports)
        self.insert(Group(profile=NAMES["selector"], group_id=group_id, members=members,
                          max_size=len(members)),
                    TableEntry(table=NAMES["next_hop"], match=(("next_id", Exact(value=group_id)),),
                               group_id=group_id))
        self._next_ids.add(group_id)
        return group_id

    def add_route(self, prefix: str, next_id: int) -> TableEntry:
        entry = self._route(prefix, Action(name=NAMES["set_next_id"],
                                           params=(("next_id", next_id),)))
        self.insert(entry)
        return entry

    def add_drop_route(self, prefix: str) -> TableEntry:
        entry = self._route(prefix, Action(name=NAMES["drop_no_route"]))
        self.insert(entry)
        return entry

    @staticmethod
    def _route(prefix: str, action: Action) -> TableEntry:
        net = ipaddress.ip_network(prefix)
        table = NAMES["ipv4_route"] if net.version == 4 else NAMES["ipv6_route"]
        return TableEntry(table=table, match=(("dst_addr", Lpm(
            value=int(net.network_address), prefix_len=net.prefixlen)),), action=action)

    def set_mode(self, mode: str, salt: int = 0) -> None:
        self.set_default(NAMES["switch_config"], Action(
            name=NAMES["set_config"], params=(("mode", MODES[mode]), ("salt", salt))))

    def add_arp_reply(self, ip: str, mac: str) -> None:
        self.insert(TableEntry(
            table=NAMES["arp_reply"], match=(("target_ip", Exact(value=int(ipaddress.IPv4Address(ip)))),),
            action=Action(name=NAMES["reply"], params=(("router_mac", _mac(mac)),))))

    def map_dscp(self, dscp: int, tc: int, *, mask: int = 0x3F, priority: int = 10) -> None:
        self.insert(TableEntry(table=NAMES["dscp_to_tc"],
                               match=(("dscp", Ternary(value=dscp, mask=mask)),),
                               action=Action(name=NAMES["set_tc"], params=(("tc", tc),)),
                               priority=priority))

    def map_tc_to_queue(self, tc: int, queue: int) -> None:
        self.insert(TableEntry(table=NAMES["tc_to_queue"], match=(("tc", Exact(value=tc)),),
                               action=Action(name=NAMES["set_queue"], params=(("queue", queue),))))

    def set_ecn_threshold(self, port: int, tc: int, depth: int) -> None:
        self.insert(TableEntry(table=NAMES["ecn_threshold"],
                               match=(("port", Exact(value=port)), ("tc", Exact(value=tc))),
                               action=Action(name=NAMES["set_ecn_threshold"],
                                             params=(("depth", depth),))))

    def add_acl(self, action: str, *, priority: int = 10,
                **match: tuple[int, int]) -> TableEntry:
        """An ACL entry; `match` is field name -> (value, mask), e.g. eth_type=(0x88cc, 0xffff)."""
        entry = TableEntry(table=NAMES["acl"],
                           match=tuple((k, Ternary(value=v, mask=m)) for k, (v, m) in match.items()),
                           action=Action(name=f"{_IG}acl.{action}"), priority=priority)
        self.insert(entry)
        return entry

    # --- packets ---------------------------------------------------------------

    def send(self, port: int, pkt: Packet | bytes) -> None:
        self.ports.send(port, bytes(pkt))

    def expect(self, port: int, exp: Packet | bytes | Mask, timeout: float = 2.0) -> Received:
        """The frame `exp` (exact, or per its Mask) arrives on `port` within `timeout`."""
        mask = exp if isinstance(exp, Mask) else Mask(exp)
        got = self.ports.take(port, mask.matches, timeout)
        if got is None:
            seen = {p: [r.frame.hex() for r in self.ports.frames[p]]
                    for p in self.ports.frames if self.ports.frames[p]}
            raise AssertionError(f"expected on port {port} within {timeout}s: {mask!r}\n"
                                 f"  wanted {mask.exp.hex()}\n  frames that did arrive: {seen}")
        return got

    def expect_none(self, ports: Iterable[int] | None = None, timeout: float = 0.3) -> None:
        """No frame at all arrives on `ports` (default: every port) for `timeout` seconds."""
        time.sleep(timeout)
        got = self.ports.pending(ports)
        assert not got, f"unexpected frames: {[(r.port, r.frame.hex()) for r in got]}"

    def collect(self, n: int, ports: Iterable[int] | None = None,
                timeout: float = 5.0) -> list[Received]:
        """Wait for `n` frames on `ports` and return them (arrival order)."""
        return self.ports.wait_count(n, ports, timeout)

    def ports_by_tag(self, n: int, ports: Iterable[int], timeout: float = 5.0) -> dict[int, int]:
        """Collect `n` tagged frames: tag -> port it left on (each tag must arrive once)."""
        out: dict[int, int] = {}
        for r in self.collect(n, ports, timeout):
            tag = flow_tag(r.frame)
            assert tag is not None and tag not in out, f"untagged or duplicate frame {r.frame.hex()}"
            out[tag] = r.port
        assert len(out) == n, f"{n} frames sent, {len(out)} arrived"
        return out

    def packet_out(self, frame: bytes, port: int) -> None:
        self.stream.packet_out(frame, egress_port=port)

    def expect_packet_in(self, timeout: float = 2.0) -> PacketIn:
        got = self.stream.next_packet_in(timeout)
        assert got is not None, f"no packet-in within {timeout}s"
        return got

    # --- counters --------------------------------------------------------------

    def counter(self, name: str, index: int) -> CounterValue:
        return self.session.read_counters(NAMES.get(name, name), index)[index]

    def port_tc(self, port: int, tc: int) -> int:
        """The (port, class) cell index of the per-class counters."""
        return port * TCS + tc

    def direct_counter(self, entry: TableEntry) -> tuple[int, int]:
        """(packets, bytes) of a table entry's direct counter."""
        assert self.session.schema is not None
        te = encode_entity(self.session.schema, entry).table_entry
        got = self.session.read_raw([p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
            table_entry=te))])
        assert len(got) == 1, got
        data = got[0].direct_counter_entry.data
        return data.packet_count, data.byte_count

    def wait_counter(self, read: Callable[[], tuple[int, int] | CounterValue],
                     want: tuple[int, int], timeout: float = 3.0) -> tuple[int, int]:
        """Poll `read` until it gives `want` (packets, bytes); a short settle re-read
        makes sure it did not go past it. Returns the last value."""
        deadline = time.monotonic() + timeout
        value = _pb(read())
        while value != want and time.monotonic() < deadline:
            if value[0] > want[0]:
                break
            time.sleep(0.03)
            value = _pb(read())
        if value == want:
            time.sleep(0.1)
            value = _pb(read())
        return value


def _pb(v: tuple[int, int] | CounterValue) -> tuple[int, int]:
    return (v.packets, v.bytes) if isinstance(v, CounterValue) else v


def _mac(text: str) -> int:
    return int(text.replace(":", ""), 16)
