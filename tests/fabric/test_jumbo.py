"""Jumbo links: ai_zone_small with `mtu: 9000`, up the way a user brings it up (`aizone up`).

- every veth, switch ports and hosts' NICs alike, has MTU 9,000 (read back with `ip`);
- `aizone check` passes: every NIC pair pings, a RoCEv2 write crosses every host pair;
- an AllReduce through the daemon runs at path MTU 4,096 (the NICs' active MTU from the
  links': 4,096 + 64 bytes of headers fit 9,000, 8,192 is not an IB MTU) and delivers every
  byte; a capture of a NIC's cable (tcpdump, read by tshark) holds the RDMA WRITE Middle
  frames its RTSW sent it, over three switches from the ring's other racks, at 14 + 20 + 8 + 12 + 4,096 + 4 = 4,154 bytes and no RoCE frame
  longer than a WRITE First's 4,170 (+16 of RETH) or an Only with Immediate's 4,174, counted
  as many as the switch counted.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fabric_support import (
    ROOT,
    aizone,
    assert_check_passes,
    capturing,
    fabric_up,
    in_host,
    require_tshark,
)

from controller.client import ApiClient
from experiments.fabric import variant

ZONE = ROOT / "topologies" / "ai_zone_small.yaml"


@pytest.fixture(scope="module")
def jumbo(target: str, build_dir: Path, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[dict[str, Any]]:
    topo = variant(ZONE, tmp_path_factory.mktemp("jumbo"), "jumbo", {"mtu": 9000})
    with fabric_up(topo, target, build_dir) as status:
        yield status


def _mtu(argv: list[str]) -> int:
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    return int(json.loads(out.stdout)[0]["mtu"])


def test_every_link_end_has_the_topologys_mtu(jumbo: dict[str, Any]) -> None:
    hosts = {h["name"]: h for h in jumbo["hosts"]}
    for nic in hosts["h1"]["nics"] + hosts["h8"]["nics"]:
        host = "h1" if nic in hosts["h1"]["nics"] else "h8"
        assert _mtu(in_host(host, "ip", "-j", "link", "show", nic["intf"])) == 9000
    for intf in ("rtsw1-eth1", "ctsw1-eth1", "rtsw4-eth5"):
        assert _mtu(["ip", "-j", "link", "show", intf]) == 9000


def test_check_passes_over_jumbo_links(jumbo: dict[str, Any]) -> None:
    assert_check_passes(8, 2)


def _class3_out(api: ApiClient, switch: str, port: int) -> int:
    """The frames `switch` sent out of `port` in the data class (3 of 8) so far."""
    cells = api.get(f"/counters/{switch}/FabricEgress.counters.tx_port_tc",
                    index=[port * 8 + 3])["cells"]
    return int(next(iter(cells.values()))["packets"])


def test_an_allreduce_runs_in_4_kib_frames(jumbo: dict[str, Any], tmp_path: Path) -> None:
    require_tshark()
    pcap = tmp_path / "nic.pcap"
    with ApiClient() as api, capturing("h1-eth0", pcap, 40):
        before = _class3_out(api, "rtsw1", 1)  # rtsw1-eth1, h1-eth0's cable
        run = aizone("run", "allreduce", "--ranks", "16", "--size", "1M", "--json")
        assert run.returncode == 0, run.stdout + run.stderr
        after = _class3_out(api, "rtsw1", 1)
    got = json.loads(run.stdout)
    assert got["path_mtu"] == 4096
    assert got["result"]["status"] == "ok" and got["result"]["bytes_ok"], got["result"]
    sent = after - before
    assert sent > 0, "rtsw1 sent h1-eth0 no data frame"
    fields = subprocess.run(
        ["tshark", "-r", str(pcap), "-Y", "infiniband && ip.dsfield.dscp == 26 "
         "&& eth.src == " + _mac("rtsw1-eth1"),
         "-T", "fields", "-e", "infiniband.bth.opcode", "-e", "frame.len"],
        capture_output=True, text=True, timeout=120)
    assert fields.returncode == 0, fields.stderr
    frames = [tuple(int(v, 0) for v in row.split("\t")) for row in fields.stdout.splitlines()]
    # What rtsw1 counted out of that port in the data class is what the capture holds.
    assert len(frames) == sent, (len(frames), sent)
    middles = {n for op, n in frames if op == 7}  # RDMA WRITE Middle
    assert middles == {4154}, middles
    writes = [n for op, n in frames if op in (6, 7, 8, 9, 10, 11)]
    assert writes and max(writes) <= 4174, max(writes, default=None)
    assert sum(1 for n in writes if n > 1514) > len(writes) // 2


def _mac(intf: str) -> str:
    out = subprocess.run(["ip", "-j", "link", "show", intf], capture_output=True, text=True,
                         timeout=30, check=True)
    return str(json.loads(out.stdout)[0]["address"])
