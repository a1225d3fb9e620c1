"""Tests for controller.stats: rates, utilisation, queues, drops and imbalance from two readings."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.sessions import CounterCell
from controller.stats import Reading, build_snapshot
from topologies.addressing import AddressPlan, plan_addresses
from topologies.spec import parse_spec

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def plan() -> AddressPlan:
    """2 racks of 1 host, 2 CTSWs: rtsw1 ports 1 (h1), 2 (ctsw1), 3 (ctsw2)."""
    spec = parse_spec({"name": "t", "racks": [{"count": 2, "hosts": 1, "nics": 1}], "ctsws": 2},
                      base_dir=ROOT / "topologies")
    return plan_addresses(spec)


def cells(**by_index: tuple[int, int]) -> dict[int, CounterCell]:
    return {int(k[1:]): CounterCell(index=int(k[1:]), packets=p, bytes=b)
            for k, (p, b) in by_index.items()}


def test_link_rate_and_utilisation_from_tx_counters(plan: AddressPlan) -> None:
    """1,250,000 bytes in 1 s out of rtsw1 port 2 = 10 Mb/s, half of a 20 Mb/s link."""
    before = {"rtsw1": Reading(switch="rtsw1", at=100.0, tx=cells(p2=(0, 0), p3=(0, 0)))}
    now = {"rtsw1": Reading(switch="rtsw1", at=101.0,
                            tx=cells(p2=(1000, 1_250_000), p3=(500, 625_000)))}
    snap = build_snapshot(plan, before, now, {"rtsw_ctsw": 20.0})
    up = {(lk["a"], lk["b"]): lk["a_to_b"] for lk in snap["links"] if lk["a"] == "rtsw1"
          and lk["tier"] == "rtsw_ctsw"}
    assert up[("rtsw1", "ctsw1")] == {"bps": 10_000_000.0, "pps": 1000.0, "util": 0.5}
    assert up[("rtsw1", "ctsw2")] == {"bps": 5_000_000.0, "pps": 500.0, "util": 0.25}


def test_imbalance_is_max_over_mean_of_the_uplinks(plan: AddressPlan) -> None:
    """Uplinks at 10 and 5 Mb/s on rtsw1, 0 and 0 on rtsw2: max 10, mean 3.75, 2.667."""
    before = {n: Reading(switch=n, at=0.0, tx=cells(p2=(0, 0), p3=(0, 0)))
              for n in ("rtsw1", "rtsw2")}
    now = {"rtsw1": Reading(switch="rtsw1", at=1.0, tx=cells(p2=(1, 1_250_000), p3=(1, 625_000))),
           "rtsw2": Reading(switch="rtsw2", at=1.0, tx=cells(p2=(0, 0), p3=(0, 0)))}
    tier = build_snapshot(plan, before, now, {})["tiers"]["rtsw up"]
    assert tier["links"] == 4 and tier["max_bps"] == 10_000_000.0
    assert tier["mean_bps"] == 3_750_000.0 and tier["imbalance"] == 2.667


def test_a_failed_link_is_left_out_of_the_imbalance(plan: AddressPlan) -> None:
    """A down uplink carries nothing on purpose: it must not count as an idle one."""
    before = {"rtsw1": Reading(switch="rtsw1", at=0.0, tx=cells(p2=(0, 0), p3=(0, 0)))}
    now = {"rtsw1": Reading(switch="rtsw1", at=1.0, tx=cells(p2=(0, 0), p3=(2, 2_500_000)))}
    dead = "rtsw1-eth2--ctsw1-eth1"
    snap = build_snapshot(plan, before, now, {}, link_up=lambda link: link != dead)
    assert snap["tiers"]["rtsw up"]["links"] == 1
    assert snap["tiers"]["rtsw up"]["imbalance"] == 1.0
    assert [lk["up"] for lk in snap["links"] if lk["id"] == dead] == [False]


def test_a_counter_that_went_back_starts_over(plan: AddressPlan) -> None:
    """A restarted switch's counters restart from 0: the new value is the interval's."""
    before = {"rtsw1": Reading(switch="rtsw1", at=0.0, tx=cells(p2=(900, 900_000)))}
    now = {"rtsw1": Reading(switch="rtsw1", at=2.0, tx=cells(p2=(10, 250_000)))}
    link = next(lk for lk in build_snapshot(plan, before, now, {})["links"]
                if lk["id"] == "rtsw1-eth2--ctsw1-eth1")
    assert link["a_to_b"]["bps"] == 1_000_000.0 and link["a_to_b"]["pps"] == 5.0


def test_classes_queues_ecn_and_drops_per_port(plan: AddressPlan) -> None:
    """Per (port, class) cells land under their port and class; drops by reason name."""
    i = 2 * 8 + 3  # port 2, class 3
    before = {"rtsw1": Reading(switch="rtsw1", at=0.0, tx_tc=cells(**{f"p{i}": (0, 0)}),
                               ecn=cells(**{f"p{i}": (0, 0)}), drops=cells(p1=(4, 400)))}
    now = {"rtsw1": Reading(switch="rtsw1", at=1.0, tx_tc=cells(**{f"p{i}": (10, 12_500)}),
                            ecn=cells(**{f"p{i}": (3, 0)}), drops=cells(p1=(6, 600)),
                            depth={i: 7}, peak={i: 20},
                            tm={"2/3": {"pauses_sent": 2, "pauses_received": 0, "dropped": 1}})}
    sw = build_snapshot(plan, before, now, {})["switches"]["rtsw1"]
    c3 = sw["ports"]["2"]["classes"]["3"]
    assert c3["bps"] == 100_000.0 and c3["ecn_marks"] == 3
    assert c3["queue_depth"] == 7 and c3["queue_peak"] == 20
    assert c3["pauses_sent"] == 2 and c3["tm_dropped"] == 1 and "pauses_received" not in c3
    assert sw["drops"] == {"no_route": {"interval": 2, "total": 6}}


def test_first_reading_has_no_rates(plan: AddressPlan) -> None:
    """Without a previous reading there is no interval: no rate (None), not a division by zero."""
    now = {"rtsw1": Reading(switch="rtsw1", at=1.0, tx=cells(p2=(5, 5000)))}
    link = next(lk for lk in build_snapshot(plan, {}, now, {"rtsw_ctsw": 20.0})["links"]
                if lk["id"] == "rtsw1-eth2--ctsw1-eth1")
    assert link["a_to_b"] is None
