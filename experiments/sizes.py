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

from topologies.spec import load_spec

__all__ = ["CAPACITY", "FRAME_BYTES", "MTU", "QUEUE", "RATE_MBPS", "SIZES", "ack_timeout_ms",
           "budget_seconds", "derivation_markdown", "fabric_changes", "lossless", "rates",
           "sizes_for"]

KiB, MiB = 1 << 10, 1 << 20

# What `bench/fabric_capacity.py` printed (see docs/results.md for the table).
CAPACITY: dict[str, Any] = {
    "command": "flock /tmp/aizone-net.lock .venv/bin/python bench/fabric_capacity.py",
    "p4switch": None,
    "bmv2": None,
}
# The host links' emulated rate every experiment runs at (the other tiers keep their preset's
# ratio to it): see derivation_markdown().
RATE_MBPS = 1.0
# A full data packet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 1,024 bytes + ICRC 4.
MTU, FRAME_BYTES = 1024, 1082

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
            parts.append(f"{what}: {cap['carried_mbps']:.1f} emulated Mb/s "
                         f"({cap['host_pps']:,} host frames/s, {cap['switch_pps']:,} switch "
                         f"frames/s; {cap['nics']} NICs at {cap['rate_mbps']:g} Mb/s, "
                         f"loss {cap['loss']:.3%}, machine CPU {cap['machine_cpu']:.0%})")
        lines.append(f"- {target} ({got.get('note', '')}): " + "; ".join(parts) + ".")
    return lines


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
        "CTSW and an RTSW), plus ACKs; one p4switch forwards 50,000 frames/s on one core "
        "(`bench/pps.py`, README), so the fabric as a whole stays well below what the "
        "machine can do even when every process wants the CPU at once. Runs that were CPU-"
        "bound anyway (an agent or switch at a full core, the machine >= 95% busy, >= 0.1% "
        "of frames lost on cables rather than at a switch queue) are flagged, listed under "
        "their table and left out of the means.",
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
