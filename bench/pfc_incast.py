"""What PFC does under incast on a running fabric: retransmissions, losses inside switches, time.

On a fabric already up (`aizone up topologies/ai_zone_small.yaml --target bmv2`,
or p4switch with `--pfc native` or `--pfc program`), each round runs one incast
on the lossless class through the daemon (`POST /api/v1/run`, the ACK timeout
`aizone run` picks) and reads, before and after, every switch's lossless-class
packets in and out from its own counters and the ports that sent PAUSE frames
(`controller.lossless.run_incast`): a switch that lost nothing has as many out
as in, whatever target (BMv2's queue drops are counted nowhere else). Figures
only, never assertions; the machine is shared, so several rounds and their
spread are what to read.

    sudo .venv/bin/python bench/pfc_incast.py [--hosts h1,h3,h5,h7] [--per host|nic]
        [--size 262144] [--rounds 6] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

from controller.client import ApiClient
from controller.lossless import run_incast


def one_round(api: ApiClient, hosts: list[str], per: str, size: int) -> dict[str, Any]:
    """One incast and its figures (`controller.lossless.run_incast`)."""
    got = run_incast(api, hosts, per=per, size=size)
    r = got.result
    return {"status": r["status"], "time_s": round(r["time_s"], 3),
            "retransmitted": r["retransmitted"], "naks": r["naks_sent"],
            "timeouts": r["timeouts"], "pauses_sent": got.job["tm"]["pauses_sent"],
            "pause_ports": sorted(got.pauses), "lost_in_switches": got.lost,
            "ack_timeout_ms": round(got.job["ack_timeout_ms"], 1),
            "cpu_bound": got.job["cpu_bound"]}


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
        hosts = args.hosts.split(",")
        rounds = []
        for i in range(args.rounds):
            got = one_round(api, hosts, args.per, args.size)
            rounds.append(got)
            if not args.json:
                print(f"round {i + 1}/{args.rounds}: {got['status']}, {got['time_s']} s, "
                      f"{got['retransmitted']} retransmitted ({got['naks']} NAKs, "
                      f"{got['timeouts']} timeouts), {got['pauses_sent']} PAUSE frames sent "
                      f"(out of {', '.join(got['pause_ports']) or 'no port'}), "
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
