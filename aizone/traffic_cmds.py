"""The traffic subcommands: collectives, traces and captures on the running fabric, and the demo.

`run` posts a collective to the daemon and follows its progress; `trace`
predicts a flow's path from the entries read back and confirms it with
packets; `capture` streams a link's, port's or NIC's packets into a pcap
file (`trim_pcap` keeps its whole records); `demo` brings a fabric up,
checks it, runs a ring AllReduce and always tears down (`aizone.demo`).
Each function's docstring is its subcommand's help (`aizone.parser`);
each returns the exit code (`aizone.output`) and leaves exceptions to
`aizone.cli.main`.

Names defined here: `cmd_run`, `cmd_trace`, `cmd_capture`, `trim_pcap`,
`cmd_demo`.
"""

from __future__ import annotations

import argparse
import json
import struct
import threading
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from controller.client import ApiClient
from controller.errors import ControllerError

from .output import EXIT_FAIL, EXIT_OK, UpProgress, emit_json, err_console
from .views import show_run, show_trace

__all__ = ["cmd_capture", "cmd_demo", "cmd_run", "cmd_trace", "trim_pcap"]


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

    console = err_console()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=console,
                  disable=args.json) as progress:
        task = progress.add_task(f"{args.pattern} ", total=None, note="starting")

        def follow() -> None:
            """The job's progress events, until the job ends (or the call does)."""
            with ApiClient() as c:
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
    if not emit_json(args, result):
        show_run(Console(highlight=False), result)
    return EXIT_OK


def cmd_trace(args: argparse.Namespace) -> int:
    """The path a packet of SRC -> DST (or of a job's connection) takes, from the entries read back.

    The flow is a connection as a run numbers it (traffic.connections): by
    default SRC -> DST's, rank 0 -> rank 1 of a job of the two (--qps,
    --qp-index, --sport-per-qp as `aizone run` takes them); with --job ID,
    that job's connection (--connection r<S>>r<D>, default its first), so
    the path is the one the job's packets took. --sport and --qp replace
    the connection's numbers. Then confirmed: the flow is sent (RoCEv2) and
    the counters on the path must have moved (--no-send skips that).
    """
    flow: dict[str, Any] = {"dport": args.dport, "qp_index": args.qp_index}
    if args.job is not None:
        flow.update(job=args.job, connection=args.connection)
    else:
        flow.update(src=args.src, dst=args.dst, qps=args.qps, sport_per_qp=args.sport_per_qp)
    flow.update({k: v for k, v in (("sport", args.sport), ("qp", args.qp)) if v is not None})
    flow = {k: v for k, v in flow.items() if v is not None}
    with ApiClient() as c:
        # Predicting reads; sending packets changes the fabric's counters: a POST.
        data = c.get("/trace", **flow) if args.no_send else c.post("/trace", flow)
    if not emit_json(args, data):
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
        with ApiClient() as c, open(tmp, "wb") as sink:
            try:
                c.download("/capture", sink, timeout=args.seconds + 60, started=started,
                           target=args.where, seconds=args.seconds, count=args.count,
                           snaplen=args.snaplen, filter=args.filter)
            except KeyboardInterrupt:
                stopped = True  # as tcpdump does: Ctrl-C ends the capture, the file stays
        packets = trim_pcap(tmp)
        tmp.replace(out_path)  # the file appears only when it is whole
    finally:
        tmp.unlink(missing_ok=True)
    data = {"file": str(out_path), "packets": packets, "bytes": out_path.stat().st_size,
            "where": args.where, "stopped": stopped}
    if not emit_json(args, data):
        err.print(("stopped: " if stopped else "")
                  + f"{packets} packets, {data['bytes']} bytes in {out_path}")
    return EXIT_OK


def trim_pcap(path: Path) -> int:
    """Cut a pcap file after its last whole record (a capture stopped mid-packet); the
    number of whole records it holds."""
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


def cmd_demo(args: argparse.Namespace) -> int:
    """Bring a fabric up, check every host pair, run a ring AllReduce, show it, tear down.

    The fabric of --topology comes up through the daemon as with `aizone
    up`; its entries are read back, every host pair is checked (ping and
    RoCEv2), a ring AllReduce of --size bytes per rank runs over every NIC
    with 4 QPs, and its time, bandwidth and per-uplink load are printed.
    Always tears the fabric down. Exit 0 when every check passed, else 1.
    """
    from controller.launch import will_attach
    from controller.preflight import prepare

    from .demo import print_demo, run_demo

    prepare(args.topology, args.target)  # bad input and missing tools first, changing nothing
    console = err_console()
    # `aizone up`'s preconditions (root, a fabric already up, one left without its daemon)
    # are checked where it checks them, controller.launch.bring_up, which run_demo calls.
    with UpProgress(console, quiet=args.json, attach=will_attach(args.topology)) as view:
        report = run_demo(args.topology, target=args.target, build_dir=args.build_dir,
                          mode=args.mode, size=args.size, on_event=view.on_event)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print_demo(Console(highlight=False), report)
    return EXIT_OK if report.ok else EXIT_FAIL


