"""`qp-scaling`: ECMP vs E-ECMP with QP scaling, round-robin vs split (the paper's Fig. of QP scaling).

On `ai_zone_small` (4 racks x 4 NICs, each RTSW 4 NICs down and 2
uplinks of twice a NIC's rate up: 1:1; at the experiments' rates,
`experiments.sizes`), a ring AllReduce over all 16 NICs whose every hop
goes from rack to rack (`experiments.jobs.alternating`: the racks in turn),
so each RTSW sends 4 flows at line rate over its 2 uplinks: they fit only
when the hash puts 2 on each. The grid: routing mode ecmp and eecmp x 1,
2, 4, 8 QPs per connection x QP-scaling strategy rr (whole messages in
turn) and split (every message across the QPs), each repeated; the
collective library's messages are small enough that a step has as many
messages as the largest QP count (so `rr` can use every QP in a step).

What the paper reports, and what this checks: with 1 QP, plain ECMP loads
the uplinks unevenly (max/mean clearly above 1) and AllReduce is slower;
E-ECMP with more QPs brings both down (up to 40% faster AllReduce); for
large messages round-robin is at least as good as split.

Names defined here: `NAME`, `TITLE`, `run`, `findings`, `plot`.
"""

from __future__ import annotations

import math
from pathlib import Path

from .collective import Collective
from .fabric import variant
from .figures import line_panel, new_figure, save
from .jobs import alternating, racks_of
from .predict import hash_note, link_bytes, predicted_imbalance
from .schema import Column, ExperimentResult, Finding
from .session import Options, Session
from .sizes import ran_path_mtu, sizes_for
from .stats import clearly_less, faster, judged

__all__ = ["NAME", "TITLE", "findings", "plot", "run"]

NAME = "qp-scaling"
TITLE = "ECMP vs E-ECMP with QP scaling on ai_zone_small"
BASE = Path(__file__).resolve().parents[1] / "topologies" / "ai_zone_small.yaml"
PARAMS = [Column(key="mode", label="mode"), Column(key="qps", label="QPs"),
          Column(key="strategy", label="strategy")]
METRICS = [
    Column(key="time_s", label="AllReduce time", unit="s", digits=2),
    Column(key="busbw_gbps", label="busbw", unit="Gb/s", digits=4),
    Column(key="up_imbalance", label="uplink max/mean", digits=2),
    Column(key="predicted_up", label="hash predicts", digits=2),
    Column(key="down_imbalance", label="downlink max/mean", digits=2),
    Column(key="retransmitted", label="retransmitted", digits=0),
    Column(key="timeouts", label="timeouts", digits=0),
    Column(key="switch_pauses", label="PAUSEs sent", digits=0),
    Column(key="tm_dropped", label="queue drops", digits=0),
]


def run(options: Options) -> ExperimentResult:
    """Run the grid (see the module docstring) and return its result."""
    sz = sizes_for(NAME, options.quick)
    repeat = options.repeat or sz["repeat"]
    modes, qps_list, strategies = ["ecmp", "eecmp"], sz["qps"], ["rr", "split"]
    topo = variant(BASE, options.out, f"{NAME}-fabric",
                   options.fabric(BASE))
    session = Session(NAME, TITLE, options, topology=topo, params=PARAMS, metrics=METRICS,
                      sizes={"bytes per rank": sz["size"], "message bytes": sz["message_size"],
                             "admission": sz["admission"]}, repeat=repeat)
    with session:
        session.grid(repeat * len(modes) * len(qps_list) * len(strategies))
        with session.fabric(topo, mode="eecmp") as fabric:
            nics = tuple(alternating(fabric.plan, [0, 1, 2, 3]))
            racks = racks_of(fabric.plan, nics)
            session.calibrate(fabric, "h1", "h3")
            for rep in range(repeat):
                for mode in modes:
                    fabric.mode(mode)
                    for q in qps_list:
                        for strategy in strategies:
                            coll = Collective(pattern="allreduce", nics=nics, size=sz["size"],
                                              qps=q, strategy=strategy,
                                              message_size=sz["message_size"],
                                              admission=sz["admission"], timeout=sz["timeout"])
                            point = session.point(mode=mode, qps=q, strategy=strategy)
                            run = session.measure(fabric, point, coll, repeat=rep, racks=racks,
                                                  label=f"{mode} {q} QP {strategy} #{rep + 1}")
                            run.metrics["predicted_up"] = predicted_imbalance(
                                fabric.plan, link_bytes(fabric.plan, mode, coll), "rtsw_ctsw",
                                "up", racks)
        notes = [f"Ring: {', '.join(nics)} (the racks in turn: every hop crosses the spine, "
                 "and each RTSW's 4 NICs send up at once).",
                 "The uplink max/mean is over the 8 RTSW-to-CTSW links, from the switches' "
                 "`tx_port` counters during the job (data and ACKs); the downlink max/mean over "
                 "the 8 CTSW-to-RTSW links. 1.0 is even; 1.5 is 3 of an RTSW's 4 flows on one "
                 "of its 2 uplinks, 2.0 all 4. `hash predicts`: the same max/mean worked out "
                 "from the job's flows (source ports, QPs, bytes per QP) and the installed "
                 "entries with the programs' hash (`experiments.predict`), payload only."]
        result = session.finish(notes=notes)
        result.findings = findings(result)
        result.plots = plot(result, options.out)
    return result


def _pieces_note(result: ExperimentResult, qps: int) -> str:
    """What split at many QPs changes besides the uplinks' balance: its pieces are more,
    smaller packets; what the switches' queues counted (packets, or bytes with `--buffer
    bytes`); the PAUSEs, paused time and machine load it drew next to rr's."""
    def both(metric: str) -> tuple[float, float] | None:
        split = result.spread(metric, mode="eecmp", qps=qps, strategy="split")
        rr = result.spread(metric, mode="eecmp", qps=qps, strategy="rr")
        return None if split is None or rr is None else (split.mean, rr.mean)

    pauses, paused, cpu = both("switch_pauses"), both("paused_s"), both("machine_cpu")
    message = result.sizes.get("message bytes")
    if pauses is None or not message:
        return ""
    piece, mtu = int(message) // qps, ran_path_mtu(result)
    ratio = qps * math.ceil(piece / mtu) / math.ceil(int(message) / mtu)
    if result.sizes.get("buffer") == "bytes":
        counted = ("the switches' queues and PFC counted bytes in these runs (`--buffer "
                   "bytes`), as a real switch's buffer does")
    elif result.target == "bmv2":
        counted = ("BMv2's queues count packets, not bytes (its PFC, the programs', counts "
                   "bytes, as a real switch's does)")
    else:
        counted = ("the switches' queues and PFC thresholds count packets here, not bytes (a "
                   "real switch's buffer and headroom are bytes; `--buffer bytes` counts bytes)")
    drew = [f"{pauses[0]:,.0f} PAUSEs against rr's {pauses[1]:,.0f}"]
    if paused is not None:
        drew.append(f"{paused[0]:,.1f} s of the hosts' time paused against {paused[1]:,.1f}")
    if cpu is not None:
        drew.append(f"the machine {cpu[0]:.0%} busy against {cpu[1]:.0%}")
    listed = drew[0] if len(drew) == 1 else f"{', '.join(drew[:-1])} and {drew[-1]}"
    return (f"Split over {qps} QPs cuts each {message}-B message into {piece}-B pieces: "
            f"{ratio:g}x the packets of rr for the same bytes; {counted}. Split drew {listed} "
            f"(docs/p4switch.md, \"The buffer\", compares the two accountings on this grid).")


def findings(result: ExperimentResult) -> list[Finding]:
    """The paper's claims against the measured points."""
    out: list[Finding] = []
    e1 = result.spread("up_imbalance", mode="ecmp", qps=1, strategy="rr")
    t_e1 = result.spread("time_s", mode="ecmp", qps=1, strategy="rr")
    if e1 is not None:
        out.append(Finding(
            claim="with 1 QP, ECMP loads the uplinks unevenly",
            paper="low-entropy flows collide on 5-tuple ECMP (uplink max/mean well above 1)",
            measured=f"uplink max/mean {e1.mean:.2f} ± {e1.sd:.2f}",
            holds=e1.mean > 1.25, why=hash_note(result, mode="ecmp", qps=1, strategy="rr")))
    eecmp = [p for p in result.points if p.params.get("mode") == "eecmp"
             and "time_s" in p.summary]
    if t_e1 is not None and eecmp:
        best = min(eecmp, key=lambda p: p.summary["time_s"].mean)
        tb = best.summary["time_s"]
        gain = faster(t_e1.mean, tb.mean)
        out.append(Finding(
            claim="E-ECMP with QP scaling makes AllReduce faster than ECMP with 1 QP",
            paper="up to 40% better AllReduce",
            measured=(f"ECMP 1 QP {t_e1.mean:.2f} ± {t_e1.sd:.2f} s; best E-ECMP "
                      f"({best.params['qps']} QPs {best.params['strategy']}) {tb.mean:.2f} ± "
                      f"{tb.sd:.2f} s: {gain:.0%} faster"),
            holds=judged(clearly_less(tb, t_e1), tb, t_e1)))
    for strategy in ("rr", "split"):
        qs = sorted(int(p.params["qps"]) for p in eecmp  # type: ignore[arg-type]
                    if p.params.get("strategy") == strategy)
        if len(qs) < 2:
            continue
        lo = result.point(mode="eecmp", qps=qs[0], strategy=strategy)
        hi = result.point(mode="eecmp", qps=qs[-1], strategy=strategy)
        if lo is None or hi is None or "up_imbalance" not in lo.summary \
                or "up_imbalance" not in hi.summary:
            continue
        i0, i1 = lo.summary["up_imbalance"], hi.summary["up_imbalance"]
        t0, t1 = lo.summary["time_s"], hi.summary["time_s"]
        out.append(Finding(
            claim=f"more QPs bring E-ECMP's imbalance and time down ({strategy})",
            paper="E-ECMP with QP scaling spreads a flow's QPs over the uplinks",
            measured=(f"{qs[0]} -> {qs[-1]} QPs: uplink max/mean {i0.mean:.2f} -> {i1.mean:.2f}"
                      f", time {t0.mean:.2f} -> {t1.mean:.2f} s"),
            holds=judged(i1.mean < i0.mean and clearly_less(t1, t0), t0, t1),
            why=" ".join(x for x in (
                hash_note(result, mode="eecmp", qps=qs[0], strategy=strategy),
                hash_note(result, mode="eecmp", qps=qs[-1], strategy=strategy),
                _pieces_note(result, qs[-1]) if strategy == "split" else "") if x)))
    pairs = []
    for p in eecmp:
        if p.params.get("strategy") != "rr" or int(p.params["qps"] or 1) < 2:
            continue
        s = result.point(mode="eecmp", qps=p.params["qps"], strategy="split")
        if s is not None and "time_s" in s.summary:
            pairs.append((int(p.params["qps"]), p.summary["time_s"],  # type: ignore[arg-type]
                          s.summary["time_s"]))
    if pairs:
        ok = judged(all(rr.mean <= sp.mean + max(rr.sd, sp.sd) for _, rr, sp in sorted(pairs)),
                    *(x for _, rr, sp in pairs for x in (rr, sp)))
        out.append(Finding(
            claim="round-robin is at least as good as split for large messages (E-ECMP)",
            paper="rr (whole messages round-robin over QPs) beats split for production sizes",
            measured="; ".join(f"{q} QPs: rr {rr.mean:.2f} vs split {sp.mean:.2f} s"
                               for q, rr, sp in sorted(pairs)),
            holds=ok))
    return out


def plot(result: ExperimentResult, out_dir: Path) -> list[str]:
    """AllReduce time and uplink imbalance against QPs, per mode and strategy."""
    fig, (a, b) = new_figure(2)

    def label(key: tuple[object, ...]) -> str:
        """A line's label: mode and strategy."""
        return f"{key[0]} {key[1]}"

    line_panel(a, result, "time_s", "qps", ("mode", "strategy"), ylabel="AllReduce time (s)",
               title="ring AllReduce, 16 NICs, ai_zone_small", label=label, log2x=True)
    line_panel(b, result, "up_imbalance", "qps", ("mode", "strategy"),
               ylabel="RTSW uplink bytes, max/mean", title="uplink imbalance", label=label,
               log2x=True)
    b.axhline(1.0, color="grey", lw=0.8, ls=":")
    return save(fig, out_dir, NAME)
