"""Ports: in-memory ports, and raw-socket ports on a veth pair (root)."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import threading
import uuid

import pytest

from p4switch import io
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


# Both ways of moving frames: recvmmsg and sendmmsg through p4switch._rawio (the default;
# `make setup` fails when it did not build) and Python's recvmsg and send, one frame a call.
RECEIVE = pytest.mark.parametrize("batched", [True, False], ids=["batched", "per-frame"])


def test_the_batched_receive_is_built_and_the_default() -> None:
    """setup.py builds p4switch._rawio; ports use it unless told not to."""
    assert io._rawio is not None, "p4switch._rawio was not built: pip install -e . compiles p4switch/rawio.c"
    assert io._rawio.BATCH == io.RX_BATCH == 64


@pytest.mark.root
def test_batched_receive_without_the_module_is_a_port_error(veth, monkeypatch) -> None:
    """Asking for batched port I/O where the module did not build says what is missing."""
    monkeypatch.setattr(io, "_rawio", None)
    with pytest.raises(PortError, match=r"p4switch\._rawio.*rawio\.c"):
        RawPorts({1: veth[0]}, batched=True)
    assert RawPorts({1: veth[0]}).batched is False


@pytest.mark.root
@RECEIVE
def test_raw_ports_receive_and_transmit(veth, tmp_path, batched) -> None:
    """Frames arriving on the interface reach the sink; transmitted frames leave it,
    and a port never receives what it sent itself."""
    a, b = veth
    got: list[tuple[int, bytes]] = []
    ev = threading.Event()
    ports = RawPorts({7: a}, pcap_dir=str(tmp_path), batched=batched)
    assert ports.batched is batched
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


def tagged(tpid: int, tci: int, frame: bytes = FRAME) -> bytes:
    """`frame` with an 802.1Q-style tag (TPID, TCI) after its MAC addresses."""
    return frame[:12] + struct.pack(">HH", tpid, tci) + frame[12:]


def numbered(i: int) -> bytes:
    """FRAME with `i` in the four bytes after its text."""
    return FRAME[:25] + i.to_bytes(4, "big") + FRAME[29:]


def collect(ports: RawPorts, count: int) -> list[tuple[int, bytes]]:
    """Start `ports` and wait for `count` frames at its sink (fails after 5 s)."""
    got: list[tuple[int, bytes]] = []
    done = threading.Event()

    def sink(port: int, frame: bytes) -> None:
        got.append((port, frame))
        if len(got) >= count:
            done.set()

    ports.start(sink)
    assert done.wait(5), f"{len(got)} of {count} frames arrived"
    return got


@pytest.mark.root
@RECEIVE
def test_raw_ports_put_back_the_vlan_tag_the_kernel_took_out(veth, batched) -> None:
    """A tagged frame reaches the sink with its tag where it was (the kernel moves an
    outer 802.1Q or 802.1ad tag into the skb): a C-tag, an S-tag over a C-tag, and a
    priority tag (VID 0, PCP 0: TCI 0, present all the same); untagged frames stay so."""
    a, b = veth
    sent = [
        FRAME,
        tagged(0x8100, 0x6005),                          # PCP 3, VID 5
        tagged(0x88A8, 0x0064, tagged(0x8100, 0xA00A)),  # S-tag VID 100 over PCP 5 VID 10
        tagged(0x8100, 0x0000),                          # priority-tagged, all zero
    ]
    ports = RawPorts({3: a}, batched=batched)
    try:
        with raw(b) as peer:
            for frame in sent:
                peer.send(frame)
        got = collect(ports, len(sent))
    finally:
        ports.stop()
    assert got == [(3, f) for f in sent]
    assert ports.stats()[3].rx_bytes == sum(map(len, sent))


@pytest.mark.root
@RECEIVE
def test_raw_ports_hand_over_a_backlog_in_order_across_batches(veth, batched) -> None:
    """Frames that queued up before the loop started (five batches' worth) all reach the
    sink, once each and in the order they were sent."""
    a, b = veth
    count = 5 * io.RX_BATCH + 7
    ports = RawPorts({1: a}, batched=batched)
    try:
        with raw(b) as peer:
            for i in range(count):
                peer.send(numbered(i))
        got = collect(ports, count)
    finally:
        ports.stop()
    assert [int.from_bytes(f[25:29], "big") for _, f in got] == list(range(count))
    assert ports.stats()[1].rx_packets == count


@pytest.mark.root
@RECEIVE
def test_a_batch_sink_gets_each_ports_batches_in_order_and_per_frame_ports_ignore_it(
        veth, tmp_path, batched) -> None:
    """With `sink_many`, batched ports hand over what one `recvmmsg` took as one list (a
    backlog of five batches: at most RX_BATCH frames a call, every frame once, in the order
    sent), counted and captured as frame by frame; ports moving one frame a call keep
    calling `sink`."""
    a, b = veth
    count = 5 * io.RX_BATCH + 7
    ports = RawPorts({1: a}, pcap_dir=str(tmp_path), batched=batched)
    calls: list[tuple[str, int, list[bytes]]] = []
    done = threading.Event()

    def arrived() -> None:
        if sum(len(batch) for _, _, batch in calls) >= count:
            done.set()

    def sink(port: int, frame: bytes) -> None:
        calls.append(("one", port, [frame]))
        arrived()

    def sink_many(port: int, frames: list[bytes]) -> None:
        calls.append(("many", port, list(frames)))
        arrived()

    try:
        with raw(b) as peer:
            for i in range(count):
                peer.send(numbered(i))
        ports.start(sink, sink_many)
        assert done.wait(5), f"{sum(len(batch) for _, _, batch in calls)} of {count} frames arrived"
    finally:
        ports.stop()
    got = [frame for _, _, batch in calls for frame in batch]
    assert [int.from_bytes(f[25:29], "big") for f in got] == list(range(count))
    assert {(kind, port) for kind, port, _ in calls} == {("many" if batched else "one", 1)}
    if batched:
        assert all(1 <= len(batch) <= io.RX_BATCH for _, _, batch in calls)
        assert len(calls) >= 6  # 327 frames, 64 at most a call
    st = ports.stats()[1]
    assert (st.rx_packets, st.rx_bytes) == (count, sum(map(len, got)))
    assert read_pcap(tmp_path / f"{a}_in.pcap") == got


@pytest.mark.root
@RECEIVE
def test_raw_ports_drop_their_own_frames_by_type_without_ignore_outgoing(veth, batched) -> None:
    """On a kernel without PACKET_IGNORE_OUTGOING (turned off here) a port still never
    takes the frames leaving its interface as arrivals: it drops them by packet type."""
    a, b = veth
    ports = RawPorts({1: a}, batched=batched)
    ports._socks[1].setsockopt(io.SOL_PACKET, io.PACKET_IGNORE_OUTGOING, 0)
    ports._filter_outgoing.add(1)
    answer = FRAME.replace(b"aizone-test", b"aizone-peer")
    try:
        with raw(a) as own, raw(b) as peer:
            own.send(FRAME)  # leaves a: outgoing there
            assert peer.recv(2048)[:len(FRAME)] == FRAME
            peer.send(answer)
        got = collect(ports, 1)  # had the own frame been taken, it would be the first
    finally:
        ports.stop()
    assert got == [(1, answer)]


@pytest.mark.root
@RECEIVE
def test_frames_sent_from_the_sink_leave_in_order_counted_and_captured(veth, tmp_path, batched) -> None:
    """A forwarder's frames (transmitted on the loop's thread, held to the end of the
    round when batched) all leave, in order, each once, counted and in the capture."""
    a, b = veth
    count = 3 * io.RX_BATCH + 5
    ports = RawPorts({1: a}, pcap_dir=str(tmp_path), batched=batched)
    sent = [numbered(i) for i in range(count)]
    back = [f.replace(b"aizone-test", b"aizone-back") for f in sent]
    out: list[bytes] = []
    with raw(b) as peer:
        # Room for every answer, and not the peer's own frames on top.
        peer.setsockopt(io.SOL_PACKET, io.PACKET_IGNORE_OUTGOING, 1)
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        for f in sent:
            peer.send(f)
        ports.start(lambda p, f: ports.transmit(p, f.replace(b"aizone-test", b"aizone-back")))
        try:
            while len(out) < count:
                f = peer.recv(2048)
                if b"aizone-back" in f:
                    out.append(f[:len(FRAME)])
        finally:
            ports.stop()
    assert out == back
    st = ports.stats()[1]
    assert (st.tx_packets, st.tx_bytes, st.tx_drops) == (count, count * len(FRAME), 0)
    assert read_pcap(os.path.join(tmp_path, f"{a}_out.pcap")) == back


@pytest.mark.root
@RECEIVE
def test_frames_the_kernel_refuses_are_counted_as_drops(veth, batched) -> None:
    """Frames for a port whose interface is down are refused by the kernel: counted as
    tx drops, not sent; the frames for a port that is up still go."""
    a, b = veth
    tag = uuid.uuid4().hex[:6]
    c, d = f"p4sc{tag}", f"p4sd{tag}"
    subprocess.run(["ip", "link", "add", c, "type", "veth", "peer", "name", d], check=True)
    try:
        ports = RawPorts({1: a, 2: c}, batched=batched)  # c stays down
        done = threading.Event()

        def sink(port: int, frame: bytes) -> None:
            ports.transmit(2, frame)  # refused: c is down
            ports.transmit(1, frame.replace(b"aizone-test", b"aizone-back"))
            done.set()

        with raw(b) as peer:
            ports.start(sink)
            try:
                peer.send(FRAME)
                assert done.wait(2)
                f = peer.recv(2048)
                while b"aizone-back" not in f:
                    f = peer.recv(2048)
            finally:
                ports.stop()
        st = ports.stats()
        assert (st[2].tx_packets, st[2].tx_drops) == (0, 1)
        assert (st[1].tx_packets, st[1].tx_drops) == (1, 0)
    finally:
        subprocess.run(["ip", "link", "del", c], check=False)
