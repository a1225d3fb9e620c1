"""Fabric tests on ai_zone_small (4 RTSWs x 2 hosts x 2 NICs, 2 CTSWs) through the daemon.

One fabric for the module, brought up the way a user does (`aizone up`),
talked to through the CLI and the daemon's API, torn down with `aizone
down` at the end (which must leave nothing). Tests that change the fabric
(mode, links, processes) put it back as they found it. The order matters
only for the last ones, which kill processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fabric_support import (
    ROOT,
    Flow,
    aizone,
    assert_check_passes,
    assert_clean,
    in_host,
    leftovers,
    require_tshark,
)
from pfc_support import assert_lossless

from controller.client import ApiClient
from controller.lossless import run_incast
from topologies.runstate import read_state

ZONE = ROOT / "topologies" / "ai_zone_small.yaml"
TCS = 8


class Zone:
    """The running fabric: the API client and what the tests need to know of it."""

    def __init__(self, api: ApiClient, status: dict[str, Any], tmp: Path) -> None:
        self.api = api
        self.status = status
        self.tmp = tmp
        self.hosts = {h["name"]: h for h in status["hosts"]}

    def nic(self, host: str, k: int = 0) -> dict[str, str]:
        nic: dict[str, str] = self.hosts[host]["nics"][k]
        return nic

    def flow(self, src: str, dst: str, **kw: Any) -> Flow:
        return Flow(src, self.nic(src)["intf"], dst, self.nic(dst)["intf"], self.nic(dst)["ip"],
                    **kw)

    def cells(self, switch: str, counter: str, indexes: list[int]) -> dict[int, int]:
        data = self.api.get(f"/counters/{switch}/{counter}", index=indexes)
        return {int(i): c["packets"] for i, c in data["cells"].items()}

    def wait(self, what: Any, timeout: float = 15.0, every: float = 0.2) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            got = what()
            if got or time.monotonic() > deadline:
                return got
            time.sleep(every)


@pytest.fixture(scope="module")
def zone(target: str, build_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zone]:
    before = leftovers()
    up = aizone("up", str(ZONE), "--target", target, "--build-dir", str(build_dir), "--json")
    assert up.returncode == 0, up.stdout + up.stderr
    status = json.loads(up.stdout)
    api = ApiClient()
    try:
        yield Zone(api, status, tmp_path_factory.mktemp("zone"))
    finally:
        api.close()
        down = aizone("down")
        assert down.returncode == 0, down.stderr
        assert_clean(before)


def test_up_reconciled_every_switch_with_its_entries(zone: Zone) -> None:
    """Every switch process lives, holds a primary session, and was written at start."""
    st = zone.api.get("/status")
    assert st["phase"] == "up" and st["name"] == "ai_zone_small"
    assert [s["name"] for s in st["switches"]] == ["rtsw1", "rtsw2", "rtsw3", "rtsw4",
                                                  "ctsw1", "ctsw2"]
    for s in st["switches"]:
        assert s["alive"] and s["ready"], s
        rec = s["last_reconcile"]
        assert rec["reason"] == "start" and rec["counts"]["insert"] > 20, rec
    assert st["scale"]["host"] == {"rate_mbps": 10.0, "scale": 40000.0}


def test_entries_read_back_equal_the_intent(zone: Zone) -> None:
    """`aizone routes --json`: each switch's entries read back equal the intent."""
    proc = aizone("routes", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["mode"] == "eecmp" and data["failed"] == []
    for name, sw in data["switches"].items():
        assert sw["matches_intent"], (name, sw["diff"])
    rtsw1 = data["switches"]["rtsw1"]["entries"]
    # rtsw1's four NICs by /32 to their ports, its rack /24 dropped, other racks to the group
    assert any(e.startswith("FabricIngress.routing.ipv4_route dst_addr=10.0.0.1/32 ")
               for e in rtsw1)
    assert any(e.startswith("FabricIngress.routing.ipv4_route dst_addr=10.0.0.0/24 -> "
                            "drop_no_route") for e in rtsw1)
    assert any(e.startswith("FabricIngress.routing.ipv4_route dst_addr=10.0.3.0/24 -> "
                            "set_next_id") for e in rtsw1)


def test_check_passes_for_every_pair(zone: Zone) -> None:
    """`aizone check`: every NIC pings every other host's NIC, and RoCEv2 crosses every pair
    (8 hosts x 2 NICs)."""
    assert_check_passes(hosts=8, nics=2)


def test_roce_data_and_control_classes_land_in_their_queues(zone: Zone) -> None:
    """DSCP 26 -> class 3 cells of the egress port move; DSCP 48 -> class 7; never class 0."""
    # h1 (rack 0) to h3 (rack 1): out of rtsw1 through one of its uplinks (ports 5, 6).
    cells = [p * TCS + tc for p in (5, 6) for tc in (0, 3, 7)]
    before = zone.cells("rtsw1", "FabricEgress.counters.tx_port_tc", cells)
    sent, got = zone.flow("h1", "h3", messages=40, size=256, cls="data").run()
    assert got["messages_complete"] == 40, got
    mid = zone.cells("rtsw1", "FabricEgress.counters.tx_port_tc", cells)
    sent7, got7 = zone.flow("h1", "h3", messages=30, size=256, cls="control").run()
    assert got7["messages_complete"] == 30, got7
    after = zone.cells("rtsw1", "FabricEgress.counters.tx_port_tc", cells)

    def moved(a: dict[int, int], b: dict[int, int], tc: int) -> int:
        return sum(b[p * TCS + tc] - a[p * TCS + tc] for p in (5, 6))

    # Every data packet left rtsw1's uplinks in class 3: at least what reached h3, at most
    # what h1 sent (the two are equal unless one was lost on the way in and sent again).
    assert got["packets"] <= moved(before, mid, 3) <= sent["packets"], (got, sent)
    assert got["packets"] >= 40
    assert moved(mid, after, 3) == 0
    # Every control-class packet that reached h3 left in class 7 (which also carries the
    # controller's link probes: a few more).
    assert moved(mid, after, 7) >= got7["packets"] >= 30, (got7, sent7)
    assert moved(before, after, 0) < sent["packets"]  # RoCE never lands in class 0


def test_stats_move_under_traffic(zone: Zone) -> None:
    """A flow across racks shows up as load on rtsw1's uplinks in `aizone stats --json`.

    4,000 KiB at 4 Mb/s lasts about 8 s: several of the daemon's 1-s statistics
    intervals. `stats` is asked until it shows the load or the sender is done
    (on a busy machine the sender takes seconds to start and a `stats` call
    seconds to answer), and the load must have been seen while it sent.
    """
    flow = zone.flow("h1", "h7", messages=4000, size=1024, rate_mbps=4, qps="17,18,19,20")
    flow.start_receiver(timeout=150)
    seen: list[float] = []

    def uplink_bps() -> float:
        snap = json.loads(aizone("stats", "--json").stdout)
        up = [lk["a_to_b"]["bps"] for lk in snap["links"]
              if lk["a"] == "rtsw1" and lk["tier"] == "rtsw_ctsw" and lk["a_to_b"]]
        seen.append(sum(up))
        return sum(up)

    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.update(flow.send(timeout=150)))
    t.start()
    zone.wait(lambda: uplink_bps() > 1e6 or not t.is_alive(), timeout=150, every=0.5)
    t.join(150)
    assert flow.received()["messages_complete"] == 4000
    assert max(seen) > 1e6, f"uplink load seen while 4 Mb/s crossed rtsw1's uplinks: {seen}"


def test_mode_switch_under_a_steady_flow_loses_nothing(zone: Zone) -> None:
    """pin -> ecmp -> eecmp while 4 QPs stream h2 -> h8: the flow runs through every change
    and every packet arrives.

    Around each change the flow's packets are counted at both ends of the fabric, into
    rtsw1 from h2-eth0 and out of rtsw4 to h8-eth0: both counts moved since the previous
    change before this one is asked for, and moved again after it was written (packets
    sent and delivered under the new routes). ~25 s of data at 3 Mb/s spans the changes.
    """
    links = {lk["id"] for lk in zone.status["links"]}
    assert {"h2-eth0--rtsw1-eth3", "h8-eth0--rtsw4-eth3"} <= links  # the ports counted
    step = 20  # packets (~55 ms of the flow): more than an ARP or two
    messages = 9000

    def ends() -> tuple[int, int]:
        """(into rtsw1 from h2-eth0, out of rtsw4 to h8-eth0), packets."""
        return (zone.cells("rtsw1", "FabricIngress.counters.rx_port", [3])[3],
                zone.cells("rtsw4", "FabricEgress.counters.tx_port", [3])[3])

    def moved_past(ref: tuple[int, int]) -> tuple[int, int] | None:
        now = ends()
        return now if now[0] >= ref[0] + step and now[1] >= ref[1] + step else None

    flow = zone.flow("h2", "h8", messages=messages, size=1024, rate_mbps=3,
                     qps="17,18,19,20")
    flow.start_receiver(timeout=150)
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.update(flow.send(timeout=150)))
    last = ends()
    t0 = time.monotonic()
    t.start()
    changes: list[dict[str, Any]] = []
    counted: list[tuple[str, float, tuple[int, int], tuple[int, int], tuple[int, int]]] = []
    try:
        for mode in ("pin", "ecmp", "eecmp"):
            into = zone.wait(lambda ref=last: moved_past(ref), timeout=60, every=0.05)
            assert into, (f"the flow was not running into the change to {mode} "
                          f"({time.monotonic() - t0:.1f} s in): {last} -> {ends()}, {counted}")
            changes.append(zone.api.post("/mode", {"mode": mode}))
            written = ends()
            out = zone.wait(lambda ref=written: moved_past(ref), timeout=60, every=0.05)
            assert out, (f"the flow stopped at the change to {mode} ({time.monotonic() - t0:.1f}"
                         f" s in, the change took {changes[-1]['seconds']} s): {into} before, "
                         f"{written} once written, {ends()} now; earlier {counted}")
            counted.append((mode, round(time.monotonic() - t0, 1), into, written, out))
            last = out
    finally:
        t.join(150)
    got = flow.received(timeout=150)
    assert [c["mode"] for c in changes] == ["pin", "ecmp", "eecmp"]
    assert changes[0]["writes"]["rtsw1"]["insert"] > 0  # pin really rewrote the routes
    assert result["packets"] > 0 and got["packets"] == result["packets"], (result, got, counted)
    assert got["messages_complete"] == messages and got["icrc_errors"] == 0


def test_link_down_reroutes_and_up_restores(zone: Zone) -> None:
    """`aizone link down rtsw1 ctsw1`: rerouted, reported, check passes; `up` puts it back."""
    proc = aizone("link", "down", "rtsw1", "ctsw1", "--json")
    assert proc.returncode == 0, proc.stderr
    down = json.loads(proc.stdout)
    try:
        assert down["link"] == "rtsw1-eth5--ctsw1-eth1" and down["up"] is False
        assert down["reconverged_after"] > 0 and "rtsw1" in down["writes"]
        st = zone.api.get("/status")
        assert [lk["id"] for lk in st["links"] if not lk["up"]] == ["rtsw1-eth5--ctsw1-eth1"]
        routes = zone.api.get("/routes", switch="rtsw1")["switches"]["rtsw1"]
        assert routes["matches_intent"]
        check = zone.api.post("/check", {"roce": False})
        assert check["ok"], check["failed"][:3]
    finally:
        up = aizone("link", "up", "rtsw1", "ctsw1", "--json")
    assert up.returncode == 0, up.stderr
    assert json.loads(up.stdout)["up"] is True
    assert zone.api.get("/status")["failed"] == []


def test_probes_detect_a_link_that_dies_under_the_controller(zone: Zone) -> None:
    """A link dying silently (carrier kept): probes find it, routes move, then move back."""
    proc = aizone("link", "down", "rtsw2", "ctsw2", "--silent", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["silent"] is True
    try:
        failed = zone.wait(lambda: zone.api.get("/status")["failed"], timeout=10)
        assert failed == ["rtsw2-eth6--ctsw2-eth2"]
        st = zone.api.get("/status")
        (f,) = st["failures"]
        assert f["cause"] == "probe" and 0.3 < f["detected_after"] < 3
    finally:
        assert aizone("link", "up", "rtsw2", "ctsw2", "--silent").returncode == 0
    assert zone.wait(lambda: zone.api.get("/status")["failed"] == [], timeout=10)


@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_trace_prediction_is_confirmed_by_counters(zone: Zone, mode: str) -> None:
    """`aizone trace` for three flows per mode: the counters on the predicted path moved."""
    assert aizone("mode", mode).returncode == 0
    try:
        for sport, qp in ((49152, 17), (50000, 99), (61000, 4242)):
            proc = aizone("trace", "h1", "h6", "--sport", str(sport), "--qp", str(qp), "--json")
            assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr
            data = json.loads(proc.stdout)
            assert data["prediction"]["delivered_to"] == zone.nic("h6")["intf"]
            assert [h["switch"] for h in data["prediction"]["hops"]][0] == "rtsw1"
            assert data["confirmation"]["confirmed"] is True, data["confirmation"]
    finally:
        aizone("mode", "eecmp")


def test_trace_of_a_jobs_connection_follows_its_packets(zone: Zone) -> None:
    """A ring h1, h3, h5, h7 (4 QPs, eecmp): `aizone trace --job ID --connection r0>r1
    --qp-index Q` for each QP gives h1 -> h3's numbers as `aizone trace h1 h3 --qps 4` does
    (one allocation), and rtsw1's uplinks that carried the job's data are exactly those
    the four traced QPs take. Only h1 sends data up rtsw1 (one host per rack); the other
    uplink carries at most h1's ACKs to h7 (96 x 66 B) and probes. Each QP carries at
    least one 16 KiB chunk (6 chunks rr over 4 QPs): 4 frames of 4,154 B (the preset's jumbo
    links) = 16,616 B."""
    out = zone.api.post("/run", {"pattern": "allreduce", "hosts": RING, "per": "host",
                                 "size": 64 << 10, "qps": 4, "timeout": 120})
    assert out["result"]["status"] == "ok", out["result"]["errors"]
    traced, links = [], set()
    for q in range(4):
        proc = aizone("trace", "--job", str(out["id"]), "--connection", "r0>r1",
                      "--qp-index", str(q), "--no-send", "--json")
        assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr
        data = json.loads(proc.stdout)
        assert (data["job"], data["connection"], data["qp_index"]) == (out["id"], "r0>r1", q)
        assert data["prediction"]["delivered_to"] == zone.nic("h3")["intf"]
        pair = json.loads(aizone("trace", "h1", "h3", "--qps", "4", "--qp-index", str(q),
                                 "--no-send", "--json").stdout)
        assert (pair["sport"], pair["qp"]) == (data["sport"], data["qp"])
        traced.append((data["sport"], data["qp"]))
        links |= set(data["prediction"]["links"])
    assert len({qp for _, qp in traced}) == 4 and len({sport for sport, _ in traced}) == 1
    uplinks = {lk["id"]: lk["up_bytes"] for lk in out["links"] if lk["a"] == "rtsw1"
               and lk["tier"] == "rtsw_ctsw"}
    assert len(uplinks) == 2
    carried = {lid for lid, b in uplinks.items() if b >= (16 << 10) // MTU * FRAME}
    assert carried == links & set(uplinks), (uplinks, links)
    assert all(b < 12_000 for lid, b in uplinks.items() if lid not in carried), uplinks


RING = ["h1", "h3", "h5", "h7"]  # one host per rack: every ring hop crosses the spine
# A full data frame on the preset's jumbo links (IP MTU 9,000, path MTU 4,096):
# 14 + 20 + 8 + 12 (BTH) + 4,096 + 4 (ICRC).
FRAME, MTU = 4154, 4096


def _up_and_down_bytes(out: dict[str, Any]) -> tuple[int, int]:
    rows = [lk for lk in out["links"] if lk["tier"] == "rtsw_ctsw"]
    return sum(lk["up_bytes"] for lk in rows), sum(lk["down_bytes"] for lk in rows)


@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_a_ring_allreduce_completes_with_the_bytes_it_must_move(zone: Zone, mode: str) -> None:
    """4 ranks (one per rack) x 64 KiB, 2 QPs: each rank sends 2 x 3 chunks of 16 KiB.

    That is 4 x 96 KiB = 393,216 bytes sent and received (nccl-tests' ring); every
    hop crosses the spine, so the RTSW uplinks carry at least its 96 full frames
    (96 x 4,154 B = 398,784 on the preset's jumbo links) up and the CTSW downlinks the same
    down, plus only ACKs and probes (at most a fifth more) when nothing was sent twice.
    """
    assert aizone("mode", mode).returncode == 0
    try:
        out = zone.api.post("/run", {"pattern": "allreduce", "hosts": RING, "per": "host",
                                     "size": 64 << 10, "qps": 2, "timeout": 120})
    finally:
        aizone("mode", "eecmp")
    r = out["result"]
    assert r["status"] == "ok", r["errors"]
    assert r["bytes_sent"] == r["bytes_received"] == 393_216 and r["bytes_ok"] is True
    assert r["icrc_errors"] == r["data_errors"] == 0
    up, down = _up_and_down_bytes(out)
    floor = 393_216 // MTU * FRAME
    again = r["retransmitted"] * FRAME
    assert floor <= up <= floor * 1.2 + again, (up, floor, r["retransmitted"])
    assert floor <= down <= floor * 1.2 + again, (down, floor, r["retransmitted"])


def test_a_dropped_packet_is_sent_again_and_the_message_arrives_intact(zone: Zone) -> None:
    """An ACL rule drops what h1 sends into rtsw1 (port 1 is h1-eth0) for a moment of a
    4 MiB WRITE h1 -> h3: the ACL drop counter moves, the rule reads back over P4Runtime,
    the sender goes back (NAK or ACK timeout) and sends again, and every byte arrives."""
    acl = 4  # the ACL's drop reason: the index of FabricIngress.counters.drops (define.p4)
    before = zone.cells("rtsw1", "FabricIngress.counters.drops", [acl])[acl]
    result: dict[str, Any] = {}

    def run() -> None:  # its own client: one connection per thread
        with ApiClient(timeout=240) as c:
            result.update(c.post("/run", {"pattern": "incast", "hosts": ["h3", "h1"],
                                          "per": "host", "size": 4 << 20, "timeout": 180}))

    rx_before = zone.cells("rtsw1", "FabricIngress.counters.rx_port", [1])[1]
    job = threading.Thread(target=run)
    job.start()
    try:
        # The rule goes in once h1's data is flowing into rtsw1 (port 1), not after a guess.
        flowing = zone.wait(lambda: zone.cells("rtsw1", "FabricIngress.counters.rx_port",
                                               [1])[1] > rx_before + 100, timeout=30, every=0.05)
        assert flowing, "h1 never started sending"
        rule = {"action": "drop", "match": {"ingress_port": 1, "l4_dst_port": 4791}}
        put = zone.api.put("/acl/rtsw1", {"rules": [rule]})
        assert put["rules"] == 1 and put["writes"]["rtsw1"]["insert"] == 1
        entries = zone.api.get("/routes", switch="rtsw1")["switches"]["rtsw1"]["entries"]
        assert [e for e in entries if e.startswith("FabricIngress.acl.acl")
                and "ingress_port=0x1&&&0x1ff" in e and e.endswith("-> drop()")], entries
        dropped = zone.wait(lambda: zone.cells("rtsw1", "FabricIngress.counters.drops",
                                               [acl])[acl] > before, timeout=10, every=0.05)
    finally:
        zone.api.put("/acl/rtsw1", {"rules": []})
    job.join(240)
    assert dropped, "no packet was dropped by the ACL rule (the transfer ended first?)"
    r = result["result"]
    assert r["status"] == "ok", r["errors"]
    assert r["retransmitted"] > 0
    assert r["bytes_sent"] == r["bytes_received"] == 4 << 20 and r["bytes_ok"] is True
    assert r["icrc_errors"] == r["data_errors"] == 0
    assert zone.api.get("/acl") == {}


def test_incast_with_pfc_loses_nothing(zone: Zone, target: str) -> None:
    """3 -> 1 across racks (h3, h5, h7 to h1 at 10 Mb/s each, 256 KiB each): h1's port
    drains a third of what arrives, so the lossless class pauses upstream; no queue drops,
    nothing sent twice, every byte arrives (the target's default PFC: p4switch's native,
    BMv2 the programs' own; test_incast.py compares p4switch's two and turns PFC off). No
    switch loses a lossless packet either: BMv2's queue drops are not counted anywhere, so
    every switch's class-3 packets in must equal its packets out (pfc_support)."""
    require_tshark()
    # rtsw1's uplinks captured meanwhile: the PAUSE frames it sends upstream, as Wireshark
    # decodes them (MAC control opcode 0x0101, the lossless class's enable bit and quanta)
    caps = {}
    for port in (5, 6):
        pcap = zone.tmp / f"pfc-rtsw1-{port}.pcap"
        caps[pcap] = subprocess.Popen(
            [sys.executable, "-m", "aizone.cli", "capture", f"rtsw1:{port}", "-w", str(pcap),
             "--seconds", "300", "--filter", "ether proto 0x8808"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for proc in caps.values():
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("capturing rtsw1 port"), line + proc.stderr.read()
    try:
        got = run_incast(zone.api, ["h1", "h3", "h5", "h7"], per="host", size=256 << 10)
    finally:
        for proc in caps.values():
            proc.send_signal(signal.SIGINT)  # Ctrl-C: the capture ends, the file stays
        for pcap, proc in caps.items():
            try:
                proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise AssertionError(f"aizone capture ({pcap.name}) did not end on Ctrl-C: "
                                     f"{proc.communicate()[1][-2000:]}") from None
    assert_lossless(got)
    assert got.result["bytes_received"] == 3 * (256 << 10)
    pauses = []
    for pcap, proc in caps.items():
        assert proc.returncode == 0, pcap
        fields = subprocess.run(
            ["tshark", "-r", str(pcap), "-Y", "macc.opcode == 0x0101", "-T", "fields",
             "-e", "macc.cbfc.enbv.c3", "-e", "macc.cbfc.pause_time.c3"],
            capture_output=True, text=True, timeout=120)
        assert fields.returncode == 0, fields.stderr
        pauses += [row.split("\t") for row in fields.stdout.splitlines()]
    assert pauses, "no PFC frame captured on rtsw1's uplinks during the incast"
    xoff = [int(q) for enabled, q in pauses if enabled in ("1", "True") and int(q) > 0]
    assert xoff, pauses[:5]  # XOFF for class 3 (XON frames carry quanta 0)


def test_a_killed_switch_is_restarted_and_reconciled(zone: Zone) -> None:
    """SIGKILL ctsw2: the daemon restarts it and writes its entries back; check passes."""
    state = read_state()
    assert state is not None
    victim = next(s for s in state.switches if s["name"] == "ctsw2")["pid"]
    os.kill(victim, signal.SIGKILL)

    def back() -> dict[str, Any] | None:
        for s in zone.api.get("/status")["restarts"]:
            if s["switch"] == "ctsw2" and s["pid"] != victim:
                return s  # type: ignore[no-any-return]
        return None

    record = zone.wait(back, timeout=60, every=0.5)
    assert record, zone.api.get("/status")["restarts"]
    assert record["writes"]["insert"] > 20 and record["writes"]["delete"] == 0
    assert zone.api.get("/routes", switch="ctsw2")["switches"]["ctsw2"]["matches_intent"]
    assert zone.api.post("/check", {"roce": False})["ok"]


def test_a_killed_daemon_is_replaced_by_one_that_reattaches(zone: Zone, target: str) -> None:
    """SIGKILL the daemon; `aizone up` re-attaches: every switch read back, nothing written."""
    pid = zone.api.get("/status")["pid"]
    os.kill(pid, signal.SIGKILL)
    orphan = json.loads(aizone("status", "--json").stdout)
    assert orphan == {"running": False, "orphan": "ai_zone_small"}
    assert subprocess.run(in_host("h1", "ip", "-4", "addr"), capture_output=True).returncode == 0
    up = aizone("up", "--json")
    assert up.returncode == 0, up.stdout + up.stderr
    st = zone.api.get("/status")
    assert st["pid"] != pid and st["phase"] == "up"
    for s in st["switches"]:
        counts = s["last_reconcile"]["counts"]
        assert s["last_reconcile"]["reason"] == "start", s
        assert counts["insert"] == counts["modify"] == counts["delete"] == 0, s
        assert counts["unchanged"] > 20
    assert zone.api.post("/check", {"roce": False})["ok"]
