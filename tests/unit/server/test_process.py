"""p4switch as a process on veth pairs in network namespaces (root).

Compiles `route.p4` with the built-in front end, launches `p4switch` with two
ports, pushes the program over P4Runtime, installs a route and checks that a
packet sent with scapy in one namespace arrives, routed, in the other.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid

import pytest

from p4switch.proto import p4r

from .conftest import TRANSPORTS, Client, compiled, update

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DMAC = 0x02_00_00_00_02_02


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def program_file(tmp_path_factory) -> str:
    """route.p4 compiled to a p4switch program file."""
    path = tmp_path_factory.mktemp("prog") / "route.json"
    path.write_bytes(compiled("route.p4")[1])
    return str(path)


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


@pytest.fixture
def netns():
    """Namespaces h1, h2, each with one end of a veth pair whose other end is a switch port."""
    tag = uuid.uuid4().hex[:5]
    names = {"h1": f"p4h1{tag}", "h2": f"p4h2{tag}", "s1": f"p4s1{tag}", "s2": f"p4s2{tag}"}
    created = []
    try:
        for h, s in (("h1", "s1"), ("h2", "s2")):
            ns = names[h]
            sh("ip", "netns", "add", ns)
            created.append(("ns", ns))
            sh("ip", "link", "add", names[s], "type", "veth", "peer", "name", "eth0", "netns", ns)
            created.append(("link", names[s]))
            sh("sysctl", "-qw", f"net.ipv6.conf.{names[s]}.disable_ipv6=1", check=False)
            sh("ip", "link", "set", names[s], "up")
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", check=False)
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
        yield names
    finally:
        for kind, name in reversed(created):
            if kind == "link":
                sh("ip", "link", "del", name, check=False)
            else:
                sh("ip", "netns", "del", name, check=False)


@pytest.fixture(params=TRANSPORTS)
def switch(netns, program_file, request):
    """A running p4switch (no program) with ports 1 and 2 on the veths, on each gRPC transport; killed afterwards."""
    addr = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "p4switch", "--no-p4", "-i", f"1@{netns['s1']}", "-i", f"2@{netns['s2']}",
         "--device-id", "1", "--grpc-server-addr", addr, "--cpu-port", "255",
         "--grpc-transport", request.param],
        cwd=ROOT, stderr=subprocess.PIPE, text=True)
    client = Client(addr)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                client.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=1)
                break
            except Exception:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"p4switch did not start: {proc.stderr.read()}") from None
                time.sleep(0.2)
        yield client, proc
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


SNIFF = """
import sys
from scapy.all import sniff, raw
pkts = sniff(iface="eth0", count=1, timeout=15, lfilter=lambda p: p.haslayer("UDP") and p["UDP"].dport == 4791,
             started_callback=lambda: print("ready", file=sys.stderr, flush=True))
print(raw(pkts[0]).hex() if pkts else "")
"""

SEND = """
from scapy.all import Ether, IP, UDP, Raw, sendp
sendp(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:01:01") / IP(src="10.0.1.1", dst="10.0.2.2", ttl=64)
      / UDP(sport=1234, dport=4791) / Raw(b"aizone"), iface="eth0", verbose=False)
"""


def in_ns(ns: str, code: str) -> subprocess.Popen:
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", code],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def route(prefix: bytes, plen: int, port: int, info) -> p4r.TableEntry:
    table = next(t for t in info.tables if t.preamble.name.endswith("ipv4_route"))
    act = next(a for a in info.actions if a.preamble.name.endswith("route") and a.params)
    te = p4r.TableEntry(table_id=table.preamble.id)
    fm = te.match.add(field_id=table.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = prefix, plen
    te.action.action.action_id = act.preamble.id
    by_name = {p.name: p.id for p in act.params}
    te.action.action.params.add(param_id=by_name["port"], value=bytes([port]))
    te.action.action.params.add(param_id=by_name["dmac"], value=DMAC.to_bytes(6, "big"))
    return te


@pytest.mark.root
def test_pushed_program_routes_a_packet_between_namespaces(netns, switch, program_file) -> None:
    """SetForwardingPipelineConfig + one LPM route: a UDP packet from h1 reaches h2, routed."""
    from p4switch.server.runtime import load_program

    client, proc = switch
    blob = open(program_file, "rb").read()
    _, info = load_program(blob)
    client.stream(10)
    client.set_pipeline(p4info=info, device_config=blob)
    client.write(update("INSERT", table_entry=route(b"\x0a\x00\x02\x00", 24, 2, info)))
    sniffer = in_ns(netns["h2"], SNIFF)
    assert sniffer.stderr.readline().strip() == "ready"  # sniffing before anything is sent
    sender = in_ns(netns["h1"], SEND)
    sender.wait(20)
    out, err = sniffer.communicate(timeout=20)
    assert out.strip(), f"nothing received on h2 ({err.strip()[-300:]})"
    from scapy.all import Ether

    pkt = Ether(bytes.fromhex(out.strip()))
    assert pkt.dst == "02:00:00:00:02:02"
    assert pkt["IP"].ttl == 63 and pkt["IP"].dst == "10.0.2.2"
    assert bytes(pkt["Raw"].load).startswith(b"aizone")
    counted = client.read(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=p4r.TableEntry(table_id=route(b"\x0a", 8, 1, info).table_id))))
    assert counted[0].direct_counter_entry.data.packet_count == 1


def test_program_given_on_the_command_line_is_running(program_file) -> None:
    """`p4switch PROGRAM.json`: the P4Info is served (no cookie) and writes work without a push."""
    from p4switch.server.runtime import load_program

    addr = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen([sys.executable, "-m", "p4switch", program_file, "--grpc-server-addr", addr,
                             "--priority-queues", "4"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    client = Client(addr)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                cfg = client.stub.GetForwardingPipelineConfig(
                    p4r.GetForwardingPipelineConfigRequest(device_id=0), timeout=1).config
                break
            except Exception:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
                time.sleep(0.2)
        _, info = load_program(open(program_file, "rb").read())
        assert cfg.p4info == info and not cfg.HasField("cookie")
        client.stream(10, device_id=0)
        client.write(update("INSERT", table_entry=route(b"\x0a\x00\x02\x00", 24, 2, info)), device_id=0)
        assert len(client.read(p4r.Entity(table_entry=p4r.TableEntry()), device_id=0)) == 1
    finally:
        client.close()
        proc.terminate()
        assert proc.wait(10) == 0
