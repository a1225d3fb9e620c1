"""`aizone demo` (what `make demo` runs): a fabric comes up, carries RoCEv2 traffic, goes down.

Steps, each one's outcome a `CheckResult` of the `DemoReport`:

1. bring-up through the daemon, exactly as `aizone up` does
   (`controller.launch.bring_up`: the same refusals when a fabric is
   already up or one runs without its daemon), with its progress shown;
2. every switch's entries read back over P4Runtime equal the intent;
3. `aizone check`: every NIC pings every other host's NIC, and one RoCEv2
   RDMA WRITE crosses every ordered pair of hosts (ICRC, PSN order and
   every byte checked by the receiving agent);
4. a ring AllReduce over every NIC, run by the hosts' traffic agents, in
   the topology's routing mode: nccl-tests' time, algbw and busbw, and the
   bytes each uplink carried, from the switches' counters;
5. the port counters the daemon polls moved under that traffic.

The fabric is always torn down, also on failures and Ctrl-C. Library code
raises nothing for a failing check (the report says what failed) but lets
bring-up errors propagate after teardown, for the CLI to map.

Names defined here: `DemoReport`, `CheckResult`, `run_demo`, `print_demo`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from controller.client import ApiClient
from controller.launch import DaemonOptions, bring_up, stop_daemon

from .views import show_run

__all__ = ["CheckResult", "DemoReport", "print_demo", "run_demo"]


@dataclass(kw_only=True)
class CheckResult:
    """One step's outcome in the demo's report: what was checked, passed or not, and how."""

    name: str
    ok: bool
    detail: str


@dataclass(kw_only=True)
class DemoReport:
    """What the demo did and saw; `ok` when every check passed."""

    topology: str = ""
    target: str = ""
    mode: str = ""
    checks: list[CheckResult] = field(default_factory=list)
    run: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether at least one check ran and every check passed."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str) -> bool:
        """Record one check's outcome; returns `ok`."""
        self.checks.append(CheckResult(name=name, ok=ok, detail=detail))
        return ok

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-able dict (`aizone demo --json`)."""
        return {"ok": self.ok, "topology": self.topology, "target": self.target,
                "mode": self.mode, "checks": [vars(c) for c in self.checks], "run": self.run,
                "stats": self.stats}


Relay = Callable[[str, dict[str, Any]], None]


def run_demo(topology: str | Path, *, target: str = "auto", build_dir: Path | None = None,
             mode: str | None = None, size: int = 1 << 20,
             on_event: Relay | None = None) -> DemoReport:
    """Run the demo on `topology` (see the module docstring); always tears down."""
    report = DemoReport(topology=str(topology))
    child, status = bring_up(DaemonOptions(topology=Path(topology), target=target, mode=mode,
                                           build_dir=build_dir), on_event)
    try:
        report.target, report.mode = status["target"], status["mode"]
        with ApiClient(timeout=600) as c:
            _steps(c, report, size)
    finally:
        with contextlib.suppress(Exception), ApiClient() as c:
            c.post("/shutdown")
        stop_daemon(child.pid)
    return report


def _steps(c: ApiClient, report: DemoReport, size: int) -> None:
    routes = c.get("/routes")
    for name, sw in routes["switches"].items():
        report.add(f"{name} entries read back", sw["matches_intent"],
                   f"{len(sw['entries'])} entities, equal to the intent" if sw["matches_intent"]
                   else f"differ from the intent: {sw['diff']}")
    check = c.post("/check", {"roce": True})
    report.add("every host pair: ping and RoCEv2", check["ok"],
               f"{check['pings']} pings, {check['roce']} RDMA WRITEs"
               + (f"; {len(check['failed'])} failed, e.g. {check['failed'][0]['src']} -> "
                  f"{check['failed'][0]['dst']}: {check['failed'][0]['detail'][:80]}"
                  if check["failed"] else ", all answered"))
    before = c.get("/stats")
    run = c.post("/run", {"pattern": "allreduce", "size": size, "qps": 4})
    report.run = run
    r = run["result"]
    report.add("ring AllReduce over every NIC", r["status"] == "ok" and bool(r["bytes_ok"]),
               f"{r['ranks']} ranks, {r['time_s'] * 1e3:.0f} ms, busbw "
               f"{r['busbw_gbps'] * 1e3:.2f} Mb/s, {r['retransmitted']} retransmitted")
    crossed = sum(lk["up_bytes"] for lk in run["links"] if lk["tier"] == "rtsw_ctsw")
    report.add("uplink counters moved", crossed > 0,
               f"{crossed:,} bytes up the RTSW uplinks during the AllReduce")
    report.stats = c.get("/stats")
    moved = report.stats.get("at", 0) > before.get("at", 0)
    report.add("statistics polled", moved, "a newer snapshot after the traffic" if moved
               else "no new statistics snapshot")


def print_demo(console: Console, report: DemoReport) -> None:
    """The demo's report for people: the checks, then the collective."""
    console.print(f"[bold]aizone demo[/] on {report.topology} ({report.target}, mode "
                  f"{report.mode})")
    t = Table(title="what ran")
    t.add_column("check")
    t.add_column("result")
    t.add_column("detail")
    for c in report.checks:
        t.add_row(c.name, "[green]ok[/]" if c.ok else "[red]FAILED[/]", c.detail)
    console.print(t)
    if report.run:
        show_run(console, report.run)
    if report.ok:
        console.print("[bold green]demo passed[/]")
    else:
        failed = [c.name for c in report.checks if not c.ok] or ["no check ran"]
        console.print(f"[bold red]demo failed:[/] {', '.join(failed)}")
