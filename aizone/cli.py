"""`aizone`: the command line for people (rich tables, progress) and programs (`--json`).

The CLI holds no state: `up` starts the controller daemon
(`controller.daemon_main`) and follows its progress; every other command asks
the daemon through its local API (`controller.client`). Subcommands (each
one's docstring is its help):

  up TOPO         start a fabric and its daemon; returns when it is up
  down            stop the running fabric and remove leftovers of crashed runs
  status          the fabric, its switches, sessions, hosts and links
  dashboard       the dashboard's URL, with the fabric's token
  check           all host pairs: ping and one RoCEv2 transfer
  stats           link load, queues, PFC, ECN, drops, imbalance per tier
  routes [SW]     entries read back from the switches (--history: the writes sent)
  mode MODE       switch pin | ecmp | eecmp on the live fabric
  acl [SW ...]    add (drop, permit, punt), clear or list a switch's ACL rules
  link down|up    fail or restore a link
  exec HOST CMD   run a command in a host
  run PATTERN     a collective on the hosts' traffic agents
  capture WHERE   packets of a link, switch port or host NIC, to a pcap file
  trace SRC DST   a flow's path, predicted from the entries read back, then sent
  shell SW        p4runtime-shell on a switch, as a secondary controller
  topo show TOPO  a topology's tiers, counts, oversubscription (no root)
  plan            a topology's addressing plan (no root)
  place           where a job's ranks would go, and each strategy's cross-zone bytes
  model TOPO      the flow-level model of a topology
  sweep TOPO      sweeps of the model: modes, QPs, placements, failure sets
  experiment NAME bring a fabric up, run an experiment's grid, write its results
  demo            bring up, check, a ring AllReduce, counters; always tears down

Exit codes: 0 success; 1 a failure at run time (network, switch,
P4Runtime, compiler, a failed check); 2 bad input (usage, topology file, P4
file, a name the fabric does not have); 130 interrupted. Errors are one
line on stderr, `aizone: error: ...`. Only this module maps exceptions to
exit codes.

Names defined here: `build_parser`, `main`, `TARGET_CHOICES`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from controller.access import read_token, token_path
from controller.client import ApiClient, ApiError, NotRunning
from controller.errors import BuildError, ControllerError
from topologies.nodes import SWITCH_CLASSES, NetworkError
from topologies.pki import FabricPki
from topologies.runstate import PKI_DIR, state_dir
from topologies.spec import MODES, SpecError

from .views import (
    show_acl,
    show_check,
    show_history,
    show_link,
    show_mode,
    show_plan,
    show_routes,
    show_run,
    show_stats,
    show_status,
    show_trace,
    stats_table,
)

__all__ = ["TARGET_CHOICES", "build_parser", "main"]

PROG = "aizone"
TARGET_CHOICES = ("auto", *SWITCH_CLASSES)
DEFAULT_TOPOLOGY = "topologies/rack.yaml"
DEMO_TOPOLOGY = "topologies/ai_zone_small.yaml"
EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Interrupted(KeyboardInterrupt):
    """SIGTERM/SIGHUP turned into the same unwinding as Ctrl-C."""


def _on_signal(signum: int, _frame: object) -> None:
    raise _Interrupted(signal.Signals(signum).name)


def _err_console() -> Console:
    return Console(stderr=True, highlight=False)


def _out(args: argparse.Namespace, data: Any) -> bool:
    """Print `data` as JSON when --json was given; True if it was."""
    if getattr(args, "json", False):
        print(json.dumps(data, default=str))
        return True
    return False


def _client() -> ApiClient:
    return ApiClient()


def _dashboard_url(api: dict[str, Any]) -> str:
    """The dashboard's address with the fabric's token (root reads it from its 0600 file)."""
    token = read_token()
    base = str(api.get("url") or "")
    return f"{base}?token={token}" if token and base else base


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Print the dashboard's URL, with the fabric's token (root only: it is a key).

    Open it in a browser on this machine (or through an SSH tunnel to it):
    the page keeps the token in a cookie and drops it from the address bar.
    """
    with _client() as c:
        st = c.get("/status")
    url = _dashboard_url(st.get("api") or {})
    if args.json:
        print(json.dumps({"dashboard": url}))
    else:
        print(url)
    return EXIT_OK


# --- up / down --------------------------------------------------------------------


def cmd_up(args: argparse.Namespace) -> int:
    """Start the fabric of TOPO and its controller daemon; return once it is up.

    Shows a progress bar per switch, then the API address (and the
    dashboard's URL). The daemon keeps the fabric until `aizone down`. When a
    fabric is still running without its daemon (the daemon was killed), `up`
    (with no topology, or the same one) starts a daemon that re-attaches to
    it and reconciles every switch.
    """
    from controller.launch import DaemonOptions, bring_up, stop_daemon, will_attach

    topology = args.topo or args.topology
    console = _err_console()
    options = DaemonOptions(
        topology=Path(topology) if topology else None, target=args.target, mode=args.mode,
        build_dir=args.build_dir, api_host=args.api_host, api_port=args.api_port,
        api_allow_hosts=tuple(args.api_allow_host), switch_log=args.switch_log,
        pcap_dir=args.pcap)
    attach = will_attach(options.topology)
    with _UpProgress(console, quiet=args.json, attach=attach) as view:
        child, info = bring_up(options, view.on_event)
    api = info.get("api") or {}
    # The dashboard's URL carries the token once (the page then keeps it in a cookie):
    # printed to the person who started the fabric, never logged by the daemon.
    page = _dashboard_url(api)
    if args.json:
        print(json.dumps({**info, "dashboard": page}))
    else:
        console.print(f"[bold green]fabric {info.get('name')!r} is up[/] on {info.get('target')},"
                      f" mode {info.get('mode')}: API {api.get('url')}api/v1 "
                      f"(unix socket {api.get('unix')}, token in {token_path()}), "
                      f"dashboard {page}")
        console.print("next: aizone check | aizone stats --watch | aizone down")
    if args.foreground:
        try:
            child.wait()
        except KeyboardInterrupt:
            stop_daemon(child.pid)
            raise
    return EXIT_OK


class _UpProgress:
    """Bring-up events as rich progress: a line per step, a bar per switch."""

    def __init__(self, console: Console, *, quiet: bool, attach: bool) -> None:
        self.attach = attach
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                                 console=console, disable=quiet)
        self.current: Any = None
        self.switches: dict[str, Any] = {}

    def __enter__(self) -> _UpProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        """Show one daemon event: a step done or begun, a switch's phase or reconcile."""
        p = self.progress
        if kind == "progress":
            if self.current is not None:
                p.update(self.current, completed=1, total=1)
                self.current = None
            step = data["step"]
            if step == "up":
                return
            self.current = p.add_task(_describe_step(step, data), total=1, note="")
            if step == "sessions":
                for name in data.get("names", []):
                    self.switches[name] = p.add_task(f"  {name}", total=1, note="connecting")
        elif kind == "switch" and data.get("switch") in self.switches:
            p.update(self.switches[data["switch"]], note=str(data.get("phase", "")))
        elif kind == "reconciled" and data["switch"] in self.switches:
            n = data["counts"]
            written = n["insert"] + n["modify"]
            note = (f"{written} written, {n['unchanged']} already there" if self.attach
                    else f"{written} entities")
            p.update(self.switches[data["switch"]], completed=1, note=note)


def _describe_step(step: str, data: dict[str, Any]) -> str:
    texts = {
        "api": "controller API",
        "checking": f"checking {data.get('topology', '')}",
        "compiling": f"compiling for {data.get('target', '')}",
        "network": f"{data.get('switches')} switch(es), {data.get('hosts')} host(s) in Mininet",
        "attached": f"re-attaching to {data.get('switches')} running switch(es)",
        "sessions": "P4Runtime sessions: pipelines and entries",
        "capturing": f"capturing {data.get('ports')} switch ports into {data.get('directory')}",
    }
    return texts.get(step, step)


def cmd_down(args: argparse.Namespace) -> int:
    """Stop the running fabric (if any) and remove leftovers of crashed runs.

    Asks the daemon to stop (it tears its network down), then removes only
    what aizone made and may have left: its processes (found by the
    AIZONE_RUN marker), host namespaces, interfaces, the state file.
    """
    from controller.launch import tear_down

    data = tear_down()
    stopped = data["stopped_daemon"]
    if _out(args, data):
        return EXIT_OK
    parts = []
    if stopped:
        parts.append(f"stopped the fabric's daemon (pid {stopped})")
    if data["stopped_owner"]:
        parts.append(f"stopped the running fabric (pid {data['stopped_owner']})")
    if data["killed"]:
        parts.append(f"ended {len(data['killed'])} leftover process(es)")
    if data["interfaces"]:
        parts.append(f"deleted {len(data['interfaces'])} leftover interface(s)")
    if data["state_removed"] and not parts:
        parts.append("removed the state file")
    print("aizone down: " + (", ".join(parts) if parts else "nothing was running"))
    return EXIT_OK


# --- commands that ask the daemon --------------------------------------------------


def cmd_status(args: argparse.Namespace) -> int:
    """The running fabric: switches (alive, session, last reconcile), hosts, links, failures."""
    with _client() as c:
        try:
            st = c.get("/status")
        except NotRunning:
            from controller.launch import orphan

            left = orphan()
            data = {"running": False, "orphan": left.name if left else None}
            if not _out(args, data):
                print("aizone: no fabric is running" + (
                    f" (fabric {left.name!r} runs without its daemon: `aizone up` re-attaches,"
                    " `aizone down` removes it)" if left else ""))
            return EXIT_OK
    st["running"] = True
    if not _out(args, st):
        show_status(Console(highlight=False), st)
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Every host pair: ping (each NIC) and one RoCEv2 RDMA WRITE; exit 1 with the failing pairs."""
    with _client() as c:
        with _err_console().status("checking every host pair ..."):
            data = c.post("/check", {"roce": not args.no_roce})
    if not _out(args, data):
        show_check(Console(highlight=False), data)
    return EXIT_OK if data["ok"] else EXIT_FAIL


def cmd_stats(args: argparse.Namespace) -> int:
    """Link load, queue depth, PFC pauses, ECN marks, drops and uplink imbalance per tier.

    From the switches' counters over the daemon's polling interval (1 s).
    With --watch, updates until Ctrl-C.
    """
    with _client() as c:
        if not args.watch:
            snap = c.get("/stats")
            if not _out(args, snap):
                show_stats(Console(highlight=False), snap, hosts=args.hosts)
            return EXIT_OK
        console = Console(highlight=False)
        snap = c.get("/stats")
        if args.json:
            for _kind, event in c.events({"stats"}):
                print(json.dumps(event["data"]), flush=True)
            return EXIT_OK
        with Live(stats_table(snap, hosts=args.hosts) if snap else "waiting for statistics",
                  console=console, refresh_per_second=2) as live:
            for _kind, event in c.events({"stats"}):
                live.update(stats_table(event["data"], hosts=args.hosts))
    return EXIT_OK


def cmd_routes(args: argparse.Namespace) -> int:
    """Entries read back over P4Runtime (all switches, or SWITCH), and whether they equal the intent."""
    if args.history:
        with _client() as c:
            data = c.get(f"/routes/history/{args.history}", limit=args.limit)
        if not _out(args, data):
            show_history(Console(highlight=False), data)
        return EXIT_OK
    with _client() as c:
        data = c.get("/routes", switch=args.switch)
    if not _out(args, data):
        show_routes(Console(highlight=False), data)
    return EXIT_OK


def cmd_mode(args: argparse.Namespace) -> int:
    """Switch the routing mode (pin | ecmp | eecmp) on the live fabric, make-before-break."""
    with _client() as c:
        data = c.post("/mode", {"mode": args.mode})
    if not _out(args, data):
        show_mode(Console(highlight=False), data)
    return EXIT_OK


def _acl_match(text: str) -> tuple[str, list[int]]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r}: give FIELD=VALUE or FIELD=VALUE&&&MASK")
    v, _, m = value.partition("&&&")
    try:
        return name, [int(v, 0), int(m, 0)] if m else [int(v, 0), -1]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: values are numbers (0x.. for hex)") from None


def cmd_acl(args: argparse.Namespace) -> int:
    """Add ACL rules to a switch (drop, permit or punt matching packets), clear them, or list them.

    `aizone acl rtsw1 drop ingress_port=1 l4_dst_port=4791` drops the RoCEv2
    packets that enter rtsw1 on port 1 until `aizone acl rtsw1 clear`; a
    value may carry a mask (bth_psn=0x10&&&0xff). Fields: ingress_port,
    eth_dst, eth_type, ip_proto, l4_dst_port, bth_dst_qp, bth_psn. The
    rules are part of the controller's intent (written as a diff, read back
    by `aizone routes`) while the daemon runs. Without SWITCH: the rules.
    """
    with _client() as c:
        current = c.get("/acl")
        if args.switch is None:
            data: Any = current
            if not _out(args, data):
                console = Console(highlight=False)
                for sw, listed in data.items():
                    for r in listed:
                        console.print(f"{sw}: {r['text']}", markup=False)
                if not data:
                    console.print("no ACL rules added")
            return EXIT_OK
        if args.action == "clear":
            rules: list[dict[str, Any]] = []
        elif args.action is None or not args.match:
            raise ApiError("give drop, permit or punt and at least one FIELD=VALUE, or clear",
                           400)
        else:
            from controller.intent import ACL_FIELDS

            match: dict[str, Any] = {}
            for name, (value, mask) in args.match:
                full = (1 << ACL_FIELDS.get(name, 1)) - 1
                match[name] = [value, full if mask == -1 else mask]
            keep = [{"action": r["action"], "priority": r["priority"], "match": r["match"]}
                    for r in current.get(args.switch, [])]
            rules = [*keep, {"action": args.action, "priority": args.priority, "match": match}]
        data = c.put(f"/acl/{args.switch}", {"rules": rules})
    if not _out(args, data):
        show_acl(Console(highlight=False), data)
    return EXIT_OK


def cmd_link(args: argparse.Namespace) -> int:
    """Fail (down) or restore (up) the link between A and B; prints the reconvergence time.

    With --silent the link dies without the controller being told (its
    ports keep their carrier and drop everything): the link probes find it,
    and `aizone status` says after how long.
    """
    with _client() as c:
        data = c.post("/link", {"a": args.a, "b": args.b, "index": args.index,
                                "up": args.state == "up", "silent": args.silent})
    if not _out(args, data):
        show_link(Console(highlight=False), data)
    return EXIT_OK


def cmd_exec(args: argparse.Namespace) -> int:
    """Run CMD inside HOST's network namespace; its output and exit status are CMD's."""
    argv = list(args.cmd)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise ApiError("give a command to run, e.g. `aizone exec h1 ip addr`", 400)
    with _client() as c:
        data = c.post("/exec", {"host": args.host, "argv": argv, "timeout": args.timeout})
    if _out(args, data):
        return EXIT_OK
    sys.stdout.write(data["stdout"])
    sys.stderr.write(data["stderr"])
    return int(data["returncode"]) if data["returncode"] is not None else EXIT_FAIL


def cmd_trace(args: argparse.Namespace) -> int:
    """The path a packet of SRC -> DST takes, from the entries read back with the programs' hash.

    Then confirmed: the flow is sent (RoCEv2, --count packets) and the
    counters on the path must have moved (--no-send skips that).
    """
    with _client() as c:
        flow = {"src": args.src, "dst": args.dst, "sport": args.sport, "dport": args.dport,
                "qp": args.qp}
        # Predicting reads; sending packets changes the fabric's counters: a POST.
        data = c.get("/trace", **flow) if args.no_send else c.post("/trace", flow)
    if not _out(args, data):
        show_trace(Console(highlight=False), data)
    conf = data.get("confirmation")
    return EXIT_FAIL if conf is not None and conf.get("confirmed") is False else EXIT_OK


def cmd_capture(args: argparse.Namespace) -> int:
    """Capture the packets of a link, a switch port or a host NIC into a pcap file.

    WHERE is a host NIC (h1-eth0, or h1 for its first NIC), a switch port
    (rtsw1:5 or rtsw1-eth5) or a link (rtsw1-ctsw1: at rtsw1's port).
    tcpdump captures for --seconds (or until --count packets) with a
    --snaplen of 256 bytes by default (every RoCEv2 header; --snaplen 65535
    for whole frames); --filter takes a BPF expression. Wireshark and
    tshark decode the file: RoCEv2 (BTH opcode, QP, PSN; RETH, AETH) and
    PFC PAUSE frames. Ctrl-C ends it early and keeps what was captured.
    """
    err = Console(stderr=True, highlight=False)
    out_path = Path(args.write)
    if out_path.exists() and out_path.is_dir():
        raise ControllerError(f"-w {args.write}: is a folder; give a file name")

    def started(headers: Any) -> None:
        """Say on stderr what is being captured, once the daemon's answer begins."""
        err.print(f"capturing {headers.get('x-aizone-capture', args.where)} for "
                  f"{args.seconds:g} s" + (f" or {args.count} packets" if args.count else "")
                  + f" into {out_path}")

    tmp = out_path.with_name(f".{out_path.name}.part")
    stopped = False
    try:
        with _client() as c, open(tmp, "wb") as sink:
            try:
                c.download("/capture", sink, timeout=args.seconds + 60, started=started,
                           target=args.where, seconds=args.seconds, count=args.count,
                           snaplen=args.snaplen, filter=args.filter)
            except KeyboardInterrupt:
                stopped = True  # as tcpdump does: Ctrl-C ends the capture, the file stays
        packets = _trim_pcap(tmp)
        tmp.replace(out_path)  # the file appears only when it is whole
    finally:
        tmp.unlink(missing_ok=True)
    data = {"file": str(out_path), "packets": packets, "bytes": out_path.stat().st_size,
            "where": args.where, "stopped": stopped}
    if not _out(args, data):
        err.print(("stopped: " if stopped else "")
                  + f"{packets} packets, {data['bytes']} bytes in {out_path}")
    return EXIT_OK


def _trim_pcap(path: Path) -> int:
    """Cut a pcap file after its last whole record (a capture stopped mid-packet); the
    number of whole records it holds."""
    import struct

    with open(path, "r+b") as f:
        head = f.read(24)
        if len(head) < 24:
            return 0
        endian = "<" if head[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        good, records = 24, 0
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            incl = struct.unpack(endian + "IIII", rec)[2]
            body = f.read(incl)
            if len(body) < incl:
                break
            good, records = f.tell(), records + 1
        f.truncate(good)
    return records


def cmd_run(args: argparse.Namespace) -> int:
    """Run a collective on the running fabric: ring AllReduce, all-to-all, incast or permutation.

    Ranks are NICs: --ranks N placed by --placement (packed, mincut,
    random), or --hosts h1,h2,... (a rank per NIC, or per host with --per
    host). Each rank's traffic goes over --qps queue pairs per peer with
    the QP-scaling --strategy of the paper (rr: whole messages in turn;
    split: each message across the QPs). Prints nccl-tests' time, algbw and
    busbw, the transport's counters, and the load each fabric link carried
    with the max/mean imbalance per tier, all from the agents and the
    switches' counters; says when the run was CPU-bound.
    """
    import threading

    body: dict[str, Any] = {"pattern": args.pattern, "size": args.size, "qps": args.qps,
                            "strategy": args.strategy, "placement": args.placement,
                            "admission": args.admission, "seed": args.seed,
                            "timeout": args.timeout, "per": args.per,
                            "sport_per_qp": args.sport_per_qp}
    if args.ranks is not None:
        body["ranks"] = args.ranks
    if args.hosts:
        body["hosts"] = [h for h in args.hosts.split(",") if h]
    if args.message_size is not None:
        body["message_size"] = args.message_size
    if args.ack_timeout is not None:
        body["ack_timeout_ms"] = args.ack_timeout
    result: dict[str, Any] = {}
    failure: list[BaseException] = []

    def call() -> None:
        """POST /run, keeping the answer or the exception (raised once the bar is done)."""
        try:
            with ApiClient(timeout=args.timeout + 60) as c:
                result.update(c.post("/run", body))
        except BaseException as exc:  # noqa: BLE001 - re-raised on the main thread
            failure.append(exc)

    console = _err_console()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=console,
                  disable=args.json) as progress:
        task = progress.add_task(f"{args.pattern} ", total=None, note="starting")

        def follow() -> None:
            """The job's progress events, until the job ends (or the call does)."""
            with _client() as c:
                for _kind, event in c.events({"job"}, timeout=args.timeout + 60):
                    data = event["data"]
                    if data.get("phase") == "running" and data.get("steps"):
                        step = data.get("step") or 0
                        progress.update(task, total=data["steps"], completed=step,
                                        note=f"step {step + 1} of {data['steps']}")
                    if data.get("phase") in ("done", "failed"):
                        return

        threading.Thread(target=follow, daemon=True).start()
        call()
        progress.update(task, total=1, completed=1, note="failed" if failure else "done")
    if failure:
        raise failure[0]
    if not _out(args, result):
        show_run(Console(highlight=False), result)
    return EXIT_OK


def cmd_shell(args: argparse.Namespace) -> int:
    """p4runtime-shell on SWITCH, attached as a secondary controller (reads; the daemon stays primary)."""
    with _client() as c:
        st = c.get("/status")
    sw = next((s for s in st.get("switches", []) if s["name"] == args.switch), None)
    if sw is None:
        raise ApiError(f"no switch named {args.switch!r} in fabric {st.get('name')}", 400)
    argv = [sys.executable, "-m", "p4switch.server.p4rt_shell", "--grpc-addr", sw["grpc_addr"],
            "--device-id", str(sw["device_id"]), "--election-id", "0,1"]
    pki = FabricPki(directory=state_dir() / PKI_DIR)
    if pki.exists():  # the switches take only clients with the fabric's certificate
        argv += ["--ssl", "--cacert", str(pki.ca), "--cert", str(pki.client_cert),
                 "--private-key", str(pki.client_key)]
    if args.print_command:
        print(" ".join(argv))
        return EXIT_OK
    os.execv(sys.executable, argv)
    return EXIT_FAIL  # not reached


# --- commands that need no daemon -----------------------------------------------------


def cmd_topo(args: argparse.Namespace) -> int:
    """Show TOPO's tiers, counts, oversubscription per tier and addressing (no root needed)."""
    from topologies.addressing import plan_addresses
    from topologies.spec import load_spec
    from topologies.summary import render_summary, summarize

    spec = load_spec(args.topo)
    summary = summarize(spec, plan_addresses(spec))
    if not _out(args, summary):
        render_summary(Console(highlight=False), summary)
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    """Print the addressing plan of --topology: switches, ports, hosts, addresses."""
    from topologies.addressing import plan_addresses
    from topologies.spec import load_spec

    plan = plan_addresses(load_spec(args.topology))
    if args.json:
        from dataclasses import asdict

        print(json.dumps(asdict(plan), default=str))
    else:
        show_plan(Console(highlight=False), plan)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    """Bring a fabric up, check every host pair, run a ring AllReduce, show it, tear down.

    The fabric of --topology comes up through the daemon as with `aizone
    up`; its entries are read back, every host pair is checked (ping and
    RoCEv2), a ring AllReduce of --size bytes per rank runs over every NIC
    with 4 QPs, and its time, bandwidth and per-uplink load are printed.
    Always tears the fabric down. Exit 0 when every check passed, else 1.
    """
    from controller.launch import orphan
    from controller.preflight import prepare

    from .demo import print_demo, run_demo

    prepare(args.topology, args.target)  # bad input and missing tools first, changing nothing
    with _client() as c:
        if c.alive() or orphan() is not None:
            raise NetworkError("a fabric is already up: run `aizone down` first")
    console = _err_console()
    with _UpProgress(console, quiet=args.json, attach=False) as view:
        report = run_demo(args.topology, target=args.target, build_dir=args.build_dir,
                          mode=args.mode, size=args.size, on_event=view.on_event)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print_demo(Console(highlight=False), report)
    return EXIT_OK if report.ok else EXIT_FAIL


# --- parser and main -----------------------------------------------------------


def _size(text: str) -> int:
    """'4096', '64K', '4M', '1G' -> bytes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 4096, 64K, 4M)") from None


def _doc(fn: Any) -> tuple[str, str]:
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
    add("down", cmd_down)
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
    acl.add_argument("match", nargs="*", type=_acl_match, metavar="FIELD=VALUE[&&&MASK]")
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
    run.add_argument("--placement", choices=("packed", "mincut", "random"), default="packed",
                     help="where --ranks go (default packed)")
    run.add_argument("--size", type=_size, default=1 << 20,
                     help="bytes per rank, e.g. 4M (default 1M)")
    run.add_argument("--qps", type=int, default=1, help="queue pairs per peer (default 1)")
    run.add_argument("--strategy", choices=("rr", "split"), default="rr",
                     help="QP scaling: whole messages round-robin (rr) or each split (default rr)")
    run.add_argument("--message-size", type=_size, help="the library's message size")
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
    tr.add_argument("src", help="source host (its NIC 0), NIC interface or address")
    tr.add_argument("dst", help="destination host, NIC interface or address")
    tr.add_argument("--sport", type=int, default=49152, help="UDP source port (default 49152)")
    tr.add_argument("--dport", type=int, default=4791, help="UDP destination port (default 4791)")
    tr.add_argument("--qp", type=int, default=17, help="BTH destination QP (default 17)")
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
    show.add_argument("--json", action="store_true", help="print JSON for programs")
    # Commands of other modules, each adding its own parser (func returns the exit code).
    from experiments.cli import add_parser as add_experiment
    from model.cli import add_parser as add_model
    from model.sweep import add_parser as add_sweep

    from .place import add_parser as add_place

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
    demo.add_argument("--size", type=_size, default=1 << 20,
                      help="AllReduce bytes per rank (default 1M)")
    return parser


def _validate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.command == "demo" and not 1 <= args.size <= 1 << 30:
        parser.error("--size must be in 1..1G")
    if args.command == "up" and args.topo and args.topology:
        parser.error("give the topology once (TOPO or --topology)")
    if args.command == "run" and args.ack_timeout is not None and not 0 < args.ack_timeout <= 600_000:
        parser.error("--ack-timeout must be in (0, 600000] ms")
    if args.command == "link" and args.index < 0:
        parser.error("--index must be >= 0")


def _fail(message: str, code: int) -> int:
    lines = [ln for ln in str(message).splitlines() if ln.strip()] or ["unknown error"]
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    print(f"{PROG}: error: {lines[0]}{more}", file=sys.stderr, flush=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `aizone` command; the exit code (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _validate(parser, args)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    try:
        return int(args.func(args))
    except SpecError as exc:
        return _fail(str(exc), EXIT_INPUT)
    except ApiError as exc:
        return _fail(str(exc), EXIT_INPUT if 400 <= exc.status < 500 and exc.status != 409
                     else EXIT_FAIL)
    except BuildError as exc:
        return _fail(str(exc), EXIT_FAIL)
    except (NetworkError, ControllerError) as exc:
        return _fail(str(exc), EXIT_FAIL)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
