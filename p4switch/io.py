"""Ports: where frames enter and leave a p4switch.

Two port sets with the same interface (`transmit(port, frame)`,
`start(sink)`, `stop()`, `stats()`):

* `RawPorts`: Linux AF_PACKET raw sockets bound to named interfaces, in
  promiscuous mode, with PACKET_IGNORE_OUTGOING so a port never receives the
  frames it sent itself (falls back to dropping PACKET_OUTGOING frames on
  kernels without it). One thread waits on all sockets with epoll, takes up
  to 64 waiting frames of a port in one `recvmmsg` and sends what it
  transmitted in a round with one `sendmmsg` per port (the native
  `p4switch._rawio`, built from `rawio.c`; Python's `recvmsg` and `send`, one
  frame a call, without it), and hands every frame to `sink(port, frame)`
  (the pipeline's `process`; or each port's batch to `sink_many(port,
  frames)`, its `process_many`), so all forwarding happens on that thread,
  never on gRPC threads. An 802.1Q tag
  the kernel took out of a received frame is put back (PACKET_AUXDATA, as
  libpcap does), so the program sees the frame as it was sent. The same
  thread runs the traffic managers attached to it (`attach(service)`, the
  `tm.TmDriver` protocol): `service()` after every batch of frames and at
  the time it asked for (a `timerfd.Timer` in the same epoll), so a switch
  is one thread, with no handoff between threads per frame.
* `MemoryPorts`: in-memory ports for tests: `inject(port, frame)` feeds the
  sink, and transmitted frames are kept per port (`sent[port]`, or a
  `wait_sent()` helper).

Per-port counters (`PortStats`: rx/tx packets and bytes, drops) and optional
pcap capture per port (`--pcap DIR`: `<iface>_in.pcap` / `<iface>_out.pcap`,
as BMv2 names them) are common to both.

Names defined here: `PortError`, `PortStats`, `PcapWriter`, `RawPorts`,
`MemoryPorts`, `parse_interface`, and the AF_PACKET constants (`ETH_P_ALL` ...).
"""

from __future__ import annotations

import logging
import os
import select
import socket
import struct
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass

from .timerfd import Timer

log = logging.getLogger("p4switch.io")

Sink = Callable[[int, bytes], None]
SinkMany = Callable[[int, list[bytes]], None]
Service = Callable[[], float]
INF = float("inf")

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
SNAPLEN = 65535
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID, TP_STATUS_VLAN_TPID_VALID = 0x10, 0x40
_AUXDATA = struct.Struct("=IIIHHHH")  # struct tpacket_auxdata
_ANCBUF = socket.CMSG_SPACE(_AUXDATA.size)
RX_BATCH = 64  # frames taken from one port before the others get their turn

try:  # batched port I/O, built from rawio.c by setup.py when a C compiler was there
    from p4switch import _rawio
except ImportError:
    _rawio = None


class PortError(Exception):
    """A port cannot be opened (no such interface, no permission ...)."""


def _with_vlan_tag(frame: bytes, anc: list[tuple[int, int, bytes]]) -> bytes:
    """`frame` with the 802.1Q tag the kernel took out put back after the MAC addresses."""
    for level, kind, data in anc:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(data) >= _AUXDATA.size:
            status, _len, _snap, _mac, _net, tci, tpid = _AUXDATA.unpack_from(data)
            if status & TP_STATUS_VLAN_VALID or tci:
                if not status & TP_STATUS_VLAN_TPID_VALID:
                    tpid = 0x8100
                return frame[:12] + struct.pack(">HH", tpid, tci) + frame[12:]
    return frame


def _receive_one_by_one(fd: int, sock: socket.socket, drop_outgoing: bool) -> list[bytes]:
    """Up to RX_BATCH waiting frames, one `recvmsg` each (without the native module)."""
    frames: list[bytes] = []
    recvmsg = sock.recvmsg
    for _ in range(RX_BATCH):
        try:
            frame, anc, _flags, addr = recvmsg(SNAPLEN, _ANCBUF)
        except (BlockingIOError, InterruptedError):
            break
        except OSError:
            if frames:  # hand over what came; the error, if it lasts, shows next round
                break
            raise
        if drop_outgoing and addr[2] == PACKET_OUTGOING:
            continue
        if anc:
            frame = _with_vlan_tag(frame, anc)
        frames.append(frame)
    return frames


def _receive_batched(fd: int, sock: socket.socket, drop_outgoing: bool) -> list[bytes]:
    """Up to RX_BATCH waiting frames in one `recvmmsg` (`p4switch._rawio`)."""
    return _rawio.recv_frames(fd, RX_BATCH, drop_outgoing)


def parse_interface(spec: str) -> tuple[int, str]:
    """'1@veth1' -> (1, 'veth1'), as simple_switch's -i."""
    num, sep, name = spec.partition("@")
    if not sep or not name:
        raise ValueError(f"interface {spec!r} is not <port-num>@<interface-name>")
    try:
        port = int(num, 0)
    except ValueError:
        raise ValueError(f"interface {spec!r}: port number {num!r} is not an integer") from None
    if port < 0:
        raise ValueError(f"interface {spec!r}: port number is negative")
    return port, name


@dataclass
class PortStats:
    """Counters of one port: frames and bytes each way, send refusals, receive errors."""

    rx_packets: int = 0
    rx_bytes: int = 0
    tx_packets: int = 0
    tx_bytes: int = 0
    tx_drops: int = 0  # frames the kernel refused (link down, buffer full)
    rx_errors: int = 0


class PcapWriter:
    """A minimal libpcap writer (Ethernet link type, microsecond timestamps)."""

    def __init__(self, path: str) -> None:
        self._f = open(path, "wb")
        self._lock = threading.Lock()
        self._f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAPLEN, 1))
        self._f.flush()

    def write(self, frame: bytes) -> None:
        """Append `frame` with the current time (cut to SNAPLEN), flushed at once."""
        t = time.time()
        sec = int(t)
        usec = int((t - sec) * 1_000_000)
        data = frame[:SNAPLEN]
        with self._lock:
            self._f.write(struct.pack("<IIII", sec, usec, len(data), len(frame)))
            self._f.write(data)
            self._f.flush()

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._f.close()


class _PortSet:
    """What both port sets share: names, counters, pcaps."""

    def __init__(self, interfaces: dict[int, str], pcap_dir: str | None = None) -> None:
        self.interfaces = dict(interfaces)
        self._stats = {p: PortStats() for p in interfaces}
        self._pcap_in: dict[int, PcapWriter] = {}
        self._pcap_out: dict[int, PcapWriter] = {}
        if pcap_dir is not None:
            if not os.path.isdir(pcap_dir):
                raise PortError(f"pcap directory {pcap_dir!r} does not exist")
            for p, name in interfaces.items():
                self._pcap_in[p] = PcapWriter(os.path.join(pcap_dir, f"{name}_in.pcap"))
                self._pcap_out[p] = PcapWriter(os.path.join(pcap_dir, f"{name}_out.pcap"))

    def stats(self) -> dict[int, PortStats]:
        """A copy of every port's counters, by port number."""
        return {p: PortStats(**vars(s)) for p, s in self._stats.items()}

    def _count_rx(self, port: int, frame: bytes) -> None:
        s = self._stats[port]
        s.rx_packets += 1
        s.rx_bytes += len(frame)
        w = self._pcap_in.get(port)
        if w is not None:
            w.write(frame)

    def _count_tx(self, port: int, frame: bytes) -> None:
        s = self._stats[port]
        s.tx_packets += 1
        s.tx_bytes += len(frame)
        w = self._pcap_out.get(port)
        if w is not None:
            w.write(frame)

    def _close_pcaps(self) -> None:
        for w in (*self._pcap_in.values(), *self._pcap_out.values()):
            w.close()
        self._pcap_in.clear()
        self._pcap_out.clear()


class RawPorts(_PortSet):
    """AF_PACKET ports on Linux interfaces (needs CAP_NET_RAW).

    `batched`: move frames with the native `p4switch._rawio`, receiving up to
    RX_BATCH frames a system call (`recvmmsg`, no per-frame interface-name
    lookup) and sending the frames the loop's thread transmits in one round
    (a port's batch of arrivals, or the traffic managers' turn) together at its
    end (`sendmmsg`, in order per port); or with Python's `recvmsg` and `send`,
    one frame a call. None (the default): batched when the native module was
    built. Both hand over and send the same frames; frames transmitted from
    other threads (packet-outs) are sent at once either way.
    """

    def __init__(self, interfaces: dict[int, str], pcap_dir: str | None = None, *,
                 batched: bool | None = None) -> None:
        if batched is None:
            batched = _rawio is not None
        elif batched and _rawio is None:
            raise PortError("batched port I/O needs p4switch._rawio, which was not built "
                            "(setup.py compiles p4switch/rawio.c; is a C compiler installed?)")
        super().__init__(interfaces, pcap_dir)
        self.batched = batched
        self._receive = _receive_batched if batched else _receive_one_by_one
        # Frames the loop's thread transmitted in the current round, by port (batched only).
        self._held: defaultdict[int, list[bytes]] | None = defaultdict(list) if batched else None
        self._socks: dict[int, socket.socket] = {}
        self._by_fd: dict[int, int] = {}
        self._filter_outgoing: set[int] = set()
        self._thread: threading.Thread | None = None
        self._loop_ident: int | None = None
        self._stop_r, self._stop_w = os.pipe()
        # Services (traffic managers) run on the loop's thread; the tuple is replaced,
        # never changed, so the loop reads it without a lock.
        self._services: tuple[Service, ...] = ()
        self._wake_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._timer = Timer()
        try:
            for port, name in interfaces.items():
                self._open(port, name)
        except PortError:
            self.stop()
            raise

    def _open(self, port: int, name: str) -> None:
        try:
            ifindex = socket.if_nametoindex(name)
        except OSError:
            raise PortError(f"interface {name!r} (port {port}) does not exist") from None
        try:
            # Protocol 0 until bound: a socket opened with ETH_P_ALL receives
            # every interface's frames until bind() narrows it to one.
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        except PermissionError:
            raise PortError(f"interface {name!r}: raw sockets need root (CAP_NET_RAW)") from None
        try:
            s.bind((name, ETH_P_ALL))
            mreq = struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b"")
            s.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
            try:
                s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            except OSError:
                # Kernels before 4.20: drop our own frames by their packet type.
                self._filter_outgoing.add(port)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            # The kernel takes an 802.1Q tag out of every received frame (into
            # the skb); PACKET_AUXDATA gives it back so the tag is put in place,
            # as libpcap (hence BMv2) does: the program sees the frame as sent.
            s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            s.setblocking(False)
        except OSError as e:
            s.close()
            raise PortError(f"interface {name!r}: {e.strerror or e}") from None
        self._socks[port] = s
        self._by_fd[s.fileno()] = port

    def transmit(self, port: int, frame: bytes) -> None:
        """Send `frame` out of `port` (counted as a drop when the kernel refuses it)."""
        s = self._socks.get(port)
        if s is None:
            return  # a port the program knows but no interface is attached to
        held = self._held
        if held is not None and threading.get_ident() == self._loop_ident:
            held[port].append(frame if frame.__class__ is bytes else bytes(frame))
            return
        try:
            s.send(frame)
        except (BlockingIOError, OSError):
            self._stats[port].tx_drops += 1
            return
        self._count_tx(port, frame)

    def _send_held(self) -> None:
        """Send what the loop's thread transmitted this round, a sendmmsg per port."""
        held = self._held
        assert held is not None
        count_tx = self._count_tx
        for port, frames in held.items():  # only ports with a socket: `transmit` checked
            refused = _rawio.send_frames(self._socks[port].fileno(), frames)
            if refused:
                self._stats[port].tx_drops += len(refused)
                gone = set(refused)
                frames = [f for i, f in enumerate(frames) if i not in gone]
            for f in frames:
                count_tx(port, f)
        held.clear()

    def attach(self, service: Service) -> Callable[[], None]:
        """Run `service()` on the receive thread after each batch of frames and at the
        `time.monotonic()` time it returns (inf: only when woken); returns its `wake()`."""
        self._services = (*self._services, service)
        self._wake()
        return self._wake

    def detach(self, service: Service) -> None:
        """Stop running `service`."""
        self._services = tuple(s for s in self._services if s != service)

    def _wake(self) -> None:
        # On the loop's own thread the services run after the current batch anyway.
        if threading.get_ident() != self._loop_ident and self._wake_fd >= 0:
            try:
                os.eventfd_write(self._wake_fd, 1)
            except OSError:
                pass

    def _run_services(self) -> float:
        due = INF
        for service in self._services:
            try:
                t = service()
            except Exception:  # a failing traffic manager must not stop the ports
                log.exception("running the traffic manager failed")
                continue
            if t < due:
                due = t
        return due

    def start(self, sink: Sink, sink_many: SinkMany | None = None) -> None:
        """Start the receive thread, handing every frame to `sink(port, frame)`; with
        `sink_many`, batched ports hand each batch a port received to `sink_many(port,
        frames)` instead (the frames in order: what `sink` would have been called with)."""
        if not self.batched:
            sink_many = None  # one frame a call: nothing to batch
        self._thread = threading.Thread(target=self._loop, args=(sink, sink_many),
                                        name="p4switch-ports", daemon=True)
        self._thread.start()

    def _count_rx_many(self, port: int, frames: list[bytes]) -> None:
        s = self._stats[port]
        s.rx_packets += len(frames)
        s.rx_bytes += sum(map(len, frames))
        w = self._pcap_in.get(port)
        if w is not None:
            for frame in frames:
                w.write(frame)

    def _loop(self, sink: Sink, sink_many: SinkMany | None) -> None:
        self._loop_ident = threading.get_ident()
        ep = select.epoll()
        ep.register(self._stop_r, select.EPOLLIN)
        ep.register(self._wake_fd, select.EPOLLIN)
        for fd in self._by_fd:
            ep.register(fd, select.EPOLLIN)
        timer_fd = self._timer.fd
        if timer_fd is not None:
            ep.register(timer_fd, select.EPOLLIN)
        by_fd = self._by_fd
        receive = self._receive
        held = self._held  # the same dict throughout (emptied, never replaced)
        armed = INF
        clock = time.monotonic
        try:
            while True:
                if timer_fd is None and armed != INF:  # no timerfd: epoll's own timeout
                    events = ep.poll(max(0.0, armed - clock()))
                else:
                    events = ep.poll()
                for fd, _ in events:
                    port = by_fd.get(fd)
                    if port is None:
                        if fd == self._stop_r:
                            return
                        if fd == self._wake_fd:
                            try:
                                os.eventfd_read(self._wake_fd)
                            except BlockingIOError:
                                pass
                        elif fd == timer_fd:
                            self._timer.clear()
                            armed = INF  # fired: arm again whatever the services say
                        continue
                    # At most RX_BATCH frames a round, so one busy port cannot starve
                    # the others for long.
                    try:
                        frames = receive(fd, self._socks[port], port in self._filter_outgoing)
                    except OSError:
                        self._stats[port].rx_errors += 1
                        continue
                    if sink_many is not None:
                        if frames:
                            self._count_rx_many(port, frames)
                            try:
                                sink_many(port, frames)
                            except Exception:  # a bad frame never stops the switch
                                log.exception("processing frames from port %d failed", port)
                    else:
                        for frame in frames:
                            self._count_rx(port, frame)
                            try:
                                sink(port, frame)
                            except Exception:  # a bad frame never stops the switch
                                log.exception("processing a frame from port %d failed", port)
                    if held:
                        self._send_held()
                if self._services:
                    due = self._run_services()
                    if held:
                        self._send_held()
                    if due != armed:
                        self._timer.set(due)
                        armed = due
        finally:
            ep.close()

    def stop(self) -> None:
        """Stop the receive thread and close the sockets and pcap files."""
        if self._thread is not None:
            os.write(self._stop_w, b"x")
            self._thread.join(timeout=5)
            self._thread = None
        for s in self._socks.values():
            s.close()
        self._socks.clear()
        self._by_fd.clear()
        for fd in (self._stop_r, self._stop_w, self._wake_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self._stop_r = self._stop_w = self._wake_fd = -1
        self._timer.close()
        self._close_pcaps()


class MemoryPorts(_PortSet):
    """In-memory ports: frames are injected by tests and transmitted frames kept."""

    def __init__(self, ports: list[int] | dict[int, str], pcap_dir: str | None = None) -> None:
        names = ports if isinstance(ports, dict) else {p: f"port{p}" for p in ports}
        super().__init__(names, pcap_dir)
        self.sent: dict[int, deque[bytes]] = defaultdict(deque)
        self._cond = threading.Condition()
        self._sink: Sink | None = None

    def start(self, sink: Sink) -> None:
        """Hand injected frames to `sink(port, frame)` from now on."""
        self._sink = sink

    def stop(self) -> None:
        """Stop handing frames to the sink and close the pcap files."""
        self._sink = None
        self._close_pcaps()

    def inject(self, port: int, frame: bytes) -> None:
        """A frame arrives on `port` (runs the pipeline on the caller's thread)."""
        self._stats.setdefault(port, PortStats())
        self._count_rx(port, frame)
        if self._sink is not None:
            self._sink(port, frame)

    def transmit(self, port: int, frame: bytes) -> None:
        """Keep `frame` in `sent[port]` and wake `wait_sent`."""
        self._stats.setdefault(port, PortStats())
        self._count_tx(port, frame)
        with self._cond:
            self.sent[port].append(frame)
            self._cond.notify_all()

    def wait_sent(self, port: int, timeout: float = 2.0) -> bytes | None:
        """The next frame transmitted on `port`, waiting up to `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.sent[port]:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return self.sent[port].popleft()
