"""A switch process's port sockets: make them read only what arrives.

A packet socket bound to an interface reads the frames the interface
receives and, unless told otherwise, the frames other sockets send out of
it (`PACKET_OUTGOING`; the kernel spares a socket only its own). BMv2 opens
its ports with libpcap and never narrows the direction (1.15.5 calls
`pcap_create`/`pcap_activate`, not `pcap_setdirection`), so a frame that
another process sends out of a switch port comes back into the switch as if
received there. The delay line (`topologies.delayline`) is such a process:
it sends every delayed frame out of its port again, and BMv2 forwarded each
one a second time (10 pings across a delayed spine got 9,257 replies).

`ignore_outgoing(pid)` takes a copy of each of the process's packet sockets
(`pidfd_getfd(2)`, Linux 5.6; the process is not stopped or traced) and sets
`PACKET_IGNORE_OUTGOING` on it (Linux 4.20), which is what
`pcap_setdirection(PCAP_D_IN)` does on this kernel; the option belongs to
the socket, so the switch's own descriptor has it too.

Names defined here: `ignore_outgoing`, `packet_socket_count`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
from pathlib import Path

__all__ = ["ignore_outgoing", "packet_socket_count"]

_SYS_PIDFD_GETFD = 438  # the same number on every architecture (new-syscall table)
_SOL_PACKET = 263
_PACKET_IGNORE_OUTGOING = 23

_libc = ctypes.CDLL(None, use_errno=True)


def _socket_fds(pid: int) -> list[int]:
    """The process's descriptors that are sockets (any family)."""
    fds = []
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(entry).startswith("socket:"):
                fds.append(int(entry.name))
        except (FileNotFoundError, ValueError):
            continue  # closed meanwhile
    return sorted(fds)


def _packet_sockets(pid: int) -> list[socket.socket]:
    """Copies of the process's packet sockets (the caller closes them)."""
    pidfd = os.pidfd_open(pid)
    found = []
    try:
        for fd in _socket_fds(pid):
            copy = _libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
            if copy < 0:
                err = ctypes.get_errno()
                if err == errno.EBADF:  # closed since it was listed
                    continue
                raise OSError(err, f"pidfd_getfd of pid {pid} fd {fd}: {os.strerror(err)}")
            sock = socket.socket(fileno=copy)
            if sock.family == socket.AF_PACKET:
                found.append(sock)
            else:
                sock.close()
    finally:
        os.close(pidfd)
    return found


def packet_socket_count(pid: int) -> int:
    """How many packet sockets process `pid` holds."""
    socks = _packet_sockets(pid)
    for s in socks:
        s.close()
    return len(socks)


def ignore_outgoing(pid: int) -> int:
    """Set `PACKET_IGNORE_OUTGOING` on every packet socket of process `pid`.

    Returns how many sockets it set; `OSError` (with the pid and descriptor)
    when a socket cannot be taken or set.
    """
    socks = _packet_sockets(pid)
    try:
        for s in socks:
            s.setsockopt(_SOL_PACKET, _PACKET_IGNORE_OUTGOING, 1)
    finally:
        for s in socks:
            s.close()
    return len(socks)
