"""What `aizone capture` costs: the same collective with and without captures, in one run.

On a fabric already up (`aizone up topologies/rack.yaml`, or any), rounds
alternate between no capture and `aizone capture` on every port of one
switch (at most 4: the API's cap), each round the same AllReduce between
two hosts of that switch. Per round: the collective's time and busbw, the
frames the switch sent (its tx counters), the CPU seconds the switch
process and the tcpdumps used (from /proc). Figures only, never
assertions; the machine is shared, so the medians of several rounds and
the ratio between the two ways are what to read.

    sudo .venv/bin/python bench/capture_cost.py [--switch rtsw1] [--rounds 3] [--size 4M]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from controller.client import ApiClient
from topologies.runstate import read_state

CLI = [sys.executable, "-m", "aizone.cli"]
TX = "FabricEgress.counters.tx_port"
HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def tcpdumps(intfs: list[str]) -> list[int]:
    out = subprocess.run(["pgrep", "-f", "^tcpdump -i "], capture_output=True, text=True).stdout
    pids = []
    for pid in out.split():
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if len(args) > 2 and args[2].decode() in intfs:
            pids.append(int(pid))
    return pids


def one_round(api: ApiClient, switch: str, switch_pid: int, ports: list[int], hosts: list[str],
              size: str, capture: bool, tmp: Path) -> dict[str, float]:
    procs = []
    if capture:
        for p in ports:
            proc = subprocess.Popen([*CLI, "capture", f"{switch}:{p}", "-w",
                                     str(tmp / f"{switch}-{p}.pcap"), "--seconds", "600"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            assert proc.stderr is not None
            proc.stderr.readline()  # "capturing ..." once tcpdump runs
            procs.append(proc)
    dumps = tcpdumps([f"{switch}-eth{p}" for p in ports]) if capture else []
    tx0 = api.get(f"/counters/{switch}/{TX}", index=ports)["cells"]
    cpu0 = cpu_seconds(switch_pid)
    dump0 = sum(cpu_seconds(p) for p in dumps)
    run = subprocess.run([*CLI, "run", "allreduce", "--hosts", ",".join(hosts), "--size", size,
                          "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"aizone run failed: {run.stderr.strip()}")
    job = json.loads(run.stdout)
    cpu1 = cpu_seconds(switch_pid)
    dump1 = sum(cpu_seconds(p) for p in dumps)
    tx1 = api.get(f"/counters/{switch}/{TX}", index=ports)["cells"]
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    for proc in procs:
        proc.communicate(timeout=60)
    frames = sum(tx1[i]["packets"] - tx0[i]["packets"] for i in tx1)
    return {"time_s": job["result"]["time_s"], "busbw_gbps": job["result"]["busbw_gbps"],
            "frames": frames, "switch_us_per_frame": (cpu1 - cpu0) / max(frames, 1) * 1e6,
            "tcpdump_us_per_frame": (dump1 - dump0) / max(frames, 1) * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--switch", default="rtsw1")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", default="4M")
    args = parser.parse_args()
    state = read_state()
    if state is None:
        raise SystemExit("no fabric is up: `sudo aizone up topologies/rack.yaml` first")
    switch_pid = next(int(s["pid"]) for s in state.switches if s["name"] == args.switch)
    with ApiClient() as api:
        topo = api.get("/topology")
        edges = [e for e in topo["edges"] if e["b"] == args.switch and e["tier"] == "host"]
        hosts = sorted({e["a"] for e in edges})[:2]
        ports = sorted({e["b_port"] for e in edges if e["a"] in hosts})[:4]
        results: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.rounds):
                for way in ("off", "on") if i % 2 == 0 else ("on", "off"):
                    results[way].append(one_round(api, args.switch, switch_pid, ports, hosts,
                                                  args.size, way == "on", Path(tmp)))
                    time.sleep(0.5)
    med = {way: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
           for way, rs in results.items()}
    print(f"{args.switch}, ports {ports}, AllReduce {args.size} between {', '.join(hosts)}, "
          f"{args.rounds} rounds each way (medians):")
    for way in ("off", "on"):
        m = med[way]
        print(f"  capture {way:3}: {m['time_s']:.3f} s, busbw {m['busbw_gbps'] * 1e3:.2f} Mb/s, "
              f"{m['frames']:.0f} frames; switch {m['switch_us_per_frame']:.1f} us/frame, "
              f"tcpdump {m['tcpdump_us_per_frame']:.1f} us/frame")
    print(f"  time on/off: {med['on']['time_s'] / med['off']['time_s']:.3f}x; switch CPU per "
          f"frame on/off: {med['on']['switch_us_per_frame'] / med['off']['switch_us_per_frame']:.3f}x")
    print(json.dumps({"medians": med, "rounds": results}))


if __name__ == "__main__":
    main()
