"""Scaled latency on a running fabric (topologies.latency, linkdelay, delayline), any target.

Two racks of one host under one CTSW, brought up with `aizone up` from a
topology whose `latency:` section is worked out by hand below: a ping from
h1 to h2 crosses the spine and must take the configured delays twice plus
the frames' serialisation, never less, and no more than the emulator's own
round trip on top (its jitter, measured: see `OWN_RTT_MS`). The delay
line's doors are gone after `aizone down`.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fabric_support import ROOT, fabric_up, in_host

from topologies.runstate import root_links

# Scale: 400 Gb/s over 10 Mb/s = 40,000; real microseconds x 40,000 = emulated
# seconds: 0.25 us -> 10 ms, 0.5 us -> 20 ms, 1 us -> 40 ms, 1.5 us -> 60 ms.
TOPOLOGY = f"""
name: delayed
line_rate_gbps: 400
programs: {{rtsw: {ROOT}/p4/rtsw.p4, ctsw: {ROOT}/p4/ctsw.p4}}
links:
  host: {{rate_mbps: 10}}
  rtsw_ctsw: {{rate_mbps: 10}}
latency:
  propagation_us: {{host: 0.25, rtsw_ctsw: 0.5}}
  switch_us: {{rtsw: 1.0, ctsw: 1.5}}
racks:
  - {{count: 2, hosts: 1, nics: 1}}
ctsws: 1
"""
# One way h1 -> h2, each interface a frame leaves: h1's NIC 10 ms (host
# cable); rtsw1 to ctsw1 20 + 40; ctsw1 to rtsw2 20 + 60; rtsw2 to h2 10 + 40.
ONE_WAY_MS = 10 + (20 + 40) + (20 + 60) + (10 + 40)
# A ping of 56 data bytes is a 98-byte frame (14 Ethernet + 20 IP + 8 ICMP +
# 56): 78.4 us at 10 Mb/s. Each way the three switches' egress ports pace it
# at that rate; the veths' tc shapers (htb, 15 kB burst) let a lone frame
# through at once, so they add none.
FRAME_MS = 98 * 8 / 10e6 * 1e3
EXPECTED_MS = 2 * ONE_WAY_MS + 2 * 3 * FRAME_MS
# The emulator's own round trip on top (switch pipelines, the delay line's
# wake-ups), measured with this test on the 2-core build machine: p4switch
# 408-410 ms for 400.47 expected (8-10 ms of its own, spread 2 ms).
OWN_RTT_MS = 25.0


@pytest.fixture(scope="module")
def fabric(target: str, build_dir: Path, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[dict[str, Any]]:
    topo = tmp_path_factory.mktemp("delay") / "delayed.yaml"
    topo.write_text(TOPOLOGY)
    with fabric_up(topo, target, build_dir) as status:
        yield status
    assert [n for n in root_links() if n.startswith("azdl")] == []


def _ping_ms(src: str, dst_ip: str, count: int) -> list[float]:
    """`count` round trips after a first ping, which may also wait for ARP."""
    out = subprocess.run(in_host(src, "ping", "-n", "-c", str(count + 1), "-i", "0.3", "-W",
                                 "5", dst_ip), capture_output=True, text=True, timeout=120).stdout
    return [float(t) for t in re.findall(r"time=([\d.]+) ms", out)][1:]


def test_a_ping_across_the_spine_takes_the_configured_delays_twice(
        fabric: dict[str, Any]) -> None:
    """h1 -> h2 (rtsw1, ctsw1, rtsw2): 2 x 200 ms of delay + serialisation, within the
    emulator's own round trip; exactly one reply per ping (BMv2 once took the delay line's
    sends out of its ports as frames arriving, and 10 pings got 9,257 replies)."""
    h2 = next(h for h in fabric["hosts"] if h["name"] == "h2")
    rtts = _ping_ms("h1", h2["nics"][0]["ip"], 10)
    print(f"round trips h1 -> h2 (ms): {rtts}; expected {EXPECTED_MS:.2f}")
    assert len(rtts) == 10, f"lost pings: {rtts}"
    # Never less than the delays (the line never sends early), never more than
    # the expected round trip plus the emulator's own.
    assert min(rtts) >= 2 * ONE_WAY_MS, rtts
    assert max(rtts) <= EXPECTED_MS + OWN_RTT_MS, (rtts, EXPECTED_MS)

