"""The traffic manager on the ports' thread (`Switch(tm_driver=RawPorts)`), on veth pairs (root).

The `p4switch` command runs each switch as one thread: the ports' epoll
loop receives, runs the pipeline and the traffic manager's egress, woken by
a timer for what a slow port sends later and by an eventfd for what another
thread (a packet-out, a setting) queued.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from conftest import peer, program
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4switch.io import RawPorts
from p4switch.pipeline import Switch
from p4switch.pipeline.state import ActionCall, FieldMatch, TableEntry

pytestmark = pytest.mark.root

DMAC, SMAC = 0x020000000001, 0x020000000002


def frame(n: int) -> bytes:
    return bytes(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:09")
                 / IP(src="1.1.1.1", dst="10.1.0.1", ttl=64) / UDP(sport=1000 + n, dport=80)
                 / b"driven")


@pytest.fixture
def switch(veths) -> Iterator[tuple[Switch, RawPorts]]:
    """l3.p4 routing 10.1/16 to port 3, the TM on the ports' thread, port 3 at 5 kb/s."""
    ports = RawPorts({p: a for p, (a, _) in veths.items()})
    # A 60-byte frame holds 5 kb/s for 96 ms: frames queue and leave on the timer.
    sw = Switch(program("l3"), ports.transmit, priority_queues=2, port_speed={3: 5e-6},
                tm_driver=ports)
    sw.table_insert("MyIngress.ipv4_lpm", TableEntry(
        match={0: FieldMatch(kind="lpm", value=0x0A010000, prefix_len=16)},
        action=ActionCall(action="MyIngress.set_nhop", args=(1,))))
    sw.table_insert("MyIngress.nhop", TableEntry(
        match={0: FieldMatch(kind="exact", value=1)},
        action=ActionCall(action="MyIngress.forward", args=(DMAC, SMAC, 3))))
    ports.start(sw.process)
    try:
        yield sw, ports
    finally:
        sw.close()
        ports.stop()


def received_udp_ports(s: socket.socket, n: int) -> list[int]:
    out = []
    while len(out) < n:
        pkt = Ether(s.recv(2048))
        if UDP in pkt and pkt[UDP].dport == 80:
            out.append(pkt[UDP].sport)
    return out


def test_one_thread_per_switch(switch, veths) -> None:
    """The traffic manager starts no thread of its own; frames still go through it."""
    sw, _ = switch
    assert sw.tm is not None and sw.tm.thread is None
    assert "p4switch-tm" not in {t.name for t in threading.enumerate()}
    with peer(veths[3][1]) as out, peer(veths[1][1]) as into:
        into.send(frame(0))
        assert received_udp_ports(out, 1) == [1000]
    assert sw.tm.stats()["3/0"]["dequeued"] == 1


def test_frames_behind_a_slow_port_leave_on_the_timer(switch, veths) -> None:
    """A burst queues behind port 3's speed and leaves in order with nothing else arriving."""
    sw, _ = switch
    with peer(veths[3][1]) as out, peer(veths[1][1]) as into:
        for n in range(5):
            into.send(frame(n))
        assert received_udp_ports(out, 5) == [1000, 1001, 1002, 1003, 1004]
    st = sw.tm.stats()["3/0"]
    assert (st["enqueued"], st["dequeued"], st["dropped"]) == (5, 5, 0)
    assert st["max_depth"] > 1  # they did queue: the later ones left on the timer


def test_a_frame_queued_by_another_thread_wakes_the_ports_thread(switch, veths) -> None:
    """A frame processed off the ports' thread (a packet-out does so) leaves without help."""
    sw, _ = switch
    with peer(veths[3][1]) as out:
        worker = threading.Thread(target=sw.process, args=(1, frame(7)))
        worker.start()
        worker.join()
        assert received_udp_ports(out, 1) == [1007]
