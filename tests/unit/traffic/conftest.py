"""Fixtures for the traffic tests: frames to feed a receiver, and two network
namespaces joined by a veth pair for the host-agent tests (root)."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from traffic.sender import Frame, SendConfig, build_queues, interleave

REPO = Path(__file__).resolve().parents[3]
PYTHON = sys.executable  # the venv's python: the one running the tests
_serial = itertools.count()

SRC_MAC = "02:00:00:00:00:01"
DST_MAC = "02:00:00:00:00:02"
SRC_IP = "10.9.0.1"
DST_IP = "10.9.0.2"


def _frames_for(**overrides: object) -> list[Frame]:
    fields: dict[str, object] = {
        "iface": "unused",
        "dst_ip": DST_IP,
        "qps": (17, 18, 19, 20),
        "messages": 4,
        "size": 3000,
    }
    fields.update(overrides)
    config = SendConfig(**fields)  # type: ignore[arg-type]
    return list(interleave(build_queues(config, src_mac=SRC_MAC, src_ip=SRC_IP, dst_mac=DST_MAC)))


@pytest.fixture
def frames_for() -> Callable[..., list[Frame]]:
    """frames_for(**SendConfig overrides): the frames a sender transmits, in order.

    Defaults: 4 messages of 3000 bytes over QPs 17-20 from 10.9.0.1 to 10.9.0.2.
    """
    return _frames_for


@dataclass(frozen=True)
class NetnsPair:
    """Namespaces ``ns_a`` (``if_a``, ``ip_a``) and ``ns_b`` joined by a veth."""

    ns_a: str
    ns_b: str
    if_a: str
    if_b: str
    ip_a: str
    ip_b: str

    def popen(self, ns: str, *args: str, **kwargs: object) -> subprocess.Popen[str]:
        """Start ``python args...`` in namespace ``ns`` from the repository root."""
        return subprocess.Popen(
            ["ip", "netns", "exec", ns, PYTHON, *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **kwargs,  # type: ignore[arg-type]
        )


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@pytest.fixture
def netns_pair() -> Iterator[NetnsPair]:
    """Two fresh namespaces with 10.9.0.1/24 and 10.9.0.2/24 on a veth pair; always removed."""
    if os.geteuid() != 0:
        pytest.skip("needs root: network namespaces and raw sockets")
    if shutil.which("ip") is None:
        pytest.skip("needs iproute2's ip")
    tag = f"{os.getpid()}x{next(_serial)}"
    pair = NetnsPair(
        ns_a=f"aztr-a{tag}",
        ns_b=f"aztr-b{tag}",
        if_a=f"azta{tag}"[:15],
        if_b=f"aztb{tag}"[:15],
        ip_a=SRC_IP,
        ip_b=DST_IP,
    )
    created: list[str] = []
    try:
        for ns in (pair.ns_a, pair.ns_b):
            _ip("netns", "add", ns)
            created.append(ns)
        _ip("link", "add", pair.if_a, "type", "veth", "peer", "name", pair.if_b)
        for ns, ifname, addr in (
            (pair.ns_a, pair.if_a, pair.ip_a),
            (pair.ns_b, pair.if_b, pair.ip_b),
        ):
            _ip("link", "set", ifname, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", ifname)
            _ip("-n", ns, "link", "set", ifname, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield pair
    finally:
        # Deleting a namespace deletes the veth end inside it, and so the pair.
        for ns in created:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", pair.if_a], capture_output=True)
