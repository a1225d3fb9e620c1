"""CPU time of the traffic agents per emulated Gbit/s, sender and receiver, and packets/s.

Two figures, never assertions:

* memory: the transport alone, no sockets. First the NICs' own work: a
  sender NIC hands batches of 16 packets to a receiver NIC, which answers
  with its coalesced ACK (building, ICRC, placing and checking bytes,
  ACKs). Then a whole exchange in ``traffic.memnet`` (virtual clock): one
  host writes to another over 4 QPs, and the CPU time spent in each side's
  NIC calls, event-loop polling included, is timed apart per data packet
  and turned into CPU-seconds per emulated Gbit (a Gbit is 115,500
  packets of 1082 bytes at the default 1 KiB MTU).
* veth (root; run it under ``flock /tmp/aizone-net.lock``): two network
  namespaces joined by a veth pair, one ``python -m traffic.hostagent`` in
  each, h0 writing to h1 at each ``--rates`` Mb/s for about ``--seconds``,
  then once with no pacing to speak of (``--max-rate``). Each agent reports
  its own CPU time; the table gives each side's CPU-seconds per emulated
  Gbit, its share of one core, the rate reached and the packets/s. The
  namespaces and agents are removed whatever happens.

    flock /tmp/aizone-net.lock .venv/bin/python bench/traffic_cpu.py \\
        [--only memory|veth] [--rates 25,50,100,200] [--seconds 3] [--qps 4]
        [--agent-args '--burst-bytes 4096'] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from topologies.mtu import ROCE_FRAME
from traffic.agentclient import AgentClient, AgentError
from traffic.collectives import Rank, build_jobs
from traffic.memnet import MemNet
from traffic.nic import Nic, NicConfig
from traffic.rc import RcOptions, Wqe
from traffic.runner import JobRun
from traffic.schema import HostReport

REPO = Path(__file__).resolve().parents[1]

PACKETS_PER_GBIT = 1e9 / 8 / ROCE_FRAME  # 1 KiB WRITE Middles on the wire


def _timed(obj: Any, name: str, bucket: list[float]) -> None:
    """Wrap obj.name so that its CPU time accumulates in bucket[0]."""
    inner: Callable[..., Any] = getattr(obj, name)
    clock = time.process_time

    def wrapper(*args: Any) -> Any:
        t = clock()
        try:
            return inner(*args)
        finally:
            bucket[0] += clock() - t

    setattr(obj, name, wrapper)


def memory(size: int, qps: int) -> dict[str, Any]:
    """Sender and receiver CPU per data packet, transport alone."""
    net = MemNet()
    ranks = [Rank(host=f"h{i}", nic=f"h{i}-eth0", ip=f"10.8.0.{i + 1}",
                  mac=f"02:00:00:00:08:{i + 1:02x}") for i in range(2)]
    nics = {r.host: net.add(Nic(NicConfig(name=r.nic, mac=r.mac or "", ip=r.ip, rate_mbps=1000)))
            for r in ranks}
    jobs = build_jobs("incast", ranks, size, qps=qps, message_bytes=65536)  # h1 -> h0
    sender, receiver = [0.0], [0.0]
    for method in ("receive", "next_frame", "poll", "next_event"):
        _timed(nics["h1"], method, sender)
        _timed(nics["h0"], method, receiver)
    runs = [JobRun(j, {nics[h].name: nics[h]}, host=h, macs={}, now=0.0, wall=0.0)
            for h, j in jobs.items()]
    for run in runs:
        net.add_ticker(run)
    total = time.process_time()
    net.run(lambda: all(r.done for r in runs))
    total = time.process_time() - total
    packets = runs[1].report().counters.packets_sent
    return {
        "packets": packets,
        "sender_us_per_packet": sender[0] / packets * 1e6,
        "receiver_us_per_packet": receiver[0] / packets * 1e6,
        "sender_cpu_s_per_gbit": sender[0] / packets * PACKETS_PER_GBIT,
        "receiver_cpu_s_per_gbit": receiver[0] / packets * PACKETS_PER_GBIT,
        "whole_loop_us_per_packet": total / packets * 1e6,
    }


def transport_only(packets: int) -> dict[str, float]:
    """The NICs' own work per packet, no event loop: frames handed over in batches of 16."""
    a = Nic(NicConfig(name="a", mac="02:00:00:00:00:01", ip="10.0.0.1", rate_mbps=1e6,
                      burst_bytes=1 << 30))
    b = Nic(NicConfig(name="b", mac="02:00:00:00:00:02", ip="10.0.0.2", rate_mbps=1e6,
                      burst_bytes=1 << 30))
    options = RcOptions(window=1 << 20)
    qps = []
    for nic, local, remote, peer, mac in ((a, 0x11, 0x22, "10.0.0.2", "02:00:00:00:00:02"),
                                          (b, 0x22, 0x11, "10.0.0.1", "02:00:00:00:00:01")):
        qps.append(nic.add_qp(conn="c", local=local, remote=remote, peer_ip=peer, peer_mac=mac,
                              src_port=50000, cls=nic.config.classes.data, psn=0,
                              options=options, on_complete=lambda w, t: None,
                              on_write=lambda q, d: None))
    for i in range(packets // 64):
        a.post(qps[0], Wqe(tag=i, va=i << 16, rkey=0x1000, length=65536, imm=None,
                           path_mtu=1024), 0.0)
    clock = time.process_time
    send = receive = 0.0
    sent = 0
    while True:
        t = clock()
        batch = [f for f in (a.next_frame(0.0) for _ in range(16)) if f is not None]
        send += clock() - t
        if not batch:
            break
        sent += len(batch)
        t = clock()
        for frame in batch:
            b.receive(frame, 0.0)
        acks = [f for f in (b.next_frame(0.0) for _ in range(4)) if f is not None]
        receive += clock() - t
        t = clock()
        for ack in acks:
            a.receive(ack, 0.0)
        send += clock() - t
    return {"packets": sent, "sender_us_per_packet": send / sent * 1e6,
            "receiver_us_per_packet": receive / sent * 1e6}


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


class _Pair:
    """Two namespaces on a veth pair with an agent each."""

    def __init__(self, tmp: Path) -> None:
        tag = os.getpid() % 100000
        self.ns = [f"aztb{tag}a", f"aztb{tag}b"]
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []
        for ns in self.ns:
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("link", "add", "h0-eth0", "netns", self.ns[0], "type", "veth", "peer", "name",
            "h1-eth0", "netns", self.ns[1])
        for i, ns in enumerate(self.ns):
            _ip("-n", ns, "addr", "add", f"10.68.0.{i + 1}/24", "dev", f"h{i}-eth0")
            _ip("-n", ns, "link", "set", f"h{i}-eth0", "up")
        self.ranks = [Rank(host=f"h{i}", nic=f"h{i}-eth0", ip=f"10.68.0.{i + 1}") for i in range(2)]

    def agents(self, rate_mbps: float, extra: list[str]) -> list[AgentClient]:
        self.stop_agents()
        clients = []
        for i, ns in enumerate(self.ns):
            sock = self.tmp / f"h{i}.sock"
            self.procs.append(subprocess.Popen(
                ["ip", "netns", "exec", ns, sys.executable, "-m", "traffic.hostagent", "--host",
                 f"h{i}", "--socket", str(sock), "--nic", f"h{i}-eth0", "--rate-mbps",
                 str(rate_mbps), *extra], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            client = AgentClient(sock)
            for _ in range(300):
                try:
                    client.ping()
                    break
                except AgentError:
                    time.sleep(0.1)
            clients.append(client)
        return clients

    def stop_agents(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs.clear()

    def close(self) -> None:
        self.stop_agents()
        for ns in self.ns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def veth_run(pair: _Pair, rate_mbps: float, seconds: float, qps: int, extra: list[str],
             size: int | None = None) -> dict[str, Any]:
    clients = pair.agents(rate_mbps, extra)
    nbytes = size or int(rate_mbps * 1e6 / 8 * seconds)
    jobs = build_jobs("incast", pair.ranks, nbytes, qps=qps, message_bytes=65536, root=1,
                      start_at=time.time() + 0.5)
    with ThreadPoolExecutor(2) as pool:
        futures = {h: pool.submit(clients[int(h[1:])].run, job, 300) for h, job in jobs.items()}
        reports = {h: HostReport.model_validate(f.result()) for h, f in futures.items()}
    snd, rcv = reports["h0"], reports["h1"]
    gbit = snd.counters.bytes_sent * 8 / 1e9
    return {
        "rate_mbps": rate_mbps,
        "bytes": nbytes,
        "seconds": snd.seconds,
        "reached_mbps": snd.counters.bytes_sent * 8 / snd.seconds / 1e6,
        "packets_per_s": snd.counters.frames_sent / snd.seconds,
        "sender_cpu_share": snd.cpu_share,
        "receiver_cpu_share": rcv.cpu_share,
        "sender_cpu_s_per_gbit": snd.cpu_seconds / gbit,
        "receiver_cpu_s_per_gbit": rcv.cpu_seconds / gbit,
        "retransmitted": snd.counters.retransmitted,
        "kernel_drops": rcv.counters.kernel_drops,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=("memory", "veth"))
    parser.add_argument("--rates", default="25,50,100,200", help="paced rates, Mb/s")
    parser.add_argument("--max-rate", type=float, default=100_000.0,
                        help="the 'unpaced' run's rate, Mb/s (default 100000)")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each paced run")
    parser.add_argument("--qps", type=int, default=4)
    parser.add_argument("--agent-args", default="",
                        help="extra agent flags, e.g. '--burst-bytes 4096 --dcqcn'")
    parser.add_argument("--json", action="store_true", help="print only JSON")
    args = parser.parse_args()
    console = Console(quiet=args.json)
    out: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load": os.getloadavg()},
                           "agent_args": args.agent_args}
    if args.only in (None, "memory"):
        out["transport"] = transport_only(50_000)
        out["memory"] = memory(20 << 20, args.qps)
        t, m = out["transport"], out["memory"]
        table = Table(title="in memory: the NICs' work per data packet")
        for col in ("side", "NIC alone, us/packet", "with memnet's loop, us/packet",
                    "CPU-s per emulated Gbit (with loop)"):
            table.add_column(col, justify="right")
        for side in ("sender", "receiver"):
            table.add_row(side, f"{t[side + '_us_per_packet']:.1f}",
                          f"{m[side + '_us_per_packet']:.1f}", f"{m[side + '_cpu_s_per_gbit']:.2f}")
        console.print(table)
    if args.only in (None, "veth"):
        if os.geteuid() != 0 or shutil.which("ip") is None:
            console.print("veth: skipped (needs root and iproute2)")
            out["veth"] = {"skipped": "needs root and iproute2"}
        else:
            rates = [float(r) for r in args.rates.split(",") if r]
            rows = []
            with tempfile.TemporaryDirectory(prefix="aizone-traffic-cpu-") as tmp:
                os.chmod(tmp, 0o755)
                pair = _Pair(Path(tmp))
                try:
                    with Progress(console=console, transient=True) as progress:
                        task = progress.add_task("agents on a veth pair", total=len(rates) + 1)
                        extra = args.agent_args.split()
                        for rate in rates:
                            rows.append(veth_run(pair, rate, args.seconds, args.qps, extra))
                            progress.advance(task)
                        rows.append(veth_run(pair, args.max_rate, args.seconds, args.qps, extra,
                                             size=8 << 20))
                        progress.advance(task)
                finally:
                    pair.close()
            out["veth"] = rows
            table = Table(title="h0 -> h1 over a veth pair (one agent per namespace)")
            for col in ("rate Mb/s", "reached Mb/s", "packets/s", "sender core", "receiver core",
                        "sender CPU-s/Gbit", "receiver CPU-s/Gbit", "retx", "kernel drops"):
                table.add_column(col, justify="right")
            for r in rows:
                table.add_row(f"{r['rate_mbps']:g}", f"{r['reached_mbps']:.1f}",
                              f"{r['packets_per_s']:.0f}", f"{r['sender_cpu_share']:.2f}",
                              f"{r['receiver_cpu_share']:.2f}", f"{r['sender_cpu_s_per_gbit']:.2f}",
                              f"{r['receiver_cpu_s_per_gbit']:.2f}", str(r["retransmitted"]),
                              str(r["kernel_drops"]))
            console.print(table)
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
