"""What PFC does under incast on a running fabric: retransmissions, losses inside switches, time.

On a fabric already up (`aizone up topologies/ai_zone_small.yaml --target bmv2`,
or p4switch), each round runs one incast on the lossless class through the
daemon (`POST /api/v1/run`, the ACK timeout `aizone run` picks) and reads,
before and after, every switch's lossless-class packets in and out from its
own counters (`FabricIngress.counters.rx_port_tc`,
`FabricEgress.counters.tx_port_tc`, class 3): a switch that lost nothing has
as many out as in, whatever target (BMv2's queue drops are counted nowhere
else). Figures only, never assertions; the machine is shared, so several
rounds and their spread are what to read.

    sudo .venv/bin/python bench/pfc_incast.py [--hosts h1,h3,h5,h7] [--per host|nic]
        [--size 262144] [--rounds 6] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from controller.client import ApiClient

RX = "FabricIngress.counters.rx_port_tc"
TX = "FabricEgress.counters.tx_port_tc"
LOSSLESS = 3


def class_packets(api: ApiClient, switches: dict[str, list[int]]) -> dict[str, tuple[int, int]]:
    """Per switch, the lossless class's packets in and out so far."""
    out = {}
    for sw, ports in switches.items():
        cells = [p * 8 + LOSSLESS for p in ports]
        rx, tx = (api.get(f"/counters/{sw}/{name}", index=cells)["cells"] for name in (RX, TX))
        out[sw] = (sum(c["packets"] for c in rx.values()), sum(c["packets"] for c in tx.values()))
    return out


def one_round(api: ApiClient, switches: dict[str, list[int]], hosts: list[str], per: str,
              size: int) -> dict[str, Any]:
    before = class_packets(api, switches)
    job = api.post("/run", {"pattern": "incast", "hosts": hosts, "per": per, "size": size,
                            "timeout": 120})
    time.sleep(2)  # what was still on its way out has left
    after = class_packets(api, switches)
    r = job["result"]
    lost = {sw: (after[sw][0] - before[sw][0]) - (after[sw][1] - before[sw][1])
            for sw in switches}
    return {"status": r["status"], "time_s": round(r["time_s"], 3),
            "retransmitted": r["retransmitted"], "naks": r["naks_sent"],
            "timeouts": r["timeouts"], "pauses_sent": job["tm"]["pauses_sent"],
            "lost_in_switches": {sw: n for sw, n in lost.items() if n},
            "ack_timeout_ms": round(job["ack_timeout_ms"], 1), "cpu_bound": job["cpu_bound"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", default="h1,h3,h5,h7", help="the sink first, then senders")
    parser.add_argument("--per", choices=("host", "nic"), default="host")
    parser.add_argument("--size", type=int, default=256 << 10, help="bytes each sender sends")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with ApiClient() as api:
        status = api.get("/status")
        topo = api.get("/topology")
        switches: dict[str, list[int]] = {}
        for e in topo["edges"]:
            switches.setdefault(e["b"], []).append(e["b_port"])
            if e["tier"] != "host":
                switches.setdefault(e["a"], []).append(e["a_port"])
        hosts = args.hosts.split(",")
        rounds = []
        for i in range(args.rounds):
            got = one_round(api, switches, hosts, args.per, args.size)
            rounds.append(got)
            if not args.json:
                print(f"round {i + 1}/{args.rounds}: {got['status']}, {got['time_s']} s, "
                      f"{got['retransmitted']} retransmitted ({got['naks']} NAKs, "
                      f"{got['timeouts']} timeouts), {got['pauses_sent']} PAUSE frames sent, "
                      f"lost in switches: {got['lost_in_switches'] or 'none'}"
                      f"{', CPU-bound' if got['cpu_bound'] else ''}", flush=True)
    summary = {"target": status["target"], "fabric": status["name"], "hosts": hosts,
               "per": args.per, "size": args.size, "rounds": rounds,
               "clean_rounds": sum(1 for r in rounds if not r["retransmitted"]
                                   and not r["lost_in_switches"]),
               "median_time_s": statistics.median(r["time_s"] for r in rounds)}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{status['target']} {status['name']}: {summary['clean_rounds']} of "
              f"{len(rounds)} rounds with nothing retransmitted or lost, median "
              f"{summary['median_time_s']} s")


if __name__ == "__main__":
    main()
