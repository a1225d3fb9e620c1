"""The highest aggregate load `ai_zone_small` (or --topology) carries with < 0.1% loss not from its links.

On this machine the switches and the hosts' agents share a few cores, so
there is a load above which the emulator, not the emulated fabric, loses
packets: a switch process or an agent that does not read its socket in
time. This script finds that load, on p4switch and (when
`simple_switch_grpc` and `p4c-bm2-ss` are on PATH) on BMv2 in the same
run, so that the two can be compared at the same moment of this noisy
machine, and the experiments' sizes can be derived from it
(`docs/results.md`).

How. For each target and each host-link rate R (`--rates`, Mb/s; the
uplinks at 4R: an RTSW's 4 NICs fit on one uplink, so however the hash
spreads the flows no emulated link is the bottleneck, and what falls short
is the emulator's doing), a variant of
`ai_zone_small` is brought up (eecmp; the experiments' queues and PFC
thresholds for those rates, `experiments.sizes.lossless`) and loaded with a permutation whose
every flow crosses the spine: 4, 8, then all 16 NICs each send
`--seconds` worth of data at R to a NIC two racks away (4 QPs per flow,
split, a UDP source port per QP, so that the hash spreads them; the RC
ACK timeout the fabric's, as `aizone run` and the experiments set it,
`experiments.collective`). Before
and after each run every switch's `rx_port`/`tx_port`, every agent's NIC
counters and every process's CPU time are read (`experiments.usage`):
the frames that left one end of a cable and did not arrive at the other
are the loss not caused by the emulated links (a link's own loss is its
switch queue's tail drop, counted apart). A level is lossless with
loss below 0.1% and no tail drop at a switch queue (PFC is on: the fabric
is lossless unless the emulator falls behind); it is at rate when it
carried at least 90% of the offered load (an emulator that falls behind
under PFC slows the senders instead of dropping: lossless, but not at line
rate). A rate's ladder stops at its first level that is not lossless, the
search at the first rate whose smallest level is not. Two capacities: the
highest load (goodput in frame bytes, and packets/s) of a lossless level,
the issue's figure, and of a lossless level at rate, the one the
experiments' sizes come from.

With `--write` the run is appended to the capacity data file,
`docs/results/capacity.json` (`experiments.capacity`: the command, the
date, the machine and every level per target), which the experiments'
sizes and the results page read; commit it with the results.

Run it as root under the fabric lock:

    flock /tmp/aizone-net.lock .venv/bin/python bench/fabric_capacity.py \
        [--targets p4switch,bmv2] [--rates 1,2,5,10] [--seconds 3] [--json] [--write [FILE]]
        [--servers localhost,B,... | --namespace-server] [--topology topologies/ai_zone.yaml]
        [--mtu 9000]

The links keep the topology's MTU (`FabricSpec.mtu`; the presets' jumbo 9,000: RoCE path
MTU 4,096, 4,154-byte frames, about 3.8 times the bytes of a 1,082-byte frame for the same
switch CPU, `bench/pps.py --only sizes`) unless `--mtu` says otherwise (`--mtu 1500`:
frames of 1,082 bytes, what the experiments ran with until 2026-12-05); the standalone
switch forwards frames of the same size. `--write` measures at the experiments' MTU
(`experiments.sizes.LINK_MTU`), the capacity their sizes come from.

After each target's ladder (unless `--no-standalone`), one switch of that
target alone (`bench/pps.py`'s `standalone_cpu`: rtsw.p4 on two veths,
p4switch with the fabric's traffic-manager flags, full RoCEv2 frames) is
offered, for each level, the frames per second one switch of the fabric
took in there, and its CPU per frame is printed beside the fabric's, with
the ratio: what being one of many processes in a fabric costs a switch, at
the same load, measured in the same run. Part of the fabric's figure is
not the frames' doing: before each rate's ladder the switches' CPU is read
for `IDLE_SECONDS` with the fabric up and no traffic (the daemon's link
probes and statistics reads over P4Runtime), and each level shows that
idle cost spread over its frames (`idle_cpu_us`) and the ratio without it
(`busy_over_standalone`); the ratio with it (`fabric_over_standalone`)
stays the issue's figure.

`--topology` loads another fabric of the same shape (racks of 4 NICs) the
same way (`load_levels`: the first hosts of two racks half the fabric apart, the
first host of every rack, every host): `ai_zone` over two servers against
one (docs/scale-out.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from controller.errors import ControllerError
from experiments.capacity import CAPACITY_FILE, CapacityError, add_measurement
from experiments.collective import Collective, run_collective, uses_api
from experiments.fabric import Fabric, variant, variant_spec
from experiments.sizes import LINK_MTU, lossless
from experiments.sizes import MTU as DEFAULT_PATH_MTU
from experiments.usage import Usage
from topologies.errors import NetworkError
from topologies.mtu import MAX_MTU, roce_path_mtu
from topologies.servernames import servers_argument
from topologies.spec import SpecError, load_spec
from topologies.targets import target_missing

REPO = Path(__file__).resolve().parents[1]

BASE = REPO / "topologies" / "ai_zone_small.yaml"
LOSS_LIMIT = 0.001
# A fabric that loses nothing but runs below the offered load is limited too: PFC turns the
# emulator's lateness into back-pressure instead of loss. A level must carry this share of
# what the NICs offer (goodput: the application bytes delivered, in the frames that carry
# them, over the job's span).
MIN_CARRIED = 0.9
# Seconds the switches' CPU is read with the fabric up and no traffic, before each rate's ladder.
IDLE_SECONDS = 5.0


def load_levels(plan: Any) -> tuple[tuple[str, ...], ...]:
    """The loads to try, smallest first, as the hosts that send: the first host of the first
    rack and of the middle one; the first host of every rack; every host. Every flow crosses
    the spine: a permutation sends rank r to rank r + n/2 (ranks are the hosts' NICs in
    order), and the hosts are listed rack by rack, so r and r + n/2 sit in racks half the
    fabric apart (on `ai_zone_small`: h1, h5; h1, h3, h5, h7; h1..h8)."""
    racks: dict[tuple[int, int], list[str]] = {}
    for h in plan.hosts:
        racks.setdefault((h.zone, h.rack), []).append(h.name)
    rows = [racks[k] for k in sorted(racks)]
    half = len(rows) // 2
    first = (rows[0][0], rows[half][0])
    every_rack = tuple(r[0] for r in rows)
    every_host = tuple(n for r in rows for n in r)
    return tuple(dict.fromkeys((first, every_rack, every_host)))


def idle_switch_cpu(fabric: Fabric, seconds: float = IDLE_SECONDS) -> float | None:
    """The cores the fabric's switch processes use with no traffic, over `seconds` (the
    daemon's link probes and statistics reads over P4Runtime, the switches' gRPC threads);
    None when not every switch's CPU is read here (a fabric over servers)."""
    before = fabric.sample()
    time.sleep(seconds)
    after = fabric.sample()
    use = Usage.of(fabric.plan, before, after)
    if len(use.switch_cpu) != len(fabric.plan.switches):
        return None
    return sum(use.switch_cpu.values())


def measure(fabric: Fabric, hosts: tuple[str, ...], rate: float, seconds: float,
            idle_cores: float | None = None) -> dict[str, Any]:
    size = int(rate * 1e6 / 8 * seconds)
    nics = tuple(n.intf for h in hosts for n in fabric.plan.host(h).nics)
    coll = Collective(pattern="permutation", nics=nics, size=size, qps=4, strategy="split",
                      sport_per_qp=True, timeout=60 + 4 * seconds)
    before = fabric.sample() if uses_api(coll) else None
    try:
        got = run_collective(fabric, coll)
    except ControllerError as exc:
        return {"nics": len(nics), "rate_mbps": rate, "offered_mbps": len(nics) * rate,
                "error": str(exc), "lossless": False, "at_rate": False}
    before, after = got.pop("samples", None) or (before, fabric.sample())
    result = got["result"]
    use = Usage.of(fabric.plan, before, after, seconds=result["span_s"])
    n = len(nics)
    frames = use.switch_pps * result["span_s"]  # the switches' frames between the samples
    bracket = after.at - before.at if before is not None else result["span_s"]
    # Goodput in frame bytes: the application bytes delivered, as the full frames that carry
    # them (a full frame per path MTU: `AddressPlan.roce_frame`), over the job's span.
    plan = fabric.plan
    goodput = (result["bytes_received"] * plan.roce_frame / plan.path_mtu * 8
               / max(result["span_s"], 1e-9) / 1e6)
    return {
        "nics": n, "rate_mbps": rate, "offered_mbps": n * rate,
        "switches": len(fabric.plan.switches), "carried_mbps": round(goodput, 2),
        "host_mbps": round(use.host_gbps * 1e3, 2),
        "host_pps": round(use.host_pps),
        "switch_pps": round(use.switch_pps), "lost": use.lost, "sent": use.sent,
        "loss": use.loss, "lost_on": use.lost_on, "retransmitted": result["retransmitted"],
        "timeouts": result["timeouts"], "tm_dropped": got["tm"]["tm_dropped"],
        "kernel_drops": result["kernel_drops"], "time_s": result["time_s"],
        "machine_cpu": use.machine_cpu, "server_cpu": use.server_cpu,
        "max_switch_cpu": max(use.switch_cpu.values(), default=0.0),
        # CPU the switch processes spent per frame they took in (all switches' CPU over
        # all switches' frames): what one switch frame costs inside the fabric, to set
        # beside bench/pps.py's standalone figure (None over servers: the CPU of the switches
        # on another server is not read).
        "switch_cpu_us": round(sum(use.switch_cpu.values()) / use.switch_pps * 1e6, 1)
        if use.switch_pps and len(use.switch_cpu) == len(fabric.plan.switches) else None,
        # Of that, what the switches spend with no traffic at all over the same time (the
        # daemon's probes and statistics reads, `idle_switch_cpu`), spread over the frames.
        "idle_cpu_us": round(idle_cores * bracket / frames * 1e6, 1)
        if idle_cores is not None and frames else None,
        "idle_switch_cores": None if idle_cores is None else round(idle_cores, 4),
        "max_agent_cpu": result["max_cpu_share"], "complete": use.complete,
        "carried_share": round(goodput / (n * rate), 4),
        "lossless": (use.loss < LOSS_LIMIT and use.complete and result["status"] == "ok"
                     and got["tm"]["tm_dropped"] == 0),
        "at_rate": goodput >= MIN_CARRIED * n * rate,
    }


def search(target: str, rates: list[float], seconds: float, work: Path,
           log: Any, servers: tuple[str, ...] = (), base: Path = BASE,
           mtu: int | None = None) -> dict[str, Any]:
    levels: list[dict[str, Any]] = []
    bringups: list[float] = []
    for rate in rates:
        rated = {"links.host.rate_mbps": rate, "links.rtsw_ctsw.rate_mbps": 4 * rate,
                 **({"mtu": mtu} if mtu else {})}
        topo = variant(base, work, f"capacity_{target}_{rate:g}",
                       {**rated, **lossless(variant_spec(base, rated))})
        first_failed = False
        with Fabric(topo, target=target, mode="eecmp", servers=servers) as fabric:
            bringups.append(fabric.up_seconds)
            idle = idle_switch_cpu(fabric)
            for i, hosts in enumerate(load_levels(fabric.plan)):
                row = measure(fabric, hosts, rate, seconds, idle)
                row["target"] = target
                levels.append(row)
                log(row)
                if not row["lossless"]:
                    first_failed = i == 0
                    break
        if first_failed:
            break

    def best(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
        top = max(rows, key=lambda r: r["carried_mbps"], default=None)
        return None if top is None else {k: top[k] for k in (
            "carried_mbps", "carried_share", "host_pps", "switch_pps", "nics", "rate_mbps",
            "loss", "machine_cpu")}

    clean = [r for r in levels if r["lossless"]]
    return {"target": target, "levels": levels, "bringup_s": bringups,
            "capacity": best(clean), "capacity_at_rate": best([r for r in clean if r["at_rate"]])}


# The standalone switch set beside each target's fabric figure (bench/pps.py): p4switch with
# the fabric's traffic-manager flags, BMv2 as it is.
STANDALONE = {"p4switch": "p4switch-tm", "bmv2": "bmv2"}


def add_standalone(target: str, levels: list[dict[str, Any]], seconds: float,
                   payload: int = DEFAULT_PATH_MTU) -> None:
    """Each level's CPU per switch frame alone: one `STANDALONE[target]` switch on veths
    (`bench/pps.py`'s `standalone_cpu`: rtsw.p4, full RoCEv2 frames) offered the frames per
    second one switch of the fabric took in at that level (all switches' over their number),
    after the fabric is down; kept in the level as `standalone_cpu_us`, with the fabric's
    figure over it as `fabric_over_standalone`. `payload`: the frames' RDMA payload, the
    fabric's path MTU."""
    rows = [r for r in levels if r.get("switch_cpu_us") and r.get("switch_pps")]
    if not rows or target not in STANDALONE:
        return
    sys.path.insert(0, str(REPO / "bench"))
    from pps import standalone_cpu

    per_switch = [r["switch_pps"] / r["switches"] for r in rows]
    alone = standalone_cpu(STANDALONE[target], per_switch, seconds=seconds, payload=payload)
    for r, pps in zip(rows, per_switch, strict=True):
        us = alone[pps]
        r["standalone_cpu_us"] = us
        r["fabric_over_standalone"] = round(r["switch_cpu_us"] / us, 2) if us else None
        # The same without what the fabric's switches spend idle (`idle_cpu_us`): the frames'
        # own cost in the fabric over alone. The figure is the one above.
        r["busy_over_standalone"] = (round((r["switch_cpu_us"] - r["idle_cpu_us"]) / us, 2)
                                     if us and r.get("idle_cpu_us") is not None else None)


def _measurement(out: dict[str, Any], argv: list[str]) -> dict[str, Any]:
    """This run as the capacity data file keeps it (`experiments.capacity.Measurement`)."""
    targets = {t: {"capacity": r.get("capacity"), "capacity_at_rate": r.get("capacity_at_rate"),
                   "levels": r["levels"]}
               for t, r in out["targets"].items() if "levels" in r}
    return {"command": " ".join(["bench/fabric_capacity.py", *map(shlex.quote, argv)]),
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "seconds_total": out["seconds_total"], "mtu": out["mtu"],
            "machine": {"cores": out["machine"]["cores"],
                        "load_start": round(out["machine"]["load"][0], 2),
                        "load_end": round(out["machine"]["load_end"][0], 2)},
            "targets": targets}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--targets", default="p4switch,bmv2",
                   help="comma-separated; a target whose tools are missing is skipped (say why)")
    p.add_argument("--rates", default="1,2,5,10", help="host-link rates to try, Mb/s")
    p.add_argument("--seconds", type=float, default=3.0, help="seconds of data per flow")
    p.add_argument("--topology", type=Path, default=BASE,
                   help="the fabric to load (default topologies/ai_zone_small.yaml); its racks "
                        "of 4 NICs, like it, so one uplink at 4R holds a rack's load")
    p.add_argument("--no-standalone", dest="standalone", action="store_false",
                   help="do not measure one switch alone at each level's frames/s per switch "
                        "(bench/pps.py's veths, after the fabric is down) to set its CPU per "
                        "frame beside the fabric's")
    p.add_argument("--mtu", type=int, default=None,
                   help="the links' IP MTU (the topology's `mtu`; 9000: jumbo links, RoCE "
                        "path MTU 4,096); default: the topology's")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--write", nargs="?", type=Path, const=CAPACITY_FILE, default=None,
                   metavar="FILE", help="append this run to the capacity data file (default "
                                        "docs/results/capacity.json)")
    p.add_argument("--servers", type=servers_argument, default=(), metavar="A,B,...",
                   help="spread each fabric over these machines, this one first (`aizone up "
                        "--servers`, docs/scale-out.md); the switch CPU per frame is then this "
                        "machine's switches' only")
    p.add_argument("--namespace-server", action="store_true",
                   help="spread each fabric over this machine and one server made here (a "
                        "namespace running sshd, as tests/fabric/test_cluster.py does): what "
                        "the tunnels and ssh sessions cost on the same cores")
    given = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(given)
    if args.namespace_server and args.servers:
        print("fabric_capacity: --namespace-server or --servers, not both", file=sys.stderr)
        return 2
    if args.topology.resolve() != BASE.resolve() and args.write is not None:
        print("fabric_capacity: --write keeps ai_zone_small's capacity (the experiments' sizes "
              "come from it): not with --topology", file=sys.stderr)
        return 2
    if args.write is not None and args.mtu not in (None, LINK_MTU):
        print(f"fabric_capacity: --write keeps the capacity the experiments' sizes come from, "
              f"at their links' MTU ({LINK_MTU}, experiments.sizes.LINK_MTU): not with "
              f"--mtu {args.mtu}", file=sys.stderr)
        return 2
    if (args.servers or args.namespace_server) and args.write is not None:
        print("fabric_capacity: --write keeps one machine's capacity (the experiments' sizes "
              "come from it): not with servers", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("fabric_capacity: needs root (it brings fabrics up)", file=sys.stderr)
        return 2
    rates = sorted(float(r) for r in args.rates.split(",") if r)
    try:
        mtu = args.mtu or (LINK_MTU if args.write is not None else load_spec(args.topology).mtu)
        path_mtu = roce_path_mtu(mtu)
        if mtu > MAX_MTU:
            raise ValueError(f"--mtu {mtu}: at most {MAX_MTU} (topologies.mtu.MAX_MTU)")
    except (SpecError, ValueError) as exc:
        print(f"fabric_capacity: {exc}", file=sys.stderr)
        return 2
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True, highlight=False)

    def log(row: dict[str, Any]) -> None:
        if "error" in row:
            console.print(f"{row['target']}: {row['nics']} NICs: [red]{row['error']}[/]")
            return
        console.print(f"{row['target']} R={row['rate_mbps']:g} Mb/s x {row['nics']} NICs: "
                      f"carried {row['carried_mbps']:.1f} of {row['offered_mbps']:g} Mb/s, "
                      f"{row['switch_pps']:,} switch pkt/s "
                      + (f"({row['switch_cpu_us']:.0f} us CPU/switch frame"
                         + ("" if row.get("idle_cpu_us") is None
                            else f", {row['idle_cpu_us']:.0f} of it idle") + ")"
                         if row["switch_cpu_us"] is not None else "(switch CPU: not all here)")
                      + f", loss {row['loss']:.4%}, "
                      f"{row['tm_dropped']} queue drops "
                      f"({'lossless' if row['lossless'] else 'LOSS'}, "
                      f"{'at rate' if row['at_rate'] else 'below rate'}), machine CPU "
                      f"{row['machine_cpu']:.0%}"
                      + "".join(f", {name} {share:.0%}"
                                for name, share in sorted(row["server_cpu"].items())))

    out: dict[str, Any] = {"machine": {"cores": os.cpu_count(), "load": os.getloadavg()},
                           "loss_limit": LOSS_LIMIT, "min_carried": MIN_CARRIED,
                           "seconds": args.seconds, "targets": {}}
    work = Path(tempfile.mkdtemp(prefix="aizone-capacity-"))
    t0 = time.monotonic()
    made = contextlib.ExitStack()
    servers: tuple[str, ...] = tuple(args.servers)
    if args.namespace_server:
        sys.path.insert(0, str(REPO))
        from tests.fabric.servers_support import NamespaceServers

        server = made.enter_context(NamespaceServers(1))
        os.environ.update(server.env())
        servers = ("localhost", server.addresses[0])
    out["servers"] = list(servers)
    out["topology"] = str(args.topology)
    out["mtu"], out["path_mtu"] = mtu, path_mtu
    try:
        for target in [t for t in args.targets.split(",") if t]:
            missing = target_missing(target)
            if missing:
                out["targets"][target] = {"skipped": f"needs {', '.join(missing)} on PATH"}
                console.print(f"{target}: skipped (needs {', '.join(missing)} on PATH)")
                continue
            try:
                out["targets"][target] = search(target, rates, args.seconds, work, log,
                                                servers, args.topology, mtu)
            except (NetworkError, ControllerError) as exc:
                out["targets"][target] = {"error": str(exc)}
                console.print(f"{target}: [red]{exc}[/]")
                continue
            if args.standalone:
                console.print(f"{target}: one switch alone at each level's frames/s per switch")
                try:
                    add_standalone(target, out["targets"][target]["levels"], args.seconds,
                                   out["path_mtu"])
                except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                    # The ladder stands; the standalone figure is missing, and says why.
                    out["targets"][target]["standalone_error"] = str(exc)
                    console.print(f"{target}: one switch alone: [red]{exc}[/]")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        made.close()
    out["seconds_total"] = round(time.monotonic() - t0, 1)
    out["machine"]["load_end"] = os.getloadavg()
    caps = {t: r["capacity"] for t, r in out["targets"].items() if r.get("capacity")}
    if "p4switch" in caps and "bmv2" in caps and caps["p4switch"]["carried_mbps"]:
        out["bmv2_over_p4switch"] = round(caps["bmv2"]["carried_mbps"]
                                          / caps["p4switch"]["carried_mbps"], 3)
    # The same level on both (the first: R, 4 NICs), where the machine is least loaded.
    firsts = {t: r["levels"][0] for t, r in out["targets"].items()
              if r.get("levels") and "error" not in r["levels"][0]}
    if "p4switch" in firsts and "bmv2" in firsts and firsts["p4switch"]["carried_mbps"]:
        out["bmv2_over_p4switch_same_level"] = round(
            firsts["bmv2"]["carried_mbps"] / firsts["p4switch"]["carried_mbps"], 3)
    if args.write is not None:
        try:
            add_measurement(args.write, _measurement(out, given))
        except CapacityError as exc:
            # Nothing measured is lost: the run goes to standard output as JSON.
            print(f"fabric_capacity: --write: {exc}; the run, not written:", file=sys.stderr)
            print(json.dumps(out))
            return 1
        console.print(f"appended this run to {args.write}")
    if args.json:
        print(json.dumps(out))
        return 0
    table = Table(title=f"{args.topology.stem}: aggregate load carried with < 0.1% loss not at "
                        f"a switch queue")
    for col in ("target", "R Mb/s", "NICs", "offered Mb/s", "carried Mb/s", "host pkt/s",
                "switch pkt/s", "us CPU/switch frame", "alone", "loss", "queue drops", "retrans", "machine CPU",
                "max switch CPU", "max agent CPU", ""):
        table.add_column(col, justify="right")
    for target, res in out["targets"].items():
        for r in res.get("levels", []):
            if "error" in r:
                table.add_row(target, "", str(r["nics"]), "", "", "", "", "", "", "", "", "", "",
                              "", "", "error")
                continue
            table.add_row(target, f"{r['rate_mbps']:g}", str(r["nics"]), f"{r['offered_mbps']:g}",
                          f"{r['carried_mbps']:.1f}", f"{r['host_pps']:,}",
                          f"{r['switch_pps']:,}",
                          "–" if r.get("switch_cpu_us") is None else f"{r['switch_cpu_us']:.0f}"
                          + ("" if r.get("idle_cpu_us") is None else f" ({r['idle_cpu_us']:.0f} idle)"),
                          "–" if r.get("fabric_over_standalone") is None
                          else f"{r['standalone_cpu_us']:.0f} ({r['fabric_over_standalone']:.1f}x"
                          + ("" if r.get("busy_over_standalone") is None
                             else f"; {r['busy_over_standalone']:.1f}x less idle") + ")",
                          f"{r['loss']:.3%}", str(r["tm_dropped"]),
                          str(r["retransmitted"]),
                          f"{r['machine_cpu']:.0%}", f"{r['max_switch_cpu']:.2f}",
                          f"{r['max_agent_cpu']:.2f}",
                          ("lossless" if r["lossless"] else "LOSS")
                          + (", at rate" if r["at_rate"] else f", {r['carried_share']:.0%}"))
    Console(highlight=False).print(table)
    for target, res in out["targets"].items():
        if res.get("skipped") or res.get("error"):
            print(f"{target}: {res.get('skipped') or res.get('error')}")
            continue
        for key, what in (("capacity", "lossless"), ("capacity_at_rate", "lossless and at rate")):
            cap = res.get(key)
            if cap:
                print(f"{target}: {what}: {cap['carried_mbps']:.1f} Mb/s emulated "
                      f"({cap['host_pps']:,} host packets/s, {cap['switch_pps']:,} switch "
                      f"packets/s) = {cap['nics']} NICs at {cap['rate_mbps']:g} Mb/s")
            else:
                print(f"{target}: {what}: no level")
        ratios = [f"{r['fabric_over_standalone']:.1f}x at {r['nics']} NICs x {r['rate_mbps']:g} Mb/s"
                  for r in res.get("levels", []) if r.get("fabric_over_standalone")]
        if ratios:
            print(f"{target}: CPU per switch frame in the fabric over one switch alone at the same "
                  f"frames/s: {', '.join(ratios)}")
            busy = [f"{r['busy_over_standalone']:.1f}x" for r in res.get("levels", [])
                    if r.get("fabric_over_standalone") and r.get("busy_over_standalone") is not None]
            if busy:
                print(f"{target}: the same without what the fabric's switches spend idle (the "
                      f"daemon's link probes and statistics reads): {', '.join(busy)}")
        elif res.get("standalone_error"):
            print(f"{target}: one switch alone: {res['standalone_error']}")
    for key in ("bmv2_over_p4switch", "bmv2_over_p4switch_same_level"):
        if key in out:
            print(f"{key.replace('_', ' ')}: {out[key]:.2f}")
    print(f"total {out['seconds_total']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
