"""Fixtures for the pipeline tests: P4 programs compiled once, switches on in-memory ports, veth pairs."""

from __future__ import annotations

import functools
import socket
import struct
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

P4_DIR = Path(__file__).parent / "p4"
REPO = Path(__file__).resolve().parents[3]


@functools.cache
def program(name: str):
    if name == "rtsw":
        return compile_file(REPO / "p4" / "rtsw.p4", include_dirs=[REPO / "p4" / "include"])
    return compile_file(P4_DIR / f"{name}.p4")


@pytest.fixture
def make_switch():
    made: list[PortHarness] = []

    def make(name: str, **options) -> PortHarness:
        h = PortHarness(program(name), **options)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()


@pytest.fixture
def veths() -> Iterator[dict[int, tuple[str, str]]]:
    """Ports 1 and 3 as veth pairs: port -> (the switch's end, the peer's end)."""
    tag = uuid.uuid4().hex[:5]
    pairs = {p: (f"p4d{p}a{tag}", f"p4d{p}b{tag}") for p in (1, 3)}
    try:
        for a, b in pairs.values():
            subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
            for n in (a, b):
                subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{n}.disable_ipv6=1"], check=False)
                subprocess.run(["ip", "link", "set", n, "up"], check=True)
        yield pairs
    finally:
        for a, _ in pairs.values():
            subprocess.run(["ip", "link", "del", a], check=False, stderr=subprocess.DEVNULL)


def peer(name: str, ethertype: int = 0x0800) -> socket.socket:
    """A raw socket on `name` for frames of `ethertype` (3: all), 10 s receive timeout."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ethertype))
    s.bind((name, 0))
    s.settimeout(10)
    return s


REPORT = struct.Struct(">BHHHBIBIBBHBB")
REPORT_FIELDS = ("instance_type", "egress_rid", "ingress_port", "egress_port", "parser_error",
                 "packet_length", "pass_", "result", "color", "priority", "saved_port",
                 "checksum_error", "ig_instance_type")


def ctl_frame(op: int, arg: int = 0, arg2: int = 0, val: int = 0, payload: bytes = b"payload!",
              src: bytes = b"\x02\x00\x00\x00\x00\x09") -> bytes:
    """An ethernet frame with the v1m.p4 ctl header."""
    return (b"\x02\x00\x00\x00\x00\x01" + src + b"\x88\xb5"
            + struct.pack(">BBHI", op, arg, arg2, val) + payload)


def report(frame: bytes) -> dict[str, int]:
    """The report header v1m.p4's egress appended (after ethernet + ctl)."""
    return dict(zip(REPORT_FIELDS, REPORT.unpack_from(frame, 22), strict=False))
