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
    return plan_addresses(load_spec(ROOT / "topologies" / "zone.yaml"))


def test_rack_plan_matches_the_documented_scheme() -> None:
    """rack.yaml: rtsw1 (device 1, port 50001), h1/h2 on ports 1/2 with /31s."""
    plan = rack_plan()
    (sw,) = plan.switches
    assert (sw.name, sw.device_id, sw.grpc_addr, sw.cpu_port) == ("rtsw1", 1, "127.0.0.1:50001", 255)
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
    plan = plan_addresses(load_spec(ROOT / "topologies" / "two-zones.yaml"))
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


@pytest.mark.parametrize("name", ["rack", "zone", "two-zones"])
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
