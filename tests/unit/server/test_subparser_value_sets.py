"""A value set in a sub-parser instantiated twice: each instance's set is its own P4Info entity
and P4Runtime writes reach the instance they name (corpus program subparser_value_sets.p4)."""

from __future__ import annotations

import time

from p4switch.io import MemoryPorts
from p4switch.proto import p4i, p4r

from .conftest import Client, compiled, update

PROGRAM = "../frontend/corpus/valid/subparser_value_sets.p4"
ETH = bytes(6 * [0x02]) + bytes(6 * [0x04]) + b"\x88\xb5"


def _set_id(info: p4i.P4Info, name: str) -> int:
    return next(v.preamble.id for v in info.value_sets if v.preamble.name == name)


def _members(vs_id: int, *kinds: int) -> p4r.Update:
    e = p4r.ValueSetEntry(value_set_id=vs_id)
    for k in kinds:
        e.members.add().match.add(field_id=1).exact.value = bytes([k])
    return update("MODIFY", value_set_entry=e)


def _port_of(ports: MemoryPorts, frame: bytes) -> int | None:
    """The port `frame` (sent in on port 9) leaves by, among 1-4."""
    ports.inject(9, frame)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        for port in (1, 2, 3, 4):
            if ports.sent[port]:
                assert ports.sent[port].popleft() == frame
                return port
        time.sleep(0.01)
    return None


def test_each_instance_of_a_sub_parser_has_its_own_value_set(client: Client, ports: MemoryPorts) -> None:
    """Empty sets: no marker parsed, port 1. p1's set {0x11}: the first tag's marker, port 2.
    p2's set {0x22} too: both markers of kinds (0x11, 0x22), port 4; a frame of kinds (0x22,
    0x11) then parses neither (each kind is in the other instance's set only): port 1."""
    info, blob = compiled(PROGRAM)
    assert sorted(v.preamble.name for v in info.value_sets) == ["MyParser.p1.kinds", "MyParser.p2.kinds"]
    client.stream(10)
    client.set_pipeline(p4info=info, device_config=blob)
    p1, p2 = _set_id(info, "MyParser.p1.kinds"), _set_id(info, "MyParser.p2.kinds")

    both = ETH + bytes([0x11, 0xA1, 0x22, 0xA2]) + b"payload"
    assert _port_of(ports, both) == 1
    client.write(_members(p1, 0x11))
    assert _port_of(ports, both) == 2
    client.write(_members(p2, 0x22))
    assert _port_of(ports, both) == 4
    crossed = ETH + bytes([0x22, 0x11]) + b"payload"
    assert _port_of(ports, crossed) == 1
    got = client.read(p4r.Entity(value_set_entry=p4r.ValueSetEntry(value_set_id=p2)))
    assert [m.match[0].exact.value for m in got[0].value_set_entry.members] == [b"\x22"]
