"""The experiments' sizes, and how they follow from what this machine can emulate.

Every experiment runs its preset with the host links at its target's host
rate, `target_rate(target)`: the fastest rate at which that target carried
the whole fabric at rate, from the capacity the bench measured
(`experiments.capacity.host_rate`); the other tiers keep their ratio to it
(`rates`, `fabric_changes`). The byte sizes were chosen at `RATE_MBPS`
(p4switch's rate) and are the same on every target: a ring step's worth
of round trips does not depend on the rate, only its time does. The
switch queues and PFC thresholds are `lossless`'s: `QUEUE`'s at the host
tier, XOFF/XON scaled with each tier's rate, every queue deep enough for
all that can feed it. Its RC ACK timeout is the fabric's, by the
controller's rule (`controller.jobs.fabric_ack_timeout_ms`, as `aizone run`
sets it): `ack_timeout_ms` for given rates and queues,
`running_ack_timeout_ms` for a fabric that runs, `preset_ack_timeout_ms`
for the experiments' fabric from a preset, `ack_cases` for every kind of
collective the experiments run (`FORMER_ACK_TIMEOUT_MS`, `former_ack_note`:
the experiments' own rule before, which the committed results used). The
grids and bytes (`SIZES`) are chosen so that:

- the load sits well inside what this machine emulates (the figures
  `bench/fabric_capacity.py` measured, read from its data file by
  `experiments.capacity`), so that a slower run is the emulated fabric's
  doing;
- a ring step's chunk takes several round trips to send at line rate, so
  a step measures bandwidth (and the uplinks' balance), not latency;
- `experiment all` finishes in well under an hour on 2 cores and each
  experiment in minutes (`grid_runs`, `ideal_seconds`, `budget_seconds`).

`derivation_markdown()` writes that reasoning, with the numbers, into
`docs/results.md`. `sizes_for(name, quick)` is what an experiment runs
with (`--quick`: the smallest grid and sizes that still exercise every
path, for the smoke test).

Names defined here: `RATE_MBPS`, `QUEUE`, `LINK_MTU`, `MTU`, `FRAME_BYTES`, `TIERS`,
`HEADROOM`, `SIZES`, `sizes_for`, `target_rate`, `rates`, `fabric_changes`,
`setting_changes`, `delayed_round_trip`, `ran_mtu`, `ran_bytes`, `tier_pfc`, `lossless`, `ack_timeout_ms`, `running_ack_timeout_ms`, `preset_ack_timeout_ms`,
`ack_cases`, `FORMER_ACK_TIMEOUT_MS`, `former_ack_note`, `grid_runs`,
`ideal_seconds`, `budget_seconds`, `derivation_markdown`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.jobs import fabric_ack_timeout_ms, path_queues
from topologies.addressing import AddressPlan, plan_addresses
from topologies.mtu import DEFAULT_MTU, roce_frame, roce_path_mtu
from topologies.spec import FabricSpec, load_spec
from traffic.schema import Transport

from .capacity import CAPACITY_FILE, HostRate, capacity_lines, host_rate, load_capacity, rate_reason
from .fabric import variant_spec
from .schema import ExperimentResult

__all__ = ["FORMER_ACK_TIMEOUT_MS", "FRAME_BYTES", "HEADROOM", "LINK_MTU", "MTU", "QUEUE", "RATE_MBPS", "SIZES", "TIERS",
           "ack_cases", "ack_timeout_ms", "budget_seconds", "delayed_round_trip",
           "derivation_markdown", "fabric_changes", "former_ack_note", "grid_runs",
           "ideal_seconds", "lossless", "preset_ack_timeout_ms", "ran_bytes", "ran_mtu", "ran_path_mtu",
           "rates", "running_ack_timeout_ms", "setting_changes", "sizes_for", "target_rate", "tier_pfc"]

KiB, MiB = 1 << 10, 1 << 20

# The host rate the byte sizes were chosen at: the reference for the step-time reasoning in
# derivation_markdown(); what a run uses is its target's `target_rate`, which the capacity file
# gives. The sizes were first chosen at 1 Mb/s on 1,500-byte links (1,082-byte frames); on the
# presets' jumbo links every frame carries four times the payload, so the same sizes x 4 at
# 4 Mb/s are the same frames at the same frames/s, the load this machine's CPU sees.
RATE_MBPS = 4.0
# The experiments' links take the presets' jumbo IP MTU, so a full data packet is at path MTU
# 4,096 (a 4,154-byte frame, `topologies.mtu.roce_frame`).
LINK_MTU = 9000
MTU = roce_path_mtu(LINK_MTU)
FRAME_BYTES = roce_frame(MTU)

# The lossless class's sizes at the host tier (packets; XOFF/XON in full frames' worth of an
# ingress port's bytes): the presets' 64 with XOFF/XON 24/12 left 64 - 2 x 24 = 16 packets of
# headroom for a queue that two ingress ports feed, and none for three (measured on
# ai_zone_small: 102 tail drops with PFC on in one AllReduce); 128 with 16/8 leaves
# 128 - 5 x 16 = 48 for the five ingress ports an RTSW's host port can have. A full queue holds
# 128 x 4,154 B = 1.06 s at 4 Mb/s (the ACK timeout's reason). Other tiers scale XOFF/XON with
# their rate and every queue holds all that can feed it (`lossless`).
QUEUE: dict[str, Any] = {"queue": 128, "pfc": {"enabled": True, "xoff": 16, "xon": 8}}
# What an ingress port may still take in after its XOFF (frames at the host tier, scaled like
# XOFF): the frames on the wire and in the upstream's transmit path while the PAUSE travels and
# the emulator's processes get the CPU (58 ms at 4 Mb/s, 3x the controller's PFC_RESPONSE_S).
# 7 and not more: ai_zone_small's host queue is then 3 x 23 + 2 x 46 = 161 packets, under the
# 172 whose three drain at 4 Mb/s within 2^20 x 4.096 us (4.29 s), the RC ACK timeout a job of
# one QP per peer gets there.
HEADROOM = 7


# What `ack_timeout_ms` gave every experiment run before the experiments took the fabric's rule
# (3 full `QUEUE` queues of 1,082-byte frames drained at 1 Mb/s, k >= 14: 2^20): the committed
# results were measured with it, and say so where they show a timeout.
FORMER_ACK_TIMEOUT_MS = 4.096e-3 * 2**20
_PRESETS = Path(__file__).resolve().parents[1] / "topologies"
TIERS = ("host", "rtsw_ctsw", "ctsw_atsw")


def target_rate(target: str, path: Path = CAPACITY_FILE) -> HostRate:
    """The host rate `target`'s experiments run at, from the capacity file at `path`: its newest
    levels measured at `LINK_MTU` (`experiments.capacity.host_rate`; `CapacityError` when it
    cannot say)."""
    return host_rate(load_capacity(path), target, LINK_MTU)


def rates(base: Path, host_mbps: float = RATE_MBPS) -> dict[str, Any]:
    """Topology changes that run `base`'s host links at host_mbps, every tier in proportion."""
    spec = load_spec(base)
    factor = host_mbps / spec.links.host.rate_mbps
    out: dict[str, Any] = {}
    for tier in TIERS:
        if tier == "ctsw_atsw" and not spec.atsws:
            continue
        out[f"links.{tier}.rate_mbps"] = round(getattr(spec.links, tier).rate_mbps * factor, 6)
    return out


def fabric_changes(base: Path, *, pfc: bool = True, host_mbps: float = RATE_MBPS,
                   buffer: str = "packets", latency: bool = False) -> dict[str, Any]:
    """The experiments' fabric from a preset: its rates scaled to host_mbps, its links at
    `LINK_MTU`, its queues and PFC thresholds from `lossless`, and
    `setting_changes(buffer, latency)`."""
    changes = {**rates(base, host_mbps), "mtu": LINK_MTU}
    return {**changes, **lossless(variant_spec(base, changes), pfc=pfc),
            **setting_changes(buffer, latency)}


def setting_changes(buffer: str = "packets", latency: bool = False) -> dict[str, Any]:
    """The topology changes of `aizone experiment --buffer/--latency` (none for the presets'
    own: packets, no delay): with `buffer` "bytes" p4switch's buffer counted in bytes
    (`buffer.accounting`: the same queues and thresholds, as RoCE frames' bytes); with
    `latency` every hop delayed by the real fabric's propagation and switch latency times the
    fabric's scale (a `latency:` section with its defaults, `topologies.latency`)."""
    return {**({} if buffer == "packets" else {"buffer.accounting": buffer}),
            **({"latency": {}} if latency else {})}


def delayed_round_trip(host_mbps: float = RATE_MBPS, mtu: int = LINK_MTU
                       ) -> tuple[float, int, int]:
    """With `--latency` at `host_mbps` on links of IP MTU `mtu`: the farthest hosts' round trip
    on the experiments' ai_zone_small (s), the full frames a NIC has in flight over it, and
    the RC window."""
    base = _PRESETS / "ai_zone_small.yaml"
    plan = plan_addresses(variant_spec(base, {**fabric_changes(base, host_mbps=host_mbps,
                                                               latency=True), "mtu": mtu}))
    frames = math.ceil(host_mbps * 1e6 / 8 * plan.delayed_rtt_s / plan.roce_frame)
    return plan.delayed_rtt_s, frames, Transport().window


def ran_mtu(result: ExperimentResult) -> int:
    """The links' IP MTU an experiment's runs had: its fabric's `mtu`, as the daemon's status
    gave it (results from before fabrics had one ran at the default, 1,500)."""
    return int(result.scale.get("mtu") or DEFAULT_MTU)


def ran_path_mtu(result: ExperimentResult) -> int:
    """The RoCE path MTU (a data packet's payload) an experiment's runs had: the largest
    InfiniBand MTU their links' IP MTU (`ran_mtu`) carries with the RoCEv2 headers."""
    return roce_path_mtu(ran_mtu(result))


def ran_bytes(result: ExperimentResult) -> int | None:
    """The bytes each rank (or, in an incast, each sender) sent in an experiment's runs, as
    its `sizes` record them: what `sizes_for(...)["size"]` gave it (None: not recorded)."""
    got = result.sizes.get("bytes per rank", result.sizes.get("bytes per sender"))
    return None if got is None else int(got)


def ack_timeout_ms(rates: dict[str, float], queues: dict[str, int], *, atsw: bool,
                   fan_in: int = 1, rtt_ms: float = 0.0, frame_bytes: int = FRAME_BYTES) -> float:
    """The RC ACK timeout (ms) `aizone run` gives a job on a fabric: the controller's rule,
    `controller.jobs.fabric_ack_timeout_ms`, over the fabric's link tiers (`rates` in Mb/s,
    `queues` in packets), the switch queues of its longest path (three, five through an ATSW,
    as the daemon counts them), all that `fan_in` QPs sending to one NIC can have in
    flight (`fan_in` x the RC window) and `rtt_ms`, the round trip its scaled `latency:`
    adds (`AddressPlan.delayed_rtt_s`); `frame_bytes`: a full frame at the links' path MTU."""
    return fabric_ack_timeout_ms(rates, queues, path_queues(atsw),
                                 fan_in * Transport().window, rtt_ms=rtt_ms,
                                 frame_bytes=frame_bytes)


def running_ack_timeout_ms(spec: FabricSpec, plan: AddressPlan, fan_in: int = 1) -> float:
    """`ack_timeout_ms` for a fabric that runs: the tiers its links use, their rates and
    queues as its topology file gives them, and the round trip of its `latency:`."""
    used = {lk.tier for lk in plan.links}
    tiers = [t for t in TIERS if t in used]
    return ack_timeout_ms({t: getattr(spec.links, t).rate_mbps for t in tiers},
                          {t: getattr(spec.links, t).queue for t in tiers},
                          atsw=bool(spec.atsws), fan_in=fan_in,
                          rtt_ms=plan.delayed_rtt_s * 1e3, frame_bytes=plan.roce_frame)


def preset_ack_timeout_ms(base: Path, fan_in: int = 1, host_mbps: float = RATE_MBPS) -> float:
    """`ack_timeout_ms` for the experiments' fabric made from preset `base`
    (`fabric_changes`: its rates scaled to host_mbps, the queues `lossless` gives)."""
    changes = fabric_changes(base, host_mbps=host_mbps)
    scaled = {k.split(".")[1]: float(v) for k, v in changes.items() if k.endswith(".rate_mbps")}
    queues = {k.split(".")[1]: int(v) for k, v in changes.items() if k.endswith(".queue")}
    return ack_timeout_ms(scaled, queues, atsw="ctsw_atsw" in scaled, fan_in=fan_in)


def _scales(spec: FabricSpec, plan: AddressPlan) -> dict[str, float]:
    """Each tier `plan`'s links use, in `TIERS` order: its rate over the host tier's."""
    host = spec.links.host.rate_mbps
    return {t: getattr(spec.links, t).rate_mbps / host
            for t in sorted({lk.tier for lk in plan.links}, key=TIERS.index)}


def _thresholds(scales: dict[str, float]) -> dict[str, tuple[int, int]]:
    xoff, xon = int(QUEUE["pfc"]["xoff"]), int(QUEUE["pfc"]["xon"])
    return {t: (max(2, round(xoff * k)), max(1, round(xon * k))) for t, k in scales.items()}


def tier_pfc(spec: FabricSpec) -> dict[str, tuple[int, int]]:
    """(XOFF, XON) of each tier `spec`'s links use: `QUEUE`'s at the host tier, scaled by the
    tier's rate over the host tier's, so that every link pauses after the same time's worth of
    its traffic (at least 2/1). A fixed count trips early on fast links: 16 frames are 69 ms of
    a 2-Mb/s uplink, which the emulator's stalls on 2 cores fill (measured on BMv2 at 16 NICs
    x 0.5 Mb/s: 4 of 10 runs at rate with 16/8 on the uplinks, 10 of 10 with 64/32)."""
    return _thresholds(_scales(spec, plan_addresses(spec)))


def lossless(spec: FabricSpec, *, pfc: bool = True) -> dict[str, Any]:
    """The topology changes that make `spec`'s lossless class lossless (PFC on or off, the same
    queues): every tier's XOFF/XON from `tier_pfc`, and every queue deep enough for all the ports
    that can feed it to sit at XOFF with `HEADROOM` more (scaled like XOFF) at once, at least
    `QUEUE`'s: the busiest port of any switch sizes its tier's queue."""
    plan = plan_addresses(spec)
    scales = _scales(spec, plan)
    thresholds = _thresholds(scales)
    take = {t: xoff + max(1, round(HEADROOM * scales[t])) for t, (xoff, _) in thresholds.items()}
    queue = dict.fromkeys(thresholds, int(QUEUE["queue"]))
    for sw in plan.switches:
        total = sum(take[p.tier] for p in sw.ports)
        for p in sw.ports:
            queue[p.tier] = max(queue[p.tier], total - take[p.tier])
    out: dict[str, Any] = {}
    for t, (xoff, xon) in thresholds.items():
        out[f"links.{t}.queue"] = queue[t]
        out[f"links.{t}.pfc"] = {"enabled": pfc, "xoff": xoff, "xon": xon}
    return out


SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "qp-scaling": {
        "full": {"size": 2048 * KiB, "message_size": 16 * KiB, "qps": [1, 2, 4, 8],
                 "admission": False, "repeat": 2, "timeout": 300},
        "quick": {"size": 256 * KiB, "message_size": 16 * KiB, "qps": [1, 8],
                  "admission": False, "repeat": 1, "timeout": 120},
    },
    "pinning": {
        "full": {"size": 1024 * KiB, "message_size": 16 * KiB, "qps": 8, "repeat": 2,
                 "timeout": 300},
        "quick": {"size": 256 * KiB, "message_size": 4 * KiB, "qps": 8, "repeat": 1,
                  "timeout": 120},
    },
    "incast": {
        "full": {"size": 384 * KiB, "senders": [3, 7], "repeat": 2, "timeout": 300},
        "quick": {"size": 256 * KiB, "senders": [3], "repeat": 1, "timeout": 120},
    },
    "failure": {
        "full": {"size": 1024 * KiB, "message_size": 8 * KiB, "qps": 8, "repeat": 2,
                 "timeout": 300, "fail_at": 0.3},
        "quick": {"size": 256 * KiB, "message_size": 2 * KiB, "qps": 8, "repeat": 1,
                  "timeout": 120, "fail_at": 0.3},
    },
    "placement": {
        "full": {"size": 1024 * KiB, "message_size": 16 * KiB, "qps": 4, "ranks": [4, 8],
                 "seeds": [0, 1], "repeat": 2, "timeout": 300},
        "quick": {"size": 256 * KiB, "message_size": 4 * KiB, "qps": 4, "ranks": [4],
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


def _ib_k(ms: float) -> int:
    """k of an ACK timeout of 4.096 us x 2^k."""
    return round(math.log2(ms / 4.096e-3))


def ack_cases(host_mbps: float = RATE_MBPS) -> list[tuple[str, str, int, float]]:
    """(fabric, collective, fan-in, ACK timeout in ms) of every kind of collective the
    experiments run (their full sizes): rings with each QP count, incasts with each number
    of senders, on the fabric each runs on."""
    ring_qps = sorted({1, *SIZES["qp-scaling"]["full"]["qps"], SIZES["pinning"]["full"]["qps"],
                       SIZES["failure"]["full"]["qps"]})
    small, zones = _PRESETS / "ai_zone_small.yaml", _PRESETS / "two_zones.yaml"
    cases = [("ai_zone_small", f"ring, {q} QP{'s' if q > 1 else ''} per peer"
              + ("; one flow (calibration)" if q == 1 else ""), q, small) for q in ring_qps]
    cases += [("ai_zone_small", f"incast, {n} senders", n, small)
              for n in SIZES["incast"]["full"]["senders"]]
    q = SIZES["placement"]["full"]["qps"]
    cases += [("two_zones", f"ring, {q} QP{'s' if q > 1 else ''} per peer (placement)", q, zones)]
    return [(f, what, n, preset_ack_timeout_ms(base, n, host_mbps)) for f, what, n, base in cases]


def former_ack_note() -> str:
    """What the experiments' former ACK-timeout rule gave every run, against the fabric's rule
    they take now (the results page says it above results measured with the former)."""
    same = [f"{what} on {fabric}" for fabric, what, _, ms in ack_cases()
            if math.isclose(ms, FORMER_ACK_TIMEOUT_MS)]
    other = [f"{what} on {fabric} {ms / 1e3:.2f} s" for fabric, what, _, ms in ack_cases()
             if not math.isclose(ms, FORMER_ACK_TIMEOUT_MS)]
    return ("These results were measured with the experiments' former RC ACK timeout: "
            f"{FORMER_ACK_TIMEOUT_MS / 1e3:.2f} s for every run (4.096 us x "
            f"2^{_ib_k(FORMER_ACK_TIMEOUT_MS)}: three full {QUEUE['queue']}-packet queues of "
            "1,082-byte frames drained at the 1 Mb/s host rate of the time). Runs made now "
            "take the fabric's, as "
            "`aizone run` does (see \"RC ACK timeout\" below), which is the same "
            + (f"for {', '.join(same)}" if same else "for none of them")
            + (f" and longer for the rest: {'; '.join(other)}." if other else ".")
            + " Collectives that lose packets (no PFC, a failed link) wait longer to resend "
            "under it.")


def derivation_markdown(targets: Sequence[str] = ("p4switch",),
                        capacity_file: Path = CAPACITY_FILE) -> str:
    """How the sizes follow from the capacity and the fabric, for each target the page shows
    (a section of docs/results.md); `CapacityError` when the capacity file
    (`experiments.capacity`) is missing or malformed, or says no rate for a target."""
    capacity = load_capacity(capacity_file)
    chosen = [host_rate(capacity, t, LINK_MTU) for t in targets]
    frame_ms = FRAME_BYTES * 8 / (RATE_MBPS * 1e6) * 1e3
    small = fabric_changes(_PRESETS / "ai_zone_small.yaml")
    small_up = small["links.rtsw_ctsw.pfc"]["xoff"], small["links.rtsw_ctsw.pfc"]["xon"]
    queue_s = int(small["links.host.queue"]) * frame_ms / 1e3
    pps = 16 * RATE_MBPS * 1e6 / (FRAME_BYTES * 8)
    each = ", ".join(f"{_shown(c.target)} **{c.rate_mbps:g} Mb/s** (scale "
                     f"{400e3 / c.rate_mbps:,.0f})" for c in chosen)
    out = [
        "Every experiment runs its preset with the host links at its target's host rate "
        f"({each}) and every other tier in the preset's ratio to them (ai_zone_small: "
        "uplinks at twice the host rate, 1:1; two_zones: the ATSW tier at half, 4:1). A host "
        "link stands for a 400 G NIC, so the scale is 400 G over the host rate (each table "
        "says it again, from the fabric that ran). The bytes are the same on every target; "
        f"the figures below are worked out at {RATE_MBPS:g} Mb/s.",
        "",
        "Why this rate. The switches and the hosts' agents share this machine's 2 cores: "
        "6-9 switch processes, 8 agents, the controller. With all 16 NICs of "
        f"ai_zone_small sending at {RATE_MBPS:g} Mb/s the hosts emit {pps:,.0f} full frames/s "
        f"and the switches forward about {3 * pps:,.0f}/s (each frame crosses an RTSW, a "
        "CTSW and an RTSW), plus ACKs: on p4switch every one through a P4 interpreter in "
        "Python. " + " ".join(rate_reason(capacity, c) for c in chosen)
        + " Runs that were CPU-bound anyway (an agent or p4switch process at a full core, the "
        "machine >= 95% busy, >= 0.1% of frames lost on cables rather than at a switch queue) "
        "are flagged, listed under their table and left out of the means.",
        "",
        "Queues and PFC (`experiments.sizes.lossless`), on the lossless class: XOFF/XON "
        f"{QUEUE['pfc']['xoff']}/{QUEUE['pfc']['xon']} full frames' worth of an ingress port's "
        f"bytes ({int(QUEUE['pfc']['xoff']) * FRAME_BYTES:,}/"
        f"{int(QUEUE['pfc']['xon']) * FRAME_BYTES:,} B; the programs' PFC and p4switch's "
        "count bytes per ingress port) on host links and in proportion to the rate on the "
        f"others ({small_up[0]}/{small_up[1]} on ai_zone_small's uplinks at twice the host "
        "rate): every link pauses after the same time's worth of its traffic. With 16/8 "
        "everywhere, 16 frames of an uplink four times the host rate were 69 ms at 0.5 Mb/s, "
        "which the emulator's stalls fill: BMv2 carried the 16-NIC level at rate in 6 of 10 "
        "runs, with 64/32 on the uplinks in 10 of 10. Every queue holds all the ports that can "
        f"feed its busiest port at XOFF plus {HEADROOM} frames of headroom each (scaled "
        f"likewise), at least {QUEUE['queue']} packets: ai_zone_small's host ports "
        f"{small['links.host.queue']} (3 NICs x {int(QUEUE['pfc']['xoff']) + HEADROOM} + 2 "
        f"uplinks x {small_up[0] + 2 * HEADROOM}), its uplinks {small['links.rtsw_ctsw.queue']} (the presets' 64 "
        "with 24/12 dropped packets with PFC on; with PFC on, BMv2's lossless queues are "
        "1,024 deep whatever the tier says, its PFC holding packets round a loop: "
        "docs/bmv2.md). A full frame takes "
        f"{frame_ms:.1f} ms on a host link, a full host queue {queue_s:.2f} s.",
        "",
        "RC ACK timeout: the fabric's, as `aizone run` sets it "
        "(`controller.jobs.fabric_ack_timeout_ms`): the smallest 4.096 us x 2^k (k >= 15) "
        "above the time the switch queues of the longest path (three; five through an ATSW) "
        "take to drain when full, and above twice the time all that a job can have in flight "
        "towards one NIC takes (its fan-in, the QPs that send to one NIC in one step, x the "
        f"RC window of {Transport().window} packets: PFC holds those packets rather than "
        "dropping them), both at the slowest tier's rate. The transport's 134 ms (NCCL's "
        "default, for 400 G links) would time out on packets that are only queued. For the "
        "experiments' collectives:",
        "",
        *_ack_table(chosen),
        "",
        "Step time: a ring step waits for the previous step's last ACK, so its chunk "
        "(bytes per rank / ranks) must take several round trips; the round trip of a full "
        "frame is at least its serialisation on the 4 links of a cross-rack path "
        f"({frame_ms * 3:.0f} ms: two host links, two uplinks at twice the rate).",
        "",
        "QP scaling's messages: with rr a ring step's chunk should hold a message for each "
        f"of the 8 QPs ({SIZES['qp-scaling']['full']['size'] // 16 // KiB} KiB chunks of "
        f"{SIZES['qp-scaling']['full']['message_size'] // KiB} KiB messages), and split's "
        "pieces (a message over the QPs) should not be tiny: the switches' queues hold "
        "packets, not bytes (the programs' PFC thresholds count bytes, as a real switch's "
        "buffer and headroom do), so many small packets fill a queue where as many bytes in "
        "full frames would not (measured on the smoke test's first size, when PFC counted "
        "packets too: 512 B messages split over 8 QPs into 64 B pieces gave 735 queue drops "
        "with PFC on, 116 ACK timeouts and 51.5 s against 2.8 s for round-robin). This "
        "page's p4switch runs count packets, the presets' accounting. Split is the emulator's "
        "costliest point: over 8 QPs it sends twice rr's packets for the same bytes and keeps "
        "the machine over 90 % busy where rr keeps it under 80 % (qp-scaling's notes give "
        "each point's load), so its time follows the CPU the switches get; qp-scaling's table "
        "says whether more QPs still made it faster on this page's run. The same grid at "
        "these sizes counted in bytes, as a real switch's buffer is (`aizone experiment "
        "qp-scaling --buffer bytes`, docs/p4switch.md \"The buffer\", results in "
        "docs/results/bytes/), measured split at 8 QPs at 13.6 s (its other run CPU-bound, "
        "13.8) against 12.5-14.9 s counted in packets, its PAUSEs down from 423-963 a run to "
        "0-10: the accounting was not what held split back. BMv2's verdicts are its own "
        "runs' (docs/results/bmv2/).",
        "",
        "Incast: without PFC the root's queue must overflow. N senders at the host rate "
        "fill it at N - 1 times the rate it drains for as long as they send, a peak of "
        "(N - 1)/N of everything sent: 3 senders of "
        f"{SIZES['incast']['full']['size'] // KiB} KiB peak at "
        f"{2 * SIZES['incast']['full']['size'] // MTU} full frames, above the "
        f"{small['links.host.queue']}-packet host queue (the issue's N -> 1 at 3 and 7).",
        "",
        "Capacity (`bench/fabric_capacity.py`, the highest aggregate load ai_zone_small "
        "carries with < 0.1% loss not caused by the emulated links):",
        "",
        *capacity_lines(capacity),
        "",
        "Sizes and the time they should take (`experiments.sizes`; ideal: the largest "
        "collective at line rate with every link evenly loaded; estimate: runs x (ideal x "
        f"{SLACK:g} + 2 s) + 15 s per bring-up):",
        "",
        *_size_table(chosen),
    ]
    return "\n".join(out) + "\n"


def _shown(target: str) -> str:
    return {"bmv2": "BMv2"}.get(target, target)


def _ack_table(chosen: Sequence[HostRate]) -> list[str]:
    """The ACK timeout of every kind of collective, a column per target's host rate."""
    cols = [ack_cases(c.rate_mbps) for c in chosen]
    head = " | ".join(f"ACK timeout ({_shown(c.target)})" for c in chosen)
    lines = [f"| fabric | collective | fan-in | {head} |",
             "|---|---|---:|" + "---:|" * len(chosen)]
    for i, (fabric, what, fan_in, _) in enumerate(cols[0]):
        cells = " | ".join(f"{col[i][3] / 1e3:.2f} s (k = {_ib_k(col[i][3])})" for col in cols)
        lines.append(f"| {fabric} | {what} | {fan_in} | {cells} |")
    return lines


def _size_table(chosen: Sequence[HostRate]) -> list[str]:
    """The sizes, and the ideal run and estimate of each experiment at each target's rate."""
    head = " | ".join(f"ideal run ({_shown(c.target)}) | estimate ({_shown(c.target)})"
                      for c in chosen)
    lines = [f"| experiment | bytes | message bytes | chunk per ring step | repeats | runs | "
             f"{head} |", "|---|---:|---:|---:|---:|---:|" + "---:|---:|" * len(chosen)]
    totals = [0.0] * len(chosen)
    for name, by in SIZES.items():
        sz = by["full"]
        runs = grid_runs(name)
        cells = []
        for i, c in enumerate(chosen):
            ideal = ideal_seconds(name, host_mbps=c.rate_mbps)
            est = budget_seconds(runs, ideal * SLACK, BRINGUPS[name])
            totals[i] += est
            cells.append(f"{ideal:.1f} s | {est / 60:.1f} min")
        chunk = "–"
        if name in RANKS:
            c = sz["size"] // RANKS[name]
            chunk = f"{c // KiB} KiB ({c * FRAME_BYTES / MTU * 8 / (RATE_MBPS * 1e6):.2f} s)"
        lines.append(f"| {name} | {sz['size'] // KiB} KiB | {sz.get('message_size') or '–'} | "
                     f"{chunk} | {sz['repeat']} | {runs} | {' | '.join(cells)} |")
    lines += ["", "Estimate for `aizone experiment all`: " + ", ".join(
        f"{t / 60:.0f} minutes on {_shown(c.target)}" for t, c in zip(totals, chosen, strict=True))
        + " (the measured time is at the top of this page)."]
    return lines
