"""The model against the emulator on ai_zone_small: the same hash, the same members, the same shares.

ai_zone_small (4 racks x 2 hosts x 2 NICs, 2 CTSWs) is brought up in eecmp
mode; the four NICs of rack 1 each send RoCEv2 RDMA WRITEs over 8 QPs
(17..24, one 2 KiB message per QP, source port 49152) to a NIC in each
other rack with the project's agent (`python -m traffic.agent send`). The
tx counters of rtsw1's two uplinks, read over P4Runtime before and after,
must split the bytes exactly as the model says: every QP is a flow of the
same packets, so each uplink's share of the bytes is its share of the
flows, and the model's per-uplink byte shares must equal the counters'
exactly (as fractions). Only rtsw1's uplinks are compared: what the
destinations send back (ICMP) enters rtsw1 from above and leaves by host
ports.

The fabric comes up with `aizone up`; the counters are read through the
daemon's API (the data class's per-(port, class) cells, so that the
controller's link probes, which leave in class 7, do not count), and the
flows are sent inside the hosts' namespaces.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from fabric_support import ROOT, aizone, assert_clean, in_host, leftovers

from controller.client import ApiClient
from controller.routegraph import RouteGraph
from model.flows import DPORT, Flows
from model.forward import LinkTable, route_flows
from topologies.addressing import AddressPlan, plan_addresses
from topologies.spec import load_spec

TOPO = ROOT / "topologies" / "ai_zone_small.yaml"
QPS = tuple(range(17, 25))
SIZE = 2048
MODE = "eecmp"
DATA_CLASS = 3  # DSCP 26, the agent's default


@dataclass(frozen=True)
class FlowGroup:
    """One agent run: a source NIC, a destination address, its QPs (one message each)."""

    src_host: str
    src_intf: str
    src_ip: str
    gateway_mac: str  # the RTSW port's MAC: the agent then needs no route look-up
    dst_ip: str
    qps: tuple[int, ...]
    sport: int = 49152


def flow_set(plan: AddressPlan) -> list[FlowGroup]:
    """Rack 1's four NICs to the NIC of the same index in each other rack."""
    out = []
    rtsw1 = [n for n in plan.nics() if n.switch == "rtsw1"]
    for i, nic in enumerate(rtsw1):
        for other in ("rtsw2", "rtsw3", "rtsw4"):
            dst = [n for n in plan.nics() if n.switch == other][i]
            out.append(FlowGroup(src_host=nic.host, src_intf=nic.intf, src_ip=nic.ip,
                                 gateway_mac=nic.switch_mac, dst_ip=dst.ip, qps=QPS))
    return out


def model_uplink_bytes(plan: AddressPlan, groups: list[FlowGroup], switch: str
                       ) -> dict[int, int]:
    """Bytes the model puts on each uplink port of `switch` (payload, per flow = SIZE)."""
    g = RouteGraph(plan)
    links = LinkTable(g)
    nic = {n.intf: i for i, n in enumerate(plan.nics())}
    ip = {n.ip: i for i, n in enumerate(plan.nics())}
    src = np.array([nic[x.src_intf] for x in groups for _ in x.qps])
    dst = np.array([ip[x.dst_ip] for x in groups for _ in x.qps])
    qp = np.array([q for x in groups for q in x.qps])
    sport = np.array([x.sport for x in groups for _ in x.qps])
    flows = Flows(src=src, dst=dst, sport=sport, dport=np.full(len(src), DPORT), qp=qp,
                  size=np.full(len(src), float(SIZE)))
    routed = route_flows(g, links, flows, MODE)
    assert routed.delivered.all()
    s = g.index[switch]
    sw = plan.switch(switch)
    out = {p.port: 0 for p in sw.ports_of("uplink")}
    for d in routed.link_of.tolist():
        j = d - int(links.port_base[s])
        if 0 <= j < len(sw.ports) and sw.ports[j].port in out:
            out[sw.ports[j].port] += SIZE
    return out


def shares(values: dict[int, int]) -> dict[int, Fraction]:
    total = sum(values.values())
    return {k: Fraction(v, total) for k, v in values.items()}


def send_flows(run_in_host: Callable[[str, list[str]], str], groups: list[FlowGroup]) -> None:
    """Send every group with the agent inside its host (paced: no queue ever overflows)."""
    for x in groups:
        out = run_in_host(x.src_host, [
            sys.executable, "-m", "traffic.agent", "send", "--iface", x.src_intf,
            "--src-ip", x.src_ip, "--dst-mac", x.gateway_mac,
            "--dst-ip", x.dst_ip, "--qps", ",".join(map(str, x.qps)),
            "--messages", str(len(x.qps)), "--size", str(SIZE), "--strategy", "round_robin",
            "--sport", str(x.sport), "--rate-mbps", "2", "--json"])
        assert '"packets"' in out, out


def uplink_tx(read: Callable[[str], dict[int, int]], plan: AddressPlan, switch: str
              ) -> dict[int, int]:
    """tx bytes of `switch`'s uplink ports, from a reader of per-port tx bytes."""
    tx = read(switch)
    return {p.port: tx[p.port] for p in plan.switch(switch).ports_of("uplink")}


@pytest.fixture(scope="module")
def fab(target: str, build_dir: Path) -> Iterator[tuple[AddressPlan, ApiClient]]:
    before = leftovers()
    up = aizone("up", str(TOPO), "--mode", MODE, "--target", target, "--build-dir",
                str(build_dir), "--json")
    assert up.returncode == 0, up.stdout + up.stderr
    api = ApiClient()
    try:
        yield plan_addresses(load_spec(TOPO)), api
    finally:
        api.close()
        assert aizone("down").returncode == 0
    assert_clean(before)


def test_uplink_byte_shares_equal_the_models(fab: tuple[AddressPlan, ApiClient]) -> None:
    """rtsw1's uplink tx counters split the bytes exactly as the model's hash predicts."""
    plan, api = fab
    groups = flow_set(plan)

    def run_in_host(host: str, argv: list[str]) -> str:
        proc = subprocess.run(in_host(host, *argv), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{host}: exit {proc.returncode}: {proc.stderr[-2000:]}"
        return proc.stdout

    def read(switch: str) -> dict[int, int]:
        # The data class's cells only: the controller's link probes leave in class 7.
        ports = [p.port for p in plan.switch(switch).ports]
        cells = api.get(f"/counters/{switch}/FabricEgress.counters.tx_port_tc",
                        index=[p * 8 + DATA_CLASS for p in ports])["cells"]
        return {p: cells[str(p * 8 + DATA_CLASS)]["bytes"] for p in ports}

    before = uplink_tx(read, plan, "rtsw1")
    send_flows(run_in_host, groups)
    after = uplink_tx(read, plan, "rtsw1")
    measured = {p: after[p] - before[p] for p in after}
    predicted = model_uplink_bytes(plan, groups, "rtsw1")
    assert sum(measured.values()) > 0
    assert shares(measured) == shares(predicted), (measured, predicted)
    assert len([v for v in predicted.values() if v]) == 2  # both uplinks carry some QPs
