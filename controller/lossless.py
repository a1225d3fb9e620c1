"""What the lossless class did in a running fabric, read through the daemon's API.

For the PFC bench (`bench/pfc_incast.py`) and the fabric tests alike: a switch
that lost nothing of a class has sent out as many of its packets as came in,
whatever the target (BMv2's queue drops are counted nowhere else), and the
PAUSE frames each port sent come from the statistics snapshot, which adds
p4switch's native traffic-manager counts to the programs' (`controller.stats`).

- `fabric_ports(api)`: each switch's ports, from `GET /topology`.
- `class_packets(api, ports, tc)`: per switch, class `tc` packets in and out so far
  (`FabricIngress.counters.rx_port_tc`, `FabricEgress.counters.tx_port_tc`).
- `lost_in_switches(before, after)`: per switch, packets in minus out between two
  readings, the switches that differ only.
- `pauses_sent(api, tc, since)`: per "switch:port", PFC frames of class `tc` sent so far,
  from the first snapshot taken at or after `since`.
- `run_incast(api, hosts, ...)`: one incast through `POST /run`, with the losses inside
  switches once the queues drained and the ports that sent PAUSE frames (`IncastRound`).

Names defined here: `LOSSLESS`, `IncastRound`, `fabric_ports`, `class_packets`,
`lost_in_switches`, `pauses_sent`, `run_incast`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .client import ApiClient

__all__ = ["LOSSLESS", "IncastRound", "class_packets", "fabric_ports", "lost_in_switches",
           "pauses_sent", "run_incast"]

LOSSLESS = 3  # the lossless class (the topologies' PFC class, RoCE data)
CLASSES = 8  # counter cells are port * 8 + class (p4/include/define.p4)
RX = "FabricIngress.counters.rx_port_tc"
TX = "FabricEgress.counters.tx_port_tc"


def fabric_ports(api: ApiClient) -> dict[str, list[int]]:
    """Each switch's ports (every link end at a switch)."""
    out: dict[str, list[int]] = {}
    for e in api.get("/topology")["edges"]:
        out.setdefault(e["b"], []).append(e["b_port"])
        if e["tier"] != "host":  # a host link's `a` is the host
            out.setdefault(e["a"], []).append(e["a_port"])
    return {sw: sorted(ports) for sw, ports in out.items()}


def class_packets(api: ApiClient, ports: dict[str, list[int]], tc: int = LOSSLESS
                  ) -> dict[str, tuple[int, int]]:
    """Per switch, the class's packets in and out so far, from its own counters."""
    out = {}
    for sw, nums in ports.items():
        cells = [p * CLASSES + tc for p in nums]
        rx, tx = (api.get(f"/counters/{sw}/{name}", index=cells)["cells"] for name in (RX, TX))
        out[sw] = (sum(c["packets"] for c in rx.values()), sum(c["packets"] for c in tx.values()))
    return out


def lost_in_switches(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]
                     ) -> dict[str, int]:
    """Per switch, packets in minus packets out between two `class_packets` readings
    (only the switches where they differ)."""
    lost = {sw: (a[0] - before[sw][0]) - (a[1] - before[sw][1]) for sw, a in after.items()}
    return {sw: n for sw, n in lost.items() if n}


def pauses_sent(api: ApiClient, tc: int = LOSSLESS, since: float = 0.0,
                timeout: float = 10.0) -> dict[str, int]:
    """Per "switch:port", the class's PFC frames sent so far (the native traffic manager's
    XOFFs and refreshes, the programs' XOFF, refresh and XON frames), from the first
    statistics snapshot taken at or after `since` (wall clock); `TimeoutError` after
    `timeout` seconds without one."""
    deadline = time.monotonic() + timeout
    while True:
        snap = api.get("/stats")
        if snap and snap.get("at", 0) >= since:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"no statistics snapshot after {since:.3f} within {timeout} s")
        time.sleep(0.2)
    out = {}
    for sw, data in snap["switches"].items():
        for port, p in data["ports"].items():
            n = p["classes"].get(str(tc), {}).get("pauses_sent", 0)
            if n:
                out[f"{sw}:{port}"] = n
    return out


@dataclass(frozen=True, kw_only=True)
class IncastRound:
    """One incast and what the lossless class did meanwhile (`run_incast`)."""

    job: dict[str, Any]
    """`POST /run`'s answer: the result (bytes, retransmissions), switch and TM drops, PFC."""
    lost: dict[str, int]
    """Per switch, class packets in minus out once the queues drained (none: lost nothing)."""
    pauses: dict[str, int]
    """Per "switch:port", PFC frames of the class sent during the incast (none: no PAUSE)."""

    @property
    def result(self) -> dict[str, Any]:
        """The collective's result (status, bytes, retransmitted, NAKs, timeouts)."""
        result: dict[str, Any] = self.job["result"]
        return result


def run_incast(api: ApiClient, hosts: list[str], *, per: str = "host", size: int = 256 << 10,
               tc: int = LOSSLESS, timeout: float = 120, settle: float = 10.0) -> IncastRound:
    """Run an incast (`hosts[0]` the sink) on the lossless class through the daemon, with
    the ACK timeout `aizone run` picks; losses are read once every switch's in and out
    agree or `settle` seconds passed (packets still leaving when the job ended)."""
    ports = fabric_ports(api)
    before, paused = class_packets(api, ports, tc), pauses_sent(api, tc)
    job = api.post("/run", {"pattern": "incast", "hosts": hosts, "per": per, "size": size,
                            "timeout": timeout})
    deadline = time.monotonic() + settle
    lost = lost_in_switches(before, class_packets(api, ports, tc))
    while lost and time.monotonic() < deadline:
        time.sleep(0.5)
        lost = lost_in_switches(before, class_packets(api, ports, tc))
    after = pauses_sent(api, tc, since=time.time())  # read after everything had left
    pauses = {k: n - paused.get(k, 0) for k, n in after.items() if n > paused.get(k, 0)}
    return IncastRound(job=job, lost=lost, pauses=pauses)
