"""`p4switch`: the command line of the built-in P4 target.

Mirrors BMv2's `simple_switch_grpc`: the same general options (`-i`,
`--pcap`, `--device-id`, `--log-console`, `-L`, `--no-p4` ...) and the same
target options (`--grpc-server-addr`, `--cpu-port`, `--drop-port`,
`--grpc-server-ssl` ...), which may follow a `--` as they must for BMv2:

    p4switch prog.json -i 1@veth1 -i 2@veth2 --device-id 1 \\
        -- --grpc-server-addr 127.0.0.1:9559 --cpu-port 255

The differences from simple_switch_grpc: the P4Runtime server listens on
127.0.0.1:9559 by default (not 0.0.0.0); PROGRAM is a p4switch program file
(`p4switch-compile` output) rather than a BMv2 JSON; there are extra traffic
manager options (port speed, queue depth/rate, PFC, PFC watchdog) and a local control API
(`--ctl-addr`, see `p4switch.ctl`). Thrift/nanomsg options are accepted and
ignored, so tools written for BMv2 can launch p4switch unchanged.

Exit status: 0 after SIGTERM/SIGINT, 1 when the switch cannot start (one line
on stderr: bad program file, missing interface, address in use), 2 for bad
command-line usage.

Names defined here: `build_parser`, `main`, `run`, `StartupError`, `PROG`, `LOG_LEVELS`.
"""

from __future__ import annotations

import argparse
import inspect
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from p4switch.tmconfig import UNITS

PROG = "p4switch"
LOG_LEVELS = {"trace": 5, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
              "error": logging.ERROR, "off": logging.CRITICAL + 10}


def _uint(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def _port_value(text: str) -> tuple[int | None, str]:
    """'[PORT=]VALUE' for per-port traffic manager options."""
    port, sep, value = text.partition("=")
    if not sep:
        return None, text
    return _uint(port), value


def _watchdog_value(text: str) -> tuple[int | None, dict[str, Any]]:
    """'[PORT=]PRIOS[:DETECT_MS:RESTORE_MS:ACTION]' -> (port, Switch pfc_watchdog dict)."""
    port, spec = _port_value(text)
    parts = spec.split(":")
    if len(parts) not in (1, 4):
        raise argparse.ArgumentTypeError(f"{text!r}: give PRIOS or PRIOS:DETECT_MS:RESTORE_MS:ACTION")
    try:
        prios = [int(p, 0) for p in parts[0].split(",") if p.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: priorities are integers 0..7, e.g. 3,4") from None
    if not prios or any(not 0 <= p <= 7 for p in prios):
        raise argparse.ArgumentTypeError(f"{text!r}: priorities are integers 0..7, e.g. 3,4")
    out: dict[str, Any] = {"priorities": prios}
    if len(parts) == 4:
        try:
            out["detection_ms"], out["restoration_ms"] = float(parts[1]), float(parts[2])
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: DETECT_MS and RESTORE_MS are numbers") from None
        if out["detection_ms"] <= 0 or out["restoration_ms"] <= 0:
            raise argparse.ArgumentTypeError(f"{text!r}: DETECT_MS and RESTORE_MS must be positive")
        if parts[3] not in ("drop", "forward"):
            raise argparse.ArgumentTypeError(f"{text!r}: ACTION is drop or forward")
        out["action"] = parts[3]
    return port, out


def _shared_buffer(text: str) -> tuple[int, float | None]:
    """'SIZE[:ALPHA]' -> (size, alpha or None)."""
    size, sep, alpha = text.partition(":")
    n = _uint(size)
    if n == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: SIZE must be > 0")
    if not sep:
        return n, None
    try:
        a = float(alpha)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: ALPHA is a number, e.g. 1 or 0.5") from None
    if not a > 0 or a == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: ALPHA must be a finite number > 0")
    return n, a


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `p4switch` (simple_switch_grpc's general options)."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="p4switch: a pure-Python v1model switch with a P4Runtime server "
                    "(command line compatible with BMv2 simple_switch_grpc).",
        epilog="Target options may also follow '--', as for simple_switch_grpc.",
    )
    p.add_argument("program", nargs="?", metavar="PROGRAM.json",
                   help="p4switch program file (p4switch-compile output) to run at startup")
    g = p.add_argument_group("general options (as bmv2)")
    g.add_argument("-i", "--interface", action="append", default=[], metavar="PORT@IFACE",
                   help="attach network interface IFACE as port PORT; can appear multiple times")
    g.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR",
                   help="write pcap files per interface into DIR (default: current directory)")
    g.add_argument("--device-id", type=_uint, default=0, help="P4Runtime device id (default 0)")
    g.add_argument("--no-p4", action="store_true",
                   help="start without a program; push one with SetForwardingPipelineConfig")
    g.add_argument("--log-console", action="store_true", help="log on stdout")
    g.add_argument("--log-file", metavar="FILE", help="log to FILE")
    g.add_argument("-L", "--log-level", choices=list(LOG_LEVELS), default="info",
                   help="log level (default info)")
    g.add_argument("--log-flush", action="store_true", help=argparse.SUPPRESS)
    g.add_argument("--thrift-port", type=_uint, help="accepted for compatibility; ignored")
    g.add_argument("--nanolog", help=argparse.SUPPRESS)
    g.add_argument("--notifications-addr", help=argparse.SUPPRESS)
    g.add_argument("--max-port-count", type=_uint, default=512, help=argparse.SUPPRESS)
    g.add_argument("-v", "--version", action="version", version=f"{PROG} 0.1.0")
    t = p.add_argument_group("target options (as simple_switch_grpc)")
    t.add_argument("--grpc-server-addr", default="127.0.0.1:9559", metavar="HOST:PORT",
                   help="bind the P4Runtime server to HOST:PORT (default 127.0.0.1:9559)")
    t.add_argument("--cpu-port", type=_uint, default=None,
                   help="CPU port number for packet-in/packet-out (0 is not valid); "
                        "without it there is no P4Runtime packet I/O")
    t.add_argument("--drop-port", type=_uint, default=511, help="drop port (default 511)")
    t.add_argument("--priority-queues", type=_uint, default=1, metavar="N",
                   help="egress priority queues per port (standard_metadata.priority; default 1)")
    t.add_argument("--egress-spec-init-to-drop", action="store_true",
                   help="initialise standard_metadata.egress_spec to the drop port")
    t.add_argument("--disable-swap", action="store_true", help=argparse.SUPPRESS)
    t.add_argument("--grpc-server-ssl", action="store_true", help="serve P4Runtime over TLS")
    t.add_argument("--grpc-server-cacert", metavar="PEM", help="CA certificate for client auth")
    t.add_argument("--grpc-server-cert", metavar="PEM", help="server certificate")
    t.add_argument("--grpc-server-key", metavar="PEM", help="server private key")
    t.add_argument("--grpc-server-with-client-auth", action="store_true",
                   help="require client certificates signed by --grpc-server-cacert")
    t.add_argument("--dp-grpc-server-addr", help=argparse.SUPPRESS)
    x = p.add_argument_group("p4switch extras (traffic manager)")
    x.add_argument("--grpc-transport", choices=("native", "grpcio"), default=None,
                   help="how P4Runtime is served: gRPC C++ ('native', the default when it was built "
                        "at install time) or grpcio's Python server; also $P4SWITCH_GRPC")
    x.add_argument("--port-io", choices=("batched", "per-frame"), default=None,
                   help="how ports move frames: up to 64 a system call (recvmmsg, sendmmsg: "
                        "'batched', the default when p4switch._rawio was built at install time) "
                        "or one a call with Python's recvmsg and send ('per-frame')")
    x.add_argument("--port-speed", action="append", default=[], type=_port_value,
                   metavar="[PORT=]GBPS", help="port speed in Gb/s, for all ports or one port")
    x.add_argument("--queue-depth", action="append", default=[], type=_port_value,
                   metavar="[PORT=]DEPTH", help="egress queue depth, in packets (or bytes with "
                                               "--buffer-unit bytes)")
    x.add_argument("--buffer-unit", choices=UNITS, default="packets",
                   help="what queue depths, PFC thresholds and headroom and the shared buffer "
                        "count: packets (as BMv2's queues) or bytes (as a switch's MMU)")
    x.add_argument("--shared-buffer", type=_shared_buffer, default=None, metavar="SIZE[:ALPHA]",
                   help="a buffer every queue draws from (in the buffer's unit), with dynamic "
                        "thresholds ALPHA: a queue holds at most ALPHA x the buffer left free")
    x.add_argument("--queue-rate", action="append", default=[], type=_port_value,
                   metavar="[PORT=]PPS", help="egress queue drain rate in packets/s")
    x.add_argument("--pfc", action="append", default=[], metavar="[PORT=]PRIOS",
                   type=_port_value, help="enable PFC for priorities, e.g. 3 or 3,4 (per port or all)")
    x.add_argument("--pfc-watchdog", action="append", default=[], type=_watchdog_value,
                   metavar="[PORT=]PRIOS[:DETECT_MS:RESTORE_MS:ACTION]",
                   help="PFC watchdog for priorities, e.g. 3 or 3,4:200:200:drop (ACTION drop|forward; "
                        "per port or all)")
    x.add_argument("--ctl-addr", default="", metavar="HOST:PORT|unix:PATH",
                   help="serve the p4switch-ctl JSON API on loopback HOST:PORT, or on a Unix socket "
                        "at PATH (mode 0600)")
    return p


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = build_parser()
    # simple_switch_grpc wants target options after '--'; we accept both ways.
    args = parser.parse_args([a for a in argv if a != "--"])
    if args.no_p4 and args.program:
        if args.program.endswith(".json"):
            print(f"{PROG}: warning: ignoring {args.program} as --no-p4 was used", file=sys.stderr)
        args.program = None
    if not args.no_p4 and not args.program:
        parser.error("give a PROGRAM.json or --no-p4")
    if args.cpu_port == 0:
        parser.error("--cpu-port 0 is not valid")
    if args.log_console and args.log_file:
        parser.error("--log-console and --log-file are exclusive")
    if args.dp_grpc_server_addr:
        parser.error("--dp-grpc-server-addr is not supported by p4switch")
    if args.grpc_server_ssl and not (args.grpc_server_cert and args.grpc_server_key):
        parser.error("--grpc-server-ssl needs --grpc-server-cert and --grpc-server-key")
    if args.grpc_server_with_client_auth and not args.grpc_server_cacert:
        parser.error("--grpc-server-with-client-auth needs --grpc-server-cacert")
    if args.priority_queues < 1 or args.priority_queues > 8:
        parser.error("--priority-queues must be in 1..8")
    from p4switch.io import parse_interface

    ports: dict[int, str] = {}
    for spec in args.interface:
        try:
            port, name = parse_interface(spec)
        except ValueError as e:
            parser.error(str(e))
        if port in ports:
            parser.error(f"port {port} is given twice")
        if args.cpu_port is not None and port == args.cpu_port:
            parser.error(f"port {port} is the CPU port: do not add an interface with this number")
        ports[port] = name
    args.ports = ports
    return args


def _setup_logging(args: argparse.Namespace) -> None:
    logging.addLevelName(5, "TRACE")
    if args.log_console:
        handler: logging.Handler = logging.StreamHandler(sys.stdout)
    elif args.log_file:
        handler = logging.FileHandler(args.log_file)
    else:
        handler = logging.StreamHandler(sys.stderr)
        args.log_level = "warn" if args.log_level in ("trace", "debug", "info") else args.log_level
    handler.setFormatter(logging.Formatter("[%(asctime)s] [%(name)s] [%(levelname)s] %(message)s"))
    root = logging.getLogger("p4switch")
    root.addHandler(handler)
    root.setLevel(LOG_LEVELS[args.log_level])


def _switch_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword options for the pipeline's Switch (only those its constructor accepts)."""
    wanted: dict[str, Any] = {
        "cpu_port": args.cpu_port,
        "drop_port": args.drop_port,
        "priority_queues": args.priority_queues,
        "egress_spec_init_to_drop": args.egress_spec_init_to_drop,
        "port_speed": dict(args.port_speed) or None,
        "queue_depth": dict(args.queue_depth) or None,
        "queue_rate": dict(args.queue_rate) or None,
        "pfc": dict(args.pfc) or None,
        "pfc_watchdog": dict(args.pfc_watchdog) or None,
        "buffer_unit": args.buffer_unit if args.buffer_unit != "packets" else None,
        "shared_buffer": args.shared_buffer[0] if args.shared_buffer else None,
        "alpha": args.shared_buffer[1] if args.shared_buffer else None,
    }
    from p4switch.pipeline import Switch

    params = inspect.signature(Switch).parameters
    takes_all = any(p.kind == p.VAR_KEYWORD for p in params.values())
    out = {}
    for k, v in wanted.items():
        if v is None or v is False:
            continue
        if takes_all or k in params:
            out[k] = v
        elif k not in ("egress_spec_init_to_drop",):
            logging.getLogger("p4switch").warning("the pipeline does not support --%s; ignored",
                                                  k.replace("_", "-"))
    return out


def run(args: argparse.Namespace, stop: threading.Event) -> None:
    """Start ports, pipeline and servers; return when `stop` is set. Raises on startup errors."""
    from p4switch.io import RawPorts
    from p4switch.server import P4RuntimeServer, TlsConfig

    program_bytes = None
    if args.program:
        try:
            with open(args.program, "rb") as f:
                program_bytes = f.read()
        except OSError as e:
            raise StartupError(f"cannot read program file {args.program}: {e.strerror}") from None
        from p4switch.server.runtime import load_program

        load_program(program_bytes)  # fail on a bad program before touching the network

    def factory(program: Any, transmit: Any) -> Any:
        """A pipeline `Switch` for `program`, with the traffic manager options given; its
        traffic manager runs on the ports' thread (one thread per switch)."""
        from p4switch.pipeline import Switch

        return Switch(program, transmit, tm_driver=ports, **_switch_options(args))

    tls = None
    if args.grpc_server_ssl:
        tls = TlsConfig(cert=args.grpc_server_cert, key=args.grpc_server_key,
                        ca=args.grpc_server_cacert or "", client_auth=args.grpc_server_with_client_auth)
    batched = None if args.port_io is None else args.port_io == "batched"
    ports = RawPorts(args.ports, args.pcap, batched=batched)
    server = ctl = None
    try:
        server = P4RuntimeServer(device_id=args.device_id, factory=factory,
                                 address=args.grpc_server_addr, transmit=ports.transmit,
                                 cpu_port=args.cpu_port, tls=tls, transport=args.grpc_transport)
        if program_bytes is not None:
            server.runtime.install(program_bytes)
        if args.ctl_addr:
            from p4switch.ctl import CtlError, CtlServer

            try:
                ctl = CtlServer(args.ctl_addr, server.runtime, ports).start()
            except CtlError as e:
                raise StartupError(str(e)) from None
        ports.start(server.process, server.process_many)
        server.start()
        logging.getLogger("p4switch").info(
            "p4switch device %d: P4Runtime on %s, ports %s", args.device_id,
            args.grpc_server_addr, ", ".join(f"{p}@{n}" for p, n in sorted(args.ports.items())))
        stop.wait()
    finally:
        if ctl is not None:
            ctl.stop()
        if server is not None:
            server.stop(grace=0.5)
        ports.stop()


class StartupError(Exception):
    """p4switch cannot start; the message is the one line shown to the user."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `p4switch` command line until SIGTERM/SIGINT; returns the exit status."""
    # gRPC's C core logs bind failures itself; we report them in one line instead.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    args = _parse(sys.argv[1:] if argv is None else argv)
    _setup_logging(args)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    from p4switch.io import PortError
    from p4switch.server import ServerError
    from p4switch.translate import P4RTError

    try:
        run(args, stop)
    except (StartupError, PortError, ServerError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except P4RTError as e:
        print(f"{PROG}: error: {args.program}: {e.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
