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

`PortCaptures` is `aizone up --pcap DIR`: one tcpdump per switch port
(every link, host links included, seen at the switch), from the moment the
network exists until `aizone down`, each a ring of `PCAP_FILES` files of
`PCAP_FILE_MB` MB (`DIR/<switch>-eth<port>.pcap0`, `...pcap1`, ...: the
oldest is overwritten), so a long run keeps its latest packets and never
fills the disk. On a fabric over several servers each switch's tcpdump runs
on its server, through ssh (`FabricRuntime.port_popen`): a live capture
streams from there, and `--pcap DIR` rings of a switch there are in DIR on
that server.

Names defined here: `CapturePoint`, `CaptureError`, `capture_point`,
`tcpdump_argv`, `start_capture`, `PortCaptures`, `SNAPLEN`, `MAX_BYTES`, `MAX_SECONDS`,
`PCAP_FILES`, `PCAP_FILE_MB`.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topologies.addressing import AddressPlan

__all__ = ["MAX_BYTES", "MAX_SECONDS", "PCAP_FILES", "PCAP_FILE_MB", "SNAPLEN", "CaptureError",
           "CapturePoint", "PortCaptures", "capture_point", "start_capture", "tcpdump_argv"]

SNAPLEN = 256  # bytes kept of each frame: Ethernet, IPv4, UDP, BTH, RETH/AETH and more
MAX_BYTES = 512 << 20  # a capture stops when it has written this much
MAX_SECONDS = 3600.0
PCAP_FILES = 4  # `up --pcap`: files in each port's ring
PCAP_FILE_MB = 16  # and each one's size (MB, tcpdump's -C: millions of bytes)

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
    node: str = ""  # the host or switch whose port `intf` is (where to run tcpdump)


def capture_point(plan: AddressPlan, target: str) -> CapturePoint:
    """The capture point `target` names in `plan` (see the module docstring)."""
    hosts = {h.name: h for h in plan.hosts}
    switches = {s.name: s for s in plan.switches}
    t = target.strip()
    if t in hosts:
        nic = hosts[t].nics[0]
        return CapturePoint(target=target, intf=nic.intf, host=t, node=t,
                            what=f"{t} NIC 0 ({nic.intf}, {nic.ip})")
    for h in plan.hosts:
        for nic in h.nics:
            if nic.intf == t:
                return CapturePoint(target=target, intf=nic.intf, host=h.name, node=h.name,
                                    what=f"{h.name} NIC {nic.index} ({nic.intf}, {nic.ip})")
    m = _PORT.match(t)
    if m and m.group(1) in switches:
        sw = switches[m.group(1)]
        port = int(m.group(2))
        for p in sw.ports:
            if p.port == port:
                return CapturePoint(target=target, intf=p.intf, host=None, node=sw.name,
                                    what=f"{sw.name} port {port} (to {p.peer})")
        raise CaptureError(f"{target!r}: {sw.name} has no port {port} (ports "
                           f"{', '.join(str(p.port) for p in sw.ports)})")
    m = _LINK.match(t)
    if m and m.group(1) in switches:
        a, b, index = m.group(1), m.group(2), int(m.group(3) or 0)
        ports = [p for p in switches[a].ports if p.peer == b]
        if index < len(ports):
            p = ports[index]
            return CapturePoint(target=target, intf=p.intf, host=None, node=a,
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


class PortCaptures:
    """`aizone up --pcap DIR`: a tcpdump on every switch port (see the module docstring).

    `popen(switch, argv, **kw)` starts a process where the switch's ports are,
    marked as the fabric's (`FabricRuntime.port_popen`), so `aizone down` ends
    what `stop` could not; a switch on another server writes its ports'
    rings into the same folder there.
    """

    def __init__(self, plan: AddressPlan, directory: Path, popen: Callable[..., Any], *,
                 snaplen: int = SNAPLEN, files: int = PCAP_FILES,
                 file_mb: int = PCAP_FILE_MB) -> None:
        self.plan, self.directory, self.popen = plan, directory, popen
        self.snaplen, self.files, self.file_mb = snaplen, files, file_mb
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> list[Path]:
        """One tcpdump per switch port; the first file of each ring."""
        self.directory.mkdir(parents=True, exist_ok=True)
        out = []
        for sw in self.plan.switches:
            for p in sw.ports:
                path = self.directory / f"{p.intf}.pcap"
                # -Z root: tcpdump would give up root before opening the ring's next file
                argv = ["tcpdump", "-i", p.intf, "-n", "-s", str(self.snaplen), "-U", "-w",
                        str(path), "-C", str(self.file_mb), "-W", str(self.files), "-Z", "root"]
                # The folder made where tcpdump runs: on another server, its own.
                argv = ["sh", "-c", 'mkdir -p "$0" && exec "$@"', str(self.directory), *argv]
                self.procs.append(self.popen(sw.name, argv, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL))
                out.append(path.with_name(path.name + "0"))
        return out

    def stop(self, timeout: float = 10.0) -> None:
        """End every tcpdump (each writes what it holds first)."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()


async def start_capture(plan: AddressPlan, fabric: Any, target: str, *, seconds: float,
                        count: int | None = None, snaplen: int | None = None,
                        bpf: str | None = None, on_end: Callable[[], None] | None = None
                        ) -> tuple[CapturePoint, AsyncGenerator[bytes, None]]:
    """tcpdump at `target` of `fabric` (a `topologies.attach.FabricRuntime`): its capture
    point and the pcap stream, for at most `seconds`, `count` packets and `MAX_BYTES`.

    Everything that can be wrong is a `CaptureError` before anything streams:
    the point, the limits, and the filter (compiled by tcpdump first). The
    stream has one reader of tcpdump's output; closing it (the client went
    away) ends tcpdump. tcpdump ends at `seconds` whether or not the stream is
    read (a client that never reads the body leaves nothing running), and
    `on_end` is called in the event loop once it has ended.
    """
    point = capture_point(plan, target)
    if not 0 < seconds <= MAX_SECONDS:
        raise CaptureError(f"seconds {seconds:g}: more than 0, at most {MAX_SECONDS:g}")
    argv = tcpdump_argv(point, count=count, snaplen=snaplen or SNAPLEN, bpf=bpf)
    check = tcpdump_argv(point, snaplen=snaplen or SNAPLEN, bpf=bpf, check_only=True)

    def start(cmd: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        """Start `cmd` where the point is: in its host's namespace, or the root one, on the
        server its node runs on (bounded there past the capture's own deadline)."""
        return fabric.port_popen(point.node, cmd, lifetime_s=seconds + 20, **kw)

    if bpf:
        probe = await asyncio.to_thread(lambda: start(
            check, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).communicate(timeout=30))
        lines = probe[1].decode(errors="replace").strip().splitlines()
        if lines and ("syntax error" in lines[-1] or "tcpdump:" in lines[-1]):
            raise CaptureError(f"filter {bpf!r}: {lines[-1]}")
    proc = start(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout

    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes | None] = asyncio.Queue()

    def pump() -> None:
        """The one reader of tcpdump's output: each chunk into the queue (up to `MAX_BYTES`),
        None at its end; then tcpdump is reaped and `on_end` called."""
        total = 0
        while True:
            chunk = os.read(out.fileno(), 1 << 16)
            total += len(chunk)
            if total >= MAX_BYTES and proc.poll() is None:
                proc.terminate()  # read or not, a capture holds at most MAX_BYTES
            loop.call_soon_threadsafe(chunks.put_nowait, chunk or None)
            if not chunk:
                break
        out.close()
        proc.wait()
        if on_end is not None:
            loop.call_soon_threadsafe(on_end)

    def stop(signal_it: Callable[[], None]) -> None:
        if proc.poll() is None:
            signal_it()

    reader = loop.run_in_executor(None, pump)
    # The one deadline, whether or not the stream is read: at `seconds` tcpdump is asked to
    # end (it writes what it holds first), 15 s later it is killed.
    timers = [loop.call_later(seconds, stop, proc.terminate),
              loop.call_later(seconds + 15, stop, proc.kill)]

    async def stream() -> AsyncGenerator[bytes, None]:
        """The pcap bytes until tcpdump ends (its count, `seconds` or `MAX_BYTES` reached)."""
        total = 0
        try:
            while (chunk := await chunks.get()) is not None:
                chunk = chunk[:MAX_BYTES - total]
                total += len(chunk)
                if chunk:
                    yield chunk
        finally:
            for t in timers:
                t.cancel()
            if proc.poll() is None:
                proc.kill()
            await asyncio.to_thread(proc.wait)
            await reader
            out.close()

    return point, stream()
