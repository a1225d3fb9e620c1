"""`placement`: a job across `two_zones` placed min-cut vs packed vs random, next to the model.

`two_zones` joins two AI zones (2 racks x 2 one-NIC hosts each, 2 CTSWs
per zone) through one ATSW; each CTSW's uplink runs at half a NIC's rate,
so the cross-zone layer is oversubscribed 4:1. Ring AllReduce jobs of 4
and 8 ranks are placed by `controller.placement` (the scheduler's
`mincut`, `packed` = the first NICs in plan order, and `random` with two
seeds) and run in `eecmp` with QP scaling. Measured: the bytes that
entered the ATSW layer (the CTSWs' `tx_port` counters on their ATSW
uplinks; frames, so headers and ACKs included) and the AllReduce time.
Next to each, the flow-level model's prediction for the same job
(`model.Model`, same placement, routes and hash): its payload bytes into
the ATSW layer and its max-min estimate of the time, at the emulated rates
(the model's represented time x the topology's scale).

The paper: placing a job's ranks with a minimum cut across zones keeps
its traffic off the oversubscribed layer.

Names defined here: `NAME`, `TITLE`, `run`, `findings`, `plot`, `predict`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from topologies.mtu import roce_frame

from .collective import Collective
from .fabric import variant
from .figures import bar_panel, new_figure, save
from .jobs import placed
from .schema import Column, ExperimentResult, Finding, Point
from .session import Options, Session
from .sizes import ran_path_mtu, sizes_for
from .stats import judged

__all__ = ["NAME", "TITLE", "findings", "plot", "predict", "run"]

NAME = "placement"
TITLE = "job placement across two zones: min-cut vs packed vs random, measured and modelled"
BASE = Path(__file__).resolve().parents[1] / "topologies" / "two_zones.yaml"
PARAMS = [Column(key="ranks", label="ranks"), Column(key="placement", label="placement"),
          Column(key="seed", label="seed")]
METRICS = [
    Column(key="time_s", label="AllReduce time", unit="s", digits=2),
    Column(key="model_time_s", label="model time", unit="s", digits=2),
    Column(key="atsw_mib", label="into ATSW layer", unit="MiB", digits=3),
    Column(key="model_atsw_mib", label="model: into ATSW", unit="MiB", digits=3),
    Column(key="crossing_hops", label="ring hops across zones", digits=0),
    Column(key="switch_pauses", label="PAUSEs sent", digits=0),
]


def predict(topology: Path, *, ranks: int, placement: str, seed: int, qps: int, size: int,
            message_size: int) -> dict[str, float]:
    """The model's bytes into the ATSW layer (whole job) and time at the emulated rates."""
    from model.run import Model, ModelConfig
    from topologies.addressing import plan_addresses
    from topologies.spec import load_spec

    spec = load_spec(topology)
    plan = plan_addresses(spec)
    res = Model(spec, plan).run(ModelConfig(pattern="ring", ranks=ranks, placement=placement,
                                            seed=seed, mode="eecmp", qps=qps, strategy="rr",
                                            size=size, message_size=message_size))
    per_step = sum(v for k, v in res.link_loads().items() if k.endswith(" up")
                   and _tier(plan, k.rsplit(" ", 1)[0]) == "ctsw_atsw")
    return {"model_atsw_mib": per_step * res.steps / 2**20,
            "model_time_s": res.time_s * plan.scale}


def _tier(plan: Any, link_id: str) -> str:
    for lk in plan.links:
        if lk.id == link_id:
            return str(lk.tier)
    return ""


def run(options: Options) -> ExperimentResult:
    """Run the grid (see the module docstring) and return its result."""
    sz = sizes_for(NAME, options.quick)
    repeat = options.repeat or sz["repeat"]
    placements: list[tuple[str, int]] = [("mincut", 0), ("packed", 0)]
    placements += [("random", s) for s in sz["seeds"]]
    topo = variant(BASE, options.out, f"{NAME}-fabric",
                   options.fabric(BASE))
    session = Session(NAME, TITLE, options, topology=topo, params=PARAMS, metrics=METRICS,
                      sizes={"bytes per rank": sz["size"], "message bytes": sz["message_size"],
                             "QPs": sz["qps"], "mode": "eecmp", "strategy": "rr"},
                      repeat=repeat)
    orders: list[str] = []
    with session:
        session.grid(repeat * len(sz["ranks"]) * len(placements))
        with session.fabric(topo, mode="eecmp") as fabric:
            session.calibrate(fabric, "h1", "h3")
            zone = {h.name: h.zone for h in fabric.plan.hosts}
            jobs = []
            for n in sz["ranks"]:
                for pl, seed in placements:
                    nics = placed(fabric.plan, n, "ring", pl, seed)
                    hops = sum(1 for a, b in zip(nics, nics[1:] + nics[:1], strict=True)
                               if zone[a.host] != zone[b.host])
                    model = predict(topo, ranks=n, placement=pl, seed=seed, qps=sz["qps"],
                                    size=sz["size"], message_size=sz["message_size"])
                    jobs.append((n, pl, seed, tuple(x.intf for x in nics), hops, model))

                    orders.append(f"{n} ranks {pl}" + (f" seed {seed}" if pl == "random" else "")
                                  + f": {' '.join(x.host for x in nics)} ({hops} ring hop(s) "
                                    f"across zones)")
            for rep in range(repeat):
                for n, pl, seed, ranks_nics, hops, model in jobs:
                    coll = Collective(pattern="allreduce", nics=ranks_nics, size=sz["size"],
                                      qps=sz["qps"], strategy="rr",
                                      message_size=sz["message_size"], timeout=sz["timeout"])
                    point = session.point(ranks=n, placement=pl, seed=seed)
                    run = session.measure(fabric, point, coll, repeat=rep,
                                          label=f"{n} ranks {pl} {seed} #{rep + 1}")
                    run.metrics.update(model)
                    run.metrics["crossing_hops"] = float(hops)
                    if run.metrics.get("atsw_bytes") is not None:
                        run.metrics["atsw_mib"] = float(run.metrics["atsw_bytes"] or 0) / 2**20
        result = session.finish(notes=[
            *orders,
            "Into ATSW layer: bytes the CTSWs sent on their ATSW uplinks during the job "
            "(frames: payload, headers, ACKs). The model counts payload bytes (a full frame "
            f"carries {fabric.plan.path_mtu:,} payload bytes in {fabric.plan.roce_frame:,}) "
            "and its time is its max-min fluid estimate "
            "(no queues, no PFC, no per-step latency) at the emulated rates."])
        result.findings = findings(result)
        result.plots = plot(result, options.out)
    return result


def findings(result: ExperimentResult) -> list[Finding]:
    """The paper's claims against the measured points."""
    out: list[Finding] = []
    for n in sorted({int(p.params["ranks"]) for p in result.points}):  # type: ignore[arg-type]
        mc = result.point(ranks=n, placement="mincut")
        rnd = [p for p in result.points if p.params.get("ranks") == n
               and p.params.get("placement") == "random" and "atsw_mib" in p.summary]
        if mc is None or "atsw_mib" not in mc.summary or not rnd:
            continue
        b_mc = mc.summary["atsw_mib"].mean
        b_rnd = sum(p.summary["atsw_mib"].mean for p in rnd) / len(rnd)
        t_mc = mc.summary["time_s"].mean
        t_rnd = sum(p.summary["time_s"].mean for p in rnd) / len(rnd)
        out.append(Finding(
            claim=f"{n} ranks: min-cut placement sends less across zones and runs faster than "
                  f"random",
            paper="the scheduler's minimum cut keeps traffic off the oversubscribed ATSW layer",
            measured=(f"into the ATSW layer {b_mc:.2f} MiB (min-cut) vs {b_rnd:.2f} MiB "
                      f"(random, mean of {len(rnd)} seeds); AllReduce {t_mc:.2f} s vs "
                      f"{t_rnd:.2f} s"),
            holds=judged(b_mc < b_rnd and t_mc < t_rnd, mc.summary["time_s"],
                         *(p.summary["time_s"] for p in rnd))))
    rows = [p for p in result.points if "atsw_mib" in p.summary and "model_atsw_mib" in p.summary]
    frame, payload = _frame(result)
    if rows:
        worst = max(abs(p.summary["atsw_mib"].mean - p.summary["model_atsw_mib"].mean
                        * frame / payload) for p in rows)
        out.append(Finding(
            claim="the model predicts the bytes each placement sends across zones",
            paper="the model shares the placement, routes and hash with the emulator",
            measured=f"largest gap between measured frames and the model's payload x "
                     f"{frame}/{payload}: "
                     f"{worst:.3f} MiB",
            holds=None))
    return out


def _frame(result: ExperimentResult) -> tuple[int, int]:
    """A full data frame's bytes and its payload (the path MTU) on the links that ran."""
    path_mtu = ran_path_mtu(result)
    return roce_frame(path_mtu), path_mtu


def plot(result: ExperimentResult, out_dir: Path) -> list[str]:
    """Cross-zone bytes and AllReduce time per placement, the model's as crosses."""
    fig, (a, b) = new_figure(2, width=6.0)

    def label(p: Point) -> str:
        """A bar's label: ranks, placement and seed (random ones)."""
        s = f" {p.params['seed']}" if p.params["placement"] == "random" else ""
        return f"{p.params['ranks']} ranks {p.params['placement']}{s}"

    colors = {"mincut": "tab:green", "packed": "tab:blue", "random": "tab:red"}
    cs = [colors[str(p.params["placement"])] for p in result.points]
    bar_panel(a, result, "atsw_mib", label, ylabel="MiB into the ATSW layer",
              title="cross-zone bytes (switch counters; x = model)", colors=cs)
    pts = [p for p in result.points if "atsw_mib" in p.summary and "model_atsw_mib" in p.summary]
    frame, payload = _frame(result)
    a.scatter(range(len(pts)), [p.summary["model_atsw_mib"].mean * frame / payload for p in pts],
              marker="x", color="black", zorder=4, label=f"model x {frame}/{payload}")
    a.legend(fontsize=8)
    bar_panel(b, result, "time_s", label, ylabel="AllReduce time (s)",
              title="AllReduce time (x = model)", colors=cs)
    pts = [p for p in result.points if "time_s" in p.summary and "model_time_s" in p.summary]
    b.scatter(range(len(pts)), [p.summary["model_time_s"].mean for p in pts], marker="x",
              color="black", zorder=4)
    return save(fig, out_dir, NAME)
