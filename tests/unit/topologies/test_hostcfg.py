"""Tests for topologies.hostcfg: the commands that configure a host, from its plan."""

from __future__ import annotations

from topologies.addressing import plan_addresses
from topologies.hostcfg import host_commands, nic_routes
from topologies.spec import parse_spec

# One rack of one host with two NICs: NIC 0 is 10.0.0.1/31, NIC 1 10.0.0.3/31.
PLAN = plan_addresses(parse_spec({"racks": [{"hosts": 1, "nics": 2}]}))


def test_nic_0_routes_by_default_and_nic_1_by_its_own_table() -> None:
    """NIC 0: default via 10.0.0.0 in main; NIC 1: default via 10.0.0.2 in table 101."""
    h1 = PLAN.host("h1")
    assert nic_routes(h1.nics[0]) == [
        ["ip", "route", "replace", "default", "via", "10.0.0.0", "dev", "h1-eth0"]]
    assert nic_routes(h1.nics[1]) == [
        ["ip", "route", "replace", "default", "via", "10.0.0.2", "dev", "h1-eth1", "table", "101"]]


def test_host_commands_address_each_nic_and_pick_the_table_by_source() -> None:
    """Each NIC gets its /31 and comes up; NIC 1's source address selects table 101."""
    cmds = host_commands(PLAN.host("h1"))
    assert ["ip", "addr", "add", "10.0.0.1/31", "dev", "h1-eth0"] in cmds
    assert ["ip", "addr", "add", "10.0.0.3/31", "dev", "h1-eth1"] in cmds
    assert ["ip", "rule", "add", "from", "10.0.0.3", "table", "101"] in cmds
    assert cmds.index(["ip", "link", "set", "h1-eth1", "up"]) < cmds.index(
        ["ip", "route", "replace", "default", "via", "10.0.0.2", "dev", "h1-eth1", "table", "101"])
    assert ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"] in cmds
