"""The test side of a switch's ports: veth pairs, raw sockets, received frames, masks.

`Veths(names)` creates veth pairs (switch end, test end) in the root
namespace with IPv6 off before the links come up, so the kernel sends
nothing on them by itself (no router solicitation, no DAD, no MLD), and
deletes them again; `PortSet({port: ifname})` opens one AF_PACKET socket
per test end and a reader thread that keeps every frame the switch sends,
per port and in arrival order; `Mask(packet)` is an expected packet with
don't-care fields (PTF's Mask, rebuilt small).

Names defined here: `Veths`, `PortSet`, `Mask`, `Received`.
"""

from __future__ import annotations

import collections
import select
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from scapy.packet import Packet

__all__ = ["Mask", "PortSet", "Received", "Veths"]

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


class Veths:
    """veth pairs (switch end, test end); `delete()` removes every pair it made."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self.pairs = list(pairs)
        self.made: list[str] = []

    def create(self) -> Veths:
        try:
            for a, b in self.pairs:
                _ip("link", "add", a, "type", "veth", "peer", "name", b)
                self.made.append(a)
                for name in (a, b):
                    Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1")
                    _ip("link", "set", name, "up")
        except BaseException:
            self.delete()
            raise
        return self

    def delete(self) -> None:
        # Deleting one end deletes the pair.
        while self.made:
            name = self.made.pop()
            subprocess.run(["ip", "link", "del", name], capture_output=True)


@dataclass(frozen=True)
class Received:
    port: int
    frame: bytes
    at: float


class PortSet:
    """Raw sockets on the test ends of the switch's ports, read by one thread."""

    def __init__(self, ifaces: dict[int, str]) -> None:
        self.ifaces = dict(ifaces)
        self.socks: dict[int, socket.socket] = {}
        self._by_fd: dict[int, tuple[int, socket.socket, bool]] = {}
        self.frames: dict[int, collections.deque[Received]] = {
            p: collections.deque() for p in self.ifaces}
        self.cv = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self) -> PortSet:
        for port, name in self.ifaces.items():
            # Protocol 0 until bound, or frames of every interface queue up first.
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            s.bind((name, ETH_P_ALL))
            try:
                s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
                filter_out = False
            except OSError:
                filter_out = True
            s.setblocking(False)
            self.socks[port] = s
            self._by_fd[s.fileno()] = (port, s, filter_out)
        self._thread = threading.Thread(target=self._read, name="dataplane-ports", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        poller = select.epoll()
        for fd in self._by_fd:
            poller.register(fd, select.EPOLLIN)
        try:
            while not self._stop.is_set():
                for fd, _ in poller.poll(0.05):
                    port, s, filter_out = self._by_fd[fd]
                    while True:
                        try:
                            frame, addr = s.recvfrom(65535)
                        except BlockingIOError:
                            break
                        except OSError:
                            break
                        if filter_out and addr[2] == PACKET_OUTGOING:
                            continue
                        with self.cv:
                            self.frames[port].append(Received(port, frame, time.monotonic()))
                            self.cv.notify_all()
        finally:
            poller.close()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        for s in self.socks.values():
            s.close()
        self.socks.clear()

    def send(self, port: int, frame: bytes) -> None:
        self.socks[port].send(frame)

    def clear(self) -> None:
        with self.cv:
            for q in self.frames.values():
                q.clear()

    def take(self, port: int, match: Callable[[bytes], bool], timeout: float) -> Received | None:
        """The first frame on `port` that `match`es (removed), waiting up to `timeout`."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                q = self.frames[port]
                for i, r in enumerate(q):
                    if match(r.frame):
                        del q[i]
                        return r
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cv.wait(left)

    def wait_count(self, n: int, ports: Iterable[int] | None, timeout: float) -> list[Received]:
        """Wait until `n` frames are there on `ports` (or `timeout`); take and return them all."""
        ports = list(self.frames if ports is None else ports)
        deadline = time.monotonic() + timeout
        with self.cv:
            while sum(len(self.frames[p]) for p in ports) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.cv.wait(left)
            out = [r for p in ports for r in self.frames[p]]
            for p in ports:
                self.frames[p].clear()
        return sorted(out, key=lambda r: r.at)

    def pending(self, ports: Iterable[int] | None = None) -> list[Received]:
        with self.cv:
            return [r for p in (self.frames if ports is None else ports) for r in self.frames[p]]


def _field_bits(pkt: Packet, layer: type[Packet], field: str) -> tuple[int, int]:
    """(bit offset in the packet, width in bits) of `layer`'s `field`."""
    lay = pkt.getlayer(layer)
    if lay is None:
        raise ValueError(f"no {layer.__name__} layer in {pkt.summary()}")
    start = (len(bytes(pkt)) - len(bytes(lay))) * 8
    off = 0
    for f in lay.fields_desc:
        width = round(f.sz * 8)  # scapy gives bit fields fractional byte sizes
        if f.name == field:
            return start + off, width
        off += width
    raise ValueError(f"{layer.__name__} has no field {field!r}")


class Mask:
    """An expected frame and the bits that must match (all, minus the don't-cares)."""

    def __init__(self, pkt: Packet | bytes) -> None:
        self.pkt = pkt if isinstance(pkt, Packet) else None
        self.exp = bytes(pkt)
        self.mask = bytearray(b"\xff" * len(self.exp))

    def dont_care(self, layer: type[Packet], field: str, *, low_bits: int | None = None) -> Mask:
        """Ignore `layer.field` (only its `low_bits` least significant bits, if given)."""
        assert self.pkt is not None, "don't-care fields need a scapy packet"
        bit, width = _field_bits(self.pkt, layer, field)
        if low_bits is not None:
            bit, width = bit + width - low_bits, low_bits
        for b in range(bit, bit + width):
            self.mask[b // 8] &= ~(0x80 >> (b % 8)) & 0xFF
        return self

    def matches(self, frame: bytes) -> bool:
        if len(frame) != len(self.exp):
            return False
        return all((f & m) == (e & m) for f, e, m in zip(frame, self.exp, self.mask, strict=True))

    def __repr__(self) -> str:
        return f"Mask({self.pkt.summary() if self.pkt is not None else self.exp.hex()})"
