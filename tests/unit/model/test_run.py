"""Tests for model.run and model.cli: loads add up, rates and times on a hand-sized fabric.

Hand-worked case (two_zones shape, one NIC per host, 8 NICs; rates: host
and RTSW-CTSW 400 Gb/s, CTSW-ATSW 200 Gb/s; link ctsw2-atsw1 down): an
incast of all 8 ranks to rank 0 (h1, zone 0) with S bytes each. The four
zone-1 senders all enter zone 0 by atsw1 -> ctsw1 (the only ATSW link left
into zone 0), 200 Gb/s: 50 Gb/s each whatever the hash. h1's downlink
(400 Gb/s) carries all 7 flows: 400 - 4 x 50 = 200 Gb/s left for the three
zone-0 senders, 66.67 Gb/s each. No other link is full (ctsw1 -> rtsw1
carries at most 200 + 133 Gb/s). Fluid: the zone-0 flows finish first;
the zone-1 ones stay at 50 Gb/s (their ATSW link), so the step ends at
S x 8 / 50e9 s.
"""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pytest

from model import Model, ModelConfig
from model import cli as model_cli
from model.flows import collective_steps
from model.forward import route_flows
from model.maxmin import maxmin_rates
from topologies.addressing import plan_addresses
from topologies.spec import parse_spec

SPEC = parse_spec({"name": "two_zones", "line_rate_gbps": 400, "atsws": 1,
                   "links": {"host": {"rate_mbps": 20}, "rtsw_ctsw": {"rate_mbps": 20},
                             "ctsw_atsw": {"rate_mbps": 10}},
                   "zones": [{"racks": [{"count": 2, "hosts": 2, "nics": 1}], "ctsws": 2},
                             {"racks": [{"count": 2, "hosts": 2, "nics": 1}], "ctsws": 2}]})
PLAN = plan_addresses(SPEC)
CUT = "ctsw2-eth3--atsw1-eth2"
S = 10**9


@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_maxmin_rates_of_the_hand_worked_incast(mode: str) -> None:
    """Zone-1 senders 50 Gb/s, zone-0 senders 200/3 Gb/s (module docstring)."""
    m = Model(SPEC, PLAN, frozenset({CUT}))
    (_, flows), = collective_steps("incast", np.arange(8), S,
                                      ips=[n.ip for n in PLAN.nics()]).variants
    r = route_flows(m.graph, m.links, flows, mode)
    rates = maxmin_rates(r.flow_of, r.link_of, len(flows), m.links.capacity)
    zone = m.graph.nic_zone[flows.src]
    assert r.delivered.all()
    assert rates[zone == 1] == pytest.approx([50e9] * 4)
    assert rates[zone == 0] == pytest.approx([200e9 / 3] * 3)


def test_collective_time_of_the_hand_worked_incast() -> None:
    """The step ends when the zone-1 flows do: S x 8 / 50e9 s."""
    r = Model(SPEC, PLAN, frozenset({CUT})).run(ModelConfig(
        pattern="incast", mode="ecmp", size=S, failed=(CUT,), rel_tol=0.0, max_events=8))
    assert r.time_s == pytest.approx(S * 8 / 50e9)
    # atsw1 -> ctsw1 carries the 4 zone-1 flows (4S at 200 Gb/s); a zone-1 CTSW's
    # uplink may tie with it, as the hash sends those flows.
    assert "atsw1" in r.bottleneck and r.bottleneck_utilisation_s == pytest.approx(4 * S * 8 / 200e9)


def test_loads_add_up_per_tier() -> None:
    """Ring of 8, 1 QP: every NIC sends S/8 a step: host up total = S, each NIC link S/8."""
    r = Model(SPEC, PLAN).run(ModelConfig(pattern="ring", size=S, mode="ecmp"))
    host_up = r.tier("host up")
    assert host_up.links == 8 and host_up.max_bytes == pytest.approx(S / 8)
    assert host_up.imbalance == pytest.approx(1.0)
    loads = r.link_loads()
    assert sum(v for k, v in loads.items() if k.startswith("h") and k.endswith(" up")) == \
        pytest.approx(S)
    assert r.steps == 14 and r.dropped_flows == 0


def test_a_nic_cut_off_drops_its_flows() -> None:
    """h2-eth0 down: in a ring of 8 its flow (and the one to it) are dropped."""
    r = Model(SPEC, PLAN).run(ModelConfig(pattern="ring", size=S, mode="pin",
                                          failed=("h2-eth0--rtsw1-eth2",), timing=False))
    assert r.dropped_flows == 2


def test_pin_concentrates_a_cross_zone_permutation_into_racks_more_than_eecmp() -> None:
    """Permutation, 8 QPs split: E-ECMP spreads the QPs; pin keeps a destination on one path
    (into a rack, all of it on one CTSW downlink: max/mean 2 of 2 downlinks)."""
    m = Model(SPEC, PLAN)
    pin = m.run(ModelConfig(pattern="permutation", mode="pin", qps=8, strategy="split", size=S))
    ee = m.run(ModelConfig(pattern="permutation", mode="eecmp", qps=8, strategy="split", size=S))
    assert pin.tier("rtsw_ctsw down").imbalance == pytest.approx(2.0)
    assert ee.tier("rtsw_ctsw down").imbalance < pin.tier("rtsw_ctsw down").imbalance


def run_cli(*argv: str) -> tuple[int, str]:
    ap = argparse.ArgumentParser(prog="aizone")
    model_cli.add_parser(ap.add_subparsers())
    args = ap.parse_args(["model", *argv])
    return args.func(args), ""


def test_cli_json_and_plot(tmp_path, capsys) -> None:
    """--json prints one object with tiers and time; --plot writes PNG and SVG."""
    topo = tmp_path / "two.yaml"
    topo.write_text(json.dumps(SPEC.model_dump(mode="json", exclude_defaults=True)))
    code, _ = run_cli(str(topo), "--pattern", "alltoall", "--qps", "2", "--json",
                      "--plot", str(tmp_path / "p.png"))
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["ranks"] == 8 and out["time_s"] > 0
    assert {t["tier"] for t in out["tiers"]} >= {"host up", "ctsw_atsw up"}
    assert (tmp_path / "p.png").stat().st_size > 0 and (tmp_path / "p.svg").stat().st_size > 0


def test_cli_bad_link_is_exit_2_with_one_line(tmp_path, capsys) -> None:
    """An unknown --fail link id: exit 2, one line naming it."""
    topo = tmp_path / "two.yaml"
    topo.write_text(json.dumps(SPEC.model_dump(mode="json", exclude_defaults=True)))
    code, _ = run_cli(str(topo), "--fail", "rtsw9-eth1--ctsw1-eth1")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "rtsw9-eth1--ctsw1-eth1" in err[0]


@pytest.mark.parametrize(("option", "value", "message"), [
    ("mode", "ecmp5", "unknown routing mode 'ecmp5' (choose from pin, ecmp, eecmp)"),
    ("strategy", "round_robin", "unknown QP strategy 'round_robin' (choose from rr, split)"),
    ("placement", "scattered", "unknown placement 'scattered'"),
])
def test_a_config_with_an_unknown_choice_is_refused_naming_it_and_the_choices(
        option: str, value: str, message: str) -> None:
    """ModelConfig (the Python API) refuses an unknown mode, QP strategy or placement by name."""
    with pytest.raises(ValueError, match=re.escape(message)):
        ModelConfig(**{option: value}).check()
