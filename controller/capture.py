"""`aizone capture`: packets of a link, a switch port or a host NIC, as pcap that Wireshark reads.

A capture point is named the way the rest of aizone names things:

- a host NIC: `h1-eth0` (its interface), or `h1` (its first NIC);
- a switch port: `rtsw1:6`, or its interface `rtsw1-eth6`;
- a link: `rtsw1-ctsw2` (`A-B`, the first parallel link; `A-B/1` the
  next), taken at the port of A, the end named first.

tcpdump does the capturing (libpcap, the tool every network engineer
trusts), in the host's network namespace for a NIC and in the root
namespace for a switch port, with the frames written through as they come
(`-U`) so a capture can be streamed. What it costs is bounded: a snap
length (`SNAPLEN` by default: every header RoCEv2 has and the start of the
payload), a packet count, a duration and a size cap (`MAX_BYTES`); the
kernel copies each frame once more into tcpdump's ring, so captures stay
off unless asked for. Wireshark and tshark decode UDP port 4791 as RoCEv2
(BTH opcode, destination QP, PSN; RETH, AETH) and MAC control frames as
PFC (class-enable vector, quanta per class).

Names defined here: `CapturePoint`, `CaptureError`, `capture_point`,
`tcpdump_argv`, `SNAPLEN`, `MAX_BYTES`, `MAX_SECONDS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from topologies.addressing import AddressPlan

__all__ = ["MAX_BYTES", "MAX_SECONDS", "SNAPLEN", "CaptureError", "CapturePoint",
           "capture_point", "tcpdump_argv"]

SNAPLEN = 256  # bytes kept of each frame: Ethernet, IPv4, UDP, BTH, RETH/AETH and more
MAX_BYTES = 512 << 20  # a capture stops when it has written this much
MAX_SECONDS = 3600.0

_PORT = re.compile(r"^([A-Za-z0-9_]+)(?::|-eth)(\d+)$")
_LINK = re.compile(r"^([A-Za-z0-9_]+)-([A-Za-z0-9_]+)(?:/(\d+))?$")


class CaptureError(ValueError):
    """A capture point or setting that cannot be captured (the message says why and what can)."""


@dataclass(frozen=True, kw_only=True)
class CapturePoint:
    """Where to capture: an interface, in a host's namespace (`host`) or the root one."""

    target: str  # as asked
    intf: str
    host: str | None  # the host whose namespace holds `intf`; None: the root namespace
    what: str  # in words: "rtsw1 port 6 (to ctsw2)"


def capture_point(plan: AddressPlan, target: str) -> CapturePoint:
    """The capture point `target` names in `plan` (see the module docstring)."""
    hosts = {h.name: h for h in plan.hosts}
    switches = {s.name: s for s in plan.switches}
    t = target.strip()
    if t in hosts:
        nic = hosts[t].nics[0]
        return CapturePoint(target=target, intf=nic.intf, host=t,
                            what=f"{t} NIC 0 ({nic.intf}, {nic.ip})")
    for h in plan.hosts:
        for nic in h.nics:
            if nic.intf == t:
                return CapturePoint(target=target, intf=nic.intf, host=h.name,
                                    what=f"{h.name} NIC {nic.index} ({nic.intf}, {nic.ip})")
    m = _PORT.match(t)
    if m and m.group(1) in switches:
        sw = switches[m.group(1)]
        port = int(m.group(2))
        for p in sw.ports:
            if p.port == port:
                return CapturePoint(target=target, intf=p.intf, host=None,
                                    what=f"{sw.name} port {port} (to {p.peer})")
        raise CaptureError(f"{target!r}: {sw.name} has no port {port} (ports "
                           f"{', '.join(str(p.port) for p in sw.ports)})")
    m = _LINK.match(t)
    if m and m.group(1) in switches:
        a, b, index = m.group(1), m.group(2), int(m.group(3) or 0)
        ports = [p for p in switches[a].ports if p.peer == b]
        if index < len(ports):
            p = ports[index]
            return CapturePoint(target=target, intf=p.intf, host=None,
                                what=f"link {a}-{b} at {a} port {p.port}")
        if ports:
            raise CaptureError(f"{target!r}: {a} and {b} have {len(ports)} link(s) "
                               f"(index 0..{len(ports) - 1})")
    raise CaptureError(f"{target!r} is not a capture point of {plan.name}: name a host NIC "
                       f"(h1-eth0, or h1), a switch port (rtsw1:5 or rtsw1-eth5) or a link "
                       f"(rtsw1-ctsw1)")


def tcpdump_argv(point: CapturePoint, *, count: int | None = None, snaplen: int = SNAPLEN,
                 bpf: str | None = None, check_only: bool = False) -> list[str]:
    """tcpdump's command line for `point`, writing pcap to stdout (or, `check_only`,
    compiling `bpf` and exiting: a bad filter is then an error before anything streams)."""
    if not 64 <= snaplen <= 65535:
        raise CaptureError(f"snaplen {snaplen}: from 64 to 65535 bytes")
    if count is not None and not 1 <= count <= 10_000_000:
        raise CaptureError(f"count {count}: from 1 to 10,000,000 packets")
    argv = ["tcpdump", "-i", point.intf, "-n", "-s", str(snaplen)]
    if check_only:
        argv += ["-d"]
    else:
        argv += ["-U", "-w", "-", "--immediate-mode"]
        if count is not None:
            argv += ["-c", str(count)]
    if bpf:
        argv.append(bpf)
    return argv
