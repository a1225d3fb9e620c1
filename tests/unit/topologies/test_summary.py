"""Tests for topologies.summary: counts, capacities and oversubscription, worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from topologies.addressing import plan_addresses
from topologies.spec import SpecError, load_spec, parse_spec
from topologies.summary import MAX_PROCESSES, check_runnable, ratio_label, render_summary, summarize

ROOT = Path(__file__).resolve().parents[3]


def summary_of(name: str) -> dict:
    spec = load_spec(ROOT / "topologies" / f"{name}.yaml")
    return summarize(spec, plan_addresses(spec))


def test_two_zones_cross_zone_layer_is_4_to_1_by_rate() -> None:
    """Each CTSW: 2 downlinks x 20 Mb/s against 1 ATSW uplink x 10 Mb/s."""
    s = summary_of("two_zones")
    rtsw, ctsw = s["oversubscription"]
    assert (rtsw["role"], rtsw["down_links"], rtsw["up_links"], rtsw["label"]) == ("rtsw", 2, 2, "1:1")
    assert (ctsw["role"], ctsw["down_links"], ctsw["up_links"]) == ("ctsw", 2, 1)
    assert (ctsw["down_mbps"], ctsw["up_mbps"], ctsw["ratio"], ctsw["label"]) == (160, 40, 4.0, "4:1")
    # Scale 400 G / 20 Mb/s = 20,000: 160 Mb/s stands for 3.2 Tb/s, 40 Mb/s for 0.8 Tb/s.
    assert (ctsw["down_tbps"], ctsw["up_tbps"]) == (3.2, 0.8)


def test_two_zones_tiers_count_links_and_what_they_stand_for() -> None:
    """8 host links, 8 RTSW-CTSW links, 4 CTSW-ATSW links at 10 Mb/s = 200 G each."""
    s = summary_of("two_zones")
    got = [(t["tier"], t["links"], t["rate_mbps"], t["represents_gbps"], t["emulated_mbps"])
           for t in s["tiers"]]
    assert got == [("host", 8, 20, 400, 160), ("rtsw_ctsw", 8, 20, 400, 160),
                   ("ctsw_atsw", 4, 10, 200, 40)]
    assert s["scale"] == 20_000


def test_meta_24k_numbers_are_the_papers() -> None:
    """24,576 GPUs; RTSW 16 down / 18 up = 1:1.125; CTSW 192 down / 27 up = 7.111:1."""
    s = summary_of("meta_24k")
    c = s["counts"]
    assert (c["zones"], c["rtsw"], c["ctsw"], c["atsw"], c["hosts"], c["nics"], c["gpus"]) == (
        8, 1536, 144, 9, 3072, 24576, 24576)
    rtsw, ctsw = s["oversubscription"]
    assert (rtsw["down_links"], rtsw["up_links"], rtsw["label"]) == (16, 18, "1:1.125")
    assert (ctsw["down_links"], ctsw["up_links"], ctsw["label"]) == (192, 27, "7.111:1")
    # 24,576 NICs x 400 G = 9,830.4 Tb/s below the RTSWs.
    assert rtsw["down_tbps"] == pytest.approx(9830.4)
    assert s["processes"] == {"switches": 1689, "host_agents": 3072, "total": 4761,
                              "limit": MAX_PROCESSES, "runnable": False}


def test_rack_has_no_oversubscription_row() -> None:
    """No uplinks, nothing to compare; one tier, two links."""
    s = summary_of("rack")
    assert s["oversubscription"] == []
    assert [(t["tier"], t["links"]) for t in s["tiers"]] == [("host", 2)]


def test_worst_switch_shows_an_uneven_zone() -> None:
    """One rack with 4 NICs, one with 2, both with 2 uplinks: 2:1 at worst, 1.5:1 overall."""
    spec = parse_spec({"racks": [{"hosts": 4}, {"hosts": 2}], "ctsws": 2})
    (rtsw,) = summarize(spec, plan_addresses(spec))["oversubscription"][:1]
    assert (rtsw["ratio"], rtsw["worst_ratio"], rtsw["label"], rtsw["worst_label"]) == (
        1.5, 2.0, "1.5:1", "2:1")


def test_addressing_in_brief() -> None:
    """ai_zone_small: 10.0.0.0/16, racks 10.0.0.0/24 .. 10.0.3.0/24, ports per switch index."""
    a = summary_of("ai_zone_small")["addressing"]
    assert a["zones"] == [{"zone": 0, "name": None, "subnet": "10.0.0.0/16", "racks": 4,
                           "rack_subnets": "10.0.0.0/24 .. 10.0.3.0/24"}]
    assert (a["grpc_ports"], a["ctl_ports"], a["device_ids"]) == ("20001-20006", "52001-52006",
                                                                 "1-6")


@pytest.mark.parametrize("name", ["rack", "ai_zone_small", "ai_zone", "ai_zone_large", "two_zones",
                                  "meta_24k"])
def test_summary_is_json(name: str) -> None:
    """The summary survives json.dumps / loads unchanged (for `topo show --json`)."""
    s = summary_of(name)
    assert json.loads(json.dumps(s)) == s


def test_render_shows_the_tables() -> None:
    """The rich rendering carries the tiers, the 4:1 and the process count."""
    console = Console(record=True, width=140)
    render_summary(console, summary_of("two_zones"))
    text = console.export_text()
    for needle in ("link tiers", "ctsw_atsw", "4:1", "10.1.0.0/16", "9 switch processes + 8 host"):
        assert needle in text


def test_render_says_up_listens_on_no_ctl_port() -> None:
    """`up` serves p4switch's control API on Unix sockets: the TCP ctl ports are not offered
    as the fabric's (the gRPC and Thrift ports are what it listens on)."""
    console = Console(record=True, width=400)
    render_summary(console, summary_of("ai_zone_small"))
    text = " ".join(console.export_text().split())
    assert "gRPC 20001-20006, BMv2 Thrift 9090-9095;" in text
    assert "a Unix socket per switch" in text
    assert "TCP 52001-52006 only for a switch started outside `up`" in text


@pytest.mark.parametrize(("ratio", "label"), [(1.0, "1:1"), (16 / 18, "1:1.125"),
                                              (192 / 27, "7.111:1"), (0.5, "1:2")])
def test_ratio_labels(ratio: float, label: str) -> None:
    """down/up as people write it."""
    assert ratio_label(ratio) == label


def test_check_runnable_refuses_meta_24k_with_the_count() -> None:
    """meta_24k needs 1,689 switches + 3,072 agents: refused, saying how many."""
    plan = plan_addresses(load_spec(ROOT / "topologies" / "meta_24k.yaml"))
    with pytest.raises(SpecError, match=r"1,689 switch processes and 3,072 host agents "
                                        r"\(4,761 processes, at most 256\)"):
        check_runnable(plan)


@pytest.mark.parametrize("name", ["rack", "ai_zone_small", "ai_zone", "two_zones"])
def test_check_runnable_accepts_the_emulated_presets(name: str) -> None:
    """The presets meant to run pass."""
    check_runnable(plan_addresses(load_spec(ROOT / "topologies" / f"{name}.yaml")))
