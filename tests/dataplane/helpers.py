"""What a dataplane test does to a switch: P4Runtime writes (undone afterwards), packets, counters.

`Dataplane(sut)` wraps one `SwitchUnderTest` for one test. Every write goes
through it and is journalled; `undo()` (called by the base fixture after
each test) deletes what was inserted and restores defaults and modified
entries, newest first, so the next test finds the switch as the program
left it. Only P4Runtime and the ports are used, never the target's inside.

Writes: `add_next_hop`, `add_ecmp_group`, `add_route`, `add_drop_route`,
`set_mode`, `add_arp_reply`, `map_dscp`, `map_tc_to_queue`,
`set_ecn_threshold`, `add_acl`, `set_register`. Packets: `send`, `expect`,
`expect_none`, `collect`, `packet_out`, `expect_packet_in`. Counters and
registers: `counter`, `direct_counter`, `register`, `wait_counter`.

Entities are finsy's (`P4TableEntry`, `P4ActionProfileMember`, ...) with
P4Runtime names, written through the test's `SyncSwitch` session; the
undo journal keeps what to write back.

Names defined here: `Dataplane`, `CounterValue`, `NAMES`, `MODES`, `DROP`,
`TC_CONTROL`.
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pytest
from finsy import (
    P4ActionProfileGroup,
    P4ActionProfileMember,
    P4CloneSessionEntry,
    P4CounterEntry,
    P4DirectCounterEntry,
    P4IndirectAction,
    P4Member,
    P4PacketIn,
    P4RegisterEntry,
    P4TableAction,
    P4TableEntry,
    P4TableMatch,
)
from scapy.packet import Packet

from controller.syncswitch import SyncSwitch

from .packets import flow_tag, peer_mac, switch_mac
from .ports import Mask, PortSet, Received
from .switch import SwitchUnderTest

__all__ = ["DROP", "MODES", "NAMES", "PFC_FRAME_BYTES", "PFC_SESSION_BASE", "TC_CONTROL",
           "CounterValue", "Dataplane", "quantum_q16"]

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
    "ack_queue": _IG + "qos.ack_queue",
    "ecn_threshold": _EG + "ecn.ecn_threshold",
    "set_ecn_threshold": _EG + "ecn.set_ecn_threshold",
    "rx_port": _IG + "counters.rx_port",
    "rx_port_tc": _IG + "counters.rx_port_tc",
    "drops": _IG + "counters.drops",
    "tx_port": _EG + "counters.tx_port",
    "tx_port_tc": _EG + "counters.tx_port_tc",
    "ecn_marked": _EG + "ecn.ecn_marked",
    "queue_depth": _EG + "counters.queue_depth",
    "queue_peak": _EG + "counters.queue_peak",
    "pfc_xoff": _IG + "pfc.pfc_xoff",
    "set_xoff": _IG + "pfc.set_xoff",
    "pfc_port": _EG + "pfc.pfc_port",
    "set_pfc_port": _EG + "pfc.set_pfc_port",
    "pfc_tx": _EG + "pfc.pfc_tx",
    "pfc_honour": _IG + "pfc.pfc_honour",
    "honour": _IG + "pfc.honour",
    "pfc_hold": _EG + "pfc.pfc_hold",
    "hold": _EG + "pfc.hold",
    "pfc_rx": _EG + "pfc.pfc_rx",
    "pfc_storms": _EG + "pfc.pfc_storms",
    "drain_passes": _IG + "pfc.drain_passes",
    "pfc_drain": _IG + "pfc.pfc_drain",
    "drain_via": _IG + "pfc.drain_via",
}
# PFC_SESSION_BASE of p4/include/define.p4: PFC frames out of port p use clone session base + p.
PFC_SESSION_BASE = 1024
PFC_FRAME_BYTES = 60
# MODE_* and DROP_* of p4/include/define.p4.
MODES = {"pin": 0, "ecmp": 1, "eecmp": 2}
DROP = {"no_route": 1, "ttl": 2, "pfc": 3, "acl": 4, "not_ip": 5, "parser": 6, "checksum": 7}
TCS = 8
TC_CONTROL = 7


@dataclass(frozen=True, kw_only=True)
class CounterValue:
    """One cell of an indexed counter."""

    index: int
    packets: int
    bytes: int


class Dataplane:
    """One test's handle on the switch (see the module docstring)."""

    def __init__(self, sut: SwitchUnderTest) -> None:
        assert sut.session is not None and sut.ports is not None
        self.sut = sut
        self.session: SyncSwitch = sut.session
        self.ports: PortSet = sut.ports
        self.target = sut.target
        self._undo: list[Callable[[], None]] = []
        self._members: set[int] = set()
        self._next_ids: set[int] = set()

    def p4switch_only(self, why: str) -> None:
        """Skip the test on other targets, saying why it cannot pass there."""
        if self.target != "p4switch":
            pytest.skip(f"p4switch only: {why}")

    # --- writes, journalled ----------------------------------------------------

    def insert(self, *entities: Any) -> None:
        for e in entities:
            self.session.insert([e])
            self._undo.append(lambda e=e: self.session.delete([e]))

    def modify(self, entity: P4TableEntry | P4ActionProfileGroup) -> None:
        """MODIFY an entry or group; the old one comes back on undo."""
        if isinstance(entity, P4ActionProfileGroup):
            old = next(g for g in self.session.read(P4ActionProfileGroup(entity.action_profile_id))
                       if g.group_id == entity.group_id)
        else:
            key = self._key(entity)
            old = next(e for e in self.session.read(P4TableEntry(entity.table_id))
                       if self._key(e) == key)
        self.session.modify([entity])
        self._undo.append(lambda: self.session.modify([old]))

    def _key(self, entry: P4TableEntry) -> tuple[bytes, int]:
        """What identifies an entry in its table: its encoded match, and its priority."""
        te = entry.encode_entry(self.session.schema)
        return b"".join(m.SerializeToString(deterministic=True) for m in te.match), te.priority

    def set_default(self, table: str, action: P4TableAction) -> None:
        old = self.session.read(P4TableEntry(table, is_default_action=True))
        self.session.modify([P4TableEntry(table, action=action, is_default_action=True)])
        if old:
            self._undo.append(lambda: self.session.modify(old))

    def set_register(self, name: str, index: int, value: int) -> None:
        """Write one register cell (see `register`); the old value comes back on undo."""
        old = self.register(name, index)
        self._write_register(NAMES.get(name, name), index, value)
        self._undo.append(lambda: self._write_register(NAMES.get(name, name), index, old))

    def _write_register(self, name: str, index: int, value: int) -> None:
        if self.target == "bmv2":
            self.sut.bmv2_cli([f"register_write {name} {index} {value}"])
        else:
            self.session.modify([P4RegisterEntry(name, index=index, data=value)])

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
            self.insert(P4ActionProfileMember(NAMES["selector"], member_id=port, action=P4TableAction(
                NAMES["set_output"], port=port, src_mac=switch_mac(port), dst_mac=peer_mac(port))))
            self._members.add(port)
        return port

    def add_next_hop(self, port: int) -> int:
        """next_id = port -> that port's member (no hashing); returns the next_id."""
        self.add_member(port)
        if port not in self._next_ids:
            self.insert(P4TableEntry(NAMES["next_hop"], match=P4TableMatch(next_id=port),
                                     action=P4IndirectAction(member_id=port)))
            self._next_ids.add(port)
        return port

    def add_ecmp_group(self, group_id: int, ports: Iterable[int]) -> int:
        """A selector group over `ports` and next_id = group_id pointing at it."""
        members = [self.add_member(p) for p in ports]
        self.insert(self.group(group_id, members),
                    P4TableEntry(NAMES["next_hop"], match=P4TableMatch(next_id=group_id),
                                 action=P4IndirectAction(group_id=group_id)))
        self._next_ids.add(group_id)
        return group_id

    @staticmethod
    def group(group_id: int, members: Iterable[int], max_size: int = 0) -> P4ActionProfileGroup:
        """The selector group `group_id` over `members` (weight 1 each)."""
        ms = [P4Member(m, weight=1) for m in members]
        return P4ActionProfileGroup(NAMES["selector"], group_id=group_id,
                                    max_size=max_size or len(ms), members=ms)

    def add_route(self, prefix: str, next_id: int) -> P4TableEntry:
        entry = self._route(prefix, P4TableAction(NAMES["set_next_id"], next_id=next_id))
        self.insert(entry)
        return entry

    def add_drop_route(self, prefix: str) -> P4TableEntry:
        entry = self._route(prefix, P4TableAction(NAMES["drop_no_route"]))
        self.insert(entry)
        return entry

    @staticmethod
    def _route(prefix: str, action: P4TableAction) -> P4TableEntry:
        net = ipaddress.ip_network(prefix)
        table = NAMES["ipv4_route"] if net.version == 4 else NAMES["ipv6_route"]
        return P4TableEntry(table, match=P4TableMatch(dst_addr=(int(net.network_address),
                                                                net.prefixlen)), action=action)

    def set_mode(self, mode: str, salt: int = 0) -> None:
        self.set_default(NAMES["switch_config"], P4TableAction(
            NAMES["set_config"], mode=MODES[mode], salt=salt))

    def add_arp_reply(self, ip: str, mac: str) -> None:
        self.insert(P4TableEntry(
            NAMES["arp_reply"], match=P4TableMatch(target_ip=int(ipaddress.IPv4Address(ip))),
            action=P4TableAction(NAMES["reply"], router_mac=mac)))

    def map_dscp(self, dscp: int, tc: int, *, mask: int = 0x3F, priority: int = 10) -> None:
        self.insert(P4TableEntry(NAMES["dscp_to_tc"], match=P4TableMatch(dscp=(dscp, mask)),
                                 action=P4TableAction(NAMES["set_tc"], tc=tc), priority=priority))

    def map_tc_to_queue(self, tc: int, queue: int) -> None:
        self.insert(P4TableEntry(NAMES["tc_to_queue"], match=P4TableMatch(tc=tc),
                                 action=P4TableAction(NAMES["set_queue"], queue=queue)))

    def map_ack_queue(self, tc: int, queue: int) -> None:
        self.insert(P4TableEntry(NAMES["ack_queue"], match=P4TableMatch(tc=tc),
                                 action=P4TableAction(NAMES["set_queue"], queue=queue)))

    def set_ecn_threshold(self, port: int, tc: int, depth: int) -> None:
        self.insert(P4TableEntry(NAMES["ecn_threshold"], match=P4TableMatch(port=port, tc=tc),
                                 action=P4TableAction(NAMES["set_ecn_threshold"], depth=depth)))

    def set_pfc_port(self, port: int, *, rate_bps: float, quanta: int = 0xFFFF,
                     refresh_us: int = 10_000_000, src_mac: str | None = None) -> None:
        """PFC on `port`: received PFC frames honoured at `rate_bps` (512 bit-times a
        quantum), frames sent out of it carry `quanta` (re-sent every `refresh_us`) and
        `src_mac`, through its clone session (truncated to a PFC frame)."""
        mac = src_mac or pfc_src_mac(port)
        self.insert(
            P4CloneSessionEntry(PFC_SESSION_BASE + port, replicas=[(port, 0)]),
            P4TableEntry(NAMES["pfc_honour"], match=P4TableMatch(port=port), action=P4TableAction(
                NAMES["honour"], quantum_q16_us=quantum_q16(rate_bps))),
            P4TableEntry(NAMES["pfc_port"], match=P4TableMatch(port=port), action=P4TableAction(
                NAMES["set_pfc_port"], mac=mac, xoff_quanta=quanta, refresh=refresh_us)))

    def set_lossless(self, port: int, tc: int, *, xoff: int, xon: int,
                     watchdog_us: int = 0) -> None:
        """(port, class) lossless: held towards the port while paused; what comes in on it
        in that class sends XOFF out of it at `xoff` bytes held in the switch, XON at `xon`;
        the PFC watchdog releases a pause longer than `watchdog_us` (0: off)."""
        self.insert(
            P4TableEntry(NAMES["pfc_xoff"], match=P4TableMatch(port=port, tc=tc),
                         action=P4TableAction(NAMES["set_xoff"], xoff_bytes=xoff, xon_bytes=xon)),
            P4TableEntry(NAMES["pfc_hold"], match=P4TableMatch(port=port, tc=tc),
                         action=P4TableAction(NAMES["hold"], watchdog=watchdog_us)))

    def set_drain(self, port: int, queue: int) -> None:
        """Held packets of `port` whose pause is over go round `queue` until their turn."""
        self.insert(P4TableEntry(NAMES["pfc_drain"], match=P4TableMatch(port=port),
                                 action=P4TableAction(NAMES["drain_via"], queue=queue)))

    def add_acl(self, action: str, *, priority: int = 10,
                **match: tuple[int, int]) -> P4TableEntry:
        """An ACL entry; `match` is field name -> (value, mask), e.g. eth_type=(0x88cc, 0xffff)."""
        entry = P4TableEntry(NAMES["acl"], match=P4TableMatch(match),
                             action=P4TableAction(f"{_IG}acl.{action}"), priority=priority)
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
        self.session.packet_out(frame, egress_port=port)

    def expect_packet_in(self, timeout: float = 2.0) -> P4PacketIn:
        got = self.session.next_packet_in(timeout)
        assert got is not None, f"no packet-in within {timeout}s"
        return got

    def no_packet_in(self, timeout: float) -> bool:
        return self.session.next_packet_in(timeout) is None

    # --- counters and registers ----------------------------------------------

    def counter(self, name: str, index: int) -> CounterValue:
        got = self.session.read(P4CounterEntry(NAMES.get(name, name), index=index))
        assert len(got) == 1 and got[0].index == index, got
        return CounterValue(index=index, packets=got[0].packet_count, bytes=got[0].byte_count)

    def port_tc(self, port: int, tc: int) -> int:
        """The (port, class) cell index of the per-class counters and registers."""
        return port * TCS + tc

    def direct_counter(self, entry: P4TableEntry) -> tuple[int, int]:
        """(packets, bytes) of a table entry's direct counter."""
        got = self.session.read(P4DirectCounterEntry(table_entry=entry))
        assert len(got) == 1, got
        return got[0].packet_count, got[0].byte_count

    def register(self, name: str, index: int) -> int:
        """One register cell, over P4Runtime; on BMv2 through its Thrift runtime, since its
        P4Runtime server (PI) answers RegisterEntry reads with UNIMPLEMENTED."""
        full = NAMES.get(name, name)
        if self.target == "bmv2":
            out = self.sut.bmv2_cli([f"register_read {full} {index}"])
            m = re.search(rf"{re.escape(full)}\[{index}\]\s*=\s*(\d+)", out)
            assert m is not None, f"simple_switch_CLI register_read said: {out.strip()}"
            return int(m.group(1))
        got = self.session.read(P4RegisterEntry(full, index=index))
        assert len(got) == 1 and got[0].index == index, got
        return int(got[0].data)

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


def quantum_q16(rate_bps: float) -> int:
    """Microseconds of one pause quantum (512 bit-times) at `rate_bps`, times 65536."""
    return round(512 / rate_bps * 1e6 * 65536)


def pfc_src_mac(port: int) -> str:
    """The source MAC the tests give PFC frames out of `port` (p4switch's native one)."""
    return f"02:50:46:43:00:{port:02x}"


def _pb(v: tuple[int, int] | CounterValue) -> tuple[int, int]:
    return (v.packets, v.bytes) if isinstance(v, CounterValue) else v
