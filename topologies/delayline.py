"""The delay line: one process that holds every frame of a fabric's delayed links for its delay.

`python -m topologies.delayline CONFIG` reads a JSON list of interfaces
(`[{"intf", "netns", "door_in", "door_out", "delay_s"}, ...]`), opens for
each a packet socket on its door's far end and one on the interface
itself, then attaches `topologies.linkdelay`'s classifier, which redirects
the frames leaving the interface to the door, all from inside the
interface's namespace; it prints `ready` once every interface is done (or
the reason it could not, and ends), then holds
each frame it reads until its time and sends it out of its interface with
the mark that lets it through. One heap of due times for all interfaces;
the frames of one interface leave in the order they came, since they share
one delay. It ends on SIGTERM (`FabricNet.stop`, or `aizone down`, which
ends every process carrying the run marker).

`DelayLine(delays)` starts it from a fabric's process and waits for `ready`
(an event, not a sleep), `stop()` ends it.

Names defined here: `DelayLine`, `main`.
"""

from __future__ import annotations

import ctypes
import heapq
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .linkdelay import DELAY_MARK, EgressDelay, LinkDelayError, attach_redirect

__all__ = ["DelayLine", "main"]

_ETH_P_ALL = 0x0003
_CLONE_NEWNET = 0x40000000
_READY_TIMEOUT_S = 30.0


class DelayLine:
    """The delay line of a fabric: a child process (see the module docstring)."""

    def __init__(self, delays: tuple[EgressDelay, ...], *, log: Path | None = None) -> None:
        self.delays = delays
        self.log = log
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> DelayLine:
        """Start the process and wait for its `ready`; `LinkDelayError` with its words if not."""
        entries = [{"intf": d.intf, "netns": d.netns, "door_in": d.door_in,
                    "door_out": d.door_out, "delay_s": d.delay_s} for d in self.delays]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(entries, f)
        if self.log:
            self.log.parent.mkdir(parents=True, exist_ok=True)
        err = open(self.log, "a") if self.log else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "topologies.delayline", f.name],
                stdout=subprocess.PIPE, stderr=err, text=True)
            out = self.proc.stdout
            assert out is not None
            ready, _, _ = select.select([out], [], [], _READY_TIMEOUT_S)
            line = out.readline() if ready else ""
        finally:
            os.unlink(f.name)
            if self.log:
                err.close()  # type: ignore[union-attr]
        if line.strip() != "ready":
            self.stop()
            raise LinkDelayError(f"the delay line did not start: {line.strip() or 'no answer'}"
                                 f"{f' (see {self.log})' if self.log else ''}")
        return self

    @property
    def pid(self) -> int | None:
        """The process id while it runs."""
        return self.proc.pid if self.proc else None

    def stop(self) -> None:
        """End the process (idempotent)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _setns(fd: int, what: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), f"setns into {what}")


def _open(entries: list[dict[str, Any]]) -> list[tuple[socket.socket, socket.socket, float]]:
    # A packet socket belongs to the namespace it was made in: step into
    # each one to make its pair, then come home (one thread, so this is safe).
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    out = []
    try:
        for e in entries:
            if e["netns"]:
                ns = os.open(f"/run/netns/{e['netns']}", os.O_RDONLY)
                try:
                    _setns(ns, e["netns"])
                finally:
                    os.close(ns)
            rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL))
            rx.bind((e["door_out"], _ETH_P_ALL))
            rx.setblocking(False)
            tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            tx.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, DELAY_MARK)
            tx.bind((e["intf"], 0))
            out.append((rx, tx, float(e["delay_s"])))
            # Only now that the door is read: frames redirected before would be lost.
            attach_redirect(e["intf"], e["door_in"])
            if e["netns"]:
                _setns(home, "the root namespace")
    finally:
        os.close(home)
    return out


def _run(pairs: list[tuple[socket.socket, socket.socket, float]]) -> None:
    by_fd = {rx.fileno(): (rx, tx, delay) for rx, tx, delay in pairs}
    poller = select.epoll()
    for fd in by_fd:
        poller.register(fd, select.EPOLLIN)
    due: list[tuple[float, int, socket.socket, bytes]] = []
    seq = 0
    while True:
        now = time.monotonic()
        while due and due[0][0] <= now:
            _, _, tx, frame = heapq.heappop(due)
            try:
                tx.send(frame)
            except OSError:
                pass  # the link is down: the cable loses the frame, as a real one would
        timeout = max(0.0, due[0][0] - time.monotonic()) if due else -1
        for fd, _ in poller.poll(timeout):
            rx, tx, delay = by_fd[fd]
            while True:
                try:
                    frame, addr = rx.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == socket.PACKET_OUTGOING:
                    continue
                seq += 1
                heapq.heappush(due, (time.monotonic() + delay, seq, tx, frame))


def main(argv: list[str] | None = None) -> int:
    """The process: read the config, open the sockets, say `ready`, forward until SIGTERM."""
    args = sys.argv[1:] if argv is None else argv
    entries = json.loads(Path(args[0]).read_text())
    # No parent-death signal: the line outlives a daemon that is replaced and
    # re-attaches; it carries the run marker, so `aizone down` ends it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        pairs = _open(entries)
    except (OSError, LinkDelayError) as exc:
        print(f"cannot open the interfaces' sockets or attach the delay: {exc}", flush=True)
        return 1
    print("ready", flush=True)
    _run(pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
