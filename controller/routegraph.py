"""The route graph: which live ports of each switch lead towards each destination, per mode.

Pure functions of (plan, mode, failed links). `RouteGraph(plan, failed)` is
the live fabric as numpy arrays (switches, their ports in port order, the
peer at the other end, whether the cable is up) and the hop distance from
every switch to every rack's RTSW over live links.
`RouteGraph.route_sets(switch, nics)` gives, for packets at a switch towards
destination NICs, the ports of the route each packet matches (one port, a
group's members in ascending port = member id order, or none: dropped),
vectorised over NICs, so the flow-level model walks 24K-GPU fabrics without
materialising entries. `next_hop_ports(graph, switch, dst_ip, mode)` is its
one-packet form. The entries that say the same to the switches are built
from `route_sets` only, in `controller.routes`.

The rule (`route_sets`). A destination is a NIC; its rack is the routing
target. A switch's next hops towards rack r are its live ports whose peer
switch is one hop closer to r's RTSW on the live graph (shortest live
paths; hosts never transit). Then per role and mode:

- RTSW: its own NICs leave by their host port (none if that cable is
  down). Other racks: `ecmp`/`eecmp` hash over the next hops; `pin` takes
  one uplink per destination NIC, its slice: uplink number
  (NIC's RTSW port - 1) mod (uplinks), the paper's path pinning. The slice
  keeps its uplink while that uplink is a next hop; when it is not (its
  cable or everything behind it is down) the slice moves to the next
  uplink in port order (cyclically) that is one, so the survivors carry the
  extra load. A NIC whose own cable is down is dropped in `pin` mode (its
  /32 is the destination); in `ecmp`/`eecmp` its rack still routes to the
  RTSW, which drops it.
- CTSW: racks of its zone hash over the next hops (in every mode: the
  `pin` key is the destination address alone); other zones: `ecmp`/
  `eecmp` hash, `pin` takes ATSW uplink number (zone mod uplinks) with the
  same fallback.
- ATSW: every zone's racks hash over the next hops.

A switch with no next hop towards a destination drops it.

Link ids (`failed`) are the graph edge keys "<a_intf>--<b_intf>", the lower
tier's end first (`PortPlan.link_id`).

Names defined here: `RouteGraph`, `next_hop_ports`, `check_mode`,
`MODE_VALUES`, `UNREACHABLE`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from topologies.addressing import AddressPlan, ip_to_int
from topologies.spec import Mode

__all__ = [
    "MODE_VALUES",
    "UNREACHABLE",
    "RouteGraph",
    "check_mode",
    "next_hop_ports",
]

# The spec's routing modes (`topologies.spec.Mode`, equal to their names) as
# MODE_PIN / MODE_ECMP / MODE_EECMP in p4/include/define.p4.
MODE_VALUES: dict[str, int] = {Mode.PIN: 0, Mode.ECMP: 1, Mode.EECMP: 2}
UNREACHABLE = np.int16(np.iinfo(np.int16).max)

_HOST, _UP, _DOWN = 0, 1, 2
_KIND = {"host": _HOST, "uplink": _UP, "downlink": _DOWN}
Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]


def check_mode(mode: str) -> str:
    """`mode` if it is a routing mode (a key of `MODE_VALUES`), else `ValueError`."""
    if mode not in MODE_VALUES:
        raise ValueError(f"unknown routing mode {mode!r} (choose from {', '.join(MODE_VALUES)})")
    return mode


@dataclass(frozen=True)
class _Ports:
    """One switch's ports as arrays, in port order."""

    number: Ints  # port numbers
    peer: Ints  # peer switch index, -1 for a host
    live: Bools
    kind: Ints  # _HOST | _UP | _DOWN
    nic: Ints  # NIC index behind a host port, else -1
    link: tuple[str, ...]  # link id per port
    uplinks: Ints  # positions (into the arrays above) of the uplinks


class RouteGraph:
    """The live fabric of `plan` with `failed` links removed, as arrays (module docstring).

    Attributes: `plan`, `failed`, `names` (switches in plan order), `index`
    (name -> switch index), `role` and `zone` per switch (zone -1 for
    ATSWs), `salt` per switch (its device id), `racks` (RTSW index per rack
    = routing target), `nic_ips`, `nic_rack`, `nic_zone`, `nic_port` (its
    RTSW port), `nic_live` per NIC in plan order, `dist` (switches x racks
    hop counts, `UNREACHABLE` when cut off).
    """

    def __init__(self, plan: AddressPlan, failed: frozenset[str] | set[str] = frozenset()) -> None:
        self.plan = plan
        self.failed = frozenset(failed)
        sws = plan.switches
        self.names = tuple(s.name for s in sws)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.role = tuple(s.role for s in sws)
        self.zone = np.array([-1 if s.zone is None else s.zone for s in sws], dtype=np.int64)
        self.salt = np.array([s.device_id & 0xFFFFFFFF for s in sws], dtype=np.uint32)
        self.racks = np.array([i for i, s in enumerate(sws) if s.role == "rtsw"], dtype=np.int64)
        self.rack_of = np.full(len(sws), -1, dtype=np.int64)
        self.rack_of[self.racks] = np.arange(len(self.racks))
        nics = plan.nics()
        self.nic_index = {n.intf: i for i, n in enumerate(nics)}
        ip_index = {n.ip: i for i, n in enumerate(nics)}
        self.nic_ips = np.array([ip_to_int(n.ip) for n in nics], dtype=np.int64)
        self.nic_rack = np.array([self.rack_of[self.index[n.switch]] for n in nics], dtype=np.int64)
        self.nic_zone = self.zone[self.racks[self.nic_rack]] if len(nics) else np.zeros(0, np.int64)
        self.nic_port = np.array([n.switch_port for n in nics], dtype=np.int64)
        known: set[str] = set()
        ports: list[_Ports] = []
        nic_live = np.ones(len(nics), dtype=bool)
        for s in sws:
            links = tuple(p.link_id for p in s.ports)
            known.update(links)
            live = np.array([lk not in self.failed for lk in links], dtype=bool)
            kind = np.array([_KIND[p.kind] for p in s.ports], dtype=np.int64)
            nic = np.array([ip_index[p.host_ip] if p.kind == "host" and p.host_ip else -1
                            for p in s.ports], dtype=np.int64)
            for i in np.flatnonzero(nic >= 0):
                nic_live[nic[i]] = bool(live[i])
            ports.append(_Ports(
                number=np.array([p.port for p in s.ports], dtype=np.int64),
                peer=np.array([self.index[p.peer] if p.kind != "host" else -1 for p in s.ports],
                              dtype=np.int64),
                live=live, kind=kind, nic=nic, link=links,
                uplinks=np.flatnonzero(kind == _UP)))
        unknown = sorted(self.failed - known)
        if unknown:
            raise ValueError(f"unknown link id {unknown[0]!r} in failed links of {plan.name} "
                             f"(ids look like rtsw1-eth5--ctsw1-eth1)")
        self.ports = tuple(ports)
        self.nic_live = nic_live
        self.dist = self._distances()

    def _distances(self) -> npt.NDArray[np.int16]:
        """Hop counts switch -> rack RTSW over live switch-to-switch links (BFS, bit-packed)."""
        n, r = len(self.names), len(self.racks)
        dist = np.full((n, r), UNREACHABLE, dtype=np.int16)
        if r == 0:
            return dist
        src, dst = [], []
        for i, p in enumerate(self.ports):
            ok = p.live & (p.peer >= 0)
            peers = np.unique(p.peer[ok])
            src.append(np.full(len(peers), i, dtype=np.int64))
            dst.append(peers)
        u = np.concatenate(src)
        v = np.concatenate(dst)
        order = np.argsort(u, kind="stable")
        u, v = u[order], v[order]
        deg = np.bincount(u, minlength=n)
        starts = np.concatenate([[0], np.cumsum(deg)[:-1]])
        has = deg > 0
        seen = np.zeros((n, r), dtype=bool)
        seen[self.racks, np.arange(r)] = True
        dist[self.racks, np.arange(r)] = 0
        frontier = np.packbits(seen, axis=1)
        visited = frontier.copy()
        level = 0
        while frontier.any() and len(v):
            level += 1
            reach = np.zeros_like(frontier)
            gathered = frontier[v]
            reduced = np.bitwise_or.reduceat(gathered, starts[has], axis=0)
            reach[has] = reduced
            new = reach & ~visited
            if not new.any():
                break
            visited |= new
            newly = np.unpackbits(new, axis=1, count=r).astype(bool)
            dist[newly] = level
            frontier = new
        return dist

    # -- next hops -----------------------------------------------------------------

    def switch_index(self, switch: str) -> int:
        """The row of `switch` in the graph's arrays; `KeyError` for a switch not in the plan."""
        try:
            return self.index[switch]
        except KeyError:
            raise KeyError(f"no switch named {switch!r} in {self.plan.name}") from None

    def _towards(self, s: int, racks: Ints) -> Bools:
        """(len(racks), ports) mask: live ports of s to a peer one hop closer to each rack."""
        p = self.ports[s]
        d_s = self.dist[s, racks].astype(np.int64)
        ok = p.live & (p.peer >= 0)
        peer = np.where(ok, p.peer, 0)
        d_peer = self.dist[peer][:, racks].T.astype(np.int64)
        reach = (d_s > 0) & (d_s < int(UNREACHABLE))
        return ok[None, :] & (d_peer == (d_s - 1)[:, None]) & reach[:, None]

    def _pin(self, s: int, mask: Bools, slices: Ints) -> Bools:
        """One port per row: the slice's uplink if in `mask`, else the next uplink in it."""
        ups = self.ports[s].uplinks
        out = np.zeros_like(mask)
        if not len(mask):
            return out
        rows = np.arange(len(mask))
        has = np.zeros(len(mask), dtype=bool)
        if len(ups):
            idx = (slices[:, None] + np.arange(len(ups))[None, :]) % len(ups)
            cand = mask[rows[:, None], ups[idx]]
            has = cand.any(axis=1)
            first = ups[idx[rows, cand.argmax(axis=1)]]
            out[rows[has], first[has]] = True
        # No uplink is a next hop (only valleys are left): the lowest port that is.
        rest = ~has & mask.any(axis=1)
        out[rows[rest], mask[rest].argmax(axis=1)] = True
        return out

    def route_sets(self, switch: str | int, nics: npt.ArrayLike, mode: str) -> Bools:
        """(len(nics), ports of the switch) mask of the ports the matched route may use.

        Rows with one True are single-port routes, with more a group (hash
        over the True ports in port order), with none a drop.
        """
        check_mode(mode)
        s = switch if isinstance(switch, int) else self.switch_index(switch)
        n = np.asarray(nics, dtype=np.int64).reshape(-1)
        p = self.ports[s]
        role = self.role[s]
        racks = self.nic_rack[n]
        mask = self._towards(s, racks)
        pin = mode == "pin"
        if role == "rtsw":
            local = racks == self.rack_of[s]
            if local.any():
                mask[local] = (p.nic[None, :] == n[local][:, None]) & p.live[None, :]
            remote = ~local
            if pin and remote.any() and len(p.uplinks):
                slices = (self.nic_port[n[remote]] - 1) % len(p.uplinks)
                pinned = self._pin(s, mask[remote], slices)
                pinned &= self.nic_live[n[remote]][:, None]
                mask[remote] = pinned
        elif role == "ctsw" and pin:
            other = self.nic_zone[n] != self.zone[s]
            if other.any() and len(p.uplinks):
                slices = self.nic_zone[n[other]] % len(p.uplinks)
                mask[other] = self._pin(s, mask[other], slices)
        return mask

    def ports_of(self, switch: str | int, mask_row: Bools) -> tuple[int, ...]:
        """The port numbers of `switch` that `mask_row` (a row of `route_sets`) selects."""
        s = switch if isinstance(switch, int) else self.switch_index(switch)
        return tuple(int(x) for x in self.ports[s].number[mask_row])

    def nic_of_ip(self, ip: str | int) -> int | None:
        """The index of the NIC whose address is `ip` (dotted or an int), or None."""
        value = ip if isinstance(ip, int) else ip_to_int(str(ip))
        hit = np.flatnonzero(self.nic_ips == value)
        return int(hit[0]) if len(hit) else None


def next_hop_ports(graph: RouteGraph | AddressPlan, switch: str, dst_ip: str | int, mode: str,
                   failed: frozenset[str] = frozenset()) -> tuple[int, ...]:
    """The ports a packet to `dst_ip` (a NIC's address) may leave `switch` by, in port order.

    One port for a single-port route (pinned, host-facing), a group's
    members otherwise, () when the switch drops it. A plan is wrapped in a
    `RouteGraph` with `failed`; pass a `RouteGraph` to reuse one.
    """
    g = graph if isinstance(graph, RouteGraph) else RouteGraph(graph, failed)
    nic = g.nic_of_ip(dst_ip)
    if nic is None:
        raise ValueError(f"{dst_ip} is not the address of a NIC of {g.plan.name}")
    return g.ports_of(switch, g.route_sets(switch, [nic], mode)[0])

