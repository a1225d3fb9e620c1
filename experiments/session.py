"""One experiment's run: its options, progress bar, fabrics, measured runs and result.

`Session(name, title, options, topology)` holds the `ExperimentResult`
being filled in. An experiment:

1. brings a fabric up with `session.fabric(topology, mode)` (a
   `experiments.fabric.Fabric`; its bring-up and tear-down times are
   recorded, and a first calibration run says what one flow alone reaches
   on this machine right now, `calibrate`);
2. for each repeat and grid point, `session.measure(fabric, point, body)`
   runs one collective through the daemon's API, bracketed by two samples
   of every counter and CPU time (`experiments.usage`), and appends a `Run`
   with the standard metrics (`run_metrics`) and the CPU-bound verdict
   (`cpu_bound_reasons`) to the point;
3. `session.finish(findings, notes, plots)` summarises every point over its
   repeats and returns the result.

A run is CPU-bound (the emulator, not the emulated fabric, set its pace)
when the daemon says so (an agent at a full core, frames its socket
dropped), when frames were lost on cables rather than at a switch queue
(>= 0.1% of those sent), when a p4switch process used a full core, or
when the machine's cores were >= 95% busy.

Progress: a rich bar over every run of the grid (on stderr), with the
current point and the running collective's step from the daemon's
events.

Names defined here: `Options`, `Session`, `run_metrics`,
`cpu_bound_reasons`, `LOSS_LIMIT`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from controller.errors import ControllerError

from .capacity import DEFAULT_TARGET
from .collective import Collective, lossless_packets, run_collective, uses_api
from .fabric import Fabric
from .machine import machine, versions
from .schema import Column, ExperimentResult, Finding, Point, Run, summarize_runs
from .sizes import RATE_MBPS, fabric_changes, setting_changes
from .stats import tier_imbalance
from .usage import Usage

__all__ = ["LOSS_LIMIT", "Options", "Session", "cpu_bound_reasons",
           "run_metrics"]

LOSS_LIMIT = 0.001  # frames lost on cables / sent: above it, the emulator fell behind
SWITCH_FULL_CORE = 0.9
MACHINE_BUSY = 0.95


@dataclass(frozen=True, kw_only=True)
class Options:
    """How an experiment runs: output folder, target, repeats and the command-line flags."""

    out: Path
    target: str = DEFAULT_TARGET
    # The host links' rate (Mb/s); the CLI gives the target's, from the capacity file
    # (`experiments.sizes.target_rate`).
    host_mbps: float = RATE_MBPS
    # What p4switch's queues and native PFC count (topology `buffer.accounting`): packets |
    # bytes.
    buffer: str = "packets"
    # Whether every hop waits its real latency times the scale (a topology `latency:` section
    # with its defaults, `experiments.sizes.setting_changes`).
    latency: bool = False
    # The machines every fabric is spread over, this one first (`aizone up --servers`); empty:
    # this machine alone.
    servers: tuple[str, ...] = ()
    repeat: int | None = None  # None: the experiment's default
    quick: bool = False
    build_dir: Path | None = None
    quiet: bool = False  # no progress (--json)
    command: str = ""

    def settings(self) -> dict[str, Any]:
        """The topology changes of `buffer` and `latency` (`sizes.setting_changes`)."""
        return setting_changes(self.buffer, self.latency)

    def fabric(self, base: Path, *, pfc: bool = True,
               host_mbps: float | None = None) -> dict[str, Any]:
        """The experiments' fabric from preset `base` under these options
        (`sizes.fabric_changes`): at `host_mbps` (default this run's rate), with `pfc`."""
        return fabric_changes(base, pfc=pfc,
                              host_mbps=self.host_mbps if host_mbps is None else host_mbps,
                              buffer=self.buffer, latency=self.latency)


def cpu_bound_reasons(answer: Mapping[str, Any], usage: Usage | None, target: str
                      ) -> list[str]:
    """Why a run measured the emulator rather than the fabric (empty: it did not)."""
    reasons = [str(r) for r in answer.get("cpu_bound_reasons") or []]
    if usage is None:
        return reasons
    if usage.sent and usage.loss >= LOSS_LIMIT:
        reasons.append(f"{usage.lost} of {usage.sent} frames lost on cables, not at a switch "
                       f"queue ({usage.loss:.2%})")
    if target == "p4switch":
        hot = sorted(f"{s} {v:.2f}" for s, v in usage.switch_cpu.items() if v >= SWITCH_FULL_CORE)
        if hot:
            reasons.append(f"switch process(es) at a full core: {', '.join(hot)}")
    if usage.machine_cpu >= MACHINE_BUSY:
        reasons.append(f"the machine's cores were {usage.machine_cpu:.0%} busy")
    reasons += [f"server {name}'s cores were {share:.0%} busy"
                for name, share in sorted(usage.server_cpu.items()) if share >= MACHINE_BUSY]
    return reasons


def run_metrics(answer: Mapping[str, Any], usage: Usage | None,
                racks: Iterable[str] | None = None) -> dict[str, float | None]:
    """The metrics every run records, from the daemon's answer and the two samples.

    `racks`: the RTSWs whose racks the job uses (uplink imbalance is over
    their uplinks; None: every RTSW).
    """
    res = answer["result"]
    links = answer.get("links") or []
    nodes = list(racks) if racks is not None else None
    atsw = [row for row in links if row["tier"] == "ctsw_atsw"]
    tm = answer.get("tm") or {}
    drops = answer.get("switch_drops") or {}
    out: dict[str, float | None] = {
        "time_s": res["time_s"], "span_s": res["span_s"], "algbw_gbps": res["algbw_gbps"],
        "busbw_gbps": res["busbw_gbps"], "retransmitted": res["retransmitted"],
        "timeouts": res["timeouts"], "naks": res["naks_received"],
        "host_pauses": res["pause_frames"], "paused_s": res["paused_seconds"],
        "switch_pauses": tm.get("pauses_sent"), "tm_dropped": tm.get("tm_dropped"),
        "switch_drops": sum(sum(v.values()) for v in drops.values()),
        "kernel_drops": res["kernel_drops"],
        "up_imbalance": tier_imbalance(links, "rtsw_ctsw", "up", nodes),
        "down_imbalance": tier_imbalance(links, "rtsw_ctsw", "down", nodes),
        "atsw_bytes": float(sum(r["up_bytes"] for r in atsw)) if atsw else None,
        "max_agent_cpu": res["max_cpu_share"],
        "bytes_ok": None if res.get("bytes_ok") is None else float(bool(res["bytes_ok"])),
    }
    if usage is not None:
        out.update({"loss": usage.loss, "machine_cpu": usage.machine_cpu,
                    "max_switch_cpu": max(usage.switch_cpu.values(), default=None)})
    return out


def _link_details(answer: Mapping[str, Any]) -> dict[str, Any]:
    return {row["id"]: [row["up_bytes"], row["down_bytes"]] for row in answer.get("links") or []}


class Session:
    """One experiment's run (see the module docstring)."""

    def __init__(self, name: str, title: str, options: Options, *, topology: Path,
                 params: Sequence[Column], metrics: Sequence[Column], sizes: Mapping[str, Any],
                 repeat: int, console: Console | None = None) -> None:
        self.options = options
        self.console = console or Console(stderr=True, highlight=False)
        self.t0 = time.monotonic()
        self.result = ExperimentResult(
            experiment=name, title=title, command=options.command or f"aizone experiment {name}",
            started=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            machine=machine(), versions=versions(options.target), target=options.target,
            topology=str(topology), topology_name="", repeat=repeat, quick=options.quick,
            sizes={**sizes, **({"buffer": options.buffer} if options.buffer != "packets" else {}),
                   **({"latency": "scaled"} if options.latency else {})},
            params=list(params), metrics=list(metrics))
        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TextColumn("{task.fields[note]}"),
                                  TimeElapsedColumn(), console=self.console,
                                  disable=options.quiet)
        self._task: Any = None
        self._job_note = ""
        self.calibration: list[dict[str, Any]] = []

    # -- progress

    def __enter__(self) -> Session:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(None, None, None)

    def grid(self, total: int) -> None:
        """Start the bar over `total` runs."""
        self._task = self._progress.add_task(self.result.experiment, total=total, note="")

    def note(self, text: str) -> None:
        """Show `text` on the progress bar (printed when there is none, unless quiet)."""
        if self._task is not None:
            self._progress.update(self._task, note=text)
        elif not self.options.quiet:
            self.console.print(f"[dim]{text}[/]")

    def _on_event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "job" and data.get("phase") == "running" and data.get("steps"):
            step = (data.get("step") or 0) + 1
            self._job_note = f"step {step}/{data['steps']}"
            if self._task is not None:
                self._progress.update(self._task, note=f"{self._point_note} {self._job_note}")
        elif kind == "progress" and self._task is None and not self.options.quiet:
            self.console.print(f"[dim]  {data.get('step')}[/]")

    _point_note = ""

    # -- fabrics

    @contextlib.contextmanager
    def fabric(self, topology: Path, mode: str | None = None) -> Iterator[Fabric]:
        """Bring `topology` up (then down); records its name, scale and times."""
        self.note(f"bringing up {topology.name} ({self.options.target})")
        with Fabric(topology, target=self.options.target, mode=mode,
                    build_dir=self.options.build_dir, servers=self.options.servers,
                    on_event=self._on_event) as f:
            self.result.topology = str(topology)
            self.result.topology_name = f.plan.name
            status = f.status()
            self.result.scale = status.get("scale", {})
            if status.get("servers"):  # where the switches ran, as the daemon placed them
                self.result.sizes["servers"] = "; ".join(
                    f"{server}: " + " ".join(sorted(s["name"] for s in status["switches"]
                                                    if s.get("server") == server))
                    for server in status["servers"])
            self.result.fabric_seconds["up"] = round(
                self.result.fabric_seconds.get("up", 0.0) + f.up_seconds, 2)
            try:
                yield f
            finally:
                self.note("bringing the fabric down")
        self.result.fabric_seconds["down"] = round(
            self.result.fabric_seconds.get("down", 0.0) + f.down_seconds, 2)

    def calibrate(self, fabric: Fabric, src: str, dst: str, seconds: float = 1.5) -> None:
        """One flow alone, src's NIC 0 to dst's: the share of line rate it gets here, now."""
        rate = float(self.result.scale.get("host", {}).get("rate_mbps") or 0) or None
        if rate is None:
            return
        size = int(rate * 1e6 / 8 * seconds)
        nic = {h.name: h.nics[0].intf for h in fabric.plan.hosts}
        coll = Collective(pattern="incast", nics=(nic[dst], nic[src]), size=size,
                          timeout=60 + 10 * seconds)
        self.note(f"calibrating: one flow {src} -> {dst}")
        try:
            answer = run_collective(fabric, coll)
        except ControllerError as exc:
            self.calibration.append({"src": src, "dst": dst, "error": str(exc)})
            return
        res = answer["result"]
        ideal = size * fabric.plan.roce_frame / fabric.plan.path_mtu * 8 / (rate * 1e6)
        self.calibration.append({
            "src": src, "dst": dst, "size": size, "rate_mbps": rate,
            "time_s": round(res["time_s"], 4), "ideal_s": round(ideal, 4),
            "efficiency": round(ideal / res["time_s"], 4) if res["time_s"] else None,
            "retransmitted": res["retransmitted"], "timeouts": res["timeouts"],
            "host_pauses": res["pause_frames"], "paused_s": round(res["paused_seconds"], 4),
            "switch_pauses": (answer.get("tm") or {}).get("pauses_sent")})

    # -- runs

    def measure(self, fabric: Fabric, point: Point, coll: Collective, *, repeat: int,
                racks: Iterable[str] | None = None,
                during: Callable[[Fabric], dict[str, Any] | None] | None = None,
                failed: frozenset[str] = frozenset(), label: str = "") -> Run:
        """Run one collective for `point` and append the `Run` (failed runs are kept too).

        `during(fabric)`, when given, is called once the collective is in
        flight (a link failure, say) and may return details to record.
        `failed`: the link ids that are (or go) down during the run; frames
        lost on them are the emulated failure's, not the emulator's.
        """
        self._point_note = label
        self.note(label)
        before = fabric.sample() if uses_api(coll) else None
        held0 = lossless_packets(fabric)
        extra: dict[str, Any] = {}
        try:
            if during is None:
                answer = run_collective(fabric, coll, self._on_step)
            else:
                with ThreadPoolExecutor(max_workers=1) as pool:
                    fut = pool.submit(run_collective, fabric, coll, self._on_step)
                    extra = during(fabric) or {}
                    answer = fut.result()
        except ControllerError as exc:
            run = Run(repeat=repeat, error=str(exc).splitlines()[0], details=extra)
            point.runs.append(run)
            self._advance()
            return run
        samples = answer.pop("samples", None)
        if samples is None:
            samples = (before, fabric.sample())
        usage = Usage.of(fabric.plan, samples[0], samples[1],
                         seconds=answer["result"]["span_s"], failed=failed)
        reasons = cpu_bound_reasons(answer, usage, self.options.target)
        metrics = run_metrics(answer, usage, racks)
        # Lossless packets that came into a switch and never left it: on p4switch its traffic
        # manager counts its tail drops too (tm_dropped); BMv2 counts them nowhere else, so
        # there this is its queue drops.
        held1 = lossless_packets(fabric)
        metrics["switch_lost"] = float(sum(
            max(0, (a[0] - held0[sw][0]) - (a[1] - held0[sw][1])) for sw, a in held1.items()))
        if self.options.target != "p4switch":
            metrics["tm_dropped"] = metrics["switch_lost"]
        run = Run(repeat=repeat, metrics=metrics,
                  cpu_bound=bool(reasons), cpu_bound_reasons=reasons, job_id=answer.get("id"),
                  details={"via": answer.get("via"),
                           "ack_timeout_ms": answer.get("ack_timeout_ms"),
                           "links": _link_details(answer),
                           "lost_on": usage.lost_on, "failed_lost": usage.failed_lost,
                           "switch_cpu": usage.switch_cpu, **extra})
        point.runs.append(run)
        self._advance()
        return run

    def _on_step(self, step: int, steps: int) -> None:
        if self._task is not None:
            self._progress.update(self._task, note=f"{self._point_note} step {step + 1}/{steps}")

    def _advance(self) -> None:
        if self._task is not None:
            self._progress.advance(self._task)

    def point(self, **params: Any) -> Point:
        """The point with these parameters (made the first time)."""
        for p in self.result.points:
            if p.params == params:
                return p
        got = Point(params=dict(params))
        self.result.points.append(got)
        return got

    def finish(self, findings: Sequence[Finding] = (), notes: Sequence[str] = (),
               plots: Sequence[str] = ()) -> ExperimentResult:
        """Summarise every point over its repeats, add findings, notes, plots; the result."""
        for p in self.result.points:
            summarize_runs(p)
        self.result.tally()
        self.result.findings = list(findings)
        self.result.notes = list(notes)
        self.result.plots = list(plots)
        self.result.calibration = self.calibration
        self.result.seconds = round(time.monotonic() - self.t0, 1)
        return self.result
