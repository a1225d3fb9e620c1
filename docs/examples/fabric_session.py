"""A fabric session as a script, with the Python API (`aizone.Fabric`): run as root.

    sudo .venv/bin/python docs/examples/fabric_session.py [TOPOLOGY] [--target p4switch|bmv2]

Brings the fabric up, runs a ring AllReduce in pin and then in ecmp, fails
an uplink and restores it, and prints one JSON summary; leaving the `with`
block tears the fabric down, also when something in it raised.
(`tests/fabric/test_python_api.py` runs this file.)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from aizone import Fabric

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("topology", nargs="?", default=ROOT / "topologies" / "ai_zone_small.yaml")
    parser.add_argument("--target", default="auto")
    parser.add_argument("--build-dir", default=None)
    args = parser.parse_args()
    summary: dict[str, object] = {}
    with Fabric.up(args.topology, target=args.target, build_dir=args.build_dir) as fabric:
        summary["fabric"] = fabric.status().name
        jobs = {}
        for mode in ("pin", "ecmp"):
            fabric.set_mode(mode)
            job = fabric.run("allreduce", ranks=8, size=256 << 10)
            jobs[mode] = {"id": job.id, "time_s": job.result.time_s,
                          "busbw_gbps": job.result.busbw_gbps,
                          "retransmitted": job.result.retransmitted,
                          "imbalance": job.tiers["rtsw up"].imbalance}
        summary["jobs"] = jobs
        down = fabric.link_down("rtsw1", "ctsw1")
        summary["link_down"] = {"link": down.link, "seconds": down.seconds,
                                "failed": fabric.status().failed}  # type: ignore[attr-defined]
        up = fabric.link_up("rtsw1", "ctsw1")
        summary["link_up"] = {"link": up.link, "seconds": up.seconds,
                              "failed": fabric.status().failed}  # type: ignore[attr-defined]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
