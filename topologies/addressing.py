"""The addressing plan: every name, number and address a fabric uses, derived from its spec.

`plan_addresses(spec)` is a pure function: the same spec always gives the
same plan, so the network builder, the controller and the traffic agents
agree without talking to each other.

Naming and numbering (z = zone index, r = rack index inside the zone, both
from 0; all counters in spec order):

- Nodes: RTSWs `rtsw1..`, CTSWs `ctsw1..`, ATSWs `atsw1..`, hosts `h1..`,
  numbered across the whole fabric in (zone, rack, host) order.
- Switch index i: RTSWs first (by zone, rack), then CTSWs (by zone), then
  ATSWs. device_id = switches.device_id_base + i, gRPC port =
  switches.grpc_port_base + i (on 127.0.0.1), BMv2 Thrift port =
  switches.thrift_port_base + i, p4switch control API port =
  switches.ctl_port_base + i.
- Switch ports (1-based, like BMv2): an RTSW has its host-facing downlinks
  first, port 1 + n*nics + k for NIC k of host n of the rack, then its
  uplinks, grouped by CTSW then parallel link. A CTSW has its downlinks
  (by rack, then parallel link), then its ATSW uplinks (by ATSW, then
  parallel link). An ATSW has downlinks by (zone, CTSW, parallel link).
  The CPU port (switches.cpu_port, 255 by default) is skipped.
- Interfaces: `<node>-eth<port>` on switches, `<host>-eth<k>` for NIC k.
- MACs (locally administered): switch port = 02:a1:<index, 16 bits>:<port,
  16 bits>; host NIC = 02:a2:<z>:<r>:<host in rack>:<k>.
- IPv4: zone z owns 10.z.0.0/16, rack r of it 10.z.r.0/24. NIC number
  i = n*nics + k in its rack gets the /31 10.z.r.(2i)/31: the host NIC takes
  the odd address 10.z.r.(2i+1) and its gateway is the even one
  10.z.r.(2i), which is the RTSW port facing that NIC. No two NICs share a
  subnet, so there is no L2 domain and no flooding: the RTSW's P4 ARP
  responder answers for each gateway address with that port's MAC, and
  every other address is routed. A host's default route goes through the
  gateway of NIC 0; NIC k > 0 gets its own routing table (100 + k) chosen by
  source address, so a sender that binds to NIC k leaves through NIC k.
- Fabric links (RTSW-CTSW, CTSW-ATSW) carry no IP addresses: next hops are
  programmed as (port, source MAC, neighbour MAC) from this plan.
- Links: each cable is `LinkPlan.id` = "<a_intf>--<b_intf>", the lower
  tier's end first (host before RTSW, RTSW before CTSW, CTSW before ATSW),
  e.g. `h1-eth0--rtsw1-eth1`, `rtsw1-eth5--ctsw1-eth1`.

Limits (checked by the spec): 256 zones (10.z), 256 racks per zone
(10.z.r.0/24), 128 NICs per rack (a /31 each in the /24), 509 ports per
switch (9-bit v1model ports less the CPU and drop ports), 9,999 switches per
role (interface names fit Linux's 15 characters) and 65,535 switches in all
(16 bits of a port MAC). Look-ups by name, port, address or link id are
dictionaries built on first use, so a plan of the paper's 24K-GPU shape
(55,000 links) builds in about a second.

Names defined here: `AddressPlan`, `SwitchPlan`, `PortPlan`, `HostPlan`,
`NicPlan`, `LinkPlan`, `link_id` (the one way a link id is written),
`plan_addresses`, `mac_to_int`, `ip_to_int`, `Tier`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from .latency import LatencySpec
from .mtu import DEFAULT_MTU, mtu_frame, roce_frame, roce_path_mtu
from .spec import BufferSpec, FabricSpec, LinkSpec, QosSpec

__all__ = [
    "AddressPlan",
    "HostPlan",
    "LinkPlan",
    "link_id",
    "NicPlan",
    "PortPlan",
    "SwitchPlan",
    "Tier",
    "ip_to_int",
    "mac_to_int",
    "plan_addresses",
]

PortKind = Literal["host", "uplink", "downlink"]
Tier = Literal["host", "rtsw_ctsw", "ctsw_atsw"]
HOST_TABLE_BASE = 100


def _mac(value: int) -> str:
    h = f"{value:012x}"
    return f"{h[0:2]}:{h[2:4]}:{h[4:6]}:{h[6:8]}:{h[8:10]}:{h[10:12]}"


def mac_to_int(mac: str) -> int:
    """'02:a1:00:00:00:01' -> int."""
    return int(mac.replace(":", ""), 16)


def ip_to_int(ip: str) -> int:
    """'10.0.0.1' -> int."""
    return int(ipaddress.IPv4Address(ip))


def switch_mac(index: int, port: int) -> str:
    """The MAC of port `port` of switch number `index`: 02:a1:<index>:<port>."""
    return _mac((0x02A1 << 32) | ((index & 0xFFFF) << 16) | (port & 0xFFFF))


def nic_mac(zone: int, rack: int, host: int, nic: int) -> str:
    """The MAC of NIC `nic` of host `host` (in its rack) of rack `rack` of zone `zone`."""
    return _mac((0x02A2 << 32) | (zone << 24) | (rack << 16) | (host << 8) | nic)


def link_id(a_intf: str, b_intf: str) -> str:
    """A link's id everywhere in aizone: its lower tier's interface, "--", the upper one's."""
    return f"{a_intf}--{b_intf}"


@dataclass(frozen=True, kw_only=True)
class PortPlan:
    """One switch port and what is at its other end."""

    port: int
    intf: str
    mac: str
    kind: PortKind
    tier: Tier  # the link tier of the cable in this port (its rate, queue, PFC, ECN)
    peer: str
    peer_port: int  # the peer switch's port, or the NIC index on a host
    peer_intf: str
    peer_mac: str
    # Host-facing ports only: the gateway address the switch answers ARP for,
    # and the host NIC's address behind it.
    gateway_ip: str | None = None
    host_ip: str | None = None

    @property
    def link_id(self) -> str:
        """The id of the cable in this port (the lower tier's interface first)."""
        if self.kind == "uplink":
            return link_id(self.intf, self.peer_intf)
        return link_id(self.peer_intf, self.intf)


@dataclass(frozen=True, kw_only=True)
class SwitchPlan:
    """One switch: identity, control-plane endpoint and ports."""

    name: str
    role: Literal["rtsw", "ctsw", "atsw"]
    index: int  # position among all switches (device id / port offsets)
    zone: int | None  # None for ATSWs, which belong to no zone
    position: int  # rack index in its zone (RTSW), CTSW index in its zone, ATSW index
    device_id: int
    grpc_port: int
    thrift_port: int
    ctl_port: int  # p4switch's control API (port speed, queues, PFC thresholds)
    cpu_port: int
    program: Path
    ports: tuple[PortPlan, ...]
    subnet: str | None = None  # RTSW: its rack's /24; CTSW: its zone's /16

    @property
    def grpc_addr(self) -> str:
        """The switch's P4Runtime address, "127.0.0.1:<grpc_port>"."""
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def ctl_addr(self) -> str:
        """The switch's p4switch control API address, "127.0.0.1:<ctl_port>"."""
        return f"127.0.0.1:{self.ctl_port}"

    @cached_property
    def _by_port(self) -> dict[int, PortPlan]:
        return {p.port: p for p in self.ports}

    def port(self, number: int) -> PortPlan:
        """The plan of port `number` (KeyError when the switch has none)."""
        try:
            return self._by_port[number]
        except KeyError:
            raise KeyError(f"{self.name} has no port {number}") from None

    def ports_of(self, kind: PortKind) -> tuple[PortPlan, ...]:
        """The switch's ports of one kind (host, uplink or downlink), in port order."""
        return tuple(p for p in self.ports if p.kind == kind)


@dataclass(frozen=True, kw_only=True)
class NicPlan:
    """One host NIC and the RTSW port it plugs into."""

    host: str
    index: int
    intf: str
    mac: str
    ip: str
    prefix_len: int
    gateway: str
    switch: str
    switch_port: int
    switch_mac: str

    @property
    def cidr(self) -> str:
        """The NIC's address with its prefix, e.g. "10.0.0.1/31"."""
        return f"{self.ip}/{self.prefix_len}"

    @property
    def table(self) -> int | None:
        """The policy-routing table of this NIC (None for NIC 0, which uses main)."""
        return None if self.index == 0 else HOST_TABLE_BASE + self.index


@dataclass(frozen=True, kw_only=True)
class HostPlan:
    """One host: its place in the fabric and its NICs."""

    name: str
    zone: int
    rack: int  # rack index inside the zone
    position: int  # host index inside the rack
    rtsw: str
    nics: tuple[NicPlan, ...]

    @property
    def ip(self) -> str:
        """The address of NIC 0 (the one the default route uses)."""
        return self.nics[0].ip


@dataclass(frozen=True, kw_only=True)
class LinkPlan:
    """One cable: endpoints (node, port, interface) and its tier's shaping."""

    tier: Tier
    a: str
    a_port: int
    a_intf: str
    b: str
    b_port: int
    b_intf: str
    shape: LinkSpec = field(default_factory=LinkSpec)

    @property
    def id(self) -> str:
        """The link id: the graph edge key, "<a_intf>--<b_intf>"."""
        return link_id(self.a_intf, self.b_intf)


@dataclass(frozen=True, kw_only=True)
class AddressPlan:
    """Everything `plan_addresses` derived; look-ups by name or address."""

    name: str
    mode: str
    switches: tuple[SwitchPlan, ...]
    hosts: tuple[HostPlan, ...]
    links: tuple[LinkPlan, ...]
    # The traffic classes and queues every switch runs with (from the spec).
    qos: QosSpec = field(default_factory=QosSpec)
    # line_rate_gbps * 1000 / links.host.rate_mbps: what results are scaled by.
    scale: float = 1.0
    # Real latencies the veths delay by, x scale (None: no delay; topologies.latency).
    latency: LatencySpec | None = None
    # How p4switch's buffer counts (packets or bytes) and its shared pool (from the spec).
    buffer: BufferSpec = field(default_factory=BufferSpec)
    # The IP MTU of every link, veths and the hosts' NICs (from the spec; topologies.mtu).
    mtu: int = DEFAULT_MTU

    @property
    def path_mtu(self) -> int:
        """The RoCE path MTU the links carry (`topologies.mtu.roce_path_mtu`)."""
        return roce_path_mtu(self.mtu)

    @property
    def roce_frame(self) -> int:
        """Bytes of a full RoCEv2 WRITE frame at `path_mtu` (`topologies.mtu.roce_frame`)."""
        return roce_frame(self.path_mtu)

    @property
    def mtu_frame(self) -> int:
        """Bytes of the largest frame a link carries (`topologies.mtu.mtu_frame`)."""
        return mtu_frame(self.mtu)

    @cached_property
    def _switches(self) -> dict[str, SwitchPlan]:
        return {s.name: s for s in self.switches}

    @cached_property
    def _hosts(self) -> dict[str, HostPlan]:
        return {h.name: h for h in self.hosts}

    @cached_property
    def _nics_by_ip(self) -> dict[str, NicPlan]:
        return {n.ip: n for h in self.hosts for n in h.nics}

    @cached_property
    def _links(self) -> dict[str, LinkPlan]:
        return {lk.id: lk for lk in self.links}

    def switch(self, name: str) -> SwitchPlan:
        """The switch called `name` (KeyError when there is none)."""
        try:
            return self._switches[name]
        except KeyError:
            raise KeyError(f"no switch named {name!r}") from None

    def host(self, name: str) -> HostPlan:
        """The host called `name` (KeyError when there is none)."""
        try:
            return self._hosts[name]
        except KeyError:
            raise KeyError(f"no host named {name!r}") from None

    def link(self, link_id: str) -> LinkPlan:
        """The link with id "<a_intf>--<b_intf>"."""
        try:
            return self._links[link_id]
        except KeyError:
            raise KeyError(f"no link {link_id!r}") from None

    def nics(self) -> tuple[NicPlan, ...]:
        """Every host NIC, in host order."""
        return tuple(n for h in self.hosts for n in h.nics)

    def nic_by_ip(self, ip: str) -> NicPlan:
        """The NIC with address `ip` (KeyError when there is none)."""
        try:
            return self._nics_by_ip[ip]
        except KeyError:
            raise KeyError(f"no NIC has address {ip}") from None

    @property
    def delayed_rtt_s(self) -> float:
        """The round trip between the farthest hosts that the scaled latency adds (0: none)."""
        if self.latency is None:
            return 0.0
        atsw = any(s.role == "atsw" for s in self.switches)
        return self.latency.path_rtt_us(atsw) * 1e-6 * self.scale

    def switches_of(self, role: str) -> tuple[SwitchPlan, ...]:
        """The switches of one role ("rtsw", "ctsw" or "atsw"), in index order."""
        return tuple(s for s in self.switches if s.role == role)

    def roles(self) -> list[str]:
        """Roles present, in the order rtsw, ctsw, atsw."""
        return [r for r in ("rtsw", "ctsw", "atsw") if self.switches_of(r)]


def zone_subnet(zone: int) -> str:
    """The /16 of zone `zone`, "10.<zone>.0.0/16"."""
    return f"10.{zone}.0.0/16"


def rack_subnet(zone: int, rack: int) -> str:
    """The /24 of rack `rack` of zone `zone`, "10.<zone>.<rack>.0/24"."""
    return f"10.{zone}.{rack}.0/24"


@dataclass
class _Builder:
    """Mutable scratch space for `plan_addresses` (ports are filled as links are made)."""

    ports: dict[str, list[PortPlan]] = field(default_factory=dict)
    next_port: dict[str, int] = field(default_factory=dict)
    links: list[LinkPlan] = field(default_factory=list)


def plan_addresses(spec: FabricSpec) -> AddressPlan:
    """Derive the full addressing plan of `spec` (see the module docstring)."""
    zones = spec.zone_list()
    sw = spec.switches

    # Switch identities first: the port MACs need each switch's index.
    idents: list[tuple[str, Literal["rtsw", "ctsw", "atsw"], int | None, int, Path]] = []
    rtsw_of: dict[tuple[int, int], str] = {}
    ctsw_of: dict[tuple[int, int], str] = {}
    for z, zone in enumerate(zones):
        for r, _rack in enumerate(zone.rack_list()):
            name = f"rtsw{len(rtsw_of) + 1}"
            rtsw_of[(z, r)] = name
            idents.append((name, "rtsw", z, r, spec.programs.rtsw))
    for z, zone in enumerate(zones):
        for c in range(zone.ctsws):
            name = f"ctsw{len(ctsw_of) + 1}"
            ctsw_of[(z, c)] = name
            idents.append((name, "ctsw", z, c, spec.programs.ctsw))
    atsw_names = [f"atsw{a + 1}" for a in range(spec.atsws)]
    for a, name in enumerate(atsw_names):
        idents.append((name, "atsw", None, a, spec.programs.atsw))
    index_of = {name: i for i, (name, *_rest) in enumerate(idents)}

    b = _Builder(ports={name: [] for name, *_ in idents}, next_port={name: 1 for name, *_ in idents})

    def take_port(switch: str) -> int:
        """The next free port number of `switch` (the CPU port skipped)."""
        port = b.next_port[switch]
        if port == sw.cpu_port:  # the CPU port is not a front-panel port
            port += 1
        b.next_port[switch] = port + 1
        return port

    def intf(node: str, port: int) -> str:
        """The interface name of port `port` of `node`, "<node>-eth<port>"."""
        return f"{node}-eth{port}"

    def connect(tier: Tier, lower: str, upper: str, shape: LinkSpec) -> None:
        """Cable `lower` (uplink port) to `upper` (downlink port) on tier `tier`."""
        # Ports are taken in call order; callers go downlinks-then-uplinks.
        lp, up = b.ports[lower], b.ports[upper]
        p_low, p_up = take_port(lower), take_port(upper)
        mac_low = switch_mac(index_of[lower], p_low)
        mac_up = switch_mac(index_of[upper], p_up)
        lp.append(PortPlan(port=p_low, intf=intf(lower, p_low), mac=mac_low, kind="uplink",
                           tier=tier, peer=upper, peer_port=p_up, peer_intf=intf(upper, p_up),
                           peer_mac=mac_up))
        up.append(PortPlan(port=p_up, intf=intf(upper, p_up), mac=mac_up, kind="downlink",
                           tier=tier, peer=lower, peer_port=p_low, peer_intf=intf(lower, p_low),
                           peer_mac=mac_low))
        b.links.append(LinkPlan(tier=tier, a=lower, a_port=p_low, a_intf=intf(lower, p_low),
                                b=upper, b_port=p_up, b_intf=intf(upper, p_up), shape=shape))

    # Host-facing ports, then RTSW uplinks; CTSW downlinks in rack order
    # fall out of the loop order below.
    hosts: list[HostPlan] = []
    for z, zone in enumerate(zones):
        for r, rack in enumerate(zone.rack_list()):
            rtsw = rtsw_of[(z, r)]
            for n in range(rack.hosts):
                hname = f"h{len(hosts) + 1}"
                nics = []
                for k in range(rack.nics):
                    i = n * rack.nics + k
                    port = take_port(rtsw)
                    gw, ip = f"10.{z}.{r}.{2 * i}", f"10.{z}.{r}.{2 * i + 1}"
                    smac, hmac = switch_mac(index_of[rtsw], port), nic_mac(z, r, n, k)
                    nic = NicPlan(host=hname, index=k, intf=f"{hname}-eth{k}", mac=hmac, ip=ip,
                                  prefix_len=31, gateway=gw, switch=rtsw, switch_port=port,
                                  switch_mac=smac)
                    nics.append(nic)
                    b.ports[rtsw].append(PortPlan(
                        port=port, intf=intf(rtsw, port), mac=smac, kind="host", tier="host",
                        peer=hname, peer_port=k, peer_intf=nic.intf, peer_mac=hmac,
                        gateway_ip=gw, host_ip=ip))
                    b.links.append(LinkPlan(tier="host", a=hname, a_port=k, a_intf=nic.intf,
                                            b=rtsw, b_port=port, b_intf=intf(rtsw, port),
                                            shape=spec.links.host))
                hosts.append(HostPlan(name=hname, zone=z, rack=r, position=n, rtsw=rtsw,
                                      nics=tuple(nics)))
    for z, zone in enumerate(zones):
        for r, rack in enumerate(zone.rack_list()):
            for c in range(zone.ctsws):
                for _ in range(rack.uplinks):
                    connect("rtsw_ctsw", rtsw_of[(z, r)], ctsw_of[(z, c)], spec.links.rtsw_ctsw)
    for z, zone in enumerate(zones):
        for c in range(zone.ctsws):
            for atsw in atsw_names:
                for _ in range(zone.atsw_uplinks):
                    connect("ctsw_atsw", ctsw_of[(z, c)], atsw, spec.links.ctsw_atsw)

    switches = []
    for i, (name, role, zone_no, position, program) in enumerate(idents):
        subnet = None
        # RTSWs and CTSWs always have a zone (only ATSWs have None)
        if role == "rtsw" and zone_no is not None:
            subnet = rack_subnet(zone_no, position)
        elif role == "ctsw" and zone_no is not None:
            subnet = zone_subnet(zone_no)
        switches.append(SwitchPlan(
            name=name, role=role, index=i, zone=zone_no, position=position,
            device_id=sw.device_id_base + i, grpc_port=sw.grpc_port_base + i,
            thrift_port=sw.thrift_port_base + i, ctl_port=sw.ctl_port_base + i,
            cpu_port=sw.cpu_port, program=program,
            ports=tuple(sorted(b.ports[name], key=lambda p: p.port)), subnet=subnet))
    return AddressPlan(name=spec.name, mode=spec.routing.mode, switches=tuple(switches),
                       hosts=tuple(hosts), links=tuple(b.links), qos=spec.qos, scale=spec.scale,
                       latency=spec.latency, buffer=spec.buffer, mtu=spec.mtu)
