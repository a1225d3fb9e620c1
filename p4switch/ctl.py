"""p4switch-ctl: a local JSON API for run-time settings P4Runtime does not cover.

Port speed, egress queue depth/rate and PFC are outside P4 (P4Runtime spec
§1.3), so p4switch takes them on a separate local socket, `--ctl-addr`:

* ``HOST:PORT``, loopback TCP (``127.0.0.1:9600``, ``localhost:9600``,
  ``[::1]:9600``): any local user can connect;
* ``unix:/PATH``, a Unix socket created with mode 0600 (under a 0077 umask,
  so it is never open to others, then chmod 0600): only its owner (and root)
  can connect. A socket file left by a switch that is gone is removed first;
  one another process still listens on, or a file that is not a socket, is
  refused. Put it in a directory only its owner writes (``/run/p4switch``).

The protocol is JSON lines: one request object per line, one response object
per line. A request line holds at most `MAX_LINE` bytes (a longer one is
answered with an error and the connection is closed without reading it
further); at most `MAX_CONNECTIONS` connections are served at once (one
more is answered with an error and closed), and one idle for
`IDLE_TIMEOUT` seconds is closed.

Requests (`port` is a switch port number, null for every port; `priority` a
queue 0..7, omitted or null for all queues):

    {"cmd": "ports"}                                   -> {"ok": true, "ports": {"1": {...stats}}}
    {"cmd": "set_port_speed", "port": 1, "gbps": 10}
    {"cmd": "set_queue_depth", "port": 1, "depth": 64, "priority": 3}
    {"cmd": "set_queue_rate", "port": 1, "pps": 10000, "priority": 3}
    {"cmd": "set_pfc", "port": 1, "priorities": [3], "xoff": 48, "xon": 16}
    {"cmd": "set_pfc_thresholds", "port": 1, "priority": 3, "xoff": 48, "xon": 16,
     "headroom": 24}                                   (headroom optional)
    {"cmd": "set_shared_buffer", "size": 2000000, "alpha": 1}   (no size: no pool)
    {"cmd": "set_pfc_watchdog", "port": 1, "priorities": [3], "detection_ms": 200,
     "restoration_ms": 200, "action": "drop"}         (priorities [] turns it off)
    {"cmd": "tm"}                                      -> {"ok": true, "tm": {...}}

Depths, XOFF/XON, headroom and the shared buffer's size count what the
switch's buffer counts (`--buffer-unit`: packets, or bytes).

Values are checked before they reach the pipeline: `port`, `depth`,
`priority`, `xoff`, `xon`, `headroom`, `size` and the `priorities` are ints
(a bool is not one), `gbps`, `pps`, `alpha`, `detection_ms` and
`restoration_ms` finite numbers (JSON's
NaN and Infinity are refused), none negative (`FIELDS`). Errors answer
{"ok": false, "error": "..."}, naming the field. The settings are forwarded
to the running pipeline's methods of the same names (`set_port_speed(port,
gbps)`, `set_queue_depth(port, depth, priority=None)`, `set_queue_rate(port,
pps, priority=None)`, `set_pfc(port, priorities, xoff=None, xon=None,
headroom=None)`, `set_pfc_thresholds(port, priority, xoff, xon,
headroom=None)`, `set_shared_buffer(size, alpha=None)`, `set_pfc_watchdog(port,
priorities, detection_ms=200, restoration_ms=200, action="drop")`,
`tm_stats()`); a pipeline without one answers "not supported".

Names defined here: `CtlServer`, `CtlError`, `request` (a one-shot client),
`parse_address`, `main`, `FIELDS`, `MAX_LINE`, `MAX_CONNECTIONS`, `IDLE_TIMEOUT`,
`MAX_REPLY`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import socketserver
import stat
import threading
from typing import Any

MAX_LINE = 64 * 1024  # bytes of one request line, newline excluded
MAX_CONNECTIONS = 16
IDLE_TIMEOUT = 30.0  # seconds a connection may wait between requests
MAX_REPLY = 16 * 1024 * 1024  # bytes `request` reads of one reply
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_MAX_INT = (1 << 32) - 1
_MAX_NUMBER = 1e15

_DEVICE_COMMANDS = {
    "set_port_speed": ("port", "gbps"),
    "set_queue_depth": ("port", "depth", "priority"),
    "set_queue_rate": ("port", "pps", "priority"),
    "set_pfc": ("port", "priorities", "xoff", "xon", "headroom"),
    "set_pfc_thresholds": ("port", "priority", "xoff", "xon", "headroom"),
    "set_shared_buffer": ("size", "alpha"),
    "set_pfc_watchdog": ("port", "priorities", "detection_ms", "restoration_ms", "action"),
}
_REQUIRED = {"set_pfc_thresholds": ("priority", "xoff", "xon"), "set_pfc_watchdog": ("priorities",)}

# field -> (kind, may be null): "int" an int in [0, 2**32), "prio" an int 0..7,
# "number" a finite int or float in [0, 1e15], "prios" a list of "prio", "action" drop|forward
FIELDS: dict[str, tuple[str, bool]] = {
    "port": ("int", True),
    "gbps": ("number", False),
    "depth": ("int", False),
    "pps": ("number", False),
    "priority": ("prio", True),
    "priorities": ("prios", False),
    "xoff": ("int", True),
    "xon": ("int", True),
    "headroom": ("int", True),
    "size": ("int", True),
    "alpha": ("number", True),
    "detection_ms": ("number", False),
    "restoration_ms": ("number", False),
    "action": ("action", False),
}


class CtlError(Exception):
    """The control API cannot start or a request failed."""


def parse_address(address: str) -> tuple[int, Any]:
    """(socket family, address) of a `--ctl-addr`: ``unix:/PATH`` or a loopback ``HOST:PORT``."""
    if address.startswith("unix:"):
        path = address[len("unix:"):]
        if not path or "\0" in path:
            raise CtlError(f"--ctl-addr {address!r}: a Unix socket needs a path (unix:/run/p4switch/ctl.sock)")
        return socket.AF_UNIX, path
    host, sep, port = address.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") or "127.0.0.1"
    if host not in _LOOPBACK:
        raise CtlError(f"--ctl-addr must be a loopback address or unix:/PATH, not {host}")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise CtlError(f"--ctl-addr {address!r}: expected HOST:PORT (a port 0..65535) or unix:/PATH")
    return (socket.AF_INET6 if ":" in host else socket.AF_INET), (host, int(port))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _check(cmd: str, name: str, value: Any) -> None:
    """Raise CtlError unless `value` is what field `name` takes (see `FIELDS`)."""
    kind, nullable = FIELDS[name]
    if value is None and nullable:
        return
    if kind == "action":
        if value not in ("drop", "forward"):
            raise CtlError(f"{cmd}: action is 'drop' or 'forward'")
        return
    if kind == "prios":
        if type(value) is not list or any(type(p) is not int or not 0 <= p <= 7 for p in value):
            raise CtlError(f"{cmd}: priorities must be a list of ints 0..7 (IEEE 802.1Qbb classes)")
        return
    if kind == "prio":
        ok, want = type(value) is int and 0 <= value <= 7, "an int 0..7"
    elif kind == "int":
        ok, want = type(value) is int and 0 <= value <= _MAX_INT, f"an int 0..{_MAX_INT}"
    else:
        ok = type(value) in (int, float) and math.isfinite(value) and 0 <= value <= _MAX_NUMBER
        want = "a finite number >= 0"
    if not ok:
        raise CtlError(f"{cmd}: {name!r} must be {want}" + (" or null" if nullable else "")
                       + f", not {json.dumps(value)[:40]}")


class _Server(socketserver.ThreadingMixIn, socketserver.BaseServer):
    """The connection limit both server kinds share (threads per connection, daemonic)."""

    daemon_threads = True
    block_on_close = False  # stop() does not wait for connected clients
    ctl: CtlServer

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on its own thread, or refuse it beyond MAX_CONNECTIONS."""
        if not self.ctl._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.settimeout(0.5)
                request.sendall(_line({"ok": False, "error": f"too many connections (at most {MAX_CONNECTIONS})"}))
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.ctl._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Serve one connection, then free its slot."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.ctl._slots.release()


class _TcpServer(_Server, socketserver.TCPServer):
    allow_reuse_address = True


class _UnixServer(_Server, socketserver.UnixStreamServer):
    pass


class _V6Server(_TcpServer):
    address_family = socket.AF_INET6


def _line(reply: dict[str, Any]) -> bytes:
    return (json.dumps(reply) + "\n").encode()


class _Handler(socketserver.StreamRequestHandler):
    timeout = IDLE_TIMEOUT
    server: _Server

    def handle(self) -> None:
        """Answer each request line of the connection with one JSON line, until it closes."""
        with contextlib.suppress(OSError):  # the client went away, or was idle too long
            while True:
                line = self.rfile.readline(MAX_LINE + 1)
                if not line:
                    return
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    self._refuse(f"request line longer than {MAX_LINE} bytes")
                    return
                if line.strip():
                    self.wfile.write(_line(self.server.ctl.handle(line)))

    def _refuse(self, error: str) -> None:
        """Answer `error` and end the connection, reading (and dropping) at most MAX_LINE more
        bytes for a second: closing with unread input would reset the connection and could
        lose the answer before the client reads it."""
        self.wfile.write(_line({"ok": False, "error": error}))
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_WR)
        self.connection.settimeout(1.0)
        left = MAX_LINE
        while left > 0 and (chunk := self.connection.recv(min(left, 65536))):
            left -= len(chunk)


class CtlServer:
    """Serves the JSON-lines API on a loopback TCP address or a Unix socket (see module docstring).

    `ctl_addr` is the address listened on in `--ctl-addr` form (the port
    chosen for ``:0``); `address` the socket's own (a (host, port) tuple or
    the Unix socket's path).
    """

    def __init__(self, address: str, runtime: Any, ports: Any) -> None:
        family, where = parse_address(address)
        self.runtime = runtime
        self.ports = ports
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._unix_inode: int | None = None
        srv: _TcpServer | _UnixServer
        if family == socket.AF_UNIX:
            srv = _UnixServer(where, _Handler, bind_and_activate=False)
            self.ctl_addr = f"unix:{where}"
        else:
            srv = (_V6Server if family == socket.AF_INET6 else _TcpServer)(where, _Handler, bind_and_activate=False)
        srv.ctl = self
        try:
            if family == socket.AF_UNIX:
                self._bind_unix(srv, where)
            else:
                srv.server_bind()
                bound: Any = srv.server_address
                host, port = bound[0], bound[1]
                self.ctl_addr = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
            srv.server_activate()
        except CtlError:
            srv.server_close()
            raise
        except (OSError, ValueError) as e:
            srv.server_close()
            raise CtlError(f"cannot listen on {address}: {getattr(e, 'strerror', None) or e}") from None
        self._srv = srv
        self.address: Any = srv.server_address
        self._thread: threading.Thread | None = None

    def _bind_unix(self, srv: _TcpServer | _UnixServer, path: str) -> None:
        _remove_stale_socket(path)
        old = os.umask(0o077)  # the socket file is never open to others, not even for a moment
        try:
            srv.server_bind()
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self._unix_inode = os.lstat(path).st_ino

    def start(self) -> CtlServer:
        """Start serving on a background thread; returns self."""
        self._thread = threading.Thread(target=self._srv.serve_forever, name="p4switch-ctl", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the socket and remove our Unix socket file."""
        if self._thread is not None:  # shutdown() waits for serve_forever, which must have started
            self._srv.shutdown()
            self._thread = None
        self._srv.server_close()
        if self._unix_inode is not None:  # remove our socket file, not one a successor made
            path = str(self.address)
            with contextlib.suppress(OSError):
                if os.lstat(path).st_ino == self._unix_inode:
                    os.unlink(path)

    def handle(self, line: bytes) -> dict[str, Any]:
        """The answer to one request line: `{"ok": True, ...}` or `{"ok": False, "error": ...}`."""
        try:
            req = json.loads(line, parse_constant=_no_constant)
            if not isinstance(req, dict):
                raise CtlError("a request is a JSON object")
            return {"ok": True, **self._dispatch(req)}
        except (ValueError, CtlError, TypeError, RecursionError) as e:
            return {"ok": False, "error": str(e)}
        except Exception as e:  # the pipeline refused the value
            return {"ok": False, "error": f"{type(e).__name__}: {e}"}

    def _dispatch(self, req: dict[str, Any]) -> dict[str, Any]:
        cmd = req.get("cmd")
        if cmd == "ports":
            stats = self.ports.stats() if self.ports is not None else {}
            return {"ports": {str(p): vars(s) for p, s in sorted(stats.items())}}
        st = self.runtime.committed
        dev = st.device if st is not None else None
        if cmd == "tm":
            fn = getattr(dev, "tm_stats", None)
            if fn is None:
                raise CtlError("tm: not supported by the running pipeline")
            return {"tm": fn()}
        if not isinstance(cmd, str) or cmd not in _DEVICE_COMMANDS:
            raise CtlError(f"unknown command {cmd!r} (one of: ports, tm, {', '.join(_DEVICE_COMMANDS)})")
        params = _DEVICE_COMMANDS[cmd]
        unknown = set(req) - set(params) - {"cmd"}
        if unknown:
            raise CtlError(f"{cmd}: unknown field(s) {sorted(unknown)}")
        if "port" in params and "port" not in req:
            raise CtlError(f"{cmd}: 'port' is required")
        missing = [k for k in _REQUIRED.get(cmd, ()) if k not in req or req[k] is None]
        if missing:
            raise CtlError(f"{cmd}: {missing[0]!r} is required")
        for name in params:
            if name in req:
                _check(cmd, name, req[name])
        if dev is None:
            raise CtlError("no program is running")
        fn = getattr(dev, cmd, None)
        if fn is None:
            raise CtlError(f"{cmd}: not supported by the running pipeline")
        fn(**{k: req[k] for k in params if k in req})
        return {}


def _remove_stale_socket(path: str) -> None:
    """Remove a socket file no process listens on; refuse a live one, or a file of another kind."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise CtlError(f"cannot listen on unix:{path}: the file exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # stale: nobody listens
        return
    except OSError as e:
        raise CtlError(f"cannot listen on unix:{path}: {e.strerror or e}") from None
    finally:
        probe.close()
    raise CtlError(f"cannot listen on unix:{path}: another process is listening on it")


def request(address: str, req: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """Send one request to a running p4switch's control API (``HOST:PORT`` or ``unix:/PATH``)
    and return the reply. Raises CtlError or OSError."""
    family, where = parse_address(address)
    s = socket.socket(family, socket.SOCK_STREAM)
    with s:
        s.settimeout(timeout)
        s.connect(where)
        s.sendall((json.dumps(req) + "\n").encode())
        data = bytearray()
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if len(data) > MAX_REPLY:
                raise CtlError(f"{address}: reply longer than {MAX_REPLY} bytes")
    if not data:
        raise CtlError(f"{address}: the switch closed the connection without a reply")
    reply = json.loads(data, parse_constant=_no_constant)
    if not isinstance(reply, dict):
        raise CtlError(f"{address}: the reply is not a JSON object")
    return reply


def main(argv: list[str] | None = None) -> int:
    """`python -m p4switch.ctl ADDRESS '{"cmd": "ports"}'`: one request, reply on stdout."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m p4switch.ctl",
                                 description="Send one JSON request to a p4switch control API.")
    ap.add_argument("address", help="the switch's --ctl-addr, e.g. 127.0.0.1:9600 or unix:/run/p4switch/ctl.sock")
    ap.add_argument("request", help='JSON request, e.g. \'{"cmd": "ports"}\'')
    args = ap.parse_args(argv)
    try:
        reply = request(args.address, json.loads(args.request))
    except (OSError, ValueError, CtlError) as e:
        print(f"p4switch-ctl: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1


if __name__ == "__main__":
    raise SystemExit(main())
