"""Host agent CLI: ``python -m traffic.agent send|recv ...`` inside a host's netns.

Run one ``recv`` on the destination host, then ``send`` on the source host::

    python -m traffic.agent recv --iface h2-eth0 --messages 8 --timeout 30 --json
    python -m traffic.agent send --iface h1-eth0 --dst-ip 10.0.0.2 \\
        --qps 17,18,19,20 --messages 8 --size 65536 --strategy round_robin --json

Both print a report for people (rich tables), or only JSON with ``--json``;
``--out FILE`` also writes the JSON to FILE. Exit codes: 0 done, 1 error
(one line on stderr, or ``{"error": ...}`` with ``--json``), 3 ``recv``
stopped (timeout, signal) before reaching its ``--count``/``--messages``.

Names: ``build_parser``, ``main``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from traffic.errors import TrafficError
from traffic.qpscale import STRATEGIES
from traffic.receiver import RecvConfig, run_receiver
from traffic.roce import DEFAULT_DSCP, IB_MTUS
from traffic.sender import SendConfig, run_sender

__all__ = ["build_parser", "main"]

_PROG = "python -m traffic.agent"
EXIT_OK, EXIT_ERROR, EXIT_INCOMPLETE = 0, 1, 3


def _qp_list(text: str) -> tuple[int, ...]:
    try:
        qps = tuple(int(part, 0) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected QP numbers like 17,18,0x20") from None
    if not qps:
        raise argparse.ArgumentTypeError("give at least one QP number")
    return qps


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def cmd_send(args: argparse.Namespace) -> tuple[dict[str, object], int]:
    """Post N RDMA WRITE messages of S bytes over QPs to a receiver."""
    config = SendConfig(
        iface=args.iface,
        dst_ip=args.dst_ip,
        qps=args.qps,
        messages=args.messages,
        size=args.size,
        strategy=args.strategy,
        path_mtu=args.mtu,
        rate_mbps=args.rate_mbps,
        src_port=args.sport,
        src_port_per_qp=args.sport_per_qp,
        dscp=args.dscp,
        priority=args.priority,
        honour_pfc=not args.ignore_pfc,
        link_mbps=args.link_mbps,
        psn=args.psn,
        va=args.va,
        rkey=args.rkey,
        src_ip=args.src_ip,
        dst_mac=args.dst_mac,
        arp_timeout=args.arp_timeout,
    )
    return run_sender(config), EXIT_OK


def cmd_recv(args: argparse.Namespace) -> tuple[dict[str, object], int]:
    """Receive RoCEv2 packets, check ICRC and PSNs, reassemble, report."""
    config = RecvConfig(
        iface=args.iface,
        ip=args.ip,
        count=args.count,
        messages=args.messages,
        timeout=args.timeout,
        ready_file=args.ready_file,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        """Stop receiving (the report is still printed)."""
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    report = run_receiver(config, stop)
    wanted = config.count is not None or config.messages is not None
    return report, EXIT_INCOMPLETE if wanted and not report["done"] else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m traffic.agent` (send and recv)."""
    parser = argparse.ArgumentParser(prog=_PROG, description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--iface", required=True, help="interface to use, e.g. h1-eth0")
    common.add_argument("--json", action="store_true", help="print only the JSON report")
    common.add_argument("--out", metavar="FILE", help="also write the JSON report to FILE")

    send = sub.add_parser(
        "send", parents=[common], help=cmd_send.__doc__, description=cmd_send.__doc__
    )
    send.set_defaults(func=cmd_send)
    send.add_argument("--dst-ip", required=True, help="receiver's IPv4 address")
    send.add_argument("--qps", required=True, type=_qp_list, help="destination QPs, e.g. 17,18,19")
    send.add_argument("--messages", type=int, default=1, help="messages to post (default 1)")
    send.add_argument("--size", type=int, default=4096, help="bytes per message (default 4096)")
    send.add_argument(
        "--strategy",
        choices=sorted(STRATEGIES),
        default="round_robin",
        help="QP scaling: split each message over the QPs, or whole messages round-robin (default)",
    )
    send.add_argument(
        "--mtu",
        type=int,
        choices=IB_MTUS,
        default=1024,
        help="RoCE path MTU: payload bytes per packet (default 1024)",
    )
    send.add_argument("--rate-mbps", type=float, help="pace to this many Mb/s of frames")
    send.add_argument("--sport", type=_int, default=49152, help="UDP source port (default 49152)")
    send.add_argument(
        "--sport-per-qp",
        action="store_true",
        help="use sport + QP index as each QP's source port (more ECMP entropy)",
    )
    send.add_argument("--dscp", type=int, default=DEFAULT_DSCP, help="IP DSCP (default 26)")
    send.add_argument(
        "--priority",
        type=int,
        default=3,
        help="PFC priority of this traffic: PAUSEs for it stop the sender (default 3)",
    )
    send.add_argument("--ignore-pfc", action="store_true", help="do not honour PFC PAUSE frames")
    send.add_argument(
        "--link-mbps", type=float, help="link speed for PAUSE quanta (default: sysfs, else 10000)"
    )
    send.add_argument("--psn", type=_int, default=0, help="first PSN of every QP (default 0)")
    send.add_argument("--va", type=_int, default=0x1000_0000, help="remote buffer address")
    send.add_argument("--rkey", type=_int, default=0x1000, help="remote key")
    send.add_argument("--src-ip", help="source IPv4 address (default: the interface's)")
    send.add_argument("--dst-mac", help="destination MAC (default: neighbour table, then ARP)")
    send.add_argument("--arp-timeout", type=float, default=3.0, help="seconds (default 3)")

    recv = sub.add_parser(
        "recv", parents=[common], help=cmd_recv.__doc__, description=cmd_recv.__doc__
    )
    recv.set_defaults(func=cmd_recv)
    recv.add_argument("--ip", help="accept packets to this IPv4 address (default: the interface's)")
    recv.add_argument("--count", type=int, help="stop after this many RoCEv2 packets")
    recv.add_argument("--messages", type=int, help="stop after this many complete messages")
    recv.add_argument("--timeout", type=float, help="stop after this many seconds")
    recv.add_argument(
        "--ready-file",
        metavar="FILE",
        help="touch FILE once listening (lets a script start the sender)",
    )
    return parser


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.command == "send":
        if args.messages < 0 or args.size < 0:
            parser.error("--messages and --size must be >= 0")
        if not 0 <= args.priority <= 7:
            parser.error("--priority must be 0..7")
        if not 0 <= args.dscp <= 63:
            parser.error("--dscp must be 0..63")
    else:
        for name in ("count", "messages", "timeout"):
            value = getattr(args, name)
            if value is not None and value <= 0:
                parser.error(f"--{name} must be positive")


def _print_human(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    summary = Table(title=f"{report['role']} on {report['iface']}", show_header=False)
    for key, value in report.items():
        if key in ("per_qp", "role", "iface"):
            continue
        summary.add_row(key, json.dumps(value) if isinstance(value, dict | list) else str(value))
    console.print(summary)
    per_qp = report.get("per_qp") or {}
    if per_qp:
        columns = list(next(iter(per_qp.values())))
        table = Table(title="per QP")
        table.add_column("qp", justify="right")
        for col in columns:
            table.add_column(col, justify="right")
        for qp, counts in per_qp.items():
            table.add_row(qp, *(str(counts[c]) for c in columns))
        console.print(table)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `send` or `recv` and print its report; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _check(parser, args)
    try:
        report, code = args.func(args)
        text = json.dumps(report, indent=None if args.json else 2)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text + "\n")
    except (TrafficError, ValueError, OSError) as exc:
        if args.json:
            print(json.dumps({"error": str(exc)}))
        else:
            print(f"{_PROG} {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        print(text)
    else:
        _print_human(report)
    return code


if __name__ == "__main__":
    sys.exit(main())
