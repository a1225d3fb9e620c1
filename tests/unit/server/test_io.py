"""Ports: in-memory ports, and raw-socket ports on a veth pair (root)."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import threading
import uuid

import pytest

from p4switch.io import MemoryPorts, PcapWriter, PortError, RawPorts, parse_interface

FRAME = bytes.fromhex("020000000002" "020000000001" "88b5") + b"aizone-test" + bytes(40)


@pytest.mark.parametrize("spec,expected", [("1@veth1", (1, "veth1")), ("0x10@eth0", (16, "eth0"))],
                         ids=["decimal", "hex"])
def test_parse_interface(spec, expected) -> None:
    """-i PORT@IFACE as simple_switch."""
    assert parse_interface(spec) == expected


@pytest.mark.parametrize("spec", ["veth1", "x@veth1", "1@"], ids=["no-at", "bad-port", "no-name"])
def test_parse_interface_rejects_bad_specs(spec) -> None:
    with pytest.raises(ValueError):
        parse_interface(spec)


def test_memory_ports_deliver_and_count(tmp_path) -> None:
    """Injected frames reach the sink; transmitted ones are kept, counted and captured."""
    got = []
    ports = MemoryPorts([1, 2], pcap_dir=str(tmp_path))
    ports.start(lambda p, f: (got.append((p, f)), ports.transmit(2, f)))
    ports.inject(1, FRAME)
    assert got == [(1, FRAME)]
    assert ports.wait_sent(2) == FRAME
    st = ports.stats()
    assert (st[1].rx_packets, st[2].tx_packets, st[2].tx_bytes) == (1, 1, len(FRAME))
    ports.stop()
    assert read_pcap(tmp_path / "port2_out.pcap") == [FRAME]


def read_pcap(path) -> list[bytes]:
    data = open(path, "rb").read()
    magic, = struct.unpack("<I", data[:4])
    assert magic == 0xA1B2C3D4
    out, pos = [], 24
    while pos < len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[pos:pos + 16])
        out.append(data[pos + 16:pos + 16 + incl])
        pos += 16 + incl
    return out


def test_pcap_dir_must_exist(tmp_path) -> None:
    """--pcap into a missing directory is a PortError."""
    with pytest.raises(PortError):
        MemoryPorts([1], pcap_dir=str(tmp_path / "missing"))


def test_pcap_writer_header(tmp_path) -> None:
    """The pcap global header is Ethernet, snaplen 65535."""
    w = PcapWriter(str(tmp_path / "x.pcap"))
    w.close()
    hdr = open(tmp_path / "x.pcap", "rb").read()
    assert struct.unpack("<IHHiIII", hdr) == (0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


@pytest.fixture
def veth():
    """A veth pair (a, b) in the root namespace, removed afterwards."""
    tag = uuid.uuid4().hex[:6]
    a, b = f"p4sa{tag}", f"p4sb{tag}"
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    try:
        for n in (a, b):
            subprocess.run(["ip", "link", "set", n, "up"], check=True)
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{n}.disable_ipv6=1"], check=False)
        yield a, b
    finally:
        subprocess.run(["ip", "link", "del", a], check=False)


def raw(name: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
    s.bind((name, 0))
    s.settimeout(2)
    return s


@pytest.mark.root
def test_missing_interface_is_port_error() -> None:
    """A name that is not an interface cannot be a port."""
    with pytest.raises(PortError, match="does not exist"):
        RawPorts({1: "nosuchif0"})


@pytest.mark.root
def test_raw_ports_receive_and_transmit(veth, tmp_path) -> None:
    """Frames arriving on the interface reach the sink; transmitted frames leave it,
    and a port never receives what it sent itself."""
    a, b = veth
    got: list[tuple[int, bytes]] = []
    ev = threading.Event()
    ports = RawPorts({7: a}, pcap_dir=str(tmp_path))
    ports.start(lambda p, f: (got.append((p, f)), ev.set()))
    peer = raw(b)
    try:
        ports.transmit(7, FRAME)
        assert peer.recv(2048)[:len(FRAME)] == FRAME
        # What leaves the interface is never an arrival, whoever sends it (here a second
        # socket on it, as the host's own stack would).
        stray = FRAME.replace(b"aizone-test", b"aizone-out!")
        with raw(a) as other:
            other.send(stray)
            assert peer.recv(2048)[:len(stray)] == stray
        answer = FRAME.replace(b"aizone-test", b"aizone-peer")
        peer.send(answer)
        assert ev.wait(2)
        # Both frames that went out left before the peer's came in: had either been taken
        # as received, it would be the first frame the sink got.
        assert [(p, f[:len(answer)]) for p, f in got] == [(7, answer)]
        st = ports.stats()[7]
        assert st.tx_packets == 1 and st.rx_packets >= 1
    finally:
        peer.close()
        ports.stop()
    assert read_pcap(os.path.join(tmp_path, f"{a}_out.pcap")) == [FRAME]
