"""The server driving the real pipeline with route.p4 (an IPv4 router): forwarding, counters, packet I/O."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from p4switch.io import MemoryPorts
from p4switch.proto import p4i, p4r
from p4switch.server import P4RuntimeServer

from .conftest import Client, compiled, switch_factory, update


@pytest.fixture(scope="module")
def route_program() -> tuple[p4i.P4Info, bytes]:
    return compiled("route.p4")


def _serving(program: tuple[p4i.P4Info, bytes]) -> Iterator[tuple[Client, MemoryPorts, p4i.P4Info]]:
    """A server on ports 1-3 (CPU port 255) running `program`, and a client with its stream."""
    info, blob = program
    ports = MemoryPorts([1, 2, 3])
    srv = P4RuntimeServer(device_id=1, address="127.0.0.1:0", transmit=ports.transmit, cpu_port=255,
                          factory=switch_factory).start()
    ports.start(srv.process)
    c = Client(f"127.0.0.1:{srv.port}")
    c.stream(10)
    c.set_pipeline(p4info=info, device_config=blob, cookie=1)
    yield c, ports, info
    c.close()
    srv.stop(grace=0)


@pytest.fixture
def rclient(route_program) -> Iterator[tuple[Client, MemoryPorts, p4i.P4Info]]:
    yield from _serving(route_program)


def ids(info: p4i.P4Info):
    t = next(t for t in info.tables if t.preamble.name == "MyIngress.ipv4_route")
    acts = {a.preamble.name.split(".")[-1]: a for a in info.actions}
    return t, acts


def route_entry(info, prefix: bytes, plen: int, port: int, dmac: int) -> p4r.TableEntry:
    t, acts = ids(info)
    te = p4r.TableEntry(table_id=t.preamble.id)
    fm = te.match.add(field_id=t.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = prefix, plen
    a = acts["route"]
    te.action.action.action_id = a.preamble.id
    te.action.action.params.add(param_id=a.params[0].id, value=bytes([port]))
    te.action.action.params.add(param_id=a.params[1].id, value=dmac.to_bytes(6, "big").lstrip(b"\0") or b"\0")
    return te


def ipv4_frame(dst: str = "10.0.2.2", ttl: int = 64) -> bytes:
    from scapy.all import IP, UDP, Ether, Raw

    return bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:01:01") / IP(dst=dst, ttl=ttl)
                 / UDP(dport=4791) / Raw(b"x" * 20))


def test_route_forwards_and_counts(rclient) -> None:
    """An LPM route written over P4Runtime forwards, rewrites and counts the packet."""
    c, ports, info = rclient
    te = route_entry(info, b"\x0a\x00\x02\x00", 24, 2, 0x020000000202)
    c.write(update("INSERT", table_entry=te))
    ports.inject(1, ipv4_frame())
    out = ports.wait_sent(2)
    from scapy.all import Ether

    pkt = Ether(out)
    assert pkt.dst == "02:00:00:00:02:02" and pkt["IP"].ttl == 63
    read = c.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=te.table_id, counter_data=p4r.CounterData())))
    got = read[0].table_entry
    assert got.counter_data.packet_count == 1 and got.counter_data.byte_count == len(ipv4_frame())
    got.ClearField("counter_data")
    assert got == te


def test_direct_counter_written_by_client_reads_back(rclient) -> None:
    """DirectCounterEntry MODIFY on the real pipeline."""
    c, ports, info = rclient
    te = route_entry(info, b"\x0a\x00\x02\x00", 24, 2, 0x020000000202)
    c.write(update("INSERT", table_entry=te))
    key = p4r.TableEntry(table_id=te.table_id, match=te.match)
    c.write(update("MODIFY", direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=key, data=p4r.CounterData(packet_count=7, byte_count=70))))
    got = c.read(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(table_entry=key)))
    assert got[0].direct_counter_entry.data == p4r.CounterData(packet_count=7, byte_count=70)


def test_default_entry_reads_program_default_then_modified(rclient) -> None:
    """The default entry is the program's (drop) until modified, and resets."""
    c, ports, info = rclient
    t, acts = ids(info)
    req = p4r.TableEntry(table_id=t.preamble.id, is_default_action=True)
    got = c.read(p4r.Entity(table_entry=req))[0].table_entry
    assert got.action.action.action_id == acts["drop"].preamble.id
    new = p4r.TableEntry(table_id=t.preamble.id, is_default_action=True)
    new.action.action.action_id = acts["to_cpu"].preamble.id
    c.write(update("MODIFY", table_entry=new))
    assert c.read(p4r.Entity(table_entry=req))[0].table_entry == new
    c.write(update("MODIFY", table_entry=req))
    assert c.read(p4r.Entity(table_entry=req))[0].table_entry.action.action.action_id == acts["drop"].preamble.id


def test_packet_in_carries_ingress_port(rclient) -> None:
    """A packet the program sends to the CPU port arrives as PacketIn with its metadata."""
    c, ports, info = rclient
    frame = bytes.fromhex("ffffffffffff020000000101" "0806") + bytes(28)
    ports.inject(3, frame)
    msg = c.streams[0].recv()
    assert msg.packet.payload == frame
    cpm = next(m for m in info.controller_packet_metadata if m.preamble.name == "packet_in")
    by_name = {m.name: m.id for m in cpm.metadata}
    meta = {m.metadata_id: m.value for m in msg.packet.metadata}
    assert meta[by_name["ingress_port"]] == b"\x03"


def test_packet_out_leaves_on_requested_port(rclient) -> None:
    """A PacketOut is injected at the CPU port with its packet_out header and forwarded."""
    c, ports, info = rclient
    cpm = next(m for m in info.controller_packet_metadata if m.preamble.name == "packet_out")
    out = p4r.PacketOut(payload=ipv4_frame())
    for m in cpm.metadata:
        out.metadata.add(metadata_id=m.id, value=b"\x02" if m.name == "egress_port" else b"\x00")
    c.streams[0].send(p4r.StreamMessageRequest(packet=out))
    assert ports.wait_sent(2) == ipv4_frame()


def test_get_config_returns_what_was_set(rclient, route_program) -> None:
    """GetForwardingPipelineConfig is symmetric with Set (P4Info, device config, cookie)."""
    c, _, info = rclient
    cfg = c.stub.GetForwardingPipelineConfig(p4r.GetForwardingPipelineConfigRequest(device_id=1)).config
    assert cfg.p4info == info and cfg.p4_device_config == route_program[1] and cfg.cookie.cookie == 1


@pytest.fixture
def sclient() -> Iterator[tuple[Client, MemoryPorts, p4i.P4Info]]:
    """cpu_struct.p4's switch: controller headers holding a struct of bit fields."""
    yield from _serving(compiled("cpu_struct.p4"))


def test_controller_header_struct_fields_by_path(sclient) -> None:
    """A struct in a controller header: each of its fields is a metadata named by its path
    (as p4c-bm2-ss names them), a PacketOut's `port.egress` picks the port, and a PacketIn
    carries `port.ingress` and `reason` where the program put them."""
    c, ports, info = sclient
    cpm = {m.preamble.name: [(md.id, md.name, md.bitwidth) for md in m.metadata]
           for m in info.controller_packet_metadata}
    assert cpm == {"packet_out": [(1, "kind", 8), (2, "port.egress", 9), (3, "port.pad", 7)],
                   "packet_in": [(1, "port.pad", 7), (2, "port.ingress", 9), (3, "reason", 8)]}
    frame = bytes.fromhex("020000000002" "020000000001" "0800") + bytes(46)
    out = p4r.PacketOut(payload=frame)
    for mid, value in ((1, b"\x05"), (2, b"\x03"), (3, b"\x00")):
        out.metadata.add(metadata_id=mid, value=value)
    c.streams[0].send(p4r.StreamMessageRequest(packet=out))
    assert ports.wait_sent(3) == frame
    ports.inject(2, frame)
    msg = c.streams[0].recv()
    assert msg.packet.payload == frame
    assert {m.metadata_id: m.value for m in msg.packet.metadata} == {1: b"\x00", 2: b"\x02", 3: b"\x07"}
