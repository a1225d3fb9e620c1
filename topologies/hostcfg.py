"""How a host's namespace is configured: addresses, routes and sysctls, as argv lists.

`FabricNet` runs `host_commands(host)` in each new host; `topologies.attach`
runs `nic_routes(nic)` again when it brings a host link back up (Linux
drops the routes through an interface that goes down, and restores only
the connected /31).

- No IPv6; ARP answered only on the NIC that owns the address and sourced
  from it (several NICs per host); checksum offloads off (raw sockets read
  whole checksums).
- NIC k: its /31 (host address odd, gateway even). NIC 0 carries the
  default route via its gateway; NIC k > 0 has its own routing table
  100 + k (its default route via its gateway) chosen by source address, so
  a sender bound to NIC k leaves through NIC k.

Names defined here: `host_commands`, `nic_routes`.
"""

from __future__ import annotations

from .addressing import HostPlan, NicPlan

__all__ = ["host_commands", "nic_routes"]


def nic_routes(nic: NicPlan) -> list[list[str]]:
    """The routes of one NIC (beyond its connected /31)."""
    route = ["ip", "route", "replace", "default", "via", nic.gateway, "dev", nic.intf]
    if nic.table is None:
        return [route]
    return [[*route, "table", str(nic.table)]]


def host_commands(host: HostPlan) -> list[list[str]]:
    """Every command that configures `host` in its namespace, in order."""
    cmds = [
        ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
        ["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
        ["sysctl", "-qw", "net.ipv4.conf.all.arp_ignore=1"],
        ["sysctl", "-qw", "net.ipv4.conf.all.arp_announce=2"],
        ["ip", "link", "set", "lo", "up"],
    ]
    for nic in host.nics:
        cmds += [
            ["ethtool", "-K", nic.intf, "tx", "off", "rx", "off", "sg", "off", "tso", "off",
             "gso", "off", "gro", "off"],
            ["ip", "addr", "flush", "dev", nic.intf],
            ["ip", "addr", "add", nic.cidr, "dev", nic.intf],
            ["ip", "link", "set", nic.intf, "up"],
            *nic_routes(nic),
        ]
        if nic.table is not None:
            cmds.append(["ip", "rule", "add", "from", nic.ip, "table", str(nic.table)])
    return cmds
