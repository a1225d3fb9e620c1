"""The Prometheus exposition of `controller.metrics`, from readings written out by hand.

The text is parsed back with prometheus-client's own parser (the format's
reference reader), so each test states a sample by name, labels and value.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from controller.metrics import MetricsSource, render
from controller.sessions import CounterCell
from controller.stats import Reading
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

SMALL = Path(__file__).resolve().parents[3] / "topologies" / "ai_zone_small.yaml"
PLAN = plan_addresses(load_spec(SMALL))


def _samples(source: MetricsSource) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = render(source).decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def _source(readings: dict[str, Reading], **kw: object) -> MetricsSource:
    base: dict[str, object] = dict(
        plan=PLAN, readings=lambda: readings, switch_up=lambda name: name != "ctsw2",
        link_up=lambda link: True, transitions=lambda: {}, reconvergence=lambda: {})
    base.update(kw)
    return MetricsSource(**base)  # type: ignore[arg-type]


def _cell(i: int, packets: int, nbytes: int) -> CounterCell:
    return CounterCell(index=i, packets=packets, bytes=nbytes)


def test_port_and_class_counters_are_totals_with_their_labels() -> None:
    r = Reading(switch="rtsw1", at=1_700_000_000.5,
                rx={5: _cell(5, 10, 10_820)}, tx={5: _cell(5, 7, 434)},
                tx_tc={5 * 8 + 3: _cell(43, 4, 4_328)}, ecn={5 * 8 + 3: _cell(43, 2, 0)},
                depth={5 * 8 + 3: 9}, peak={5 * 8 + 3: 17},
                drops={2: _cell(2, 3, 0)})
    got = _samples(_source({"rtsw1": r}))
    port = frozenset({("switch", "rtsw1"), ("port", "5"), ("peer", "ctsw1")})
    assert got[("aizone_port_receive_bytes_total", port)] == 10_820
    assert got[("aizone_port_receive_packets_total", port)] == 10
    assert got[("aizone_port_transmit_bytes_total", port)] == 434
    cls = frozenset({("switch", "rtsw1"), ("port", "5"), ("class", "3")})
    assert got[("aizone_class_transmit_bytes_total", cls)] == 4_328
    assert got[("aizone_class_transmit_packets_total", cls)] == 4
    assert got[("aizone_ecn_marked_packets_total", cls)] == 2
    assert got[("aizone_queue_depth_packets", cls)] == 9
    assert got[("aizone_queue_peak_packets", cls)] == 17
    assert got[("aizone_switch_drops_total",
                frozenset({("switch", "rtsw1"), ("reason", "ttl")}))] == 3
    assert got[("aizone_stats_poll_timestamp_seconds",
                frozenset({("switch", "rtsw1")}))] == 1_700_000_000.5
    # no reading of PFC (programs' PFC off, no traffic manager): no PFC samples at all
    assert not [k for k in got if k[0].startswith("aizone_pfc_")]


def test_pfc_frames_add_the_programs_and_the_traffic_managers() -> None:
    r = Reading(switch="ctsw1", at=1.0, pfc_tx={2 * 8 + 3: _cell(19, 5, 320)},
                pfc_rx={}, tm={"2/3": {"pauses_sent": 2, "pauses_received": 1, "dropped": 0},
                               "1/3": {"dropped": 6}})
    got = _samples(_source({"ctsw1": r}))
    two = frozenset({("switch", "ctsw1"), ("port", "2"), ("class", "3")})
    one = frozenset({("switch", "ctsw1"), ("port", "1"), ("class", "3")})
    assert got[("aizone_pfc_pause_frames_sent_total", two)] == 7
    assert got[("aizone_pfc_pause_frames_received_total", two)] == 1
    assert got[("aizone_queue_drops_total", one)] == 6
    assert got[("aizone_queue_drops_total", two)] == 0


def test_switches_links_reroutes_and_jobs() -> None:
    link = PLAN.links[-1].id
    job = {"pattern": "ring", "mode": "eecmp",
           "result": {"time_s": 0.25, "busbw_gbps": 12.5, "retransmitted": 3}}
    got = _samples(_source({}, link_up=lambda lk: lk != link,
                           transitions=lambda: {(link, "down"): 2, (link, "up"): 1},
                           reconvergence=lambda: {link: 0.042}, jobs=lambda: {7: job}))
    assert got[("aizone_switch_up", frozenset({("switch", "ctsw2"), ("role", "ctsw")}))] == 0
    assert got[("aizone_switch_up", frozenset({("switch", "rtsw1"), ("role", "rtsw")}))] == 1
    ups = {dict(k[1])["link"]: v for k, v in got.items() if k[0] == "aizone_link_up"}
    assert len(ups) == len(PLAN.links) and ups[link] == 0
    assert sum(ups.values()) == len(PLAN.links) - 1
    assert got[("aizone_link_transitions_total",
                frozenset({("link", link), ("direction", "down")}))] == 2
    assert got[("aizone_link_reconvergence_seconds", frozenset({("link", link)}))] == 0.042
    labels = frozenset({("collective", "7"), ("pattern", "ring"), ("mode", "eecmp")})
    assert got[("aizone_job_busbw_bits_per_second", labels)] == 12.5e9
    assert got[("aizone_job_seconds", labels)] == 0.25
    assert got[("aizone_job_retransmitted_packets", labels)] == 3
    assert got[("aizone_jobs_total", frozenset())] == 7
