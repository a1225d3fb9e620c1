"""Tests for topologies.addressing: the plan is deterministic and consistent."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from topologies.addressing import plan_addresses
from topologies.spec import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[3]


def rack_plan():
    return plan_addresses(load_spec(ROOT / "topologies" / "rack.yaml"))


def zone_plan():
    return plan_addresses(load_spec(ROOT / "topologies" / "ai_zone_small.yaml"))


def test_rack_plan_matches_the_documented_scheme() -> None:
    """rack.yaml: rtsw1 (device 1, port 20001), h1/h2 on ports 1/2 with /31s."""
    plan = rack_plan()
    (sw,) = plan.switches
    assert (sw.name, sw.device_id, sw.grpc_addr, sw.cpu_port) == ("rtsw1", 1, "127.0.0.1:20001", 255)
    h1, h2 = plan.hosts
    assert (h1.name, h1.ip, h1.nics[0].gateway, h1.nics[0].switch_port) == ("h1", "10.0.0.1", "10.0.0.0", 1)
    assert (h2.name, h2.ip, h2.nics[0].gateway, h2.nics[0].switch_port) == ("h2", "10.0.0.3", "10.0.0.2", 2)
    assert sw.port(1).gateway_ip == "10.0.0.0" and sw.port(1).peer_mac == h1.nics[0].mac
    assert sw.port(2).intf == "rtsw1-eth2" and h2.nics[0].intf == "h2-eth0"


def test_plan_is_deterministic() -> None:
    """The same spec always gives the same plan."""
    assert zone_plan() == zone_plan()


def test_each_nic_shares_a_slash_31_with_its_gateway_only() -> None:
    """Host address and gateway are the two ends of one /31; no two NICs share it."""
    plan = zone_plan()
    nets = set()
    for nic in plan.nics():
        net = ipaddress.ip_network(nic.cidr, strict=False)
        assert net.prefixlen == 31
        assert ipaddress.ip_address(nic.gateway) in net
        nets.add(net)
    assert len(nets) == len(plan.nics())


def test_addresses_macs_ports_and_ids_are_unique() -> None:
    """No address, MAC, interface, device id or gRPC port is used twice."""
    plan = plan_addresses(load_spec(ROOT / "topologies" / "two_zones.yaml"))
    ips = [n.ip for n in plan.nics()] + [n.gateway for n in plan.nics()]
    macs = [n.mac for n in plan.nics()] + [p.mac for s in plan.switches for p in s.ports]
    intfs = [n.intf for n in plan.nics()] + [p.intf for s in plan.switches for p in s.ports]
    for values in (ips, macs, intfs, [s.device_id for s in plan.switches],
                   [s.grpc_port for s in plan.switches]):
        assert len(values) == len(set(values))
    assert all(len(i) <= 15 for i in intfs)  # Linux IFNAMSIZ


def test_links_are_symmetric_with_switch_ports() -> None:
    """Every switch port's peer points back at it."""
    plan = zone_plan()
    for sw in plan.switches:
        for p in sw.ports:
            if p.kind == "host":
                nic = plan.host(p.peer).nics[p.peer_port]
                assert (nic.switch, nic.switch_port, nic.mac) == (sw.name, p.port, p.peer_mac)
            else:
                back = plan.switch(p.peer).port(p.peer_port)
                assert (back.peer, back.peer_port, back.mac) == (sw.name, p.port, p.peer_mac)


def test_rtsw_ports_are_downlinks_then_uplinks() -> None:
    """An RTSW numbers host ports first (host, NIC order), then uplinks by CTSW."""
    plan = zone_plan()
    sw = plan.switch("rtsw1")
    kinds = [p.kind for p in sw.ports]
    assert kinds == ["host"] * 4 + ["uplink"] * 2
    assert [p.peer for p in sw.ports_of("uplink")] == ["ctsw1", "ctsw2"]
    assert [(p.peer, p.peer_port) for p in sw.ports_of("host")] == [
        ("h1", 0), ("h1", 1), ("h2", 0), ("h2", 1)]


def test_cpu_port_is_never_a_front_panel_port() -> None:
    """Port 255 (the CPU port) is skipped when numbering."""
    spec = parse_spec({"racks": [{"hosts": 64, "nics": 2, "count": 3, "uplinks": 1}],
                       "ctsws": 2}, source="big.yaml")
    plan = plan_addresses(spec)
    for sw in plan.switches:
        assert 255 not in [p.port for p in sw.ports]


@pytest.mark.parametrize("name", ["rack", "ai_zone_small", "two_zones"])
def test_racks_live_in_their_zone_prefix(name: str) -> None:
    """Rack r of zone z uses 10.z.r.0/24."""
    plan = plan_addresses(load_spec(ROOT / "topologies" / f"{name}.yaml"))
    for h in plan.hosts:
        for nic in h.nics:
            assert nic.ip.startswith(f"10.{h.zone}.{h.rack}.")


def test_multi_nic_hosts_get_a_table_per_extra_nic() -> None:
    """NIC 0 uses the main table; NIC k > 0 gets policy table 100 + k."""
    plan = zone_plan()
    h1 = plan.host("h1")
    assert [n.table for n in h1.nics] == [None, 101]


def test_switch_ports_name_their_tier_and_cable() -> None:
    """ai_zone_small rtsw1: ports 1-4 host tier, 5-6 rtsw_ctsw; link ids lower end first."""
    plan = zone_plan()
    sw = plan.switch("rtsw1")
    assert [p.tier for p in sw.ports] == ["host"] * 4 + ["rtsw_ctsw"] * 2
    assert sw.port(1).link_id == "h1-eth0--rtsw1-eth1"
    assert sw.port(5).link_id == "rtsw1-eth5--ctsw1-eth1"
    assert plan.switch("ctsw1").port(1).link_id == "rtsw1-eth5--ctsw1-eth1"
    assert plan.link("rtsw1-eth5--ctsw1-eth1").tier == "rtsw_ctsw"
    assert {lk.id for lk in plan.links} == {p.link_id for s in plan.switches for p in s.ports}


def test_control_ports_follow_the_switch_index() -> None:
    """switches.ctl_port_base + index, like gRPC: rtsw1 52001 ... ctsw2 52006."""
    plan = zone_plan()
    assert [(s.name, s.ctl_port) for s in plan.switches] == [
        ("rtsw1", 52001), ("rtsw2", 52002), ("rtsw3", 52003), ("rtsw4", 52004),
        ("ctsw1", 52005), ("ctsw2", 52006)]
    assert plan.switch("ctsw2").ctl_addr == "127.0.0.1:52006"


def test_plan_carries_qos_and_scale() -> None:
    """ai_zone_small: 8 queues, class 3 lossless, host links 10 Mb/s for 400 G (scale 40,000)."""
    plan = zone_plan()
    assert (plan.qos.queues, plan.qos.lossless_tcs, plan.scale) == (8, (3,), 40_000)


def test_lookups_name_what_is_missing() -> None:
    """Unknown switch, port, host, address or link: KeyError naming it."""
    plan = zone_plan()
    for call, text in [(lambda: plan.switch("rtsw9"), "rtsw9"),
                       (lambda: plan.switch("rtsw1").port(99), "rtsw1 has no port 99"),
                       (lambda: plan.host("h99"), "h99"),
                       (lambda: plan.nic_by_ip("10.9.9.9"), "10.9.9.9"),
                       (lambda: plan.link("a--b"), "a--b")]:
        with pytest.raises(KeyError, match=text):
            call()


@pytest.fixture(scope="module")
def meta_plan():
    return plan_addresses(load_spec(ROOT / "topologies" / "meta_24k.yaml"))


def test_meta_24k_plan_has_the_papers_counts(meta_plan) -> None:
    """1,536 RTSWs, 144 CTSWs, 9 ATSWs, 3,072 hosts, 24,576 NICs, 56,112 cables."""
    plan = meta_plan
    assert [len(plan.switches_of(r)) for r in ("rtsw", "ctsw", "atsw")] == [1536, 144, 9]
    assert (len(plan.hosts), len(plan.nics()), len(plan.links)) == (3072, 24576, 56112)
    # 16 NIC ports + 18 uplinks; 192 downlinks + 27 uplinks; 8 x 18 x 3 downlinks.
    assert len(plan.switch("rtsw1").ports) == 34
    assert len(plan.switch("ctsw1").ports) == 219
    assert len(plan.switch("atsw9").ports) == 432


def test_meta_24k_addresses_fit_their_zone_and_rack(meta_plan) -> None:
    """The last NIC: zone 7, rack 191, host 1, NIC 7 -> 10.7.191.31 on h3072, gateway .30."""
    plan = meta_plan
    nic = plan.nic_by_ip("10.7.191.31")
    assert (nic.host, nic.index, nic.gateway, nic.switch) == ("h3072", 7, "10.7.191.30", "rtsw1536")
    assert len({n.ip for n in plan.nics()}) == 24576
    assert plan.switch("atsw9").port(432).peer == "ctsw144"
    # The CPU port 255 is skipped on the 432-port ATSW.
    assert 255 not in [p.port for p in plan.switch("atsw1").ports]
    assert max(p.port for p in plan.switch("atsw1").ports) == 433
