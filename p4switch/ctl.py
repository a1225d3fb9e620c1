"""p4switch-ctl: a local JSON API for run-time settings P4Runtime does not cover.

Port speed, egress queue depth/rate and PFC are outside P4 (P4Runtime spec
§1.3), so p4switch takes them on a separate, loopback-only TCP socket
(`p4switch --ctl-addr 127.0.0.1:9600`). The protocol is JSON lines: one
request object per line, one response object per line.

Requests (`port` is a switch port number; `priority` a queue 0..7, omitted
for all queues):

    {"cmd": "ports"}                                   -> {"ok": true, "ports": {"1": {...stats}}}
    {"cmd": "set_port_speed", "port": 1, "gbps": 10}
    {"cmd": "set_queue_depth", "port": 1, "depth": 64, "priority": 3}
    {"cmd": "set_queue_rate", "port": 1, "pps": 10000, "priority": 3}
    {"cmd": "set_pfc", "port": 1, "priorities": [3], "xoff": 48, "xon": 16}
    {"cmd": "set_pfc_thresholds", "port": 1, "priority": 3, "xoff": 48, "xon": 16}
    {"cmd": "set_pfc_watchdog", "port": 1, "priorities": [3], "detection_ms": 200,
     "restoration_ms": 200, "action": "drop"}         (priorities [] turns it off)
    {"cmd": "tm"}                                      -> {"ok": true, "tm": {...}}

Errors answer {"ok": false, "error": "..."}. The settings are forwarded to
the running pipeline's methods of the same names (`set_port_speed(port,
gbps)`, `set_queue_depth(port, depth, priority=None)`, `set_queue_rate(port,
pps, priority=None)`, `set_pfc(port, priorities, xoff=None, xon=None)`,
`set_pfc_thresholds(port, priority, xoff, xon)`, `set_pfc_watchdog(port,
priorities, detection_ms=200, restoration_ms=200, action="drop")`,
`tm_stats()`); a pipeline without one answers "not supported". `port` null
means every port.

Names defined here: `CtlServer`, `CtlError`, `request` (a one-shot client).
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from typing import Any

_DEVICE_COMMANDS = {
    "set_port_speed": ("port", "gbps"),
    "set_queue_depth": ("port", "depth", "priority"),
    "set_queue_rate": ("port", "pps", "priority"),
    "set_pfc": ("port", "priorities", "xoff", "xon"),
    "set_pfc_thresholds": ("port", "priority", "xoff", "xon"),
    "set_pfc_watchdog": ("port", "priorities", "detection_ms", "restoration_ms", "action"),
}
_REQUIRED = {"set_pfc_thresholds": ("priority", "xoff", "xon"), "set_pfc_watchdog": ("priorities",)}


class CtlError(Exception):
    """The control API cannot start or a request failed."""


class CtlServer:
    """Serves the JSON-lines API on a loopback TCP address (see module docstring)."""

    def __init__(self, address: str, runtime: Any, ports: Any) -> None:
        host, _, port = address.rpartition(":")
        host = host or "127.0.0.1"
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise CtlError(f"--ctl-addr must be a loopback address, not {host}")
        self.runtime = runtime
        self.ports = ports
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                for line in self.rfile:
                    if not line.strip():
                        continue
                    reply = outer.handle(line)
                    self.wfile.write((json.dumps(reply) + "\n").encode())

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        try:
            self._srv = socketserver.ThreadingTCPServer((host, int(port or 0)), Handler)
        except (OSError, ValueError) as e:
            raise CtlError(f"cannot listen on {address}: {getattr(e, 'strerror', None) or e}") from None
        self._srv.daemon_threads = True
        self.address = self._srv.server_address
        self._thread: threading.Thread | None = None

    def start(self) -> CtlServer:
        self._thread = threading.Thread(target=self._srv.serve_forever, name="p4switch-ctl", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._srv.shutdown()
        self._srv.server_close()

    def handle(self, line: bytes) -> dict[str, Any]:
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise CtlError("a request is a JSON object")
            return {"ok": True, **self._dispatch(req)}
        except (ValueError, CtlError, TypeError) as e:
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
        if cmd not in _DEVICE_COMMANDS:
            raise CtlError(f"unknown command {cmd!r} (one of: ports, tm, {', '.join(_DEVICE_COMMANDS)})")
        params = _DEVICE_COMMANDS[cmd]
        unknown = set(req) - set(params) - {"cmd"}
        if unknown:
            raise CtlError(f"{cmd}: unknown field(s) {sorted(unknown)}")
        if "port" not in req:
            raise CtlError(f"{cmd}: 'port' is required")
        if dev is None:
            raise CtlError("no program is running")
        missing = [k for k in _REQUIRED.get(cmd, ()) if k not in req]
        if missing:
            raise CtlError(f"{cmd}: {missing[0]!r} is required")
        if cmd in ("set_pfc", "set_pfc_watchdog"):
            prios = req.get("priorities") or []
            if not isinstance(prios, list) or any(not isinstance(p, int) or not 0 <= p <= 7 for p in prios):
                raise CtlError(f"{cmd}: priorities must be a list of ints 0..7 (IEEE 802.1Qbb classes)")
        if cmd == "set_pfc_watchdog" and req.get("action", "drop") not in ("drop", "forward"):
            raise CtlError("set_pfc_watchdog: action is 'drop' or 'forward'")
        fn = getattr(dev, cmd, None)
        if fn is None:
            raise CtlError(f"{cmd}: not supported by the running pipeline")
        fn(**{k: req[k] for k in params if k in req})
        return {}


def request(address: str, req: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """Send one request to a running p4switch's control API and return the reply."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout) as s:
        s.sendall((json.dumps(req) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def main(argv: list[str] | None = None) -> int:
    """`python -m p4switch.ctl HOST:PORT '{"cmd": "ports"}'`: one request, reply on stdout."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m p4switch.ctl",
                                 description="Send one JSON request to a p4switch control API.")
    ap.add_argument("address", help="the switch's --ctl-addr, e.g. 127.0.0.1:9600")
    ap.add_argument("request", help='JSON request, e.g. \'{"cmd": "ports"}\'')
    args = ap.parse_args(argv)
    try:
        reply = request(args.address, json.loads(args.request))
    except (OSError, ValueError) as e:
        print(f"p4switch-ctl: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1


if __name__ == "__main__":
    raise SystemExit(main())
