"""The host side of a link: interface facts, raw sockets, next-hop MAC resolution.

Host agents run inside a network namespace (a Mininet host or ``ip netns
exec``) and talk Ethernet directly, as a RoCE NIC would, through one
AF_PACKET socket per interface. Names:

- ``Iface`` / ``iface_info``: index, MAC, IPv4 address, MTU of an interface
  (pyroute2).
- ``link_bps``: the interface's speed from sysfs, if the driver reports one.
- ``PacketSocket``: a raw socket bound to one interface that sends frames
  and receives frames with kernel timestamps, never its own transmissions;
  ``recv_batch`` / ``try_send`` never wait (the agent's event loop).
- ``resolve_mac``: the MAC to put in frames for a destination IP: the next
  hop's (the gateway's when the route has one), from the kernel's neighbour
  table, else from an ARP request sent with scapy.
"""

from __future__ import annotations

import errno
import select
import socket
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

from traffic.errors import TrafficError

__all__ = ["Iface", "PacketSocket", "iface_info", "link_bps", "resolve_mac"]

_ETH_P_ALL = 0x0003
_SOL_PACKET = 263
_PACKET_STATISTICS = 6
_PACKET_IGNORE_OUTGOING = 23  # Linux >= 4.20
_PACKET_OUTGOING = 4
_SO_TIMESTAMPNS = 35
_SO_RCVBUFFORCE = 33
_MAX_FRAME = 65536
# Neighbour states whose link-layer address can be used (NUD_* in
# include/uapi/linux/neighbour.h): REACHABLE, STALE, DELAY, PROBE, NOARP, PERMANENT.
_NUD_USABLE = 0x02 | 0x04 | 0x08 | 0x10 | 0x40 | 0x80


@dataclass(frozen=True, kw_only=True)
class Iface:
    """Facts about one network interface."""

    name: str
    index: int
    mac: str
    ip: str | None  # first IPv4 address, if any
    mtu: int


def iface_info(name: str) -> Iface:
    """Look an interface up in the current network namespace."""
    with IPRoute() as ipr:
        indexes = ipr.link_lookup(ifname=name)
        if not indexes:
            raise TrafficError(f"no interface named {name!r} in this network namespace")
        index = indexes[0]
        link = ipr.get_links(index)[0]
        addrs = [a.get("IFA_ADDRESS") for a in ipr.get_addr(index=index, family=socket.AF_INET)]
    return Iface(
        name=name,
        index=index,
        mac=link.get("IFLA_ADDRESS"),
        ip=addrs[0] if addrs else None,
        mtu=link.get("IFLA_MTU"),
    )


def link_bps(name: str) -> float | None:
    """The link speed in bit/s that the driver reports in sysfs, or None."""
    try:
        mbps = int(Path(f"/sys/class/net/{name}/speed").read_text().strip())
    except (OSError, ValueError):
        return None
    return mbps * 1e6 if mbps > 0 else None


class PacketSocket:
    """A raw AF_PACKET socket bound to one interface (needs CAP_NET_RAW)."""

    def __init__(self, iface: str, rcvbuf: int | None = None) -> None:
        try:
            # Protocol 0 until bound: a socket opened with ETH_P_ALL receives
            # every interface's frames until bind() narrows it to one.
            self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        except PermissionError as exc:
            raise TrafficError(f"raw sockets need root or CAP_NET_RAW: {exc}") from exc
        try:
            self._sock.bind((iface, _ETH_P_ALL))
        except OSError as exc:
            self._sock.close()
            raise TrafficError(f"cannot bind a raw socket to {iface!r}: {exc}") from exc
        self._sees_outgoing = True
        try:
            self._sock.setsockopt(_SOL_PACKET, _PACKET_IGNORE_OUTGOING, 1)
            self._sees_outgoing = False
        except OSError:
            pass  # older kernel: filter on the packet type instead
        self._sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        if rcvbuf:
            # A Python receiver is slower than the wire in bursts: a deep
            # socket queue absorbs them instead of dropping.
            try:
                self._sock.setsockopt(socket.SOL_SOCKET, _SO_RCVBUFFORCE, rcvbuf)
            except OSError:
                self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self._drops = 0
        self.iface = iface

    def fileno(self) -> int:
        """The socket's file descriptor (for `select`)."""
        return self._sock.fileno()

    def send(self, frame: bytes) -> None:
        """Transmit one Ethernet frame (without FCS)."""
        while True:
            try:
                self._sock.send(frame)
                return
            except BlockingIOError:
                select.select([], [self._sock], [], 0.01)
            except OSError as exc:
                if exc.errno == 105:  # ENOBUFS: the device queue is full, retry
                    select.select([], [], [], 0.0005)
                    continue
                raise TrafficError(f"send on {self.iface}: {exc}") from exc

    def recv(self, timeout: float | None) -> tuple[bytes, float] | None:
        """Next received frame and its kernel timestamp (UNIX seconds), or None on timeout.

        ``timeout`` 0 polls; None waits for ever.
        """
        while True:
            ready, _, _ = select.select([self._sock], [], [], timeout)
            if not ready:
                return None
            data, ancdata, _flags, addr = self._sock.recvmsg(_MAX_FRAME, 64)
            if self._sees_outgoing and addr[2] == _PACKET_OUTGOING:
                continue
            ts = None
            for level, kind, value in ancdata:
                if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(value) >= 16:
                    sec, nsec = struct.unpack("qq", value[:16])
                    ts = sec + nsec * 1e-9
            if ts is None:
                ts = time.time()
            return data, ts

    def recv_batch(self, limit: int, bufsize: int = _MAX_FRAME) -> list[bytes]:
        """Up to ``limit`` frames already queued, without waiting (the event loop's path)."""
        frames: list[bytes] = []
        recv = self._sock.recv
        try:
            for _ in range(limit):
                frames.append(recv(bufsize, socket.MSG_DONTWAIT))
        except BlockingIOError:
            pass
        return frames

    def try_send(self, frame: bytes) -> bool:
        """Transmit one frame without waiting; False if the device queue is full (retry later)."""
        try:
            self._sock.send(frame, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno == errno.ENOBUFS:
                return False
            raise TrafficError(f"send on {self.iface}: {exc}") from exc
        return True

    def kernel_drops(self) -> int:
        """Frames the kernel dropped because this socket's queue was full, so far."""
        # PACKET_STATISTICS resets the kernel counters on every read: accumulate.
        raw = self._sock.getsockopt(_SOL_PACKET, _PACKET_STATISTICS, 8)
        self._drops += struct.unpack("II", raw)[1]
        return self._drops

    def close(self) -> None:
        """Close the socket."""
        self._sock.close()

    def __enter__(self) -> PacketSocket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _next_hop(ipr: IPRoute, iface: Iface, dst_ip: str) -> str:
    """The gateway towards ``dst_ip`` if the route has one, else ``dst_ip`` itself.

    The route is looked up from the interface's own address: a host with
    several NICs routes each NIC's traffic by source (a routing table per
    NIC), so only that lookup finds the NIC's own gateway.
    """
    try:
        routes = (ipr.route("get", dst=dst_ip, src=iface.ip) if iface.ip
                  else ipr.route("get", dst=dst_ip))
    except NetlinkError:
        return dst_ip  # no route: treat the destination as on-link
    for route in routes:
        oif = route.get("RTA_OIF")
        if oif is not None and oif != iface.index:
            raise TrafficError(
                f"the route to {dst_ip} leaves through interface index {oif}, not {iface.name}"
            )
        gateway = route.get("RTA_GATEWAY")
        if gateway:
            return str(gateway)
    return dst_ip


def resolve_mac(iface: Iface, dst_ip: str, timeout: float = 3.0) -> str:
    """Destination MAC for frames to ``dst_ip`` sent on ``iface``.

    Uses the kernel's neighbour entry for the next hop when there is a
    usable one (static entries included, as Mininet and the controller
    install them); otherwise asks with an ARP request.
    """
    with IPRoute() as ipr:
        hop = _next_hop(ipr, iface, dst_ip)
        for neigh in ipr.get_neighbours(family=socket.AF_INET, ifindex=iface.index):
            if neigh.get("NDA_DST") == hop and neigh["state"] & _NUD_USABLE:
                lladdr = neigh.get("NDA_LLADDR")
                if lladdr:
                    return str(lladdr)
    return _arp(iface, hop, timeout)


def _arp(iface: Iface, ip: str, timeout: float) -> str:
    from scapy.layers.l2 import ARP, Ether
    from scapy.sendrecv import srp1

    if iface.ip is None:
        raise TrafficError(f"{iface.name} has no IPv4 address to send an ARP request from")
    request = Ether(src=iface.mac, dst="ff:ff:ff:ff:ff:ff") / ARP(
        op=1, hwsrc=iface.mac, psrc=iface.ip, pdst=ip
    )
    tries = 3
    reply = srp1(request, iface=iface.name, timeout=timeout / tries, retry=tries - 1, verbose=False)
    if reply is None or ARP not in reply:
        raise TrafficError(f"no ARP reply from {ip} on {iface.name} within {timeout:g} s")
    return str(reply[ARP].hwsrc)
