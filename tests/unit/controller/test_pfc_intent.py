"""The programs' PFC as the controller configures it (controller.qos.compute_pfc, FabricIntent).

Worked out by hand for ai_zone_small's rtsw1: ports 1-4 are host links at
10 Mb/s and 5-6 uplinks at 20 Mb/s, every tier lossless on class 3 with
XOFF/XON 16/8 RoCE frames of 1,082 bytes on the host links, 17,312 / 8,656
bytes per priority group, and twice that on the uplinks (32/16: 34,624 /
17,312). A pause quantum is 512 bit-times: 51.2 us at 10 Mb/s (x 65536 =
3,355,443), 25.6 us at 20 Mb/s (1,677,722). Headroom: the port's rate for a
20-ms round trip plus a 1,514-byte frame: 10e6 / 8 x 0.02 + 1,514 = 26,514 B
at 10 Mb/s; an XOFF asks for twice the time XOFF + headroom take on the link:
2 x (17,312 + 26,514) / 64 = 1,369.6 -> 1,370 quanta, 70.1 ms at 10 Mb/s,
refreshed at half of it (1,370 x 51.2 / 2 = 35,072 us).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from controller.entities import CloneSession, TableEntry
from controller.intent import FabricIntent
from controller.qos import compute_pfc
from topologies.addressing import plan_addresses
from topologies.ports import pause_quanta, pfc_thresholds, switch_settings
from topologies.spec import load_spec

SMALL = Path(__file__).resolve().parents[3] / "topologies" / "ai_zone_small.yaml"


def _params(e: TableEntry) -> dict[str, int]:
    assert e.action is not None
    return dict(e.action.params)


def test_rtsw1_gets_a_session_back_out_of_each_pfc_port() -> None:
    """Six clone sessions 1025-1030, each replicating to its own port once."""
    plan = plan_addresses(load_spec(SMALL))
    sessions = [e for e in compute_pfc(plan, "rtsw1") if isinstance(e, CloneSession)]
    assert [(s.session_id, s.replicas) for s in sessions] == [
        (1024 + p, ((p, 0),)) for p in range(1, 7)]


def test_thresholds_and_quanta_follow_the_tiers_rates() -> None:
    """ai_zone_small's jumbo links (4,154-B frames): XOFF/XON 16/8 frames = 66,464/33,232 B
    on class 3 of every host port, 32/16 = 132,928/66,464 B of every uplink; quantum and
    refresh per port's rate: host port 1 at 10 Mb/s asks for 2 x (66,464 + the round trip's
    10e6 / 8 x 0.020 + 9,014 = 34,014) / 64 = 3,139.9 -> 3,140 quanta (160.768 ms) and
    refreshes every 80,384 us."""
    plan = plan_addresses(load_spec(SMALL))
    entries = [e for e in compute_pfc(plan, "rtsw1") if isinstance(e, TableEntry)]
    xoff = {e.match[0][1].value: _params(e) for e in entries  # type: ignore[union-attr]
            if e.table.endswith("pfc_xoff")}
    assert {p: tuple(v.values()) for p, v in xoff.items()} == {
        1: (66464, 33232), 2: (66464, 33232), 3: (66464, 33232), 4: (66464, 33232),
        5: (132928, 66464), 6: (132928, 66464)}
    assert all(e.match[1][1].value == 3 for e in entries  # type: ignore[union-attr]
               if e.table.endswith("pfc_xoff"))
    honour = {e.match[0][1].value: _params(e)["quantum_q16_us"] for e in entries  # type: ignore[union-attr]
              if e.table.endswith("pfc_honour")}
    assert honour == {1: 3355443, 2: 3355443, 3: 3355443, 4: 3355443, 5: 1677722, 6: 1677722}
    port1 = next(_params(e) for e in entries if e.table.endswith("pfc_port")
                 and e.match[0][1].value == 1)  # type: ignore[union-attr]
    assert port1["xoff_quanta"] == 3140 and port1["refresh"] == 80384


def test_quanta_cover_twice_the_bytes_and_never_pass_the_field() -> None:
    """43,826 B: 2 x 43,826 / 64 = 1,369.6 -> 1,370 quanta; 3 MB would be 93,750: 65,535."""
    assert pause_quanta(43_826) == 1370
    assert pause_quanta(3_000_000) == 65535


def test_a_target_with_native_pfc_gets_none_of_it() -> None:
    """program_pfc=False (p4switch's native PFC): no clone session, no PFC table entry."""
    spec = load_spec(SMALL)
    plan = plan_addresses(spec)
    on = FabricIntent(spec=spec, plan=plan, mode="eecmp").for_switch("rtsw1")
    off = FabricIntent(spec=spec, plan=plan, mode="eecmp", program_pfc=False).for_switch("rtsw1")
    def pfc(es: tuple[object, ...]) -> int:
        return sum(1 for e in es if isinstance(e, CloneSession)
                   or (isinstance(e, TableEntry) and ".pfc." in e.table))
    assert pfc(on) == 6 + 6 * 4 and pfc(off) == 0
    assert len(on) - len(off) == 30


def test_xoff_is_lowered_so_that_headroom_fits_the_queue() -> None:
    """rack.yaml's host ports at MTU 1,500 (20 Mb/s, queue 64, XOFF/XON 24/12): 64 x 1,082 =
    69,248 B, headroom 20e6 / 8 x 0.02 + 1,514 = 51,514 B, so XOFF at 17,734 B, not 24 x
    1,082. At the preset's jumbo 9,000 the queue holds 64 x 4,154 = 265,856 B: XOFF stays
    24 x 4,154 = 99,696 B, with 50,000 + 9,014 = 59,014 B of headroom above it."""
    plan = plan_addresses(load_spec(SMALL.parent / "rack.yaml").model_copy(update={"mtu": 1500}))
    port = next(p for p in switch_settings(plan, "rtsw1").ports if p.pfc)
    th = pfc_thresholds(plan, port)
    assert (th.xoff_bytes, th.xon_bytes, th.headroom_bytes, th.buffer_bytes, th.headroom_fits) == (
        17734, 12984, 51514, 69248, True)
    jumbo = plan_addresses(load_spec(SMALL.parent / "rack.yaml"))
    th = pfc_thresholds(jumbo, next(p for p in switch_settings(jumbo, "rtsw1").ports if p.pfc))
    assert (th.xoff_bytes, th.xon_bytes, th.headroom_bytes, th.buffer_bytes, th.headroom_fits) == (
        99696, 49848, 59014, 265856, True)


def test_a_queue_too_short_for_the_headroom_says_so() -> None:
    """A 32-frame queue at 20 Mb/s, MTU 1,500: 34,624 - 51,514 B leave nothing above XON's
    12,984 B, so XOFF is one frame above XON (14,066 B) and the headroom does not fit."""
    plan = plan_addresses(load_spec(SMALL.parent / "rack.yaml").model_copy(update={"mtu": 1500}))
    port = replace(next(p for p in switch_settings(plan, "rtsw1").ports if p.pfc), queue=32)
    th = pfc_thresholds(plan, port)
    assert (th.xoff_bytes, th.xon_bytes, th.headroom_fits) == (14066, 12984, False)


def test_packet_queues_give_each_pfc_port_a_drain_lane_in_queue_1() -> None:
    """ai_zone_small names classes 3 (data) and 7 (control): queue 1 is the lowest free one,
    so on BMv2 each of rtsw1's six PFC ports drains through it; p4switch gets no entry."""
    spec = load_spec(SMALL)
    plan = plan_addresses(spec)
    bmv2 = FabricIntent(spec=spec, plan=plan, mode="eecmp", packet_queues=True).for_switch("rtsw1")
    drains = [e for e in bmv2 if isinstance(e, TableEntry) and e.table.endswith("pfc_drain")]
    assert [(e.match[0][1].value, _params(e)) for e in drains] == [  # type: ignore[union-attr]
        (p, {"queue": 1}) for p in range(1, 7)]
    assert all(e.action is not None and e.action.name == "FabricIngress.pfc.drain_via"
               for e in drains)
    p4switch = FabricIntent(spec=spec, plan=plan, mode="eecmp").for_switch("rtsw1")
    assert not [e for e in p4switch if isinstance(e, TableEntry) and e.table.endswith("pfc_drain")]
