"""`failure`: an uplink fails in the middle of an AllReduce, in each routing mode.

On `ai_zone_small`, the ring AllReduce of `qp-scaling` (all 16 NICs, the
racks in turn, every hop across the spine) runs in `pin` and `ecmp` with 1 QP and in `eecmp` with QP
scaling, three ways: no failure; rtsw1-ctsw1 failed through the API a
third of the way in (`POST /link`, the controller is told at once:
`admin`); and the same link failed silently (`silent`: both interfaces go
down and routing is not told, so the controller's link probes must find
it). The link comes back after each run. Measured: the completion time
against the run without failure, the retransmissions and timeouts it
cost, and from the daemon (its answer to `POST /link` and its `link` and
`rerouted` events) the detection time, the reconvergence time (routes
recomputed and written to every switch) and the packets the dead link
swallowed.

Names defined here: `NAME`, `TITLE`, `run`, `findings`, `plot`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .collective import Collective
from .fabric import Fabric, quiet_errors, variant
from .figures import bar_panel, new_figure, save
from .jobs import alternating, racks_of
from .schema import Column, ExperimentResult, Finding, Point
from .session import Options, Session
from .sizes import FORMER_ACK_TIMEOUT_MS, sizes_for

__all__ = ["NAME", "TITLE", "findings", "plot", "run"]

NAME = "failure"
TITLE = "a link fails during an AllReduce: cost and reconvergence per mode"
BASE = Path(__file__).resolve().parents[1] / "topologies" / "ai_zone_small.yaml"
LINK = ("rtsw1", "ctsw1")
KINDS = ("none", "admin", "silent")
PARAMS = [Column(key="mode", label="mode"), Column(key="qps", label="QPs"),
          Column(key="failure", label="failure")]
METRICS = [
    Column(key="time_s", label="AllReduce time", unit="s", digits=2),
    Column(key="slowdown", label="vs no failure", percent=True, digits=2),
    Column(key="retransmitted", label="retransmitted", digits=0),
    Column(key="timeouts", label="timeouts", digits=0),
    Column(key="detect_s", label="detected after", unit="s", digits=3),
    Column(key="reconverge_s", label="routes rewritten in", unit="s", digits=3),
    Column(key="lost_packets", label="lost on the link", digits=0),
]


def _link_id(fabric: Fabric) -> str:
    for lk in fabric.plan.links:
        if {lk.a, lk.b} == set(LINK):
            return lk.id
    raise ValueError(f"no link {LINK[0]}-{LINK[1]} in {fabric.plan.name}")


def _fail(kind: str, after: float, link: str) -> Any:
    def during(fabric: Fabric) -> dict[str, Any]:
        """Fail the link `after` seconds into the run; what detection and rerouting took."""
        time.sleep(after)
        t0 = time.time()
        answer = fabric.link(*LINK, up=False, silent=kind == "silent")
        out: dict[str, Any] = {"failed_at_s": round(after, 3), "link": link}
        if kind == "admin":
            out["reconverge_s"] = answer.get("reconverged_after")
            out["lost_packets"] = answer.get("lost_packets")
            return out
        seen = fabric.events.wait_for("rerouted", t0, {"link": link, "up": False}, timeout=10)
        if seen is not None:
            out["detect_s"] = seen.get("detected_after")
            out["reconverge_s"] = seen.get("reconverged_after")
            out["lost_packets"] = seen.get("lost_packets")
        return out

    return during


def _restore(fabric: Fabric, link: str) -> None:
    t0 = time.time()
    with quiet_errors():
        fabric.link(*LINK, up=True)
    fabric.events.wait_for("rerouted", t0, {"link": link, "up": True}, timeout=5)
    time.sleep(0.5)


def run(options: Options) -> ExperimentResult:
    """Run the grid (see the module docstring) and return its result."""
    sz = sizes_for(NAME, options.quick)
    repeat = options.repeat or sz["repeat"]
    configs = [("pin", 1), ("ecmp", 1), ("eecmp", sz["qps"])]
    topo = variant(BASE, options.out, f"{NAME}-fabric",
                   options.fabric(BASE))
    session = Session(NAME, TITLE, options, topology=topo, params=PARAMS, metrics=METRICS,
                      sizes={"bytes per rank": sz["size"], "message bytes": sz["message_size"],
                             "fails at": f"{sz['fail_at']:.0%} of the run without failure",
                             "link": f"{LINK[0]}-{LINK[1]}"}, repeat=repeat)
    with session:
        session.grid(repeat * len(configs) * len(KINDS))
        with session.fabric(topo, mode="eecmp") as fabric:
            session.calibrate(fabric, "h1", "h3")
            link = _link_id(fabric)
            nics = tuple(alternating(fabric.plan, [0, 1, 2, 3]))
            racks = racks_of(fabric.plan, nics)
            baseline: dict[str, float] = {}
            for rep in range(repeat):
                for mode, q in configs:
                    fabric.mode(mode)
                    coll = Collective(pattern="allreduce", nics=nics, size=sz["size"], qps=q,
                                      strategy="rr", message_size=sz["message_size"],
                                      timeout=sz["timeout"])
                    for kind in KINDS:
                        point = session.point(mode=mode, qps=q, failure=kind)
                        during = None
                        if kind != "none":
                            after = sz["fail_at"] * baseline.get(mode, 5.0)
                            during = _fail(kind, after, link)
                        try:
                            run = session.measure(fabric, point, coll, repeat=rep, racks=racks,
                                                  during=during,
                                                  failed=frozenset({link}) if during else
                                                  frozenset(),
                                                  label=f"{mode} {q} QP, failure {kind} "
                                                        f"#{rep + 1}")
                        finally:
                            if kind != "none":
                                _restore(fabric, link)
                        t = run.metrics.get("time_s")
                        if kind == "none" and t:
                            baseline.setdefault(mode, t)
                        for key in ("detect_s", "reconverge_s", "lost_packets"):
                            if run.details.get(key) is not None:
                                run.metrics[key] = float(run.details[key])
                        if t and mode in baseline and kind != "none":
                            run.metrics["slowdown"] = t / baseline[mode] - 1
        result = session.finish(notes=[
            f"Ring of the racks in turn (every hop crosses the spine): {', '.join(nics)}.",
            "`vs no failure`: the run's time over the first run without failure in the same "
            "mode, minus 1. Detection (silent failures only) and reconvergence come from the "
            "daemon's `rerouted` event; for `admin` the controller knows at once and the "
            "reconvergence is its answer to `POST /link`.",
            "Each failed run is followed by the link restored (`POST /link up`) and the "
            "controller's reroute back onto it before the next run."])
        result.findings = findings(result)
        result.plots = plot(result, options.out)
    return result


def _ack_timeouts(result: ExperimentResult) -> str:
    """The RC ACK timeouts the runs used, as the note says them."""
    runs = [r for p in result.points for r in p.runs if r.error is None]
    used = [float(r.details["ack_timeout_ms"]) for r in runs
            if isinstance(r.details.get("ack_timeout_ms"), int | float)]
    if used and len(used) == len(runs):
        low, high = min(used) / 1e3, max(used) / 1e3
        return (f"{low:.2f}" + (f"-{high:.2f}" if high > low else "") + " s here, the "
                "fabric's, as `aizone run` sets it, `experiments.sizes`")
    # Runs that did not record it were made with the experiments' former rule.
    return (f"{FORMER_ACK_TIMEOUT_MS / 1e3:.2f} s here, sized to the emulated queues, "
            "`experiments.sizes`")


def _timeouts_note(result: ExperimentResult, kind: str) -> str:
    """What the failure cost each mode next to its ACK timeouts (where the time went)."""
    parts = []
    for p in result.points:
        if p.params.get("failure") != kind:
            continue
        base = result.spread("time_s", mode=p.params["mode"], failure="none")
        t, n = p.summary.get("time_s"), p.summary.get("timeouts")
        if base and t and n is not None:
            parts.append(f"{p.params['mode']} +{t.mean - base.mean:.2f} s with "
                         f"{n.mean:.0f} timeouts")
    if not parts:
        return ""
    return ("Time lost against ACK timeouts: " + ", ".join(parts) + f". A QP whose last "
            f"packets died with the link learns it only from its RC ACK timeout "
            f"({_ack_timeouts(result)}), then goes back N; one that still gets later packets "
            f"through is NAKed at once; what remains is the load the survivors carry "
            f"(pinning moves the failed uplink's slices onto one of them).")


def findings(result: ExperimentResult) -> list[Finding]:
    """The paper's claims against the measured points."""
    out: list[Finding] = []
    for kind in ("admin", "silent"):
        rows = []
        for p in result.points:
            if p.params.get("failure") != kind:
                continue
            base = result.spread("time_s", mode=p.params["mode"], failure="none")
            t = p.summary.get("time_s")
            if base and t:
                rows.append((p.params["mode"], base.mean, t.mean, p.summary.get("reconverge_s"),
                             p.summary.get("detect_s"), p.summary.get("retransmitted")))
        if not rows:
            continue
        done = all(t > 0 for _, _, t, *_ in rows)
        out.append(Finding(
            claim=f"a link failed ({kind}) during an AllReduce costs time, and the fabric "
                  f"reconverges",
            paper="failed members removed and routes recomputed; the job completes",
            measured="; ".join(
                f"{m}: {t:.2f} s vs {b:.2f} s"
                + (f", detected {d.mean:.2f} s" if d else "")
                + (f", rerouted in {r.mean:.3f} s" if r else "")
                + (f", {x.mean:.0f} retransmitted" if x else "")
                for m, b, t, r, d, x in rows),
            holds=done, why=_timeouts_note(result, kind)))
    return out


def plot(result: ExperimentResult, out_dir: Path) -> list[str]:
    """AllReduce time and retransmissions per mode and failure kind."""
    fig, (a, b) = new_figure(2, width=6.0)

    def label(p: Point) -> str:
        """A bar's label: mode, QPs and failure kind."""
        return f"{p.params['mode']} {p.params['qps']}QP\n{p.params['failure']}"

    colors = {"none": "tab:green", "admin": "tab:orange", "silent": "tab:red"}
    cs = [colors[str(p.params["failure"])] for p in result.points]
    bar_panel(a, result, "time_s", label, ylabel="AllReduce time (s)",
              title=f"{LINK[0]}-{LINK[1]} fails mid-AllReduce", colors=cs)
    bar_panel(b, result, "retransmitted", label, ylabel="packets retransmitted",
              title="retransmissions", colors=cs)
    return save(fig, out_dir, NAME)
