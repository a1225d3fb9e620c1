"""Tests for topologies.net: shaped links, switch port settings, pinned namespaces, where queues build.

These build real networks (root), holding the shared network lock (conftest.py).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from topo_net_support import assert_clean, leftovers

from tests.provides import unavailable
from topologies.addressing import AddressPlan, plan_addresses
from topologies.attach import FabricRuntime
from topologies.errors import NetworkError
from topologies.net import FabricNet
from topologies.nodes import SWITCH_CLASSES
from topologies.pki import FabricPki
from topologies.runstate import read_state
from topologies.spec import FabricSpec, load_spec, parse_spec

pytestmark = pytest.mark.root

ROOT = Path(__file__).resolve().parents[3]
RACK = ROOT / "topologies" / "rack.yaml"


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def tc(*args: str, netns: str | None = None) -> str:
    argv = ["tc", *(["-n", netns] if netns else []), *args]
    return subprocess.run(argv, capture_output=True, text=True).stdout


@pytest.fixture
def rack(state_dir: Path, target: str) -> Iterator[FabricNet]:
    before = leftovers()
    with FabricNet(plan_addresses(load_spec(RACK)), switch=SWITCH_CLASSES[target],
                   log_dir=state_dir / "logs", state_directory=state_dir) as net:
        yield net
    assert_clean(before)


def test_links_are_shaped_on_both_ends_at_the_tier_rate(rack: FabricNet, target: str) -> None:
    """rack.yaml's host links (20 Mb/s): an htb class at 20Mbit on the host end, and on the
    switch end 5 % above the rate the switch's port runs at. p4switch's ports pace bits at
    the tier's rate: 20 x 1.05 = 21 Mb/s, which tc shows as 21Mbit. BMv2's queues pace
    packets, at the tier's rate in the preset's jumbo links' 4,154-B frames rounded up,
    20e6 / 33,232 = 601.8 -> 602 frames/s = 20,005,664 b/s, x 1.05 = 21,005,947 b/s, which
    tc shows as 21005Kbit."""
    switch_end = "rate 21Mbit" if target == "p4switch" else "rate 21005Kbit"
    assert switch_end in tc("class", "show", "dev", "rtsw1-eth1")
    assert "rate 20Mbit" in tc("class", "show", "dev", "h1-eth0", netns="aizone-h1")
    assert "rate 20Mbit" in tc("class", "show", "dev", "h2-eth0", netns="aizone-h2")


def test_switch_starts_with_its_port_settings(rack: FabricNet, target: str) -> None:
    """8 priority queues on both targets; p4switch: 0.02 Gb/s, 64 packets, native PFC on
    class 3 (its default in a fabric), ctl."""
    cmd = cmdline(rack.switch("rtsw1").proc.pid)
    assert cmd[cmd.index("--priority-queues") + 1] == "8"
    if target == "p4switch":
        text = " ".join(cmd)
        for flag in ("--port-speed 1=0.02", "--port-speed 2=0.02", "--queue-depth 1=64",
                     "--queue-depth 2=64", "--pfc 1=3", "--pfc 2=3",
                     f"--ctl-addr unix:{rack.state_directory / 'switches' / 'rtsw1.ctl'}"):
            assert flag in text
    else:
        assert cmd.index("--priority-queues") > cmd.index("--")


def test_run_json_records_what_a_restart_needs(rack: FabricNet, state_dir: Path) -> None:
    """Per switch: the exact command line, port settings, gRPC/Thrift/ctl ports, log, pid."""
    state = read_state(state_dir)
    assert state is not None
    (sw,) = state.switches
    assert sw["argv"] == cmdline(rack.switch("rtsw1").proc.pid)
    assert (sw["grpc_port"], sw["thrift_port"], sw["ctl_port"]) == (20001, 9090, 52001)
    assert sw["pid"] == rack.switch("rtsw1").proc.pid and sw["log"].endswith("rtsw1.log")
    assert sw["settings"]["queues"] == 8
    assert [(p["port"], p["rate_mbps"], p["queue"], p["pfc"], p["xoff"], p["xon"])
            for p in sw["settings"]["ports"]] == [(1, 20, 64, [3], 24, 12), (2, 20, 64, [3], 24, 12)]
    assert state.netns == ["aizone-h1", "aizone-h2"]


def test_host_namespaces_are_pinned_until_stop(state_dir: Path, target: str) -> None:
    """/run/netns/aizone-h1 is h1's namespace while up, and gone after stop."""
    before = leftovers()
    net = FabricNet(plan_addresses(load_spec(RACK)), switch=SWITCH_CLASSES[target],
                    state_directory=state_dir).start()
    try:
        pin = Path("/run/netns/aizone-h1")
        assert pin.stat().st_ino == Path(f"/proc/{net.host('h1').pid}/ns/net").stat().st_ino
    finally:
        net.stop()
    assert not pin.exists()
    assert_clean(before)


def test_a_leftover_pinned_namespace_is_refused_before_anything_starts(state_dir: Path) -> None:
    """An aizone-h1 namespace already there: NetworkError saying `aizone down`; nothing built."""
    if Path("/run/netns/aizone-h1").exists():
        unavailable("netlock", "aizone-h1 exists: another fabric is running (is the network lock held?)")
    subprocess.run(["ip", "netns", "add", "aizone-h1"], check=True)
    try:
        before = leftovers()
        with pytest.raises(NetworkError, match="aizone-h1 already exist.*aizone down"):
            FabricNet(plan_addresses(load_spec(RACK)), switch=SWITCH_CLASSES["p4switch"],
                      state_directory=state_dir).start()
        assert_clean(before)
    finally:
        subprocess.run(["ip", "netns", "delete", "aizone-h1"])


# --- where queues build ------------------------------------------------------------

# Three hosts on one RTSW: h1 and h3 each send slightly above line rate to h2, so rtsw1's
# port 2 gets twice what it can send. The incast's links: p4switch at 20 Mb/s; BMv2 at 10,
# where the two senders and BMv2's 4,800 frames a second at 20 Mb/s took both of this
# machine's cores, and BMv2's egress thread, held up, let out bursts of 20-34 frames into
# tc (2.6-5.6 packets on average).
INCAST_MBPS = {"p4switch": 20, "bmv2": 10}


def _incast(target: str) -> dict[str, Any]:
    """Three hosts on one RTSW, with the target's `INCAST_MBPS` links."""
    return {"racks": [{"hosts": 3}], "links": {"host": {"rate_mbps": INCAST_MBPS[target]}},
            "programs": {"rtsw": str(ROOT / "p4" / "rtsw.p4")}}


# Each sender offers 1.04 times the link's rate (argv[3], Mb/s) in 1,082-byte frames (1,040
# of UDP payload): a full RoCEv2 frame at the default MTU's 1,024-byte path MTU, the frame a
# queue paced in packets (BMv2's) is paced for; 2,311 of them a second fill 20 Mb/s.
SENDER = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, int(sys.argv[2]))
gap = 1 / (1.04 * float(sys.argv[3]) * 1e6 / (8 * 1082))
t = time.monotonic()
end = t + 3
while t < end:
    try:
        s.sendto(b"x" * 1040, (sys.argv[1], 9999))
    except OSError:
        pass
    t += gap
    time.sleep(max(0.0, t - time.monotonic()))
"""


class _Controller:
    """The daemon's sessions (finsy) in a thread of their own: pipeline, routes, QoS, settings."""

    def __init__(self, spec: FabricSpec, plan: AddressPlan, target: str, build: Path,
                 rt: FabricRuntime, pki: FabricPki | None) -> None:
        from controller.build import compile_roles
        from controller.intent import FabricIntent
        from controller.sessions import FabricSessions

        programs = compile_roles({"rtsw": ROOT / "p4" / "rtsw.p4"}, build, target=target)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def start() -> FabricSessions:
            s = FabricSessions(plan, programs, FabricIntent(spec=spec, plan=plan, mode="ecmp",
                                                            program_pfc=target == "bmv2"),
                               configure=lambda n: asyncio.to_thread(rt.configure_switch, n),
                               tls=pki)
            await s.start()
            await s.wait_ready(60)
            return s

        self.sessions = asyncio.run_coroutine_threadsafe(start(), self.loop).result(90)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.sessions.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _until_sent(intf: str) -> None:
    """Wait until `intf` has sent the last of its queue: its tx_packets still for 300 ms (a
    full BMv2 hold queue, 1,024 frames, takes 0.9 s at 10 Mb/s), at most 20 s."""
    stats = Path("/sys/class/net") / intf / "statistics" / "tx_packets"
    last, still = -1, 0.0
    for _ in range(400):
        now = int(stats.read_text())
        still = still + 0.05 if now == last else 0.0
        if still >= 0.3:
            return
        last = now
        time.sleep(0.05)
    raise AssertionError(f"{intf} still sending after 20 s")


def _switch_peak(rt: FabricRuntime, target: str, thrift_port: int, port: int, tc_: int) -> int:
    """Largest queue depth seen at (port, class): p4switch's TM, or the program's register."""
    if target == "p4switch":
        stats = rt.tm_stats("rtsw1")
        assert stats is not None
        return int(stats[f"{port}/{tc_}"]["max_depth"])
    out = subprocess.run(["simple_switch_CLI", "--thrift-port", str(thrift_port)],
                         input=f"register_read FabricEgress.counters.queue_peak {port * 8 + tc_}\n",
                         capture_output=True, text=True).stdout
    m = re.search(r"queue_peak\[\d+\]\s*=\s*(\d+)", out)
    assert m, out
    return int(m.group(1))


def _statistics_read_in_one_rpc(ctl: _Controller, target: str, cell: int) -> None:
    """The daemon's statistics read after the incast: every counter in one Read gives each
    cell what a Read of that counter alone gives; both queue registers in one Read, then
    cleared in one Write (p4switch; BMv2 serves no register over P4Runtime: none read)."""
    from controller.stats import COUNTERS, REGISTERS

    s = ctl.sessions

    def call(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, ctl.loop).result(30)

    wanted = {COUNTERS["rx"]: [1, 2, 3], COUNTERS["tx"]: [1, 2, 3],
              COUNTERS["tx_tc"]: [cell, cell + 8], COUNTERS["drops"]: [0, 1, 2],
              "FabricIngress.no_such_counter": [1]}
    together = call(s.read_counter_sets("rtsw1", wanted))
    assert together["FabricIngress.no_such_counter"] == {}
    for name, cells in wanted.items():
        assert together[name] == call(s.read_counters("rtsw1", name, cells)), name
    # h2's port sent the incast (thousands of frames), and h1's and h3's ports received it
    assert together[COUNTERS["tx_tc"]][cell].packets > 1000
    assert together[COUNTERS["rx"]][1].packets > 1000 and together[COUNTERS["rx"]][3].packets > 1000
    regs = {REGISTERS["peak"]: [cell], REGISTERS["depth"]: [cell]}
    got = call(s.read_register_sets("rtsw1", regs))
    if target == "bmv2":
        assert got == {REGISTERS["peak"]: {}, REGISTERS["depth"]: {}}
        return
    assert got[REGISTERS["peak"]][cell] > 0, got  # the queue built there
    call(s.write_register_sets("rtsw1", {REGISTERS["peak"]: {cell: 0}, REGISTERS["depth"]: {cell: 0}}))
    assert call(s.read_register_sets("rtsw1", regs)) == {REGISTERS["peak"]: {cell: 0},
                                                          REGISTERS["depth"]: {cell: 0}}


def _without_longest_backlog(seen: list[int]) -> list[int]:
    """`seen` less its longest run of non-zero samples (the first of the longest)."""
    best, start = (0, 0), None
    for i, n in enumerate([*seen, 0]):
        if n and start is None:
            start = i
        elif not n and start is not None:
            if i - start > best[1] - best[0]:
                best = (start, i)
            start = None
    return seen[:best[0]] + seen[best[1]:]


@pytest.mark.parametrize(("dscp", "tc_"), [(0, 0), (26, 3)], ids=["class-0", "lossless-class-3"])
def test_congestion_queues_in_the_switch_not_in_tc(state_dir: Path, target: str,
                                                   tmp_path: Path, dscp: int, tc_: int) -> None:
    """2:1 incast on port 2: the switch's queue fills (64 packets on p4switch, which drops
    there; on BMv2 the port's queues with PFC take `ports.HOLD_QUEUE_PACKETS`) and the tc
    shaper behind it is empty most of the time, holds no backlog that stands, and drops none:
    the port's queue is paced at the link's rate (for full RoCEv2 frames on BMv2, whose
    queues count packets), with the shaper 5 % faster. Lossless class 3: XOFF/XON 24/12 from
    the spec (set after the pipeline) and PAUSE frames sent upstream (p4switch)."""
    before = leftovers()
    spec = parse_spec(_incast(target), source="incast.yaml")
    plan = plan_addresses(spec)
    # p4switch's native PFC here: this test holds its traffic manager's counters (the
    # programs' own PFC is tests/dataplane/test_pfc.py's, on both targets).
    with FabricNet(plan, switch=SWITCH_CLASSES[target], log_dir=state_dir / "logs",
                   state_directory=state_dir, native_pfc=True) as net:
        rt = FabricRuntime.from_net(net)
        # The daemon's way: pipeline pushed, port settings applied, then routes,
        # QoS and the probe ACL reconciled.
        ctl = _Controller(spec, plan, target, tmp_path / "build", rt, net.pki)
        try:
            senders = [rt.host_popen(h, [sys.executable, "-c", SENDER, plan.host("h2").ip,
                                         str(dscp << 2), str(INCAST_MBPS[target])])
                       for h in ("h1", "h3")]
            seen = []  # tc's backlog on the switch's side, every 50 ms
            while any(p.poll() is None for p in senders):
                m = re.search(r"backlog \d+b (\d+)p", tc("-s", "qdisc", "show", "dev", "rtsw1-eth2"))
                seen.append(int(m.group(1)) if m else 0)
                time.sleep(0.05)
            _until_sent("rtsw1-eth2")
            peak = _switch_peak(rt, target, plan.switch("rtsw1").thrift_port, 2, tc_)
            tc_drops = re.search(r"dropped (\d+)", tc("-s", "qdisc", "show", "dev", "rtsw1-eth2"))
            assert peak >= 60, f"switch queue peak {peak} of 64"
            assert tc_drops is not None and tc_drops.group(1) == "0"
            # tc empty most of the time, and no standing backlog: a shaper no faster than the
            # port kept one in tc, empty in 10-21 % of samples on BMv2 and about as few on
            # p4switch at 20 Mb/s; 5 % faster, 90-100 % (BMv2 up to 3 packets after its egress
            # thread was held up, p4switch up to 1), 68 % on BMv2 with a busy loop on one of
            # two cores. On average under 2 packets (faster: BMv2 0.02-0.2, p4switch 0.00-0.07;
            # no faster: BMv2 1.1-6.3, p4switch 0.5-2.8), leaving out the longest run of
            # samples with a backlog: a switch process held up for most of a second on this
            # shared machine leaves one burst in tc (BMv2 once: 16 samples of 3-44 packets in
            # 58, the rest empty but 3), which is the scheduler's, not a standing backlog.
            empty = sum(1 for n in seen if n == 0)
            assert empty >= len(seen) / 2, f"tc on the switch side held {seen}"
            rest = _without_longest_backlog(seen)
            assert sum(rest) <= 2 * len(rest), f"tc on the switch side held {seen}"
            stats = rt.tm_stats("rtsw1")
            if stats is not None:  # p4switch: its own drop and PFC counters
                assert stats[f"2/{tc_}"]["dropped"] > 0
                if tc_ == 3:
                    assert stats["1/3"]["pfc"]["xoff"] == 24 and stats["1/3"]["pfc"]["xon"] == 12
                    assert stats["1/3"]["pauses_sent"] > 0 and stats["3/3"]["pauses_sent"] > 0
            _statistics_read_in_one_rpc(ctl, target, 2 * 8 + tc_)
        finally:
            ctl.close()
    assert_clean(before)
