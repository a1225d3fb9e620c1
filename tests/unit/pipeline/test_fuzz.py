"""Random and truncated packets never raise out of the pipeline (seeded, thousands per program)."""

from __future__ import annotations

import random

import pytest
from conftest import ctl_frame
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from p4switch.pipeline.state import CloneSession, MulticastGroup, Replica

SEEDS = [
    bytes(Ether(dst="02:00:00:00:00:01") / IP(dst="10.0.0.1") / UDP(dport=4791) / (b"\x0a" + b"\x00" * 40)),
    bytes(Ether(dst="02:00:00:00:00:01") / IP(dst="10.0.0.1", ihl=6, options=b"\x01\x01\x01\x01") / TCP()),
    bytes(Ether(dst="02:00:00:00:00:01") / IPv6(dst="2001::1") / UDP()),
    bytes(Ether(dst="02:00:00:00:00:01") / ARP(op=1, pdst="10.0.0.254")),
    bytes(Ether(type=0x8808)) + b"\x01\x01\x00\x08" + b"\x00" * 40,
    bytes(Ether(type=0x8847)) + (b"\x00\x01\x00\x40" * 2 + b"\x00\x02\x01\x40" + b"\x45" + b"\x00" * 30),
    ctl_frame(3), ctl_frame(4), ctl_frame(1, arg=1), ctl_frame(2, arg2=1), ctl_frame(9),
]


def mutate(rng: random.Random, frame: bytes) -> bytes:
    choice = rng.randrange(4)
    if choice == 0:
        return frame[:rng.randrange(len(frame) + 1)]
    b = bytearray(frame)
    if choice == 1:
        for _ in range(rng.randrange(1, 6)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if choice == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 120)))
    return frame + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))


@pytest.mark.parametrize("name", ["l3", "parse", "v1m", "rtsw"])
def test_random_packets_never_raise(make_switch, name):
    """3000 mutated frames per program: every one is processed, no exception escapes."""
    h = make_switch(name, cpu_port=255)
    s = h.switch
    s.mcast_group_set(MulticastGroup(group_id=1, replicas=[Replica(egress_port=1, instance=1),
                                                           Replica(egress_port=2, instance=2)]), 1)
    s.clone_session_set(CloneSession(session_id=1, replicas=[Replica(egress_port=3, instance=0)]), 1)
    rng = random.Random(f"fuzz-{name}")
    for _i in range(3000):
        port = rng.choice([1, 2, 255])
        s.process(port, mutate(rng, rng.choice(SEEDS)))
    h.take()
    assert s.stats["rx"] + s.mac_control_rx >= 3000  # MAC control frames are consumed by the port
    assert s.stats["errors"] == 0
