"""A pcap reader told to read arriving frames only (topologies.portsockets), root.

tcpdump reads its interface with libpcap in both directions, as BMv2 reads
its ports: a frame another process sends out of the interface is captured
too. After `ignore_outgoing(pid)` on the running tcpdump, a frame sent out
of its interface is not captured, and a frame arriving on it still is.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from topologies.portsockets import ignore_outgoing, packet_socket_count

pytestmark = pytest.mark.root

NS = (f"azps{os.getpid() % 10000}a", f"azps{os.getpid() % 10000}b")
ETHERTYPE = 0x88B5  # IEEE 802 local experimental


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True)


@pytest.fixture
def pair() -> Iterator[tuple[str, str]]:
    a, b = NS
    for ns in NS:
        _sh("ip", "netns", "add", ns)
    try:
        _sh("ip", "link", "add", "azpsx", "netns", a, "type", "veth", "peer", "azpsy", "netns", b)
        for ns, intf in ((a, "azpsx"), (b, "azpsy")):
            _sh("ip", "-n", ns, "link", "set", intf, "up")
        yield a, b
    finally:
        for ns in NS:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _send(ns: str, intf: str, marker: bytes) -> None:
    """One frame with `marker` in its payload, sent out of `intf` from a process of its own."""
    code = ("import socket, sys; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
            f"s.bind(({intf!r}, 0)); "
            f"s.send(b'\\xff' * 6 + b'\\x02' + b'\\x00' * 5 + bytes.fromhex('{ETHERTYPE:04x}') "
            f"+ {marker!r} + b'\\x00' * 40)")
    _sh("ip", "netns", "exec", ns, sys.executable, "-c", code)


def test_an_outgoing_frame_is_no_longer_read_and_an_arriving_one_is(
        pair: tuple[str, str], tmp_path: Path) -> None:
    a, b = pair
    out = tmp_path / "cap.txt"
    with out.open("w") as log:
        # `ip netns exec` execs tcpdump, so this pid is tcpdump's.
        dump = subprocess.Popen(["ip", "netns", "exec", a, "tcpdump", "-i", "azpsx", "-n", "-l",
                                 "-A", "-U", f"ether proto {ETHERTYPE:#x}"],
                                stdout=log, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while packet_socket_count(dump.pid) < 1:
            assert time.monotonic() < deadline, "tcpdump opened no packet socket"
            time.sleep(0.05)
        time.sleep(0.5)  # its filter is attached after the socket opens
        _send(a, "azpsx", b"SENT-BEFORE")
        assert ignore_outgoing(dump.pid) >= 1
        _send(a, "azpsx", b"SENT-AFTER")
        _send(b, "azpsy", b"ARRIVED-AFTER")
        time.sleep(1.0)
    finally:
        dump.terminate()
        dump.wait(10)
    text = out.read_text(errors="replace")
    assert "SENT-BEFORE" in text, text  # libpcap reads both directions by default
    assert "ARRIVED-AFTER" in text, text
    assert "SENT-AFTER" not in text, text


def test_a_process_without_packet_sockets_is_left_alone() -> None:
    """Its other sockets are not touched (the count is 0, nothing raises)."""
    assert ignore_outgoing(os.getpid()) == 0
