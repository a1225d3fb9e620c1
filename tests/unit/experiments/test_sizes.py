"""Tests for experiments.sizes: every experiment has sizes, quick ones smaller; the queues; the
ACK timeout by the controller's rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import EXPERIMENTS
from experiments.fabric import variant, variant_spec
from experiments.pinning import TOPOLOGY_CHANGES
from experiments.schema import ExperimentResult
from experiments.sizes import (
    QUEUE,
    ack_cases,
    ack_timeout_ms,
    budget_seconds,
    derivation_markdown,
    fabric_changes,
    former_ack_note,
    grid_runs,
    ideal_seconds,
    lossless,
    preset_ack_timeout_ms,
    ran_mtu,
    ran_path_mtu,
    rates,
    running_ack_timeout_ms,
    sizes_for,
    tier_pfc,
)
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

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


def test_lossless_scales_xoff_with_the_tier_and_sizes_queues_for_their_feeds() -> None:
    """ai_zone_small at 1/2 Mb/s: uplinks XOFF/XON 32/16 (twice the host tier's 16/8). An RTSW
    host port is fed by 3 NICs at 16 + 7 and 2 uplinks at 32 + 14: 161 packets; an RTSW uplink by
    4 NICs and the other uplink, a CTSW port by 3 RTSWs: 4 x 23 + 46 = 3 x 46 = 138."""
    spec = variant_spec(ROOT / "topologies" / "ai_zone_small.yaml",
                        {"links.host.rate_mbps": 1.0, "links.rtsw_ctsw.rate_mbps": 2.0})
    assert tier_pfc(spec) == {"host": (16, 8), "rtsw_ctsw": (32, 16)}
    assert lossless(spec, pfc=False) == {
        "links.host.queue": 161, "links.host.pfc": {"enabled": False, "xoff": 16, "xon": 8},
        "links.rtsw_ctsw.queue": 138,
        "links.rtsw_ctsw.pfc": {"enabled": False, "xoff": 32, "xon": 16}}


def test_lossless_on_the_bench_and_pinning_shapes() -> None:
    """Uplinks at 4x (the capacity bench): XOFF 64/32, host ports fed by 3 x 23 + 2 x (64 + 28)
    = 253, CTSW ports by 3 x 92 = 276. Pinning's racks (4 NICs, 4 uplinks, one rate): every
    RTSW port is fed by 7 x 23 = 161; the ATSW tier of two_zones at half the rate: 8/4."""
    base = ROOT / "topologies" / "ai_zone_small.yaml"
    bench = lossless(variant_spec(base, {"links.host.rate_mbps": 0.5,
                                         "links.rtsw_ctsw.rate_mbps": 2.0}))
    assert (bench["links.host.queue"], bench["links.rtsw_ctsw.queue"]) == (253, 276)
    assert bench["links.rtsw_ctsw.pfc"] == {"enabled": True, "xoff": 64, "xon": 32}
    pin = lossless(variant_spec(base, {**TOPOLOGY_CHANGES, "links.rtsw_ctsw.rate_mbps": 10}))
    assert (pin["links.host.queue"], pin["links.rtsw_ctsw.queue"]) == (161, 161)
    zones = variant_spec(ROOT / "topologies" / "two_zones.yaml", {})
    assert tier_pfc(zones)["ctsw_atsw"] == (8, 4)


@pytest.mark.parametrize("preset", ["ai_zone_small", "ai_zone", "two_zones"])
def test_the_presets_queues_and_thresholds_follow_the_rule(preset: str) -> None:
    """What `aizone up` runs has the sizes the experiments give the same fabric."""
    spec = load_spec(ROOT / "topologies" / f"{preset}.yaml")
    for key, want in lossless(spec).items():
        _, tier, field = key.split(".")
        got = getattr(getattr(spec.links, tier), field)
        assert (got.model_dump(include=set(want)) if field == "pfc" else got) == want, key


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
    assert got["links.host.rate_mbps"] == 4.0  # RATE_MBPS
    assert got["mtu"] == 9000  # LINK_MTU: the presets' jumbo links
    assert got["links.rtsw_ctsw.pfc"] == {"enabled": False, "xoff": 32, "xon": 16}
    assert got["links.host.queue"] == 161
    assert "links.ctsw_atsw.queue" not in got
    assert "buffer.accounting" not in got
    in_bytes = fabric_changes(ROOT / "topologies" / "ai_zone_small.yaml", buffer="bytes")
    assert in_bytes["buffer.accounting"] == "bytes" and in_bytes["links.host.queue"] == 161
    assert "latency" not in got


def test_latency_delays_the_experiments_fabric_by_the_real_latency_times_the_scale() -> None:
    """--latency: a `latency:` section with its defaults. At 4 Mb/s for 400 Gb/s (scale
    100,000) the farthest hosts (h1 -> rtsw -> ctsw -> rtsw -> h) are 2 x (2 x 0.01 us of
    copper + 2 x 0.5 us of fibre + 3 x 1 us of switches) = 8.04 us apart, 0.804 s emulated;
    three host queues of 161 frames of 4,154 B drain in 4.013 s, so the RC ACK timeout with
    that round trip (4.817 s) is k = 21: 8.59 s, against k = 20 (4.29 s) without."""
    base = ROOT / "topologies" / "ai_zone_small.yaml"
    changes = fabric_changes(base, latency=True)
    assert changes["latency"] == {}
    spec = variant_spec(base, changes)
    plan = plan_addresses(spec)
    assert plan.delayed_rtt_s == pytest.approx(0.804)
    assert running_ack_timeout_ms(spec, plan) == pytest.approx(4.096e-3 * 2**21)
    undelayed = variant_spec(base, fabric_changes(base))
    assert running_ack_timeout_ms(undelayed, plan_addresses(undelayed)) == \
        pytest.approx(4.096e-3 * 2**20)


@pytest.mark.parametrize(("preset", "fan_in", "k"), [
    ("ai_zone_small.yaml", 1, 20), ("ai_zone_small.yaml", 2, 20), ("ai_zone_small.yaml", 4, 21),
    ("ai_zone_small.yaml", 8, 22), ("two_zones.yaml", 1, 22)],
    ids=["small-1", "small-2", "small-4", "small-8", "zones-1"])
def test_ack_timeout_of_the_experiments_fabrics(preset: str, fan_in: int, k: int) -> None:
    """At 4 Mb/s a 4,154-B frame takes 8.308 ms. ai_zone_small: 3 queues of 161 frames drain in
    4.013 s (2^19 x 4.096 us = 2.15 s < 4.013 < 2^20: 4.29 s); 2 QPs into a NIC hold 2 x 128 in
    flight, twice that 512 frames, 4.254 s -> still 2^20; 4 QPs 8.507 s -> 2^21 (8.59 s); 8 QPs
    2,048 frames 17.01 s -> 2^22 (17.18 s). two_zones: 5 queues of 128 at the ATSW tier's
    2 Mb/s (16.6 ms a frame), 10.6 s -> 2^22."""
    got = preset_ack_timeout_ms(ROOT / "topologies" / preset, fan_in)
    assert got == pytest.approx(4.096e-3 * 2**k)


def test_ack_timeout_has_nccls_floor() -> None:
    """At 10 Gb/s three full queues drain in 0.33 ms: NCCL's default k = 15 (134 ms) stands."""
    got = ack_timeout_ms({"host": 10_000.0}, {"host": 128}, atsw=False)
    assert got == pytest.approx(4.096e-3 * 2**15)


def test_a_running_fabric_uses_its_own_rates_and_queues(tmp_path: Path) -> None:
    """Links at MTU 1,500, hosts at 2.5 Mb/s (3.462 ms a 1,082-B frame), uplinks at 20; queues
    of 32 and 96: the longest queue at the slowest rate, 3 x 96 frames in 0.997 s -> 2^18 x
    4.096 us = 1.07 s. The preset's jumbo links (4,154-B frames, 13.29 ms each at 2.5 Mb/s):
    3 x 96 of them in 3.828 s -> 2^20 x 4.096 us = 4.29 s."""
    changes = {"links.host.rate_mbps": 2.5, "links.host.queue": 32,
               "links.rtsw_ctsw.rate_mbps": 20, "links.rtsw_ctsw.queue": 96}
    topo = variant(ROOT / "topologies" / "ai_zone_small.yaml", tmp_path, "t",
                   {**changes, "mtu": 1500})
    spec = load_spec(topo)
    got = running_ack_timeout_ms(spec, plan_addresses(spec))
    assert got == pytest.approx(4.096e-3 * 2**18)
    jumbo = load_spec(variant(ROOT / "topologies" / "ai_zone_small.yaml", tmp_path, "j", changes))
    assert jumbo.mtu == 9000
    assert running_ack_timeout_ms(jumbo, plan_addresses(jumbo)) == pytest.approx(4.096e-3 * 2**20)


def test_a_running_fabric_with_latency_waits_for_its_round_trip(tmp_path: Path) -> None:
    """The same fabric (MTU 1,500) with the default `latency:`: its farthest hosts' round
    trip, 8.04 us real, at scale 400 Gb/s / 2.5 Mb/s = 160,000 is 1.2864 s; 0.997 s + 1.286 s
    = 2.283 s -> 2^20 x 4.096 us = 4.29 s (2^19 is 2.147 s, too short)."""
    topo = variant(ROOT / "topologies" / "ai_zone_small.yaml", tmp_path, "t", {
        "links.host.rate_mbps": 2.5, "links.host.queue": 32, "mtu": 1500,
        "links.rtsw_ctsw.rate_mbps": 20, "links.rtsw_ctsw.queue": 96, "latency": {}})
    spec = load_spec(topo)
    plan = plan_addresses(spec)
    assert plan.delayed_rtt_s == pytest.approx(1.2864)
    assert running_ack_timeout_ms(spec, plan) == pytest.approx(4.096e-3 * 2**20)


def test_the_former_rule_is_said_with_what_changed() -> None:
    """The note gives the former 4.29 s, the one case the rules agree on, and the others."""
    note = former_ack_note()
    assert "4.29 s for every run" in note
    assert ("the same for ring, 1 QP per peer; one flow (calibration) on ai_zone_small, "
            "ring, 2 QPs per peer on ai_zone_small") in note
    assert "ring, 8 QPs per peer on ai_zone_small 17.18 s" in note
    assert "ring, 4 QPs per peer (placement) on two_zones 17.18 s" in note
    assert [c[2] for c in ack_cases()] == [1, 2, 4, 8, 3, 7, 4]


@pytest.mark.parametrize(("name", "runs"), [("qp-scaling", 32), ("pinning", 24), ("incast", 16),
                                            ("failure", 18), ("placement", 16)],
                         ids=["qp-scaling", "pinning", "incast", "failure", "placement"])
def test_grid_runs_of_the_full_sizes(name: str, runs: int) -> None:
    """qp-scaling 2 modes x 4 QP counts x 2 strategies x 2; pinning 3 jobs x 4 configs x 2;
    incast 2 x 2 x 2 sender counts x 2; failure 3 x 3 x 2; placement 2 x (2 + 2 seeds) x 2."""
    assert grid_runs(name) == runs


def test_ideal_seconds_of_a_ring_and_an_incast() -> None:
    """16-rank ring of 2 MiB: 2 x 15/16 x 2,097,152 B = 960 frames of 4,154 B (4,096 B each) at
    4 Mb/s = 7.976 s; 7 senders x 384 KiB = 672 frames into one 4 Mb/s NIC = 5.583 s."""
    assert ideal_seconds("qp-scaling") == pytest.approx(7.97568)
    assert ideal_seconds("incast") == pytest.approx(5.582976)


def test_derivation_states_rate_scale_and_timeout() -> None:
    """The page's section gives the host rate, the scale, the ACK timeouts, the measured
    capacity and a budget row."""
    text = derivation_markdown()
    assert "at its target's host rate (p4switch **4 Mb/s** (scale 100,000))" in text
    assert "| ai_zone_small | ring, 8 QPs per peer | 8 | 17.18 s (k = 22) |" in text
    assert "| ai_zone_small | incast, 7 senders | 7 | 17.18 s (k = 22) |" in text
    assert "carrying all 16 NICs of ai_zone_small at 4 Mb/s at rate (62.4 of 64 Mb/s" in text
    assert "| qp-scaling | 2048 KiB | 16384 | 128 KiB (0.27 s) | 2 | 32 | 8.0 s |" in text


def test_each_target_has_its_rate_timeouts_and_budget(tmp_path: Path) -> None:
    """A hand-written capacity: p4switch at rate at 4 Mb/s, BMv2 only at 2 Mb/s. BMv2's ACK
    timeouts double (8-QP ring: 17.18 s -> 34.36 s, k 22 -> 23) and so do its ideal runs
    (qp-scaling 8.0 s -> 16.0 s)."""
    def level(rate: float) -> dict[str, object]:
        return {"rate_mbps": rate, "nics": 16, "carried_mbps": 15.0 * rate, "lossless": True,
                "at_rate": True}

    path = tmp_path / "capacity.json"
    path.write_text(json.dumps({"measurements": [{
        "command": "bench", "date": "2026-12-02", "mtu": 9000,
        "targets": {"p4switch": {"levels": [level(4.0)]},
                    "bmv2": {"levels": [level(2.0), {**level(4.0), "at_rate": False}]}}}]}))
    text = derivation_markdown(("p4switch", "bmv2"), path)
    assert ("(p4switch **4 Mb/s** (scale 100,000), BMv2 **2 Mb/s** (scale 200,000))"
            in text)
    assert "| fabric | collective | fan-in | ACK timeout (p4switch) | ACK timeout (BMv2) |" in text
    assert "| ai_zone_small | ring, 8 QPs per peer | 8 | 17.18 s (k = 22) | 34.36 s (k = 23) |" \
        in text
    assert "| qp-scaling | 2048 KiB | 16384 | 128 KiB (0.27 s) | 2 | 32 | 8.0 s |" in text
    assert "| 16.0 s |" in text.split("| qp-scaling | 2048 KiB |")[1].splitlines()[0]
    assert "found BMv2 carrying all 16 NICs of ai_zone_small at 2 Mb/s at rate" in text


@pytest.mark.parametrize("scale,mtu,path_mtu", [
    ({"mtu": 9000}, 9000, 4096),   # the presets' jumbo links
    ({}, 1500, 1024),              # results from before fabrics recorded their MTU
    ({"mtu": 4160}, 4160, 4096),   # exactly a 4,096-byte payload with its headers
    ({"mtu": 4159}, 4159, 2048),   # one byte short of that
], ids=["jumbo", "unrecorded", "exact", "one-short"])
def test_the_mtu_a_result_ran_at(scale, mtu, path_mtu) -> None:
    """The links' IP MTU the runs had, and the largest IB MTU whose packets fit in it with
    IPv4 (20 B), UDP (8), BTH (12), RETH (16), ImmDt (4) and ICRC (4): 64 B on top of the
    payload, so 4,096 needs 4,160 (worked out by hand)."""
    result = ExperimentResult(experiment="x", title="x", command="c", started="s",
                              target="p4switch", topology="t", topology_name="t", repeat=1,
                              params=[], metrics=[], points=[], scale=scale)
    assert (ran_mtu(result), ran_path_mtu(result)) == (mtu, path_mtu)
