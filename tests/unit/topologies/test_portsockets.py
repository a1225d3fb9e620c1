"""A pcap reader told to read arriving frames only (topologies.portsockets), root.

tcpdump reads its interface with libpcap in both directions, as BMv2 reads
its ports: a frame another process sends out of the interface is captured
too. After `ignore_outgoing(pid)` on the running tcpdump, a frame sent out
of its interface is not captured, and a frame arriving on it still is.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from topologies.portsockets import ignore_outgoing, packet_socket_count

pytestmark = pytest.mark.root

ETHERTYPE = 0x88B5  # IEEE 802 local experimental


def _send(ns: str, intf: str, marker: bytes) -> None:
    """One frame with `marker` in its payload, sent out of `intf` from a process of its own."""
    code = ("import socket, sys; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
            f"s.bind(({intf!r}, 0)); "
            f"s.send(b'\\xff' * 6 + b'\\x02' + b'\\x00' * 5 + bytes.fromhex('{ETHERTYPE:04x}') "
            f"+ {marker!r} + b'\\x00' * 40)")
    subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code], check=True,
                   capture_output=True)


def test_an_outgoing_frame_is_no_longer_read_and_an_arriving_one_is(
        netns_pair: tuple[str, str], tmp_path: Path) -> None:
    a, b = netns_pair
    out = tmp_path / "cap.txt"
    with out.open("w") as log:
        # `ip netns exec` execs tcpdump, so this pid is tcpdump's.
        dump = subprocess.Popen(["ip", "netns", "exec", a, "tcpdump", "-i", "azdtx", "-n", "-l",
                                 "-A", "-U", f"ether proto {ETHERTYPE:#x}"],
                                stdout=log, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while packet_socket_count(dump.pid) < 1:
            assert time.monotonic() < deadline, "tcpdump opened no packet socket"
            time.sleep(0.05)
        time.sleep(0.5)  # its filter is attached after the socket opens
        _send(a, "azdtx", b"SENT-BEFORE")
        assert ignore_outgoing(dump.pid) >= 1
        _send(a, "azdtx", b"SENT-AFTER")
        _send(b, "azdty", b"ARRIVED-AFTER")
        time.sleep(1.0)
    finally:
        dump.terminate()
        dump.wait(10)
    text = out.read_text(errors="replace")
    assert "SENT-BEFORE" in text, text  # libpcap reads both directions by default
    assert "ARRIVED-AFTER" in text, text
    assert "SENT-AFTER" not in text, text


def test_a_process_without_packet_sockets_is_left_alone() -> None:
    """A process holding only a TCP socket: nothing to set (0), its socket untouched."""
    code = "import socket, sys, time; s = socket.socket(); print(s.fileno(), flush=True); " \
           "time.sleep(30)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip().isdigit()
        assert packet_socket_count(proc.pid) == 0
        assert ignore_outgoing(proc.pid) == 0
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait(5)
