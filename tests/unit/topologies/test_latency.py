"""The topology's `latency:` section (topologies.latency): fields, errors, per-interface delays,
the round trips and BDP `aizone topo show` prints; numbers worked out by hand."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from controller.jobs import fabric_ack_timeout_ms
from topologies.addressing import plan_addresses
from topologies.linkdelay import egress_delays
from topologies.spec import SpecError, parse_spec
from topologies.summary import render_summary, summarize

# Two racks of one host under one CTSW; host links 10 Mb/s for 400 G: scale 40,000.
BASE: dict[str, Any] = {"name": "lat", "links": {"host": {"rate_mbps": 10},
                                                 "rtsw_ctsw": {"rate_mbps": 20}},
                        "racks": [{"count": 2, "hosts": 1, "nics": 1}], "ctsws": 1}


def spec_with(latency: Any, **extra: Any) -> Any:
    return parse_spec({**BASE, "latency": latency, **extra}, source="lat.yaml")


def test_presets_have_no_latency_unless_they_say_so() -> None:
    """No `latency:` section: None, nothing delayed."""
    assert parse_spec(BASE, source="lat.yaml").latency is None


def test_an_empty_section_takes_the_real_defaults() -> None:
    """Copper 0.01 us to the NICs, 0.5 us of fibre above, 1 us per switch."""
    lat = spec_with({}).latency
    assert (lat.propagation_us.host, lat.propagation_us.rtsw_ctsw,
            lat.propagation_us.ctsw_atsw) == (0.01, 0.5, 0.5)
    assert (lat.switch_us.rtsw, lat.switch_us.ctsw, lat.switch_us.atsw) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(("latency", "message"), [
    ({"switch_us": {"tor": 1}}, "lat.yaml: latency.switch_us.tor: unknown key"),
    ({"propagation_us": {"host": -0.1}}, "lat.yaml: latency.propagation_us.host: value must be >= 0"),
    ({"propagation_us": {"rtsw_ctsw": 2000}},
     "lat.yaml: latency.propagation_us.rtsw_ctsw: value must be <= 1000"),
    ({"switch_us": {"ctsw": 300}},
     "lat.yaml: latency.switch_us.ctsw: a frame leaving ctsw onto rtsw_ctsw would wait 12.02 s "
     "(real us x scale 40000), at most 10 s"),
    ({"propagation_us": {"host": 251}},
     "lat.yaml: latency.propagation_us.host: a frame leaving a host onto host would wait "
     "10.04 s"),
], ids=["unknown-role", "negative", "past-1-ms", "scaled-hop-too-long", "host-hop-too-long"])
def test_bad_latency_is_refused_naming_the_key(latency: Any, message: str) -> None:
    """Unknown keys, negative or huge values, hops that would wait past 10 s."""
    with pytest.raises(SpecError) as err:
        spec_with(latency)
    assert message in str(err.value)


def test_netem_delay_and_latency_are_refused_together() -> None:
    """Two ways of delaying the same links: the error names the netem key."""
    with pytest.raises(SpecError, match=r"lat.yaml: links.host.delay_ms: netem delay and "
                                        r"`latency` both delay the links: give one"):
        spec_with({}, links={"host": {"rate_mbps": 10, "delay_ms": 1}})


def test_each_interface_waits_its_cable_plus_its_switch_times_the_scale() -> None:
    """host 0.25 us, fibre 0.5 us, RTSW 1 us, CTSW 1.5 us, x 40,000."""
    spec = spec_with({"propagation_us": {"host": 0.25, "rtsw_ctsw": 0.5},
                      "switch_us": {"rtsw": 1.0, "ctsw": 1.5}})
    plan = plan_addresses(spec)
    delays = egress_delays(plan, spec.latency, {"h1": "ns-h1", "h2": "ns-h2"})
    got = {d.intf: (d.netns, round(d.delay_s, 9)) for d in delays}
    assert got == {
        "h1-eth0": ("ns-h1", 0.010), "rtsw1-eth1": (None, 0.050),
        "h2-eth0": ("ns-h2", 0.010), "rtsw2-eth1": (None, 0.050),
        "rtsw1-eth2": (None, 0.060), "ctsw1-eth1": (None, 0.080),
        "rtsw2-eth2": (None, 0.060), "ctsw1-eth2": (None, 0.080),
    }
    assert sorted(d.door for d in delays) == list(range(8))


def test_zero_delay_interfaces_get_no_door() -> None:
    """A host cable of 0 us and no switch latency: the NICs are left alone."""
    spec = spec_with({"propagation_us": {"host": 0}, "switch_us": {"rtsw": 0}})
    plan = plan_addresses(spec)
    intfs = {d.intf for d in egress_delays(plan, spec.latency, {})}
    assert intfs == {"rtsw1-eth2", "rtsw2-eth2", "ctsw1-eth1", "ctsw1-eth2"}


def test_topo_show_gives_round_trips_and_bdp_per_tier() -> None:
    """rtsw_ctsw: 0.5 + 1 + 0.5 + 1 = 3 us real, 120 ms at 40,000; 20 Mb/s x 120 ms = 300 kB,
    as 800 Gb/s x 3 us; farthest hosts 2 x (0.01 + 0.5 + 1 + 1 + 0.5 + 0.01 + 1) = 8.04 us."""
    spec = spec_with({})
    s = summarize(spec, plan_addresses(spec))
    tiers = {t["tier"]: t for t in s["latency"]["tiers"]}
    assert tiers["rtsw_ctsw"]["rtt_us"] == pytest.approx(3.0)
    assert tiers["rtsw_ctsw"]["rtt_ms"] == pytest.approx(120.0)
    assert tiers["rtsw_ctsw"]["bdp_bytes"] == pytest.approx(300_000)
    assert tiers["host"]["up_ms"] == pytest.approx(0.4)
    assert tiers["host"]["down_ms"] == pytest.approx(40.4)
    assert s["latency"]["path_rtt_us"] == pytest.approx(8.04)
    assert s["latency"]["path_bdp_bytes"] == pytest.approx(10e6 / 8 * 8.04e-6 * 40_000)
    out = io.StringIO()
    render_summary(Console(file=out, width=200), s)
    assert "300 KB" in out.getvalue() and "321.6 ms emulated" in out.getvalue()


def test_topo_show_says_when_there_is_no_latency() -> None:
    """Without the section: `latency` is None and the view says so."""
    spec = parse_spec(BASE, source="lat.yaml")
    s = summarize(spec, plan_addresses(spec))
    assert s["latency"] is None
    out = io.StringIO()
    render_summary(Console(file=out, width=200), s)
    assert "latency: none configured" in out.getvalue()


def test_the_ack_timeout_waits_for_the_delayed_round_trip() -> None:
    """ai_zone_small's rates and queues with the default latency: 3 queues x 64 x 1,082 B at
    10 Mb/s = 166.2 ms, plus the farthest hosts' 8.04 us x 40,000 = 321.6 ms = 487.8 ms:
    4.096 us x 2^17 = 536.9 ms (268.4 ms without latency)."""
    spec = spec_with({}, racks=[{"count": 4, "hosts": 2, "nics": 2}], ctsws=2)
    plan = plan_addresses(spec)
    assert plan.delayed_rtt_s == pytest.approx(0.3216)
    got = fabric_ack_timeout_ms({"host": 10, "rtsw_ctsw": 20}, {"host": 64, "rtsw_ctsw": 64}, 3,
                                rtt_ms=plan.delayed_rtt_s * 1e3)
    assert got == pytest.approx(536.870912)
    assert plan_addresses(parse_spec(BASE, source="lat.yaml")).delayed_rtt_s == 0.0
