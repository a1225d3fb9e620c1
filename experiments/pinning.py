"""`pinning`: path pinning vs ECMP vs E-ECMP, with whole racks, part of several racks, a failure.

Path pinning sends traffic for a destination NIC up the uplink its slice
(its RTSW port) selects. It balances when every rack's slice k talks to
other racks' slice k, as whole racks running one job with rail-aligned
rings do; it overloads an uplink when a job holds only part of some racks
(the destinations of one RTSW's flows then share slices), and when an
uplink fails (its slices all move to one survivor).

So that every slice has its own uplink, as in the paper's RTSW, the fabric
is `ai_zone_small`'s shape with one-NIC hosts: 4 racks x 4 hosts, 4 CTSWs,
every RTSW 4 NICs down and 4 uplinks up at the same rate (1:1), written
next to the results. Three jobs, ring AllReduce, every hop between racks:

- `whole racks`: racks 1 and 2 (8 hosts), rail-aligned (host k of one rack
  sends to host k of the other): each RTSW's 4 flows go to 4 different
  slices;
- `partial racks`: rack 1 whole and host 1 of racks 2-4 (7 ranks,
  alternating): rack 1's three flows out all go to slice 1 (pinned to one
  uplink);
- `whole racks, uplink down`: the first job with rtsw1-ctsw1 down (failed
  before the job, restored after).

Each in `pin`, `ecmp` and `eecmp` with 1 QP, and `eecmp` with QP scaling.
The paper: pinning is balanced in the first case and overloads some
uplinks in the others (more than 30% slower).

Names defined here: `NAME`, `TITLE`, `run`, `findings`, `plot`,
`TOPOLOGY_CHANGES`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .collective import Collective
from .fabric import Fabric, quiet_errors, variant, variant_spec
from .figures import bar_panel, new_figure, save
from .jobs import racks_of, rail_hosts
from .predict import hash_note, link_bytes, predicted_imbalance
from .schema import Column, ExperimentResult, Finding, Point
from .session import Options, Session
from .sizes import LINK_MTU, lossless, sizes_for
from .stats import clearly_less, faster, judged

__all__ = ["NAME", "TITLE", "TOPOLOGY_CHANGES", "findings", "plot", "run"]

NAME = "pinning"
TITLE = "path pinning vs ECMP vs E-ECMP: whole racks, partial racks, a failed uplink"
BASE = Path(__file__).resolve().parents[1] / "topologies" / "ai_zone_small.yaml"
TOPOLOGY_CHANGES: dict[str, Any] = {
    "name": "ai_zone_pin",
    "racks": [{"count": 4, "hosts": 4, "nics": 1, "uplinks": 1}],
    "ctsws": 4,
}
JOBS = ("whole racks", "partial racks", "whole racks, uplink down")
FAILED = ("rtsw1", "ctsw1")
PARAMS = [Column(key="job", label="job"), Column(key="mode", label="mode"),
          Column(key="qps", label="QPs")]
METRICS = [
    Column(key="time_s", label="AllReduce time", unit="s", digits=2),
    Column(key="up_imbalance", label="uplink max/mean", digits=2),
    Column(key="predicted_up", label="routes predict", digits=2),
    Column(key="down_imbalance", label="downlink max/mean", digits=2),
    Column(key="switch_pauses", label="PAUSEs sent", digits=0),
    Column(key="retransmitted", label="retransmitted", digits=0),
    Column(key="tm_dropped", label="queue drops", digits=0),
]


def _configs(qps: int) -> list[tuple[str, int]]:
    return [("pin", 1), ("ecmp", 1), ("eecmp", 1), ("eecmp", qps)]


def _hosts(fabric: Fabric, job: str) -> list[str]:
    """The job's hosts in ring order (module docstring)."""
    if job == "partial racks":
        # Rack 1 whole, host 1 of racks 2-4, alternating: r1h1 r2h1 r1h2 r3h1 r1h3 r4h1 r1h4.
        whole = rail_hosts(fabric.plan, [0], [[0, 1, 2, 3]])
        firsts = rail_hosts(fabric.plan, [1, 2, 3], [[0], [0], [0]])
        order = [whole[0]]
        for a, b in zip(firsts, whole[1:], strict=True):
            order += [a, b]
        return order
    # Whole racks 1 and 2, rail-aligned: r1h1 r2h1 r1h2 r2h2 ... r1h4 r2h4.
    return rail_hosts(fabric.plan, [0, 1], [[0, 1, 2, 3], [0, 1, 2, 3]])


def run(options: Options) -> ExperimentResult:
    """Run the grid (see the module docstring) and return its result."""
    sz = sizes_for(NAME, options.quick)
    repeat = options.repeat or sz["repeat"]
    configs = _configs(sz["qps"])
    changes = {**TOPOLOGY_CHANGES, "links.host.rate_mbps": options.host_mbps,
               "links.rtsw_ctsw.rate_mbps": options.host_mbps, "mtu": LINK_MTU,
               **options.settings()}
    topo = variant(BASE, options.out, f"{NAME}-fabric",
                   {**changes, **lossless(variant_spec(BASE, changes))})
    session = Session(NAME, TITLE, options, topology=topo, params=PARAMS, metrics=METRICS,
                      sizes={"bytes per rank": sz["size"], "message bytes": sz["message_size"],
                             "QPs with QP scaling": sz["qps"], "strategy": "rr"},
                      repeat=repeat)
    notes: list[str] = []
    with session:
        session.grid(repeat * len(JOBS) * len(configs))
        with session.fabric(topo, mode="pin") as fabric:
            session.calibrate(fabric, "h1", "h5")
            nic = {h.name: h.nics[0].intf for h in fabric.plan.hosts}
            failed_id = next(lk.id for lk in fabric.plan.links if {lk.a, lk.b} == set(FAILED))
            for job in JOBS:
                hosts = _hosts(fabric, job)
                notes.append(f"`{job}`: ring {' '.join(hosts)}.")
            for rep in range(repeat):
                for job in JOBS:
                    hosts = _hosts(fabric, job)
                    nics = tuple(nic[h] for h in hosts)
                    racks = racks_of(fabric.plan, nics)
                    down = job.endswith("uplink down")
                    if down:
                        fabric.link(*FAILED, up=False)
                    try:
                        for mode, q in configs:
                            fabric.mode(mode)
                            coll = Collective(pattern="allreduce", nics=nics, size=sz["size"],
                                              qps=q, strategy="rr",
                                              message_size=sz["message_size"],
                                              timeout=sz["timeout"])
                            point = session.point(job=job, mode=mode, qps=q)
                            failed = frozenset({failed_id}) if down else frozenset()
                            run = session.measure(fabric, point, coll, repeat=rep, racks=racks,
                                                  failed=failed,
                                                  label=f"{job}: {mode} {q} QP #{rep + 1}")
                            run.metrics["predicted_up"] = predicted_imbalance(
                                fabric.plan, link_bytes(fabric.plan, mode, coll, failed),
                                "rtsw_ctsw", "up", racks)
                    finally:
                        if down:
                            with quiet_errors():
                                fabric.link(*FAILED, up=True)
        notes.append(f"`uplink down`: {FAILED[0]}-{FAILED[1]} set down through the API "
                     "(`POST /link`) before the job's runs and up after them; routes "
                     "recomputed by the controller (pinned slices move to the next live uplink).")
        notes.append("Uplink max/mean is over the uplinks of the RTSWs whose racks the job "
                     "uses (the idle ones count), from the switches' `tx_port` counters.")
        result = session.finish(notes=notes)
        result.findings = findings(result)
        result.plots = plot(result, options.out)
    return result


def _best_eecmp(result: ExperimentResult, job: str) -> Point | None:
    pts = [p for p in result.points if p.params.get("job") == job
           and p.params.get("mode") == "eecmp" and "time_s" in p.summary]
    return max(pts, key=lambda p: int(p.params.get("qps") or 1), default=None)


def _own_cost(result: ExperimentResult, job: str, ee: Point) -> str:
    """With the uplink down: what the failure costs pinning and E-ECMP against whole racks."""
    if not job.endswith("uplink down"):
        return ""
    p0, p1 = result.spread("time_s", job="whole racks", mode="pin"), result.spread(
        "time_s", job=job, mode="pin")
    e0 = result.spread("time_s", job="whole racks", mode="eecmp", qps=ee.params["qps"])
    e1 = ee.summary.get("time_s")
    i_p, i_e = result.spread("up_imbalance", job=job, mode="pin"), ee.summary.get("up_imbalance")
    if not (p0 and p1 and e0 and e1 and i_p and i_e):
        return ""
    return (f"Against the same job with every uplink up, the failure costs pinning "
            f"{p1.mean / p0.mean - 1:.0%} ({p0.mean:.2f} -> {p1.mean:.2f} s: the failed "
            f"uplink's slice moves onto one survivor, max/mean {i_p.mean:.2f}) and E-ECMP "
            f"{e1.mean / e0.mean - 1:.0%} ({e0.mean:.2f} -> {e1.mean:.2f} s, max/mean "
            f"{i_e.mean:.2f}); the ratio of the two max/means, {i_p.mean / i_e.mean:.2f}, is close to "
            f"the ratio of the times, {p1.mean / e1.mean:.2f}: with one uplink of four gone "
            f"E-ECMP loses capacity too, so the gap to it is smaller than the failure's cost.")


def findings(result: ExperimentResult) -> list[Finding]:
    """The paper's claims against the measured points."""
    out: list[Finding] = []
    whole = result.point(job="whole racks", mode="pin")
    if whole is not None and "up_imbalance" in whole.summary:
        i = whole.summary["up_imbalance"]
        out.append(Finding(
            claim="pinning balances the uplinks when whole racks run one job",
            paper="each destination slice has its uplink: even load without failures",
            measured=f"uplink max/mean {i.mean:.2f} ± {i.sd:.2f}", holds=i.mean <= 1.15,
            why=hash_note(result, job="whole racks", mode="pin")))
    for job in JOBS[1:]:
        pin = result.point(job=job, mode="pin")
        ee = _best_eecmp(result, job)
        if pin is None or ee is None or "time_s" not in pin.summary:
            continue
        tp, te = pin.summary["time_s"], ee.summary["time_s"]
        ip = pin.summary.get("up_imbalance")
        slower = -faster(te.mean, tp.mean)
        out.append(Finding(
            claim=f"pinning overloads some uplinks with {job}",
            paper="partial racks and failures overload some uplinks: more than 30% slower",
            measured=(f"pin {tp.mean:.2f} ± {tp.sd:.2f} s (uplink max/mean "
                      f"{ip.mean if ip else float('nan'):.2f}) vs eecmp {ee.params['qps']} QPs "
                      f"{te.mean:.2f} ± {te.sd:.2f} s: pinning {slower:.0%} slower"),
            holds=judged(clearly_less(te, tp) and slower > 0.3, te, tp),
            why=" ".join(x for x in (hash_note(result, job=job, mode="pin"),
                                     _own_cost(result, job, ee)) if x)))
    return out


def plot(result: ExperimentResult, out_dir: Path) -> list[str]:
    """AllReduce time and uplink imbalance per job and mode."""
    fig, (a, b) = new_figure(2, width=6.5)

    def label(p: Point) -> str:
        """A bar's label: job, mode and QPs."""
        return f"{p.params['job']}\n{p.params['mode']} {p.params['qps']}QP"

    colors = ["tab:red", "tab:orange", "tab:blue", "tab:green"] * len(JOBS)
    bar_panel(a, result, "time_s", label, ylabel="AllReduce time (s)",
              title="ring AllReduce (1:1 RTSWs, one uplink per slice)", colors=colors)
    bar_panel(b, result, "up_imbalance", label, ylabel="RTSW uplink bytes, max/mean",
              title="uplink imbalance", colors=colors)
    b.axhline(1.0, color="grey", lw=0.8, ls=":")
    return save(fig, out_dir, NAME)
