"""Tests for experiments.sizes: every experiment has sizes, quick ones smaller; the queues."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments import EXPERIMENTS
from experiments.sizes import (
    QUEUE,
    ack_timeout_ms,
    budget_seconds,
    derivation_markdown,
    fabric_changes,
    grid_runs,
    ideal_seconds,
    lossless,
    rates,
    sizes_for,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_quick_is_smaller_than_full(name: str) -> None:
    """--quick: fewer bytes and one repeat."""
    full, quick = sizes_for(name, False), sizes_for(name, True)
    assert quick["size"] < full["size"]
    assert quick["repeat"] == 1 <= full["repeat"]


def test_sizes_are_copies() -> None:
    """Changing what sizes_for returned changes nothing for the next caller."""
    sizes_for("qp-scaling", False)["qps"].append(99)
    assert 99 not in sizes_for("qp-scaling", False)["qps"]


def test_unknown_experiment() -> None:
    with pytest.raises(ValueError, match="no sizes for experiment 'x'"):
        sizes_for("x", False)


def test_lossless_headroom_for_five_ingress_ports() -> None:
    """128 packets hold 5 ingress ports at XOFF 16 with 48 to spare."""
    assert QUEUE["queue"] - 5 * QUEUE["pfc"]["xoff"] == 48
    assert lossless(("host",), pfc=False) == {
        "links.host.queue": 128, "links.host.pfc": {"enabled": False, "xoff": 16, "xon": 8}}


def test_budget() -> None:
    """48 runs of 10 s (+2 s each) and one 15 s bring-up: 591 s."""
    assert budget_seconds(48, 10.0, 1) == 591.0


def test_rates_scale_every_tier_of_the_preset() -> None:
    """ai_zone_small 10/20 Mb/s at 2 Mb/s: 2/4; two_zones 20/20/10: 2/2/1."""
    assert rates(ROOT / "topologies" / "ai_zone_small.yaml", 2.0) == {
        "links.host.rate_mbps": 2.0, "links.rtsw_ctsw.rate_mbps": 4.0}
    assert rates(ROOT / "topologies" / "two_zones.yaml", 2.0) == {
        "links.host.rate_mbps": 2.0, "links.rtsw_ctsw.rate_mbps": 2.0,
        "links.ctsw_atsw.rate_mbps": 1.0}


def test_fabric_changes_are_rates_and_queues() -> None:
    """Rates and, on the same tiers, the experiments' queues."""
    got = fabric_changes(ROOT / "topologies" / "ai_zone_small.yaml", pfc=False)
    assert got["links.host.rate_mbps"] == 1.0  # RATE_MBPS
    assert got["links.rtsw_ctsw.pfc"] == {"enabled": False, "xoff": 16, "xon": 8}
    assert "links.ctsw_atsw.queue" not in got


@pytest.mark.parametrize(("mbps", "k"), [(2.0, 19), (1.0, 20), (10.0, 17), (10_000.0, 14)],
                         ids=["2M", "1M", "10M", "floor"])
def test_ack_timeout_is_the_next_nccl_ib_timeout(mbps: float, k: int) -> None:
    """3 queues of 128 frames of 1,082 B at 2 Mb/s drain in 1.66 s: 2^19 x 4.096 us = 2.15 s
    is the first above (2^18: 1.07 s); at 1 Mb/s 3.3 s -> 2^20; at 10 Mb/s 0.33 s -> 2^17."""
    assert ack_timeout_ms(mbps) == pytest.approx(4.096e-3 * 2**k)


@pytest.mark.parametrize(("name", "runs"), [("qp-scaling", 32), ("pinning", 24), ("incast", 16),
                                            ("failure", 18), ("placement", 16)],
                         ids=["qp-scaling", "pinning", "incast", "failure", "placement"])
def test_grid_runs_of_the_full_sizes(name: str, runs: int) -> None:
    """qp-scaling 2 modes x 4 QP counts x 2 strategies x 2; pinning 3 jobs x 4 configs x 2;
    incast 2 x 2 x 2 sender counts x 2; failure 3 x 3 x 2; placement 2 x (2 + 2 seeds) x 2."""
    assert grid_runs(name) == runs


def test_ideal_seconds_of_a_ring_and_an_incast() -> None:
    """16-rank ring of 512 KiB: 2 x 15/16 x 524,288 B in 1,082-B frames per 1,024 B at 1 Mb/s
    = 8.310 s; 7 senders x 96 KiB into one 1 Mb/s NIC = 5.817 s."""
    assert ideal_seconds("qp-scaling") == pytest.approx(8.30976)
    assert ideal_seconds("incast") == pytest.approx(5.816832)


def test_derivation_states_rate_scale_and_timeout() -> None:
    """The page's section gives the host rate, the scale, the ACK timeout and a budget row."""
    text = derivation_markdown()
    assert "host links at **1 Mb/s**" in text and "scale is 400,000" in text
    assert "4.29 s (NCCL_IB_TIMEOUT=20" in text
    assert "| qp-scaling | 512 KiB | 4096 | 32 KiB (0.28 s) | 2 | 32 | 8.3 s |" in text
