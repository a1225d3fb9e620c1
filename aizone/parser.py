"""The `aizone` command line: every subcommand, its flags, and the checks argparse cannot make.

`build_parser()` builds it apart from `main()` (`aizone.cli`): each
subcommand runs a function of `aizone.fabric_cmds` or
`aizone.traffic_cmds` (set as `func`) whose docstring is its help, and
every one that prints data takes `--json`. The `place`, `model`, `sweep`
and `experiment` subcommands are the front ends of `aizone.place`,
`model.cli`, `model.sweep` and `experiments.cli`, each adding its own
parser. `validate(parser, args)` turns combinations argparse cannot
check into `parser.error` (exit 2). Byte counts go through the one size
parser, `model.cli.parse_size`.

Names defined here: `build_parser`, `validate`, `TARGET_CHOICES`,
`DEFAULT_TOPOLOGY`, `DEMO_TOPOLOGY`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from controller.choices import STRATEGIES
from experiments.cli import add_parser as add_experiment
from model.cli import add_parser as add_model
from model.cli import parse_size
from model.sweep import add_parser as add_sweep
from topologies.servernames import servers_argument
from topologies.spec import MODES
from topologies.targets import TARGETS, Pfc
from traffic.connections import QP_STRATEGIES

from .fabric_cmds import (
    acl_match,
    cmd_acl,
    cmd_check,
    cmd_dashboard,
    cmd_down,
    cmd_exec,
    cmd_link,
    cmd_mode,
    cmd_plan,
    cmd_routes,
    cmd_shell,
    cmd_stats,
    cmd_status,
    cmd_topo,
    cmd_up,
)
from .output import PROG
from .place import add_parser as add_place
from .traffic_cmds import cmd_capture, cmd_demo, cmd_run, cmd_trace

__all__ = ["DEFAULT_TOPOLOGY", "DEMO_TOPOLOGY", "TARGET_CHOICES", "build_parser", "validate"]

TARGET_CHOICES = ("auto", *TARGETS)
PFC_CHOICES = tuple(p.value for p in Pfc)
DEFAULT_TOPOLOGY = "topologies/rack.yaml"
DEMO_TOPOLOGY = "topologies/ai_zone_small.yaml"


def _doc(fn: Any) -> tuple[str, str]:
    """(first line, whole) of `fn`'s docstring: a subcommand's help and description."""
    doc = (fn.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else "", doc


def build_parser() -> argparse.ArgumentParser:
    """The `aizone` command line: every subcommand, its help taken from its docstring."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Emulate Meta's RoCEv2 AI training fabric on P4 switches.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, fn: Any, *, json_flag: bool = True) -> argparse.ArgumentParser:
        """Add subcommand `name`, run by `fn` with its docstring as help (and `--json`)."""
        short, full = _doc(fn)
        p = sub.add_parser(name, help=short, description=full,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(func=fn)
        if json_flag:
            p.add_argument("--json", action="store_true", help="print JSON for programs")
        return p

    def target_flags(p: argparse.ArgumentParser) -> None:
        """Add `--target`, `--build-dir` and `--mode` to `p`."""
        p.add_argument("--target", choices=TARGET_CHOICES, default="auto",
                       help="switch target: auto = bmv2 when simple_switch_grpc and "
                            "p4c-bm2-ss are on PATH, else p4switch (default auto)")
        p.add_argument("--build-dir", type=Path, default=None,
                       help="where compiled programs and switch logs go (default ./build)")
        p.add_argument("--mode", choices=MODES, default=None,
                       help="routing mode (default: the topology's routing.mode)")

    up = add("up", cmd_up)
    up.add_argument("topo", nargs="?", type=Path, metavar="TOPO", help="topology YAML")
    up.add_argument("--topology", "-t", type=Path, default=None, help=argparse.SUPPRESS)
    target_flags(up)
    up.add_argument("--pfc", choices=PFC_CHOICES, default=None,
                    help="where PFC runs: native = the target's traffic manager (p4switch "
                         "only), program = the P4 programs' own (docs/bmv2.md, \"PFC on "
                         "BMv2\"); default: native on p4switch, program on bmv2")
    up.add_argument("--api-host", default="127.0.0.1",
                    help="TCP address of the API (default 127.0.0.1; every TCP request needs "
                         "the fabric's token, see docs/api.md before opening it further)")
    up.add_argument("--api-port", type=int, default=8400,
                    help="TCP port of the API (default 8400; taken: `up` fails and says so)")
    up.add_argument("--api-allow-host", action="append", default=[], metavar="NAME",
                    help="another Host name the TCP API answers to (with --api-host)")
    up.add_argument("--foreground", action="store_true",
                    help="stay attached; Ctrl-C stops the fabric")
    up.add_argument("--switch-log", action="store_true",
                    help="switches log every packet into their log files")
    up.add_argument("--pcap", type=Path, default=None, metavar="DIR",
                    help="capture every switch port from the start until `down` into DIR "
                         "(a ring of 4 x 16 MB pcap files per port, 256 bytes of each frame)")
    up.add_argument("--servers", type=servers_argument, default=(), metavar="A,B,...",
                    help="spread the fabric over these machines, this one first, the others "
                         "reached over ssh (overrides the topology's servers; "
                         "docs/scale-out.md)")
    down = add("down", cmd_down)
    down.add_argument("--servers", type=servers_argument, default=(), metavar="A,B,...",
                      help="when this machine lost the run's record (it crashed), clean "
                           "these servers too (this one first, as at `up`): every leftover "
                           "of aizone there, unless a fabric of their own runs there")
    add("status", cmd_status)
    add("dashboard", cmd_dashboard)
    check = add("check", cmd_check)
    check.add_argument("--no-roce", action="store_true", help="ping only")
    stats = add("stats", cmd_stats)
    stats.add_argument("--watch", "-w", action="store_true", help="update until Ctrl-C")
    stats.add_argument("--hosts", action="store_true", help="also host links")
    routes = add("routes", cmd_routes)
    routes.add_argument("switch", nargs="?", help="one switch (default all)")
    routes.add_argument("--history", metavar="SWITCH",
                        help="instead: every P4Runtime write the controller sent SWITCH, with "
                             "its time and reason (text-format protobuf)")
    routes.add_argument("--limit", type=int, default=None, metavar="N",
                        help="with --history: the latest N writes only")
    mode = add("mode", cmd_mode)
    mode.add_argument("mode", choices=MODES)
    acl = add("acl", cmd_acl)
    acl.add_argument("switch", nargs="?", help="the switch (none: list the rules)")
    acl.add_argument("action", nargs="?", choices=("drop", "permit", "punt", "clear"))
    acl.add_argument("match", nargs="*", type=acl_match, metavar="FIELD=VALUE[&&&MASK]")
    acl.add_argument("--priority", type=int, default=500, help="1..999, higher wins (500)")
    link = add("link", cmd_link)
    link.add_argument("state", choices=("down", "up"))
    link.add_argument("a", help="one end, e.g. rtsw1")
    link.add_argument("b", help="the other end, e.g. ctsw1")
    link.add_argument("--index", type=int, default=0, help="which parallel link (default 0)")
    link.add_argument("--silent", action="store_true",
                      help="a failure routing is not told of: the controller's probes find it")
    ex = add("exec", cmd_exec)
    ex.add_argument("host")
    ex.add_argument("cmd", nargs=argparse.REMAINDER, metavar="CMD")
    ex.add_argument("--timeout", type=float, default=30, help="seconds (default 30)")
    run = add("run", cmd_run)
    run.add_argument("pattern", choices=("allreduce", "ring", "alltoall", "incast", "permutation"))
    run.add_argument("--ranks", type=int, help="NICs to run on (default: every NIC)")
    run.add_argument("--hosts", help="these hosts, comma-separated, in rank order")
    run.add_argument("--per", choices=("nic", "host"), default="nic",
                     help="with --hosts: a rank per NIC (default) or per host")
    run.add_argument("--placement", choices=STRATEGIES, default="packed",
                     help="where --ranks go (default packed)")
    run.add_argument("--size", type=parse_size, default=1 << 20,
                     help="bytes per rank, e.g. 4M (default 1M)")
    run.add_argument("--qps", type=int, default=1, help="queue pairs per peer (default 1)")
    run.add_argument("--strategy", choices=QP_STRATEGIES, default="rr",
                     help="QP scaling: whole messages round-robin (rr) or each split (default rr)")
    run.add_argument("--message-size", type=parse_size, help="the library's message size")
    run.add_argument("--admission", action="store_true",
                     help="receiver-driven admission (clear-to-send grants)")
    run.add_argument("--sport-per-qp", action="store_true",
                     help="a UDP source port per QP (more entropy for plain ECMP)")
    run.add_argument("--seed", type=int, default=0, help="seed of --placement random")
    run.add_argument("--timeout", type=float, default=600, help="seconds (default 600)")
    run.add_argument("--ack-timeout", type=float, metavar="MS",
                     help="RC ACK timeout in ms (default: the fabric's: the smallest "
                          "4.096 us x 2^k, k >= 15, above three full switch queues' drain time)")
    cap = add("capture", cmd_capture)
    cap.add_argument("where", metavar="WHERE",
                     help="a host NIC (h1-eth0, h1), a switch port (rtsw1:5) or a link "
                          "(rtsw1-ctsw1)")
    cap.add_argument("-w", "--write", required=True, metavar="FILE", help="the pcap file")
    cap.add_argument("--seconds", type=float, default=10.0, help="how long (default 10)")
    cap.add_argument("--count", type=int, default=None, help="stop after N packets")
    cap.add_argument("--snaplen", type=int, default=None,
                     help="bytes kept of each frame (default 256: every header)")
    cap.add_argument("--filter", default=None, metavar="BPF",
                     help="a tcpdump filter, e.g. 'udp port 4791'")
    tr = add("trace", cmd_trace)
    tr.add_argument("src", nargs="?", help="source host (its NIC 0), NIC interface or address")
    tr.add_argument("dst", nargs="?", help="destination host, NIC interface or address")
    tr.add_argument("--job", type=int, default=None, metavar="ID",
                    help="trace a connection of this job (the id `aizone run --json` prints; "
                         "the daemon keeps the latest 50) instead of SRC -> DST")
    tr.add_argument("--connection", default=None, metavar="r<S>>r<D>",
                    help="with --job: the connection, sending rank S to rank D (default the "
                         "job's first)")
    tr.add_argument("--qp-index", type=int, default=0, metavar="Q",
                    help="which of the connection's QPs (default 0)")
    tr.add_argument("--qps", type=int, default=1,
                    help="SRC -> DST: QPs of the connection, as `aizone run --qps` (default 1)")
    tr.add_argument("--sport-per-qp", action="store_true",
                    help="SRC -> DST: one UDP source port per QP, as `aizone run --sport-per-qp`")
    tr.add_argument("--sport", type=int, default=None,
                    help="UDP source port (default: the connection's, traffic.connections)")
    tr.add_argument("--dport", type=int, default=4791, help="UDP destination port (default 4791)")
    tr.add_argument("--qp", type=int, default=None,
                    help="BTH destination QP (default: the connection's, traffic.connections)")
    tr.add_argument("--no-send", action="store_true", help="predict only")
    shell = add("shell", cmd_shell, json_flag=False)
    shell.add_argument("switch")
    shell.add_argument("--print-command", action="store_true", help=argparse.SUPPRESS)
    topo = sub.add_parser("topo", help="look at a topology file (no root needed)")
    topo_sub = topo.add_subparsers(dest="topo_command", required=True, metavar="WHAT")
    short, full = _doc(cmd_topo)
    show = topo_sub.add_parser("show", help=short, description=full)
    show.set_defaults(func=cmd_topo)
    show.add_argument("topo", type=Path, metavar="TOPO")
    show.add_argument("--servers", nargs="?", const=(), default=None, type=servers_argument,
                      metavar="A,B,...",
                      help="where each switch and host would run on these machines (alone: "
                           "the topology's servers) and the links that cross them")
    show.add_argument("--json", action="store_true", help="print JSON for programs")
    # Commands of other modules, each adding its own parser (func returns the exit code).
    add_place(sub)
    add_model(sub)
    add_sweep(sub)
    add_experiment(sub)
    plan = add("plan", cmd_plan)
    plan.add_argument("--topology", "-t", type=Path, default=Path(DEFAULT_TOPOLOGY))
    demo = add("demo", cmd_demo)
    demo.add_argument("--topology", "-t", type=Path, default=Path(DEMO_TOPOLOGY),
                      help=f"topology YAML (default {DEMO_TOPOLOGY})")
    target_flags(demo)
    demo.add_argument("--size", type=parse_size, default=1 << 20,
                      help="AllReduce bytes per rank (default 1M)")
    return parser


def validate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """`parser.error` (exit 2) for what argparse cannot check: ranges, a topology given twice."""
    if args.command == "demo" and not 1 <= args.size <= 1 << 30:
        parser.error("--size must be in 1..1G")
    if args.command == "up" and args.topo and args.topology:
        parser.error("give the topology once (TOPO or --topology)")
    if args.command == "run" and args.ack_timeout is not None and not 0 < args.ack_timeout <= 600_000:
        parser.error("--ack-timeout must be in (0, 600000] ms")
    if args.command == "link" and args.index < 0:
        parser.error("--index must be >= 0")
    if args.command == "trace":
        _validate_trace(parser, args)


def _validate_trace(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A trace names SRC and DST or a job's connection, not both."""
    if args.job is None and (args.src is None or args.dst is None):
        parser.error("trace: give SRC and DST, or --job ID (and --connection)")
    if args.job is not None and (args.src is not None or args.qps != 1 or args.sport_per_qp):
        parser.error("trace --job: the job gives the NICs, QPs and source ports; leave out "
                     "SRC, DST, --qps and --sport-per-qp")
    if args.connection is not None and args.job is None:
        parser.error("trace --connection names a job's connection: give --job too")
    if not 1 <= args.qps <= 255 or not 0 <= args.qp_index < 255:
        parser.error("trace: --qps must be in 1..255 and --qp-index in 0..254")
