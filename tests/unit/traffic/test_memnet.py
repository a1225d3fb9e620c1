"""The in-memory network: frames reach the NIC owning their destination, on a virtual clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from traffic.collectives import build_jobs
from traffic.endpoint import Endpoint
from traffic.frames import Flow, decode
from traffic.memnet import MemNet


def test_frames_go_to_the_owner_of_their_destination_after_the_delay(
    hosts: Callable[..., Any],
) -> None:
    """h1's ACK-bound frames reach h0 5 us after they leave; nothing reaches a third party."""
    mem = hosts(3, rate_mbps=100)
    mem.run(build_jobs("incast", mem.ranks[:2], 4096))
    assert {(d.src, d.dst) for d in mem.net.log} == {("h1-eth0", "h0-eth0"), ("h0-eth0", "h1-eth0")}
    first = mem.net.log[0]
    assert (first.time, first.src) == (pytest.approx(5e-6), "h1-eth0")


def test_frames_to_nobody_are_counted_unroutable(hosts: Callable[..., Any]) -> None:
    """An IPv4 frame to an address no NIC owns is dropped and counted."""
    mem = hosts(1)
    nic = mem.nics["h0"]
    flow = Flow(src=Endpoint(mac=nic.config.mac, ip=nic.config.ip, port=1),
                dst=Endpoint(mac="02:00:00:00:00:77", ip="10.8.0.99", qpn=1), dscp=0)
    mem.net._send(nic, flow.ack(0))
    assert mem.net.unroutable == 1 and mem.net.log == []


def test_the_drop_hook_loses_frames(hosts: Callable[..., Any]) -> None:
    """A drop hook that refuses h1's first frame: it never arrives, it is counted."""
    mem = hosts(2, rate_mbps=100)
    state = {"first": True}

    def drop(frame: bytes, src: str) -> bool:
        if src == "h1-eth0" and state["first"]:
            state["first"] = False
            return True
        return False

    mem.net.drop = drop
    mem.run(build_jobs("incast", mem.ranks, 1024))
    assert mem.net.dropped == 1
    psns = [decode(d.frame).psn for d in mem.net.log if d.src == "h1-eth0"]
    assert len(psns) == 1  # the one packet came again after the ACK timeout


def test_an_empty_network_has_nothing_to_do() -> None:
    """run() with nothing pending returns at once; waiting for what never comes is an error."""
    net = MemNet()
    assert net.run() == 0.0
    with pytest.raises(RuntimeError, match="nothing left to happen"):
        net.run(lambda: False)
