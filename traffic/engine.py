"""The agent's event loop: NICs on raw sockets, one thread, jobs handed in from other threads.

One ``Engine`` per host agent. It opens one AF_PACKET socket per NIC
(``traffic.link.PacketSocket``), creates a ``traffic.nic.Nic`` for each,
and runs a single loop that:

1. drains every socket without waiting (up to 256 frames per NIC per
   turn) into its NIC;
2. polls the job (``traffic.runner.JobRun``) and the NICs' timers;
3. transmits what each NIC may send now (pacing and PFC decide), keeping a
   frame the kernel refused (device queue full) for the next turn;
4. sleeps in ``select`` on the sockets and a wake-up pipe until the
   earliest next event (a paced frame, a timer, a command).

Other threads talk to it through ``submit`` (a job; returns a Future of
the ``HostReport``), ``status``, ``stop_job`` and ``counters``; each runs
as a command inside the loop, so the NICs and the job are only ever
touched by the loop's thread. The QPs of the last job stay until the next
one, so the loop keeps answering peers that finish later.

It also holds UDP port 4791 open on each NIC's address (a socket never
read): the kernel sees every RoCE frame too and would otherwise answer each
with an ICMP port unreachable.

Names: ``Engine``, ``EngineBusy``.
"""

from __future__ import annotations

import math
import select
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from topologies.mtu import roce_ip_packet, roce_path_mtu
from traffic.dcqcn import DcqcnParams
from traffic.errors import TrafficError
from traffic.link import Iface, PacketSocket, iface_info, resolve_mac
from traffic.nic import Nic, NicConfig, QosClasses
from traffic.roce import ROCEV2_UDP_PORT
from traffic.runner import JobRun
from traffic.schema import HostReport, Job, Status

__all__ = ["Engine", "EngineBusy"]

_BATCH = 256
_IDLE_WAIT = 0.5  # seconds: the longest sleep when nothing is pending
_T = TypeVar("_T")


class EngineBusy(TrafficError):
    """A job is already running on this agent."""


class Engine:
    """NICs on raw sockets and the job running on them (see the module docstring)."""

    def __init__(
        self,
        host: str,
        nics: list[str],
        *,
        rate_mbps: float,
        classes: QosClasses | None = None,
        line_rate_gbps: float = 400.0,
        cnp_interval: float | None = None,
        burst_bytes: int = 8192,
        dcqcn: DcqcnParams | None = None,
        rcvbuf: int = 16 << 20,
        arp_timeout: float = 3.0,
    ) -> None:
        if not nics:
            raise TrafficError("an agent needs at least one NIC")
        self.host = host
        self.arp_timeout = arp_timeout
        self.nics: dict[str, Nic] = {}
        self.sockets: dict[str, PacketSocket] = {}
        self._ifaces: dict[str, Iface] = {}
        self._sinks: list[socket.socket] = []
        self._bufsize: dict[str, int] = {}
        try:
            for name in nics:
                iface = iface_info(name)
                if iface.ip is None:
                    raise TrafficError(f"{host}: NIC {name} has no IPv4 address")
                self._ifaces[name] = iface
                self.nics[name] = Nic(
                    NicConfig(
                        name=name,
                        mac=iface.mac,
                        ip=iface.ip,
                        rate_mbps=rate_mbps,
                        classes=classes or QosClasses(),
                        line_rate_gbps=line_rate_gbps,
                        cnp_interval=cnp_interval,
                        burst_bytes=burst_bytes,
                        dcqcn=dcqcn,
                    )
                )
                self.sockets[name] = PacketSocket(name, rcvbuf=rcvbuf)
                self._bufsize[name] = iface.mtu + 64
                self._sinks.append(_udp_sink(iface.ip))
        except BaseException:
            self.close()
            raise
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._commands: list[Callable[[float], None]] = []
        self._lock = threading.Lock()
        self._run: JobRun | None = None
        self._future: Future[HostReport] | None = None
        self._last: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._unsent: dict[str, bytes] = {}
        self._drops_at = 0.0
        self.turns = 0

    # -- life cycle

    def start(self) -> None:
        """Start the loop on its own thread."""
        self._thread = threading.Thread(target=self._loop, name=f"engine-{self.host}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the loop and close every socket."""
        self._stop.set()
        if self._thread is not None:
            self._wake()
            self._thread.join(timeout=5)
            self._thread = None
        for sock in self.sockets.values():
            sock.close()
        for sink in self._sinks:
            sink.close()
        self.sockets.clear()
        self._sinks.clear()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _call(self, fn: Callable[[float], _T], timeout: float = 10.0) -> _T:
        """Run ``fn(now)`` on the loop's thread and return its result."""
        future: Future[_T] = Future()

        def command(now: float) -> None:
            """Run `fn(now)`, handing its result or exception to the future."""
            try:
                future.set_result(fn(now))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)

        with self._lock:
            self._commands.append(command)
        self._wake()
        return future.result(timeout)

    # -- the API other threads use

    def submit(self, job: Job, timeout: float | None) -> Future[HostReport]:
        """Start ``job``; the Future resolves to its report. Raises ``EngineBusy``."""
        def begin(now: float) -> Future[HostReport]:
            """Start the job (peer MACs resolved first); EngineBusy while one runs."""
            if self._run is not None and not self._run.done:
                raise EngineBusy(f"{self.host}: job {self._run.job.name!r} is running")
            self._check_path_mtu(job)
            macs = self._resolve(job)
            wall = time.time()
            now = time.monotonic()  # resolving may have taken a while
            start_delay = 0.0 if job.start_at is None else max(0.0, job.start_at - wall)
            deadline = None if timeout is None else now + start_delay + timeout
            self._run = JobRun(job, self.nics, host=self.host, macs=macs, now=now, wall=wall,
                               deadline=deadline)
            self._future = Future()
            return self._future

        return self._call(begin, timeout=self.arp_timeout * (len(job.connections) + 1) + 10)

    def status(self) -> Status:
        """What the agent is doing: the running job's progress, or idle and the last outcome."""
        def read(now: float) -> Status:
            """The running job's status, or idle with the last job's outcome."""
            if self._run is None or self._run.done:
                return Status(host=self.host, state="idle", last=self._last)
            return self._run.status(now)

        return self._call(read)

    def stop_job(self) -> bool:
        """Stop the running job (its ``run`` answers with status ``stopped``); False if idle."""
        def stop(now: float) -> bool:
            """Stop the running job and resolve its future; False if none runs."""
            if self._run is None or self._run.done:
                return False
            self._run.stop(now)
            self._finish_job()
            return True

        return self._call(stop)

    def counters(self) -> dict[str, dict[str, float]]:
        """Every NIC's counters since the agent started."""
        def read(now: float) -> dict[str, dict[str, float]]:
            """Every NIC's totals at `now`, the kernel's drop counts read first."""
            self._read_drops()
            return {name: nic.totals(now) for name, nic in self.nics.items()}

        return self._call(read)

    @property
    def busy(self) -> bool:
        """Whether a job is running."""
        run = self._run
        return run is not None and not run.done

    def nic_facts(self) -> list[dict[str, Any]]:
        """Name, MAC, IPv4 address and emulated rate (Mb/s) of each NIC."""
        return [
            {"name": n, "mac": nic.config.mac, "ip": nic.config.ip,
             "rate_mbps": nic.config.rate_mbps}
            for n, nic in self.nics.items()
        ]

    # -- inside the loop

    def _check_path_mtu(self, job: Job) -> None:
        """Refuse a job whose RoCE packets would not fit a NIC's MTU (run anyway, it does not
        get through and fails only at its timeout, with no reason given)."""
        path_mtu = job.transport.path_mtu
        size = roce_ip_packet(path_mtu)  # the largest IP packet the job sends
        for conn in job.connections:
            iface = self._ifaces.get(conn.nic)
            if iface is not None and size > iface.mtu:
                try:
                    fits = f"the largest path MTU that fits is {roce_path_mtu(iface.mtu)}"
                except ValueError as exc:
                    fits = str(exc)
                raise TrafficError(
                    f"{self.host}: job {job.name!r}, connection {conn.id!r}: path_mtu {path_mtu} makes "
                    f"IP packets of up to {size} bytes, above the MTU "
                    f"{iface.mtu} of {conn.nic} ({fits})")

    def _resolve(self, job: Job) -> dict[tuple[str, str], str]:
        macs: dict[tuple[str, str], str] = {}
        for conn in job.connections:
            key = (conn.nic, conn.peer_ip)
            if conn.peer_mac is None and key not in macs and conn.nic in self._ifaces:
                macs[key] = resolve_mac(self._ifaces[conn.nic], conn.peer_ip, self.arp_timeout)
        return macs

    def _read_drops(self) -> None:
        for name, sock in self.sockets.items():
            self.nics[name].counters.kernel_drops = sock.kernel_drops()

    def _finish_job(self) -> None:
        run, future = self._run, self._future
        if run is None or future is None or not run.done or future.done():
            return
        self._read_drops()
        report = run.report()
        self._last = f"{report.job}: {report.status}" + (f" ({report.error})" if report.error else "")
        future.set_result(report)

    def _loop(self) -> None:
        socks = list(self.sockets.items())
        nics = self.nics
        readers = [s for _, s in socks] + [self._wake_r]
        monotonic = time.monotonic
        while not self._stop.is_set():
            self.turns += 1
            now = monotonic()
            if self._commands:
                with self._lock:
                    commands, self._commands = self._commands, []
                for command in commands:
                    command(now)
                now = monotonic()
            for name, sock in socks:
                nic = nics[name]
                for frame in sock.recv_batch(_BATCH, self._bufsize[name]):
                    nic.receive(frame, now)
            if now >= self._drops_at:
                # the kernel's drop counters, often enough for the steps' counters to see them
                self._read_drops()
                self._drops_at = now + 0.05
            run = self._run
            if run is not None and not run.done:
                run.poll(now)
                if run.done:
                    self._finish_job()
            for name, sock in socks:
                nic = nics[name]
                nic.poll(now)
                out = self._unsent.pop(name, None) or nic.next_frame(now)
                while out is not None:
                    if not sock.try_send(out):
                        nic.counters.send_retries += 1
                        self._unsent[name] = out
                        break
                    out = nic.next_frame(now)
            if run is not None and not run.done:
                run.poll(now)
                if run.done:
                    self._finish_job()
            when = math.inf
            for nic in nics.values():
                when = min(when, nic.next_event(now))
            if run is not None and not run.done:
                when = min(when, run.next_event(now))
            wait = _IDLE_WAIT if when == math.inf else max(0.0, min(when - monotonic(), _IDLE_WAIT))
            if self._unsent:
                wait = min(wait, 0.0002)
            ready, _, _ = select.select(readers, [], [], wait)
            if self._wake_r in ready:
                try:
                    while self._wake_r.recv(4096):
                        pass
                except BlockingIOError:
                    pass


def _udp_sink(ip: str) -> socket.socket:
    """A UDP socket on port 4791 that is never read (its queue overflows silently)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
        sock.bind((ip, ROCEV2_UDP_PORT))
    except OSError:
        pass  # held by someone else (rdma_rxe, another agent): it answers nothing either
    return sock
