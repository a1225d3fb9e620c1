"""What a link between servers costs per frame: a VXLAN tunnel against a local veth, in one run.

A fabric spread over servers (`aizone up --servers`, docs/scale-out.md)
carries every link that crosses servers as a pair of VXLAN devices, made
in each server's own network namespace and moved into the node, as
`topologies.cluster.ClusterLink` does. This bench builds both kinds of
link between two node namespaces on this machine:

- **veth**: a veth pair (a link inside one server);
- **vxlan**: two "server" namespaces joined by a veth (the wire between
  the servers), a VXLAN device made in each and moved into its node
  (VNI 77, UDP 4789, MTU 1450).

and sends 1,082-byte frames (a full RoCEv2 frame of the fabric) one way
over each, from a raw socket in one node to a raw socket in the other:
first paced (`--pps`, the same rate over both, so the machine's CPU per
delivered frame compares the two paths), then unpaced (as fast as one
Python sender goes, the frames delivered per second). Rounds alternate
between the two kinds of link and the medians are printed, with the
machine's load, so a round the machine was busy elsewhere shows.

CPU per frame is the whole machine's busy time (/proc/stat, every core,
softirq included, less what the machine was busy with in a second of
nothing sent before the round; the sender's interpreter start, tens of
milliseconds, counts in both rows) over the frames delivered: the sender's and receiver's
own work is the same on both links, so the difference between the two
rows is the tunnel's encapsulation, the extra UDP/IP stack pass and the
second device. On real servers the wire adds the NIC's work and the
network's latency, which this cannot show.

    sudo .venv/bin/python bench/tunnel_cost.py [--pps 20000] [--seconds 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

FRAME = 1082  # the fabric's largest RoCEv2 data frame on the wire (no FCS)
ETHERTYPE = 0x88B5  # IEEE local experimental: nothing else on the link takes it
PREFIX = "azb"  # namespaces and links of this bench (removed before and after)
HZ = os.sysconf("SC_CLK_TCK")


# --- the two ends (run inside a node namespace) ---------------------------------------


def _frame(intf: str) -> bytes:
    mac = bytes.fromhex(Path(f"/sys/class/net/{intf}/address").read_text().strip()
                        .replace(":", ""))
    return b"\xff" * 6 + mac + ETHERTYPE.to_bytes(2, "big") + bytes(FRAME - 14)


def send(intf: str, seconds: float, pps: int) -> None:
    """Send frames out of `intf` for `seconds` (at `pps`, or as fast as it can when 0)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((intf, 0))
    frame = _frame(intf)
    sent = 0
    t0 = time.monotonic()
    end = t0 + seconds
    while True:
        now = time.monotonic()
        if now >= end:
            break
        due = int((now - t0) * pps) + 1 if pps else sent + 64
        while sent < due:
            try:
                s.send(frame)
            except BlockingIOError:
                break
            except OSError:  # ENOBUFS: the queue is full, as a NIC would drop
                break
            sent += 1
        if pps:
            time.sleep(0.0005)
    print(json.dumps({"sent": sent}))


def receive(intf: str, seconds: float) -> None:
    """Count this bench's frames arriving at `intf` for `seconds` (after a first one)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE))
    s.bind((intf, ETHERTYPE))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.settimeout(0.2)
    got = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            got += len(s.recv(2048)) == FRAME
        except TimeoutError:
            continue
    print(json.dumps({"received": got}))


# --- the links -------------------------------------------------------------------------


def sh(*argv: str, check: bool = True) -> str:
    out = subprocess.run(argv, capture_output=True, text=True)
    if check and out.returncode != 0:
        raise SystemExit(f"bench: {' '.join(argv)}: {out.stderr.strip()}")
    return out.stdout


def ns(name: str, *argv: str, check: bool = True) -> str:
    return sh("ip", "netns", "exec", f"{PREFIX}-{name}", *argv, check=check)


def teardown() -> None:
    for name in sh("ip", "netns", "list").split():
        if name.startswith(f"{PREFIX}-"):
            sh("ip", "netns", "delete", name, check=False)


def build() -> dict[str, tuple[str, str, str, str]]:
    """Both links; kind -> (sender namespace, its interface, receiver namespace, its)."""
    teardown()
    for name in ("a1", "b1", "a2", "b2", "sa", "sb"):
        sh("ip", "netns", "add", f"{PREFIX}-{name}")
        ns(name, "ip", "link", "set", "lo", "up")
    # veth: one pair between the two nodes
    sh("ip", "link", "add", "azb-a1", "netns", f"{PREFIX}-a1", "type", "veth",
       "peer", "name", "azb-b1", "netns", f"{PREFIX}-b1")
    # vxlan: the servers' wire, then a device on each server moved into its node
    sh("ip", "link", "add", "azb-sa", "netns", f"{PREFIX}-sa", "type", "veth",
       "peer", "name", "azb-sb", "netns", f"{PREFIX}-sb")
    for srv, addr, peer, node in (("sa", "10.99.0.1", "10.99.0.2", "a2"),
                                  ("sb", "10.99.0.2", "10.99.0.1", "b2")):
        ns(srv, "ip", "addr", "add", f"{addr}/30", "dev", f"azb-{srv}")
        ns(srv, "ip", "link", "set", f"azb-{srv}", "up")
        ns(srv, "ip", "link", "add", f"azb-{node}", "type", "vxlan", "id", "77", "local", addr,
           "remote", peer, "dstport", "4789")
        ns(srv, "ip", "link", "set", f"azb-{node}", "mtu", "1450", "netns", f"{PREFIX}-{node}")
    for node in ("a1", "b1", "a2", "b2"):
        ns(node, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        ns(node, "ip", "link", "set", f"azb-{node}", "up")
    return {"veth": ("a1", "azb-a1", "b1", "azb-b1"),
            "vxlan": ("a2", "azb-a2", "b2", "azb-b2")}


# --- measuring -------------------------------------------------------------------------


def machine_busy() -> tuple[float, float]:
    """(busy, total) seconds of every core since boot (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / HZ, sum(fields) / HZ


def idle_rate(seconds: float = 1.0) -> float:
    """The machine's busy cores while this bench sends nothing (what others use)."""
    b0, _ = machine_busy()
    time.sleep(seconds)
    b1, _ = machine_busy()
    return (b1 - b0) / seconds


def one(link: tuple[str, str, str, str], seconds: float, pps: int,
        idle: float) -> dict[str, float]:
    a_ns, a_if, b_ns, b_if = link
    me = [sys.executable, str(Path(__file__).resolve())]
    recv = subprocess.Popen(["ip", "netns", "exec", f"{PREFIX}-{b_ns}", *me, "--_receive", b_if,
                             "--seconds", str(seconds + 1.0)],
                            stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    busy0, total0 = machine_busy()
    t0 = time.monotonic()
    out = ns(a_ns, *me, "--_send", a_if, "--seconds", str(seconds), "--pps", str(pps))
    busy1, total1 = machine_busy()
    took = time.monotonic() - t0
    got = json.loads(recv.communicate(timeout=seconds + 10)[0])["received"]
    sent = json.loads(out)["sent"]
    ours = max(0.0, busy1 - busy0 - idle * took)
    return {"sent": sent, "received": got, "pps": got / seconds,
            "us_per_frame": ours / got * 1e6 if got else float("nan"),
            "machine": (busy1 - busy0) / ((total1 - total0) or 1)}


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--pps", type=int, default=20000, help="the paced rate (frames/s)")
    p.add_argument("--seconds", type=float, default=3.0, help="each round's sending time")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", action="store_true")
    p.add_argument("--_send", help=argparse.SUPPRESS)
    p.add_argument("--_receive", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args._send:
        send(args._send, args.seconds, args.pps)
        return 0
    if args._receive:
        receive(args._receive, args.seconds)
        return 0
    if os.geteuid() != 0:
        print("bench: needs root (network namespaces)", file=sys.stderr)
        return 2
    links = build()
    rows: dict[str, dict[str, list[dict[str, float]]]] = {
        k: {"paced": [], "unpaced": []} for k in links}
    load0 = os.getloadavg()[0]
    try:
        for _ in range(args.rounds):
            idle = idle_rate()
            for kind, link in links.items():
                rows[kind]["paced"].append(one(link, args.seconds, args.pps, idle))
                rows[kind]["unpaced"].append(one(link, args.seconds, 0, idle))
    finally:
        teardown()
    load1 = os.getloadavg()[0]

    def med(kind: str, way: str, key: str) -> float:
        return statistics.median(r[key] for r in rows[kind][way])

    summary = {kind: {"paced_pps": med(kind, "paced", "pps"),
                      "paced_us_per_frame": med(kind, "paced", "us_per_frame"),
                      "paced_machine": med(kind, "paced", "machine"),
                      "unpaced_pps": med(kind, "unpaced", "pps"),
                      "unpaced_us_per_frame": med(kind, "unpaced", "us_per_frame"),
                      "unpaced_machine": med(kind, "unpaced", "machine")}
               for kind in links}
    if args.json:
        print(json.dumps({"frame": FRAME, "pps": args.pps, "rounds": args.rounds,
                          "load": [load0, load1], "summary": summary, "rounds_raw": rows}))
        return 0
    print(f"{FRAME}-byte frames, {args.rounds} round(s) of {args.seconds:g} s per way, medians; "
          f"load average {load0:.1f} -> {load1:.1f} on {os.cpu_count()} cores")
    print(f"{'link':<6} {'paced pps':>10} {'us CPU/frame':>13} {'machine':>8}  "
          f"{'unpaced pps':>11} {'us CPU/frame':>13} {'machine':>8}")
    for kind, s in summary.items():
        print(f"{kind:<6} {s['paced_pps']:>10,.0f} {s['paced_us_per_frame']:>13.1f} "
              f"{s['paced_machine']:>8.0%}  {s['unpaced_pps']:>11,.0f} "
              f"{s['unpaced_us_per_frame']:>13.1f} {s['unpaced_machine']:>8.0%}")
    veth, vx = summary["veth"], summary["vxlan"]
    print(f"the tunnel: +{vx['paced_us_per_frame'] - veth['paced_us_per_frame']:.1f} us of CPU "
          f"per frame at {args.pps:,} pps ({vx['paced_us_per_frame'] / veth['paced_us_per_frame']:.2f}x "
          f"a veth); unpaced {vx['unpaced_pps'] / veth['unpaced_pps']:.2f}x a veth's frames/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
