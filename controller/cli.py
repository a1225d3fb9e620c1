"""`aizone`: the command line for people (rich tables, progress) and programs (`--json`).

Subcommands (each one's docstring is its help):
  up      start a fabric and program it; stays up until Ctrl-C (or `--detach`)
  down    stop the running fabric and remove leftovers of crashed runs
  status  which switches run, entries per table, port counters
  demo    bring up, ping, one RDMA WRITE, counters; always tears down
  plan    print the addressing plan of a topology (no root needed)

Exit codes: 0 success; 1 a failure at run time (network, switch,
P4Runtime, compiler, a demo check); 2 bad input (usage, topology file, P4
file); 130 interrupted. Errors are one line on stderr, `aizone: error: ...`.
Only this module maps exceptions to exit codes.

Names defined here: `build_parser`, `main`, `TARGET_CHOICES`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from topologies.nodes import SWITCH_CLASSES, NetworkError
from topologies.spec import MODES, SpecError

from .errors import BuildError, ControllerError

__all__ = ["TARGET_CHOICES", "build_parser", "main"]

PROG = "aizone"
TARGET_CHOICES = ("auto", *SWITCH_CLASSES)
DEFAULT_TOPOLOGY = "topologies/rack.yaml"
EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Interrupted(KeyboardInterrupt):
    """SIGTERM/SIGHUP turned into the same unwinding as Ctrl-C."""


def _on_signal(signum: int, _frame: object) -> None:
    raise _Interrupted(signal.Signals(signum).name)


def _err_console() -> Console:
    return Console(stderr=True, highlight=False)


@contextlib.contextmanager
def _progress(console: Console, quiet: bool) -> Iterator[Any]:
    """A `progress(step)` factory: spinner while a step runs, a tick with its time after."""

    @contextlib.contextmanager
    def step(text: str) -> Iterator[None]:
        t0 = time.monotonic()
        if quiet:
            yield
            return
        with console.status(f"{text} ..."):
            yield
        console.print(f"[green]✓[/] {text} [dim]({time.monotonic() - t0:.1f} s)[/]")

    yield step


# --- subcommands -------------------------------------------------------------


def cmd_up(args: argparse.Namespace) -> int:
    """Start the fabric of --topology, program every switch, and stay up until Ctrl-C.

    With --detach, start it in the background and return once it is up;
    `aizone down` stops it.
    """
    if args.detach:
        return _detach(args)
    from .runner import bring_up

    console = _err_console()
    with _progress(console, args.json) as step:
        fab = bring_up(args.topology, target=args.target, build_dir=args.build_dir,
                       progress=step, log_console=args.switch_log, mode=args.mode)
    with fab:
        info = {"running": True, "topology": str(args.topology), "target": fab.target,
                "pid": os.getpid(),
                "switches": [{"name": s.name, "grpc_addr": s.grpc_addr,
                              "device_id": s.device_id} for s in fab.plan.switches],
                "hosts": [{"name": h.name, "ip": h.ip} for h in fab.plan.hosts]}
        if args.json:
            print(json.dumps(info), flush=True)
        else:
            _print_plan(Console(highlight=False), fab.plan)
            console.print(f"[bold green]fabric {fab.plan.name!r} is up[/] on {fab.target}; "
                          "Ctrl-C (or `aizone down`) stops it")
        if args.ready_file:
            Path(args.ready_file).write_text(json.dumps(info))
        while True:
            time.sleep(3600)


def _detach(args: argparse.Namespace) -> int:
    from topologies.runstate import state_dir

    log_dir = state_dir()
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / "up.log"
    ready = log_dir / f"ready.{os.getpid()}"
    ready.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "controller.cli", "up", "--topology", str(args.topology),
           "--target", args.target, "--ready-file", str(ready), "--json"]
    if args.mode:
        cmd += ["--mode", args.mode]
    if args.build_dir:
        cmd += ["--build-dir", str(args.build_dir)]
    with open(log, "wb") as out:
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 start_new_session=True)
    try:
        while not ready.exists():
            if child.poll() is not None:
                lines = [ln for ln in log.read_text(errors="replace").splitlines()
                         if ln.startswith(f"{PROG}: error:")]
                msg = lines[-1][len(PROG) + 9:] if lines else f"see {log}"
                raise NetworkError(f"background `aizone up` failed: {msg}")
            time.sleep(0.2)
    except KeyboardInterrupt:
        child.terminate()
        child.wait(60)
        raise
    info = json.loads(ready.read_text())
    ready.unlink(missing_ok=True)
    if args.json:
        print(json.dumps(info))
    else:
        _err_console().print(f"[bold green]fabric is up[/] in the background (pid {child.pid}, "
                             f"log {log}); `aizone down` stops it")
    return EXIT_OK


def cmd_down(args: argparse.Namespace) -> int:
    """Stop the running fabric (if any) and remove leftovers of crashed runs.

    Removes only what aizone made: its switch and host processes (found by
    the AIZONE_RUN marker), its interfaces (rtswN-ethP, ...), its state file.
    """
    from topologies.runstate import cleanup

    if os.geteuid() != 0:
        raise NetworkError("aizone down needs root (it deletes interfaces and processes): "
                           "run it with sudo")
    report = cleanup(stop_running=True)
    data = {"stopped_owner": report.stopped_owner, "killed": report.killed,
            "interfaces": report.interfaces, "state_removed": report.state_removed}
    if args.json:
        print(json.dumps(data))
    elif report.anything:
        parts = []
        if report.stopped_owner:
            parts.append(f"stopped the running fabric (pid {report.stopped_owner})")
        if report.killed:
            parts.append(f"ended {len(report.killed)} process(es)")
        if report.interfaces:
            parts.append(f"deleted {len(report.interfaces)} interface(s)")
        print("aizone down: " + ", ".join(parts or ["removed the state file"]))
    else:
        print("aizone down: nothing was running")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    """Show which switches run, the entries per table, and the port counters.

    Reads over P4Runtime without taking control (the running controller
    stays primary).
    """
    from topologies.runstate import owner_alive, read_state

    from .p4rt import SwitchSession
    from .routes import NAMES

    state = read_state()
    if state is None or not owner_alive(state):
        data: dict[str, Any] = {"running": False}
        if state is not None:
            data["stale"] = True
        if args.json:
            print(json.dumps(data))
        else:
            print("aizone: no fabric is running" + (
                " (a crashed run left a state file: `aizone down` removes it)"
                if state is not None else ""))
        return EXIT_OK
    switches = []
    for sw in state.switches:
        row: dict[str, Any] = {"name": sw["name"], "grpc_addr": sw["grpc_addr"],
                               "device_id": sw["device_id"], "pid": sw.get("pid")}
        try:
            with SwitchSession(sw["name"], sw["grpc_addr"], sw["device_id"], timeout=3) as s:
                s.open(primary=False)
                s.get_p4info()
                assert s.schema is not None
                row["tables"] = {t: len(s.read_table(t)) for t in s.schema.tables.names()}
                rx = s.read_counters(NAMES["rx_counter"])
                tx = s.read_counters(NAMES["tx_counter"])
                row["ports"] = [
                    {"port": i, "rx_packets": rx[i].packets if i in rx else 0,
                     "rx_bytes": rx[i].bytes if i in rx else 0,
                     "tx_packets": tx[i].packets if i in tx else 0,
                     "tx_bytes": tx[i].bytes if i in tx else 0}
                    for i in sorted(set(rx) | set(tx))
                    if (i in rx and rx[i].packets) or (i in tx and tx[i].packets)]
                row["up"] = True
        except ControllerError as exc:
            row["up"] = False
            row["error"] = str(exc)
        switches.append(row)
    data = {"running": True, "name": state.name, "target": state.target,
            "owner_pid": state.owner_pid, "ready": state.ready,
            "mode": state.meta.get("mode"), "switches": switches,
            "hosts": [h["name"] for h in state.hosts]}
    if args.json:
        print(json.dumps(data))
        return EXIT_OK
    console = Console(highlight=False)
    console.print(f"fabric [bold]{state.name}[/] on {state.target}, controller pid "
                  f"{state.owner_pid}, mode {data['mode']}, hosts {', '.join(data['hosts'])}")
    t = Table(title="switches")
    for col in ("switch", "gRPC", "device id", "up", "entries"):
        t.add_column(col)
    for row in switches:
        entries = ", ".join(f"{k.rsplit('.', 1)[-1]} {v}" for k, v in row.get("tables", {}).items())
        t.add_row(row["name"], row["grpc_addr"], str(row["device_id"]),
                  "yes" if row["up"] else f"no: {row.get('error', '')}", entries)
    console.print(t)
    c = Table(title="port counters (packets / bytes)")
    for col in ("switch", "port", "rx", "tx"):
        c.add_column(col, justify="right")
    for row in switches:
        for p in row.get("ports", []):
            c.add_row(row["name"], str(p["port"]), f"{p['rx_packets']} / {p['rx_bytes']}",
                      f"{p['tx_packets']} / {p['tx_bytes']}")
    if c.row_count:
        console.print(c)
    else:
        console.print("port counters: no packets yet")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    """Bring up --topology, ping, send one RDMA WRITE, read counters, print a summary.

    Always tears the fabric down. Exit 0 when every check passed, else 1.
    """
    from .demo import run_demo

    console = _err_console()
    with _progress(console, args.json) as step:
        report = run_demo(args.topology, target=args.target, build_dir=args.build_dir,
                          progress=step, rdma_size=args.size, mode=args.mode)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        _print_demo(Console(highlight=False), report)
    return EXIT_OK if report.ok else EXIT_FAIL


def cmd_plan(args: argparse.Namespace) -> int:
    """Print the addressing plan of --topology: switches, ports, hosts, addresses."""
    from topologies.addressing import plan_addresses
    from topologies.spec import load_spec

    plan = plan_addresses(load_spec(args.topology))
    if args.json:
        from dataclasses import asdict

        print(json.dumps(asdict(plan), default=str))
    else:
        _print_plan(Console(highlight=False), plan)
    return EXIT_OK


# --- output ------------------------------------------------------------------


def _print_plan(console: Console, plan: Any) -> None:
    t = Table(title=f"fabric {plan.name}: switches")
    for col in ("switch", "role", "device id", "gRPC", "ports"):
        t.add_column(col)
    for s in plan.switches:
        t.add_row(s.name, s.role, str(s.device_id), s.grpc_addr,
                  ", ".join(f"{p.port}->{p.peer}" for p in s.ports))
    console.print(t)
    h = Table(title="hosts")
    for col in ("host", "NIC", "address", "gateway", "MAC", "switch port"):
        h.add_column(col)
    for host in plan.hosts:
        for n in host.nics:
            h.add_row(host.name, n.intf, n.cidr, n.gateway, n.mac, f"{n.switch}:{n.switch_port}")
    console.print(h)


def _print_demo(console: Console, report: Any) -> None:
    console.print(f"[bold]aizone demo[/] on {report.topology} ({report.target}): "
                  f"{report.src} -> {report.dst}")
    t = Table(title="what ran")
    t.add_column("check")
    t.add_column("result")
    t.add_column("detail")
    for c in report.checks:
        t.add_row(c.name, "[green]ok[/]" if c.ok else "[red]FAILED[/]", c.detail)
    console.print(t)
    s, r = report.sender, report.receiver
    if s or r:
        x = Table(title="RoCEv2 RDMA WRITE")
        for col in ("", "packets", "bytes", "payload bytes", "ICRC errors", "PSN errors"):
            x.add_column(col, justify="right")
        x.add_row(f"sent by {report.src}", str(s.get("packets", "-")), str(s.get("bytes", "-")),
                  str(s.get("payload_bytes", "-")), "", "")
        x.add_row(f"received by {report.dst}", str(r.get("packets", "-")),
                  str(r.get("bytes", "-")), str(r.get("payload_bytes", "-")),
                  str(r.get("icrc_errors", "-")), str(r.get("psn_errors", "-")))
        console.print(x)
    if report.counters:
        c = Table(title="switch port counters during the demo (read over P4Runtime)")
        for col in ("switch", "port", "rx packets", "tx packets", "rx bytes", "tx bytes"):
            c.add_column(col, justify="right")
        for row in report.counters:
            c.add_row(row["switch"], str(row["port"]), str(row["rx_packets"]),
                      str(row["tx_packets"]), str(row["rx_bytes"]), str(row["tx_bytes"]))
        console.print(c)
    if report.ok:
        console.print("[bold green]demo passed[/]")
    else:
        failed = [c.name for c in report.checks if not c.ok] or ["no check ran"]
        console.print(f"[bold red]demo failed:[/] {', '.join(failed)}")


# --- parser and main -----------------------------------------------------------


def _doc(fn: Any) -> tuple[str, str]:
    text = (fn.__doc__ or "").strip()
    return text.splitlines()[0], text


def build_parser() -> argparse.ArgumentParser:
    """The `aizone` argument parser (separate from `main` so tests and docs can use it)."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Emulate the RoCEv2 AI training backend fabric on P4 switches.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, fn: Any, *, topology: bool = True, target: bool = True) -> Any:
        short, full = _doc(fn)
        p = sub.add_parser(name, help=short, description=full,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(func=fn)
        if topology:
            p.add_argument("--topology", "-t", type=Path, default=Path(DEFAULT_TOPOLOGY),
                           help=f"topology YAML (default {DEFAULT_TOPOLOGY})")
        if target:
            p.add_argument("--target", choices=TARGET_CHOICES, default="auto",
                           help="switch target: auto = bmv2 when simple_switch_grpc and "
                                "p4c-bm2-ss are on PATH, else p4switch (default auto)")
            p.add_argument("--build-dir", type=Path, default=None,
                           help="where compiled programs and switch logs go (default ./build)")
            p.add_argument("--mode", choices=MODES, default=None,
                           help="routing mode over uplinks (default: the topology's routing.mode)")
        p.add_argument("--json", action="store_true", help="print JSON for programs")
        return p

    up = add("up", cmd_up)
    up.add_argument("--detach", "-d", action="store_true",
                    help="run in the background; `aizone down` stops it")
    up.add_argument("--switch-log", action="store_true",
                    help="switches log every packet (--log-console) into their log files")
    up.add_argument("--ready-file", help=argparse.SUPPRESS)
    add("down", cmd_down, topology=False, target=False)
    add("status", cmd_status, topology=False, target=False)
    demo = add("demo", cmd_demo)
    demo.add_argument("--size", type=int, default=4096,
                      help="bytes of the RDMA WRITE (default 4096)")
    add("plan", cmd_plan, target=False)
    return parser


def _validate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.command == "demo" and not 1 <= args.size <= 1 << 20:
        parser.error("--size must be in 1..1048576")
    if args.command == "up" and args.detach and args.ready_file:
        parser.error("--detach and --ready-file are exclusive")


def _fail(message: str, code: int) -> int:
    lines = [ln for ln in str(message).splitlines() if ln.strip()] or ["unknown error"]
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    print(f"{PROG}: error: {lines[0]}{more}", file=sys.stderr, flush=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _validate(parser, args)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    try:
        return int(args.func(args))
    except SpecError as exc:
        return _fail(str(exc), EXIT_INPUT)
    except BuildError as exc:
        return _fail(str(exc), EXIT_FAIL)
    except (NetworkError, ControllerError) as exc:
        return _fail(str(exc), EXIT_FAIL)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the fabric was torn down", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
