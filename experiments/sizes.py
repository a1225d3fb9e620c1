"""The experiments' sizes, and how they follow from what this machine can emulate.

Every experiment runs its preset with the host links at `RATE_MBPS` (the
other tiers keep their ratio to it: `rates`, `fabric_changes`) and the
switch queues `QUEUE`; the RC ACK timeout follows from both
(`ack_timeout_ms`). The grids and bytes (`SIZES`) are chosen so that:

- the load sits well inside what this machine emulates
  (`bench/fabric_capacity.py`, `CAPACITY`: the figures it printed), so
  that a slower run is the emulated fabric's doing;
- a ring step's chunk takes several round trips to send at line rate, so
  a step measures bandwidth (and the uplinks' balance), not latency;
- `experiment all` finishes in well under an hour on 2 cores and each
  experiment in minutes (`grid_runs`, `ideal_seconds`, `budget_seconds`).

`derivation_markdown()` writes that reasoning, with the numbers, into
`docs/results.md`. `sizes_for(name, quick)` is what an experiment runs
with (`--quick`: the smallest grid and sizes that still exercise every
path, for the smoke test).

Names defined here: `RATE_MBPS`, `QUEUE`, `MTU`, `FRAME_BYTES`,
`CAPACITY`, `SIZES`, `sizes_for`, `rates`, `fabric_changes`, `lossless`,
`ack_timeout_ms`, `grid_runs`, `ideal_seconds`, `budget_seconds`,
`derivation_markdown`.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

from topologies.ports import ROCE_FRAME
from topologies.spec import load_spec

__all__ = ["CAPACITY", "FRAME_BYTES", "MTU", "QUEUE", "RATE_MBPS", "SIZES", "ack_timeout_ms",
           "budget_seconds", "derivation_markdown", "fabric_changes", "lossless", "rates",
           "sizes_for"]

KiB, MiB = 1 << 10, 1 << 20

# What `bench/fabric_capacity.py` printed (its --json, levels abridged): per target, every
# level it tried as (host Mb/s, NICs, carried Mb/s, switch frames/s, loss, queue drops,
# machine CPU, lossless, at rate), and the two capacities; see derivation_markdown().
CAPACITY: dict[str, Any] = {
    "command": ("flock /tmp/aizone-net.lock .venv/bin/python bench/fabric_capacity.py "
                "--rates 1,2,4 --seconds 2"),
    "when": "2026-12-01, 198 s, load 3.5 at start (p4switch then BMv2 in one run)",
    "p4switch": {
        "capacity": {"carried_mbps": 21.63, "switch_pps": 8303, "nics": 16, "rate_mbps": 2.0,
                     "machine_cpu": 0.6904},
        "capacity_at_rate": {"carried_mbps": 15.03, "switch_pps": 5777, "nics": 16,
                             "rate_mbps": 1.0, "machine_cpu": 0.8322},
        "levels": [(1.0, 4, 3.84, 1572, 0.0, 0, 0.22, True, True),
                   (1.0, 8, 7.71, 3026, 0.0, 0, 0.32, True, True),
                   (1.0, 16, 15.03, 5777, 0.0, 0, 0.83, True, True),
                   (2.0, 4, 7.58, 2959, 0.0, 0, 0.32, True, True),
                   (2.0, 8, 11.58, 4499, 0.0, 0, 0.81, True, False),
                   (2.0, 16, 21.63, 8303, 0.0, 0, 0.69, True, False),
                   (4.0, 4, 12.44, 4810, 0.0, 0, 0.46, True, False),
                   (4.0, 8, 20.0, 7679, 0.0, 0, 0.66, True, False),
                   (4.0, 16, 30.33, 11990, 0.0, 93, 0.83, False, False)],
        "note": ("Past 16 NICs x 1 Mb/s p4switch falls below rate without loss and without a "
                 "switch process at a full core (8 NICs x 2 Mb/s: the busiest used 0.17 of a "
                 "core, the machine 81% of both): the processes share 2 cores, and PFC turns "
                 "their lateness into back-pressure rather than loss; at 16 x 4 Mb/s PFC no "
                 "longer keeps up (93 queue drops, 475 packets retransmitted)."),
    },
    "bmv2": {
        "capacity": {"carried_mbps": 10.59, "switch_pps": 4211, "nics": 16, "rate_mbps": 1.0,
                     "machine_cpu": 0.562},
        "capacity_at_rate": None,
        "levels": [(1.0, 4, 2.66, 1147, 0.0, 0, 0.24, True, False),
                   (1.0, 8, 5.31, 2168, 0.0, 0, 0.35, True, False),
                   (1.0, 16, 10.59, 4211, 0.0, 0, 0.56, True, False),
                   (2.0, 4, 4.7, 2237, 0.0, 0, 0.33, True, False),
                   (2.0, 8, 9.35, 4377, 0.0, 0, 0.57, True, False),
                   (2.0, 16, 8.3, 5130, 0.0, 0, 0.72, True, False),
                   (4.0, 4, 1.85, 3275, 0.0, 0, 0.49, True, False),
                   (4.0, 8, 3.55, 3790, 0.0, 0, 0.53, True, False),
                   (4.0, 16, 6.76, 7740, 0.0, 0, 0.9, True, False)],
        "note": ("BMv2 never carries 90% of the offered load, even 4 NICs at 1 Mb/s with the "
                 "machine 24% busy: not the CPU but its queue rates, which are packets/s set "
                 "for 1,514-B frames (docs/topologies.md): 1 Mb/s / (8 x 1,514 B) = 82.6 "
                 "frames/s, i.e. 0.71 Mb/s of 1,082-B RoCE frames, shared with the ACKs "
                 "(measured 0.66 Mb/s per NIC). From 2 Mb/s on the senders retransmit (351 "
                 "packets at 4 NICs x 2 Mb/s, 14,592 at 4 x 4 Mb/s, where 1.9 of 16 Mb/s get "
                 "through): BMv2 sends no PAUSE, and the packets its queues drop are not in "
                 "the 'queue drops' column (the traffic-manager counters read are "
                 "p4switch's), so its 'lossless' means no loss on cables only. The "
                 "experiments run on p4switch."),
    },
}
# The host links' emulated rate every experiment runs at (the other tiers keep their preset's
# ratio to it): see derivation_markdown().
RATE_MBPS = 1.0
# A full data packet at path MTU 1,024 (`topologies.ports.ROCE_FRAME`).
MTU, FRAME_BYTES = 1024, ROCE_FRAME

# Switch queues of every experiment's fabric (packets): the presets' 64 with XOFF/XON 24/12
# leave 64 - 2 x 24 = 16 packets of headroom for a queue that two ingress ports feed, and
# none for three (measured on ai_zone_small: 102 tail drops with PFC on in one AllReduce);
# 128 with 16/8 leaves 128 - 5 x 16 = 48 for the five ingress ports an RTSW's host port can
# have. A full queue holds 128 x 1,082 B = 1.1 s at 1 Mb/s (the ACK timeout's reason).
QUEUE: dict[str, Any] = {"queue": 128, "pfc": {"enabled": True, "xoff": 16, "xon": 8}}


def rates(base: Path, host_mbps: float = RATE_MBPS) -> dict[str, Any]:
    """Topology changes that run `base`'s host links at host_mbps, every tier in proportion."""
    spec = load_spec(base)
    factor = host_mbps / spec.links.host.rate_mbps
    out: dict[str, Any] = {}
    for tier in ("host", "rtsw_ctsw", "ctsw_atsw"):
        if tier == "ctsw_atsw" and not spec.atsws:
            continue
        out[f"links.{tier}.rate_mbps"] = round(getattr(spec.links, tier).rate_mbps * factor, 6)
    return out


def fabric_changes(base: Path, *, pfc: bool = True, host_mbps: float = RATE_MBPS
                   ) -> dict[str, Any]:
    """The experiments' fabric from a preset: its rates scaled to host_mbps, `QUEUE` queues."""
    changes = rates(base, host_mbps)
    tiers = tuple(k.split(".")[1] for k in changes)
    return {**changes, **lossless(tiers, pfc=pfc)}


def ack_timeout_ms(host_mbps: float = RATE_MBPS, *, hops: int = 3,
                   queue: int | None = None) -> float:
    """The RC ACK timeout: the smallest NCCL_IB_TIMEOUT (4.096 us x 2^k, k >= 14) above the
    time `hops` full switch queues of full frames take to drain at the host rate."""
    depth = queue if queue is not None else int(QUEUE["queue"])
    worst = hops * depth * FRAME_BYTES * 8 / (host_mbps * 1e6)
    k = max(14, math.ceil(math.log2(worst / 4.096e-6)))
    return 4.096e-3 * 2**k


def lossless(tiers: tuple[str, ...] = ("host", "rtsw_ctsw"), *, pfc: bool = True
             ) -> dict[str, Any]:
    """The topology changes that give every tier `QUEUE` (PFC on or off)."""
    out: dict[str, Any] = {}
    for t in tiers:
        out[f"links.{t}.queue"] = QUEUE["queue"]
        out[f"links.{t}.pfc"] = {**QUEUE["pfc"], "enabled": pfc}
    return out


SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "qp-scaling": {
        "full": {"size": 512 * KiB, "message_size": 4 * KiB, "qps": [1, 2, 4, 8],
                 "admission": False, "repeat": 2, "timeout": 300},
        "quick": {"size": 64 * KiB, "message_size": 4 * KiB, "qps": [1, 8],
                  "admission": False, "repeat": 1, "timeout": 120},
    },
    "pinning": {
        "full": {"size": 256 * KiB, "message_size": 4 * KiB, "qps": 8, "repeat": 2,
                 "timeout": 300},
        "quick": {"size": 64 * KiB, "message_size": 1 * KiB, "qps": 8, "repeat": 1,
                  "timeout": 120},
    },
    "incast": {
        "full": {"size": 96 * KiB, "senders": [3, 7], "repeat": 2, "timeout": 300},
        "quick": {"size": 64 * KiB, "senders": [3], "repeat": 1, "timeout": 120},
    },
    "failure": {
        "full": {"size": 256 * KiB, "message_size": 2 * KiB, "qps": 8, "repeat": 2,
                 "timeout": 300, "fail_at": 0.3},
        "quick": {"size": 64 * KiB, "message_size": 512, "qps": 8, "repeat": 1,
                  "timeout": 120, "fail_at": 0.3},
    },
    "placement": {
        "full": {"size": 256 * KiB, "message_size": 4 * KiB, "qps": 4, "ranks": [4, 8],
                 "seeds": [0, 1], "repeat": 2, "timeout": 300},
        "quick": {"size": 64 * KiB, "message_size": 1 * KiB, "qps": 4, "ranks": [4],
                  "seeds": [0], "repeat": 1, "timeout": 120},
    },
}


def sizes_for(name: str, quick: bool) -> dict[str, Any]:
    """The sizes experiment `name` runs with (a copy)."""
    try:
        return copy.deepcopy(SIZES[name]["quick" if quick else "full"])
    except KeyError:
        raise ValueError(f"no sizes for experiment {name!r}") from None


# Ranks of each experiment's largest collective (its module docstring says which job) and the
# fabrics it brings up.
RANKS = {"qp-scaling": 16, "pinning": 8, "failure": 16, "placement": 8}
BRINGUPS = {"qp-scaling": 1, "pinning": 1, "incast": 2, "failure": 1, "placement": 1}


def grid_runs(name: str, quick: bool = False) -> int:
    """How many collectives experiment `name` runs (grid points x repeats)."""
    sz = sizes_for(name, quick)
    points = {
        "qp-scaling": lambda: 2 * len(sz["qps"]) * 2,  # mode x QPs x strategy
        "pinning": lambda: 3 * 4,  # job x (pin, ecmp, eecmp 1 QP, eecmp N QPs)
        "incast": lambda: 2 * 2 * len(sz["senders"]),  # PFC x admission x senders
        "failure": lambda: 3 * 3,  # (pin, ecmp, eecmp) x (none, admin, silent)
        "placement": lambda: len(sz["ranks"]) * (2 + len(sz["seeds"])),
    }[name]()
    return points * int(sz["repeat"])


def ideal_seconds(name: str, quick: bool = False, host_mbps: float = RATE_MBPS) -> float:
    """The largest collective's time at the host line rate with every link evenly loaded:
    a ring AllReduce sends 2(N-1)/N x size per rank, an incast N x size into one NIC."""
    sz = sizes_for(name, quick)
    if name == "incast":
        nbytes = max(sz["senders"]) * sz["size"]
    else:
        n = RANKS[name]
        nbytes = 2 * (n - 1) / n * sz["size"]
    return nbytes * FRAME_BYTES / MTU * 8 / (host_mbps * 1e6)


def budget_seconds(runs: int, seconds_per_run: float, bringups: int,
                   bringup_s: float = 15.0) -> float:
    """How long a grid takes: runs x (its time + ~2 s of start barrier and counter reads)."""
    return runs * (seconds_per_run + 2.0) + bringups * bringup_s


# A run's time over its ideal, for the budget: an uplink with twice the mean load (ECMP, 1 QP)
# halves the ring's rate; each of a ring's 2(N-1) steps waits a round trip for its last ACK.
SLACK = 2.0


def _capacity_lines() -> list[str]:
    lines = []
    for target in ("p4switch", "bmv2"):
        got = CAPACITY.get(target)
        if not got:
            lines.append(f"- {target}: not measured for this page (run `{CAPACITY['command']}`).")
            continue
        parts = []
        for key, what in (("capacity", "lossless"), ("capacity_at_rate", "lossless and at rate")):
            cap = got.get(key)
            if not cap:
                parts.append(f"{what}: no level")
                continue
            parts.append(f"{what}: **{cap['carried_mbps']:.1f} emulated Mb/s** "
                         f"({cap['switch_pps']:,} switch frames/s; {cap['nics']} NICs at "
                         f"{cap['rate_mbps']:g} Mb/s, machine CPU {cap['machine_cpu']:.0%})")
        lines.append(f"- {target}: " + "; ".join(parts) + "."
                     + (f" {got['note']}" if got.get("note") else ""))
    if CAPACITY.get("when"):
        lines.append(f"- Measured by `{CAPACITY['command']}`, {CAPACITY['when']}; each level "
                     "is a permutation whose every flow crosses the spine, uplinks at 4x the "
                     "host rate (no emulated link is the bottleneck), 2 s of data per flow.")
    rows = []
    for target in ("p4switch", "bmv2"):
        for r in (CAPACITY.get(target) or {}).get("levels", []):
            rate, nics, carried, pps, loss, drops, cpu, lossless, at_rate = r
            rows.append(f"| {target} | {rate:g} | {nics} | {rate * nics:g} | {carried:.1f} | "
                        f"{pps:,} | {loss:.3%} | {drops} | {cpu:.0%} | "
                        f"{'yes' if lossless else '**no**'} | {'yes' if at_rate else 'no'} |")
    if rows:
        lines += ["", "| target | host Mb/s | NICs | offered Mb/s | carried Mb/s | switch "
                  "frames/s | loss on cables | queue drops | machine CPU | lossless | at rate "
                  "(>= 90%) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|", *rows]
    return lines


def _rate_reason() -> str:
    """Why RATE_MBPS, from the capacity levels when they were measured."""
    levels = (CAPACITY.get("p4switch") or {}).get("levels") or []
    full = next((r for r in levels if r[0] == RATE_MBPS and r[1] == 16), None)
    faster = [r for r in levels if r[0] > RATE_MBPS and not r[8]]
    if full is None:
        return ("the fabric capacity was not measured for this page; the rate is the one the "
                "experiments were sized for.")
    text = (f"`bench/fabric_capacity.py` (below) found p4switch carrying all 16 NICs of "
            f"ai_zone_small at {RATE_MBPS:g} Mb/s at rate ({full[2]:.1f} of "
            f"{16 * RATE_MBPS:g} Mb/s, {full[3]:,} switch frames/s, machine CPU {full[6]:.0%})")
    if faster:
        r = min(faster, key=lambda x: (x[0], x[1]))
        text += (f", but not {r[1]} NICs at {r[0]:g} Mb/s ({r[2]:.1f} of {r[0] * r[1]:g} "
                 f"Mb/s, machine CPU {r[6]:.0%})")
    return (text + f": {RATE_MBPS:g} Mb/s is the fastest host rate tried at which the whole "
            "fabric runs at line rate here, so the experiments run at it, and their heaviest "
            "collectives sit close to what this machine can emulate (the per-run checks below "
            "say when one did not keep up).")


def derivation_markdown() -> str:
    """How the sizes follow from the capacity and the fabric (a section of docs/results.md)."""
    frame_ms = FRAME_BYTES * 8 / (RATE_MBPS * 1e6) * 1e3
    queue_s = int(QUEUE["queue"]) * frame_ms / 1e3
    ato = ack_timeout_ms()
    k = round(math.log2(ato / 4.096e-3))
    pps = 16 * RATE_MBPS * 1e6 / (FRAME_BYTES * 8)
    out = [
        f"Every experiment runs its preset with the host links at **{RATE_MBPS:g} Mb/s** and "
        "every other tier in the preset's ratio to them (ai_zone_small: uplinks at twice the "
        f"host rate, 1:1; two_zones: the ATSW tier at half, 4:1). A host link stands for a "
        f"400 G NIC, so the **scale is {400e3 / RATE_MBPS:,.0f}** (each table says it again, "
        "from the fabric that ran).",
        "",
        "Why this rate. The switches and the hosts' agents share this machine's 2 cores: "
        "6-9 p4switch processes, 8 agents, the controller. With all 16 NICs of "
        f"ai_zone_small sending at {RATE_MBPS:g} Mb/s the hosts emit {pps:,.0f} full frames/s "
        f"and the switches forward about {3 * pps:,.0f}/s (each frame crosses an RTSW, a "
        "CTSW and an RTSW), plus ACKs, every one through a P4 interpreter in Python. "
        + _rate_reason() + " Runs that were CPU-bound anyway (an agent or switch at a full "
        "core, the machine >= 95% busy, >= 0.1% of frames lost on cables rather than at a "
        "switch queue) are flagged, listed under their table and left out of the means.",
        "",
        f"Queues: {QUEUE['queue']} packets per switch egress queue, PFC XOFF/XON "
        f"{QUEUE['pfc']['xoff']}/{QUEUE['pfc']['xon']} on the lossless class: "
        f"{QUEUE['queue']} - 5 x {QUEUE['pfc']['xoff']} = "
        f"{int(QUEUE['queue']) - 5 * int(QUEUE['pfc']['xoff'])} packets of headroom for the "
        "five ingress ports that can feed an RTSW's host port (the presets' 64 with 24/12 "
        "dropped packets with PFC on). A full frame takes "
        f"{frame_ms:.1f} ms on a host link, a full queue {queue_s:.2f} s.",
        "",
        f"RC ACK timeout: {ato / 1e3:.2f} s (NCCL_IB_TIMEOUT={k}: 4.096 us x 2^{k}), the "
        "smallest above the time three full queues take to drain at the host rate "
        f"({3 * queue_s:.2f} s); the transport's 134 ms (NCCL's default, for 400 G links) "
        "would time out on packets that are only queued.",
        "",
        "Step time: a ring step waits for the previous step's last ACK, so its chunk "
        "(bytes per rank / ranks) must take several round trips; the round trip of a full "
        "frame is at least its serialisation on the 4 links of a cross-rack path "
        f"({frame_ms * 3:.0f} ms: two host links, two uplinks at twice the rate).",
        "",
        "QP scaling's messages: with rr a ring step's chunk should hold a message for each "
        f"of the 8 QPs ({SIZES['qp-scaling']['full']['size'] // 16 // KiB} KiB chunks of "
        f"{SIZES['qp-scaling']['full']['message_size'] // KiB} KiB messages), and split's "
        "pieces (a message over the QPs) should not be tiny: the switches' queues and PFC "
        "thresholds count packets, not bytes, so many small packets fill them where as many "
        "bytes in full frames would not (measured on the smoke test's first size, 512 B "
        "messages split over 8 QPs into 64 B pieces: 735 queue drops with PFC on, 116 ACK "
        "timeouts and 51.5 s against 2.8 s for round-robin; a real switch's buffer and "
        "headroom are in bytes).",
        "",
        "Incast: without PFC the root's queue must overflow. N senders at the host rate "
        "fill it at N - 1 times the rate it drains for as long as they send, a peak of "
        "(N - 1)/N of everything sent: 3 senders of "
        f"{SIZES['incast']['full']['size'] // KiB} KiB peak at "
        f"{2 * SIZES['incast']['full']['size'] // MTU} full frames, above the "
        f"{QUEUE['queue']}-packet queue (the issue's N -> 1 at 3 and 7).",
        "",
        "Capacity (`bench/fabric_capacity.py`, the highest aggregate load ai_zone_small "
        "carries with < 0.1% loss not caused by the emulated links):",
        "",
        *_capacity_lines(),
        "",
        "Sizes and the time they should take (`experiments.sizes`; ideal: the largest "
        "collective at line rate with every link evenly loaded; estimate: runs x (ideal x "
        f"{SLACK:g} + 2 s) + 15 s per bring-up):",
        "",
        "| experiment | bytes | message bytes | chunk per ring step | repeats | runs | ideal run "
        "| estimate |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total = 0.0
    for name, by in SIZES.items():
        sz = by["full"]
        runs, ideal = grid_runs(name), ideal_seconds(name)
        est = budget_seconds(runs, ideal * SLACK, BRINGUPS[name])
        total += est
        chunk = "–"
        if name in RANKS:
            c = sz["size"] // RANKS[name]
            chunk = f"{c // KiB} KiB ({c * FRAME_BYTES / MTU * 8 / (RATE_MBPS * 1e6):.2f} s)"
        out.append(f"| {name} | {sz['size'] // KiB} KiB | {sz.get('message_size') or '–'} | "
                   f"{chunk} | {sz['repeat']} | {runs} | {ideal:.1f} s | {est / 60:.1f} min |")
    out += ["", f"Estimate for `aizone experiment all`: {total / 60:.0f} minutes (the measured "
            "time is at the top of this page)."]
    return "\n".join(out) + "\n"
