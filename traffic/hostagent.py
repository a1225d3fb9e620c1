"""The per-host traffic agent, a daemon: ``python -m traffic.hostagent`` inside a host's netns.

One agent process per host, started by the controller daemon inside the
host's network namespace::

    python -m traffic.hostagent --host h1 --socket /run/aizone/agents/h1.sock \\
        --nic h1-eth0[,h1-eth1...] --rate-mbps 100 \\
        [--data-dscp 26 --data-prio 3 --data-ecn 2 --control-dscp 48 --control-prio 7]
        [--line-rate-gbps 400] [--cnp-interval-us US] [--dcqcn] [--burst-bytes 8192]

It opens its NICs (``traffic.engine.Engine``: one raw socket each, one
event loop) and listens on a Unix socket at a filesystem path (such a
socket is reachable from every network namespace: it lives in the mount
namespace). The protocol is JSON lines: one request object per line, one
answer per line, ``{"ok": true, ...}`` or ``{"ok": false, "error": "..."}``:

- ``{"op": "ping"}`` -> host, pid, NICs (name, MAC, IP, rate), busy.
- ``{"op": "run", "job": Job, "timeout": seconds}`` -> ``{"ok": true,
  "report": HostReport}`` once the job ends; a job that failed, timed out
  or was stopped answers ``ok: false`` with the report and its error (which
  step, which peers were owed what).
- ``{"op": "status"}`` -> ``Status`` of the running job (or idle).
- ``{"op": "stop"}`` -> stops the running job.
- ``{"op": "counters"}`` -> every NIC's counters since the agent started,
  and the agent's CPU time.

Its client is ``traffic.agentclient.AgentClient``; the controller starts
one agent per host (``controller.hostagents``).

Names: ``AgentServer``, ``build_parser``, ``main``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from traffic.agentclient import MAX_LINE
from traffic.dcqcn import DcqcnParams
from traffic.engine import Engine, EngineBusy
from traffic.errors import TrafficError
from traffic.nic import QosClasses, TrafficClass
from traffic.schema import Job

__all__ = ["AgentServer", "build_parser", "main"]

_PROG = "python -m traffic.hostagent"


# -- server


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        """Answer each JSON request line with one JSON line, until the client closes."""
        while True:
            line = self.rfile.readline(MAX_LINE)
            if not line:
                return
            answer = self.server.agent.answer(line)
            self.wfile.write(json.dumps(answer).encode() + b"\n")
            self.wfile.flush()


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    agent: AgentServer


class AgentServer:
    """An ``Engine`` served on a Unix socket (see the module docstring)."""

    def __init__(self, engine: Engine, socket_path: str | os.PathLike[str]) -> None:
        self.engine = engine
        self.path = Path(socket_path)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _remove_stale(self.path)
        # Created 0600 (under a 0177 umask, so never reachable by another user, not
        # even for a moment): an agent sends packets as root.
        old = os.umask(0o177)
        try:
            self._server = _Server(str(self.path), _Handler)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        self._server.agent = self
        self._cpu0 = time.process_time()

    def serve_forever(self) -> None:
        """Serve requests until `shutdown`."""
        self._server.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stop serving, close the socket and remove its file."""
        self._server.shutdown()
        self._server.server_close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def answer(self, line: bytes) -> dict[str, Any]:
        """One request line -> one answer object (never raises)."""
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
            op = request.get("op")
            if op == "ping":
                return {"ok": True, "host": self.engine.host, "pid": os.getpid(),
                        "nics": self.engine.nic_facts(), "busy": self.engine.busy}
            if op == "run":
                return self._run(request)
            if op == "status":
                return {"ok": True, "status": self.engine.status().model_dump()}
            if op == "stop":
                return {"ok": True, "stopped": self.engine.stop_job()}
            if op == "counters":
                return {"ok": True, "host": self.engine.host, "counters": self.engine.counters(),
                        "cpu_seconds": time.process_time() - self._cpu0}
            return {"ok": False, "error": f"unknown op {op!r}: ping, run, status, stop, counters"}
        except ValidationError as exc:
            return {"ok": False, "error": f"bad job: {_short(exc)}"}
        except (ValueError, TrafficError, TimeoutError) as exc:
            return {"ok": False, "error": str(exc) or type(exc).__name__}
        except Exception as exc:  # noqa: BLE001 - an agent answers, it does not die
            return {"ok": False, "error": f"internal error: {type(exc).__name__}: {exc}"}

    def _run(self, request: dict[str, Any]) -> dict[str, Any]:
        job = Job.model_validate(request.get("job"))
        timeout = request.get("timeout")
        if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
            raise ValueError(f"timeout={timeout!r}: a positive number of seconds")
        try:
            future = self.engine.submit(job, timeout)
        except EngineBusy as exc:
            return {"ok": False, "error": str(exc), "busy": True}
        report = future.result()  # the engine's deadline ends it
        body = report.model_dump()
        if report.status != "ok":
            return {"ok": False, "error": f"{self.engine.host}: job {job.name!r} {report.status}: "
                                          f"{report.error}", "report": body}
        return {"ok": True, "report": body}


def _short(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "job"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def _remove_stale(path: Path) -> None:
    """Remove a socket file nobody listens on; refuse to steal a live agent's."""
    if not path.exists():
        return
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(str(path))
    except OSError:
        path.unlink()
        return
    finally:
        probe.close()
    raise TrafficError(f"an agent already listens on {path}")


# -- CLI


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m traffic.hostagent`."""
    parser = argparse.ArgumentParser(prog=_PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--host", required=True, help="this host's name (reports carry it)")
    parser.add_argument("--socket", required=True, help="Unix socket path to listen on")
    parser.add_argument("--nic", required=True,
                        help="the host's NICs, comma-separated, e.g. h1-eth0,h1-eth1")
    parser.add_argument("--rate-mbps", type=float, required=True,
                        help="emulated line rate of every NIC, Mb/s (pacing, PAUSE quanta)")
    parser.add_argument("--line-rate-gbps", type=float, default=400.0,
                        help="the real line rate the emulated one stands for (default 400)")
    for name, dscp, prio, ecn in (("data", 26, 3, 2), ("control", 48, 7, 0), ("default", 0, 0, 0)):
        parser.add_argument(f"--{name}-dscp", type=int, default=dscp,
                            help=f"DSCP of the {name} class (default {dscp})")
        parser.add_argument(f"--{name}-prio", type=int, default=prio,
                            help=f"PFC priority of the {name} class (default {prio})")
        parser.add_argument(f"--{name}-ecn", type=int, default=ecn, choices=(0, 1, 2),
                            help=f"ECN codepoint the {name} class sends (default {ecn})")
    parser.add_argument("--cnp-interval-us", type=float,
                        help="least time between two CNPs per QP (default 4 us x line rate / rate)")
    parser.add_argument("--dcqcn", action="store_true",
                        help="react to CNPs with DCQCN rate cuts (default off, as at Meta)")
    parser.add_argument("--burst-bytes", type=int, default=8192,
                        help="the pacing bucket: bursts of at most this many bytes (default 8192)")
    parser.add_argument("--rcvbuf", type=int, default=16 << 20,
                        help="receive socket buffer per NIC, bytes (default 16 MiB)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run an agent until SIGTERM/SIGINT; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    nics = [n.strip() for n in args.nic.split(",") if n.strip()]
    if not nics:
        parser.error("--nic: give at least one interface")
    if args.rate_mbps <= 0:
        parser.error("--rate-mbps must be positive")
    try:
        classes = QosClasses(
            data=TrafficClass(name="data", dscp=args.data_dscp, priority=args.data_prio,
                              ecn=args.data_ecn),
            control=TrafficClass(name="control", dscp=args.control_dscp,
                                 priority=args.control_prio, ecn=args.control_ecn),
            default=TrafficClass(name="default", dscp=args.default_dscp,
                                 priority=args.default_prio, ecn=args.default_ecn),
        )
    except ValueError as exc:
        parser.error(str(exc))
    try:
        engine = Engine(
            args.host,
            nics,
            rate_mbps=args.rate_mbps,
            classes=classes,
            line_rate_gbps=args.line_rate_gbps,
            cnp_interval=None if args.cnp_interval_us is None else args.cnp_interval_us / 1e6,
            burst_bytes=args.burst_bytes,
            dcqcn=DcqcnParams() if args.dcqcn else None,
            rcvbuf=args.rcvbuf,
        )
    except (TrafficError, OSError) as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return 1
    try:
        server = AgentServer(engine, args.socket)
    except (TrafficError, OSError) as exc:
        engine.close()
        print(f"{_PROG}: error: {args.socket}: {exc}", file=sys.stderr)
        return 1
    engine.start()

    def on_signal(signum: int, frame: object) -> None:
        """Shut the server down (from another thread: shutdown waits for the loop)."""
        threading.Thread(target=server.shutdown, daemon=True).start()

    # SIGHUP: the ssh session that ran it on another server ended (its pty hung up).
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        server.serve_forever()
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    code = main()
    # Its socket closed and its NICs' engine stopped: what is left is the interpreter's
    # teardown of its heap, which would hold the fabric's `down` for no use.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
