"""`incast`: N senders to one NIC on the lossless class, PFC on vs off, with and without admission.

On `ai_zone_small` with PFC on and with PFC off on every tier (variants
written next to the results, with the experiments' queues), N hosts (their
first NIC) each send the same number of bytes to h1's first NIC at once,
in the lossless `data` class, with and without receiver-driven admission
(clear-to-send grants: at most channels x channel buffer in flight per
pair). N = 3 (h2 in the root's rack, two from other racks) and 7 (every
other host). The paper: with PFC, an incast loses nothing, and the
congestion shows as PAUSE frames sent upstream; without it, the switch
queue towards the receiver overflows, and the senders retransmit.

Names defined here: `NAME`, `TITLE`, `run`, `findings`, `plot`.
"""

from __future__ import annotations

from pathlib import Path

from .collective import Collective
from .fabric import variant
from .figures import bar_panel, new_figure, save
from .schema import Column, ExperimentResult, Finding, Point
from .session import Options, Session
from .sizes import sizes_for
from .stats import judged

__all__ = ["NAME", "TITLE", "findings", "plot", "run"]

NAME = "incast"
TITLE = "N-to-1 incast on the lossless class: PFC on vs off, admission"
BASE = Path(__file__).resolve().parents[1] / "topologies" / "ai_zone_small.yaml"
SENDERS = ["h2", "h3", "h5", "h4", "h6", "h7", "h8"]  # N=3: h2 (same rack), h3, h5
PARAMS = [Column(key="pfc", label="PFC"), Column(key="admission", label="admission"),
          Column(key="senders", label="senders")]
METRICS = [
    Column(key="span_s", label="completion", unit="s", digits=2),
    Column(key="root_mbps", label="into the root", unit="Mb/s", digits=2),
    Column(key="tm_dropped", label="queue drops", digits=0),
    Column(key="switch_pauses", label="PAUSEs sent by switches", digits=0),
    Column(key="host_pauses", label="PAUSEs at senders", digits=0),
    Column(key="retransmitted", label="retransmitted", digits=0),
    Column(key="timeouts", label="timeouts", digits=0),
]


def run(options: Options) -> ExperimentResult:
    """Run the grid (see the module docstring) and return its result."""
    sz = sizes_for(NAME, options.quick)
    repeat = options.repeat or sz["repeat"]
    fabrics = [("on", variant(BASE, options.out, f"{NAME}-pfc-on",
                              options.fabric(BASE))),
               ("off", variant(BASE, options.out, f"{NAME}-pfc-off",
                               options.fabric(BASE, pfc=False)))]
    session = Session(NAME, TITLE, options, topology=BASE, params=PARAMS, metrics=METRICS,
                      sizes={"bytes per sender": sz["size"], "class": "data (lossless)"},
                      repeat=repeat)
    topologies = []
    with session:
        session.grid(repeat * len(fabrics) * 2 * len(sz["senders"]))
        for pfc, topo in fabrics:
            topologies.append(str(topo))
            with session.fabric(topo, mode="eecmp") as fabric:
                session.calibrate(fabric, "h1", "h3")
                nic = {h.name: h.nics[0].intf for h in fabric.plan.hosts}
                for rep in range(repeat):
                    for admission in (False, True):
                        for n in sz["senders"]:
                            nics = (nic["h1"], *(nic[h] for h in SENDERS[:n]))
                            coll = Collective(pattern="incast", nics=nics, size=sz["size"],
                                              admission=admission, timeout=sz["timeout"])
                            point = session.point(pfc=pfc, admission=admission, senders=n)
                            run = session.measure(
                                fabric, point, coll, repeat=rep,
                                label=f"PFC {pfc}, admission {'on' if admission else 'off'}, "
                                      f"{n} senders #{rep + 1}")
                            t = run.metrics.get("span_s")
                            if t:
                                run.metrics["root_mbps"] = n * sz["size"] * 8 / t / 1e6
        result = session.finish(notes=[
            f"Fabrics: {topologies[0]} (PFC on) and {topologies[1]} (PFC off on every tier), "
            "both with the experiments' switch queues and PFC thresholds (`experiments.sizes.lossless`).",
            f"Senders in order: {', '.join(SENDERS)} (the first N); receiver h1's first NIC.",
            "Completion: first byte sent to last byte received, all hosts (the job's span). "
            "PAUSEs sent by switches: every PFC PAUSE (XOFF and refreshes) the switches' traffic "
            "managers sent upstream; PAUSEs at senders: those the agents' NICs received."])
        result.topology = ", ".join(topologies)
        result.findings = findings(result)
        result.plots = plot(result, options.out)
    return result


def _sum(result: ExperimentResult, metric: str, **params: object) -> tuple[float, int]:
    total, n = 0.0, 0
    for p in result.points:
        if all(p.params.get(k) == v for k, v in params.items()) and metric in p.summary:
            total += p.summary[metric].mean
            n += 1
    return total, n


def findings(result: ExperimentResult) -> list[Finding]:
    """The paper's claims against the measured points."""
    out: list[Finding] = []
    drops_on, n_on = _sum(result, "tm_dropped", pfc="on")
    pauses_on, _ = _sum(result, "switch_pauses", pfc="on")
    if n_on:
        out.append(Finding(
            claim="with PFC, incast loses nothing and pauses the senders",
            paper="lossless class: zero drops, PAUSE frames upstream",
            measured=f"queue drops {drops_on:.0f}, PAUSEs sent {pauses_on:.0f} (means summed "
                     f"over {n_on} points)",
            holds=drops_on == 0 and pauses_on > 0))
    drops_off, n_off = _sum(result, "tm_dropped", pfc="off")
    retx_off, _ = _sum(result, "retransmitted", pfc="off")
    if n_off:
        out.append(Finding(
            claim="without PFC, incast drops at the switch queue and the senders retransmit",
            paper="drops and retransmissions",
            measured=f"queue drops {drops_off:.0f}, retransmitted {retx_off:.0f} (means summed "
                     f"over {n_off} points)",
            holds=drops_off > 0 and retx_off > 0))
    for n in sorted({int(p.params["senders"]) for p in result.points}):  # type: ignore[arg-type]
        on = result.spread("span_s", pfc="on", admission=False, senders=n)
        off = result.spread("span_s", pfc="off", admission=False, senders=n)
        if on and off:
            out.append(Finding(
                claim=f"{n}-to-1: completion time with PFC vs without",
                paper="losses cost retransmissions and time; PFC keeps the link busy",
                measured=f"PFC on {on.mean:.2f} ± {on.sd:.2f} s, off {off.mean:.2f} ± "
                         f"{off.sd:.2f} s",
                holds=judged(on.mean <= off.mean + max(on.sd, off.sd), on, off)))
    return out


def plot(result: ExperimentResult, out_dir: Path) -> list[str]:
    """Incast completion time, switch queue drops and PAUSEs sent, per point."""
    fig, (a, b, c) = new_figure(3, width=4.6)

    def label(p: Point) -> str:
        """A bar's label: PFC on or off, senders, admission."""
        return (f"PFC {p.params['pfc']}, {p.params['senders']}->1"
                + (", adm" if p.params["admission"] else ""))

    colors = ["tab:green" if p.params["pfc"] == "on" else "tab:red" for p in result.points]
    bar_panel(a, result, "span_s", label, ylabel="completion (s)", title="incast completion",
              colors=colors)
    bar_panel(b, result, "tm_dropped", label, ylabel="packets", title="switch queue drops",
              colors=colors)
    bar_panel(c, result, "switch_pauses", label, ylabel="PAUSE frames",
              title="PAUSEs sent upstream by switches", colors=colors)
    return save(fig, out_dir, NAME)
