"""The programs' PFC as the controller configures it (controller.qos.compute_pfc, FabricIntent).

Worked out by hand for ai_zone_small's rtsw1: ports 1-4 are host links at
10 Mb/s and 5-6 uplinks at 20 Mb/s, every tier lossless on class 3 with
XOFF/XON 16/8 packets. A pause quantum is 512 bit-times: 51.2 us at
10 Mb/s (x 65536 = 3,355,443), 25.6 us at 20 Mb/s (1,677,722); an XOFF
asks for the time a queue of 128 RoCE frames of 1,082 bytes takes to leave:
128 x 1,082 / 64 = 2,164 quanta, 110.8 ms at 10 Mb/s, refreshed at half of
it (55,398 us).
"""

from __future__ import annotations

from pathlib import Path

from controller.entities import CloneSession, TableEntry
from controller.intent import FabricIntent
from controller.qos import compute_pfc, pfc_quanta
from topologies.addressing import plan_addresses
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
    """XOFF/XON 16/8 on class 3 of every port; the quantum and refresh of each port's rate."""
    plan = plan_addresses(load_spec(SMALL))
    entries = [e for e in compute_pfc(plan, "rtsw1") if isinstance(e, TableEntry)]
    xoff = {e.match[0][1].value: _params(e) for e in entries  # type: ignore[union-attr]
            if e.table.endswith("pfc_xoff")}
    assert {p: tuple(v.values()) for p, v in xoff.items()} == {p: (16, 8) for p in range(1, 7)}
    assert all(e.match[1][1].value == 3 for e in entries  # type: ignore[union-attr]
               if e.table.endswith("pfc_xoff"))
    honour = {e.match[0][1].value: _params(e)["quantum_q16_us"] for e in entries  # type: ignore[union-attr]
              if e.table.endswith("pfc_honour")}
    assert honour == {1: 3355443, 2: 3355443, 3: 3355443, 4: 3355443, 5: 1677722, 6: 1677722}
    port1 = next(_params(e) for e in entries if e.table.endswith("pfc_port")
                 and e.match[0][1].value == 1)  # type: ignore[union-attr]
    assert port1["xoff_quanta"] == 2164 and port1["refresh"] == 55398


def test_quanta_cover_a_queue_and_never_pass_the_field() -> None:
    """64 frames: 64 x 1,082 / 64 = 1,082 quanta; 4,000 frames would be 67,625: 65,535."""
    assert pfc_quanta(64) == 1082
    assert pfc_quanta(4000) == 65535


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
