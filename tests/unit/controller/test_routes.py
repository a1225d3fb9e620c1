"""controller.routegraph's next hops per mode and after failures, and controller.routes' entries.

Expected values are written out by hand from the topologies below (two of
the presets, built here with `parse_spec` so the tests do not move when a
preset file is edited):

ai_zone_small: rtsw1..4 (racks 10.0.0..3.0/24), NICs on ports 1-4 (10.0.r.1,
.3, .5, .7), port 5 -> ctsw1, port 6 -> ctsw2; ctsw1/ctsw2 port k -> rtsw k.

two_zones: zone 0 = rtsw1, rtsw2 (10.0.0/24, 10.0.1/24) under ctsw1, ctsw2;
zone 1 = rtsw3, rtsw4 (10.1.0/24, 10.1.1/24) under ctsw3, ctsw4; one NIC per
host, ports 1-2; RTSW port 3 -> first CTSW of its zone, port 4 -> second;
CTSW port 1/2 -> the zone's first/second RTSW, port 3 -> atsw1; atsw1 port
k -> ctsw k.
"""

from __future__ import annotations

import pytest

from controller.entities import Action, Exact, Lpm, TableEntry
from controller.routegraph import MODE_VALUES, RouteGraph, next_hop_ports
from controller.routes import NAMES, OTHER_GROUP_BASE, UPLINK_GROUP, compute_all, compute_routes
from topologies.addressing import AddressPlan, ip_to_int, mac_to_int, plan_addresses
from topologies.spec import parse_spec

RACK = {"name": "rack", "racks": [{"hosts": 2, "nics": 1}]}
AI_ZONE_SMALL = {"name": "ai_zone_small",
                 "racks": [{"count": 4, "hosts": 2, "nics": 2, "uplinks": 1}], "ctsws": 2}
TWO_ZONES = {"name": "two_zones", "atsws": 1, "zones": [
    {"racks": [{"count": 2, "hosts": 2, "nics": 1}], "ctsws": 2},
    {"racks": [{"count": 2, "hosts": 2, "nics": 1}], "ctsws": 2}]}


def plan(data: dict) -> AddressPlan:
    return plan_addresses(parse_spec(data))


SMALL = plan(AI_ZONE_SMALL)
TWO = plan(TWO_ZONES)


def routes_of(entries, table=NAMES["route_table"]):
    """{(prefix, len): next_id or 'drop'} of a switch's route table."""
    out = {}
    for e in entries.entries:
        if e.table != table:
            continue
        (_, m), = e.match
        nid = dict(e.action.params).get("next_id", "drop")
        out[(str_ip(m.value), m.prefix_len)] = nid
    return out


def str_ip(n: int) -> str:
    return ".".join(str((n >> s) & 0xFF) for s in (24, 16, 8, 0))


# --- next hops: ai_zone_small ------------------------------------------------------

SMALL_NICS = [f"10.0.{r}.{h}" for r in range(4) for h in (1, 3, 5, 7)]
SMALL_FABRIC_LINKS = [f"rtsw{r}-eth{5 + c}--ctsw{c + 1}-eth{r}" for r in range(1, 5) for c in (0, 1)]


def small_expected(mode: str, failed: str | None) -> dict[tuple[str, str], tuple[int, ...]]:
    """By hand: every (switch, destination NIC) of ai_zone_small, with at most one fabric link down."""
    dead = None  # (rack 1..4, ctsw 1..2)
    if failed:
        a, b = failed.split("--")
        dead = (int(a.split("-")[0][4:]), int(b.split("-")[0][4:]))
    out = {}
    for ip in SMALL_NICS:
        r = int(ip.split(".")[2]) + 1  # rack number 1..4
        port = (int(ip.split(".")[3]) + 1) // 2  # its RTSW port 1..4
        for s in range(1, 5):
            if s == r:
                out[(f"rtsw{s}", ip)] = (port,)
                continue
            up = (5, 6)
            if dead and dead[0] in (s, r):
                # the rack that lost a CTSW, or traffic to it: only the other CTSW
                up = (6,) if dead[1] == 1 else (5,)
            if mode == "pin":
                slice_port = 5 if port % 2 == 1 else 6
                up = (slice_port,) if slice_port in up else up
            out[(f"rtsw{s}", ip)] = up
        for c in (1, 2):
            if dead == (r, c):
                # lost its link to rack r: down to every other rack, which goes up again
                out[(f"ctsw{c}", ip)] = tuple(k for k in range(1, 5) if k != r)
            else:
                out[(f"ctsw{c}", ip)] = (r,)
    return out


@pytest.mark.parametrize("mode", sorted(MODE_VALUES))
@pytest.mark.parametrize("failed", [None, *SMALL_FABRIC_LINKS], ids=lambda f: f or "no-failure")
def test_ai_zone_small_next_hops_per_mode_and_failure(mode: str, failed: str | None) -> None:
    """Every switch's next hops to every NIC, with no failure and with each fabric link down."""
    g = RouteGraph(SMALL, frozenset([failed] if failed else []))
    want = small_expected(mode, failed)
    got = {(sw, ip): next_hop_ports(g, sw, ip, mode) for sw, ip in want}
    assert got == want


def test_ai_zone_small_no_failure_table_written_out() -> None:
    """A few entries of the table spelled out (pin slices: odd ports -> ctsw1, even -> ctsw2)."""
    w = small_expected("pin", None)
    assert w[("rtsw1", "10.0.2.1")] == (5,) and w[("rtsw1", "10.0.2.3")] == (6,)
    assert small_expected("ecmp", None)[("rtsw4", "10.0.0.7")] == (5, 6)
    assert next_hop_ports(SMALL, "rtsw1", "10.0.2.3", "pin") == (6,)
    assert next_hop_ports(SMALL, "ctsw2", "10.0.3.5", "ecmp") == (4,)


def test_pinned_slice_moves_to_the_next_live_uplink() -> None:
    """rtsw1-ctsw2 down: the even slices of rtsw1 move to port 5, so port 5 carries all 12."""
    g = RouteGraph(SMALL, frozenset({"rtsw1-eth6--ctsw2-eth1"}))
    ports = [next_hop_ports(g, "rtsw1", ip, "pin") for ip in SMALL_NICS[4:]]
    assert ports == [(5,)] * 12


@pytest.mark.parametrize("mode", sorted(MODE_VALUES))
def test_host_link_down_drops_only_at_its_rtsw_or_everywhere_when_pinned(mode: str) -> None:
    """h1-eth0 down: rtsw1 drops 10.0.0.1; in pin mode (a /32 per NIC) remote RTSWs drop it too."""
    g = RouteGraph(SMALL, frozenset({"h1-eth0--rtsw1-eth1"}))
    assert next_hop_ports(g, "rtsw1", "10.0.0.1", mode) == ()
    assert next_hop_ports(g, "rtsw2", "10.0.0.1", mode) == (() if mode == "pin" else (5, 6))
    assert next_hop_ports(g, "rtsw2", "10.0.0.3", mode) == ((6,) if mode == "pin" else (5, 6))


# --- next hops: two_zones ----------------------------------------------------------

TWO_NICS = [f"10.{z}.{r}.{h}" for z in (0, 1) for r in (0, 1) for h in (1, 3)]
TWO_RTSW_CTSW = [f"rtsw{r}-eth{3 + k}--ctsw{2 * ((r - 1) // 2) + k + 1}-eth{(r - 1) % 2 + 1}"
                 for r in range(1, 5) for k in (0, 1)]
TWO_CTSW_ATSW = [f"ctsw{c}-eth3--atsw1-eth{c}" for c in range(1, 5)]


def two_expected(mode: str, failed: str | None) -> dict[tuple[str, str], tuple[int, ...]]:
    """By hand: every (switch, NIC) of two_zones with at most one fabric link down."""
    rack_zone = {1: 0, 2: 0, 3: 1, 4: 1}
    ctsw_zone = {1: 0, 2: 0, 3: 1, 4: 1}
    # which CTSW (1..4) is behind RTSW port 3 / 4, and which rack behind CTSW port 1 / 2
    up_ctsw = {r: {3: 2 * rack_zone[r] + 1, 4: 2 * rack_zone[r] + 2} for r in range(1, 5)}
    down_rack = {c: {1: 2 * ctsw_zone[c] + 1, 2: 2 * ctsw_zone[c] + 2} for c in range(1, 5)}
    cut_rc = cut_ca = None
    if failed and failed in TWO_RTSW_CTSW:
        a, b = failed.split("--")
        cut_rc = (int(a.split("-")[0][4:]), int(b.split("-")[0][4:]))
    elif failed:
        cut_ca = int(failed.split("-")[0][4:])
    out = {}
    for ip in TWO_NICS:
        z, rr, h = (int(x) for x in ip.split(".")[1:])
        r = 2 * z + rr + 1  # rack 1..4
        port = (h + 1) // 2
        for s in range(1, 5):
            if s == r:
                out[(f"rtsw{s}", ip)] = (port,)
                continue
            ups = [3, 4]
            if cut_rc and (cut_rc[0] == s or (cut_rc[0] == r and rack_zone[s] == rack_zone[r])):
                # the rack that lost a CTSW, or its zone's traffic to it: the other CTSW only
                ups = [p for p in ups if up_ctsw[cut_rc[0]][p] != cut_rc[1]]
            if cut_ca and rack_zone[s] != rack_zone[r] and ctsw_zone[cut_ca] == rack_zone[s]:
                ups = [p for p in ups if up_ctsw[s][p] != cut_ca]
            if mode == "pin":
                slice_port = 3 if port == 1 else 4
                ups = [slice_port] if slice_port in ups else ups[:1]
            out[(f"rtsw{s}", ip)] = tuple(ups)
        for c in range(1, 5):
            if ctsw_zone[c] == z:
                own = 1 if down_rack[c][1] == r else 2
                if cut_rc == (r, c):
                    # down to the zone's other rack and up to the ATSW: both 3 hops from rack r
                    out[(f"ctsw{c}", ip)] = (3 - own, 3)
                else:
                    out[(f"ctsw{c}", ip)] = (own,)
            else:
                # cut off from the ATSW: down to the zone's RTSWs (pinned: the lowest port)
                valley = (1,) if mode == "pin" else (1, 2)
                out[(f"ctsw{c}", ip)] = valley if cut_ca == c else (3,)
        zone_ctsws = [2 * z + 1, 2 * z + 2]
        if cut_ca in zone_ctsws:
            zone_ctsws.remove(cut_ca)
        if cut_rc and cut_rc[0] == r:
            zone_ctsws.remove(cut_rc[1])
        out[("atsw1", ip)] = tuple(zone_ctsws)
    return out


@pytest.mark.parametrize("mode", sorted(MODE_VALUES))
@pytest.mark.parametrize("failed", [None, *TWO_RTSW_CTSW, *TWO_CTSW_ATSW],
                         ids=lambda f: f or "no-failure")
def test_two_zones_next_hops_per_mode_and_failure(mode: str, failed: str | None) -> None:
    """Every switch's next hops to every NIC of two_zones, with each fabric link down in turn."""
    g = RouteGraph(TWO, frozenset([failed] if failed else []))
    want = two_expected(mode, failed)
    got = {(sw, ip): next_hop_ports(g, sw, ip, mode) for sw, ip in want}
    assert got == want


def test_two_zones_link_ids_are_lower_tier_first() -> None:
    """The ids the tests use are the plan's cables (host, RTSW, CTSW end first)."""
    ids = {lk.id for lk in TWO.links}
    assert set(TWO_RTSW_CTSW) | set(TWO_CTSW_ATSW) <= ids
    assert "h1-eth0--rtsw1-eth1" in ids


# --- entities ----------------------------------------------------------------------


def test_rack_rtsw_answers_arp_for_each_gateway_with_its_port_mac() -> None:
    """rack: one ARP entry per host port, replying with that port's MAC."""
    p = plan(RACK)
    got = [e for e in compute_routes(p, "rtsw1").entries if e.table == NAMES["arp_table"]]
    sw = p.switch("rtsw1")
    assert got == [
        TableEntry(table=NAMES["arp_table"],
                   match=(("target_ip", Exact(value=ip_to_int(port.gateway_ip))),),
                   action=Action(name=NAMES["arp_action"],
                                 params=(("router_mac", mac_to_int(port.mac)),)))
        for port in sw.ports_of("host")
    ]


def test_rack_rtsw_routes_each_host_slash_32_to_its_port() -> None:
    """rack: h1 -> next_id 1, h2 -> next_id 2, the rest of the rack dropped."""
    assert routes_of(compute_routes(plan(RACK), "rtsw1")) == {
        ("10.0.0.1", 32): 1, ("10.0.0.3", 32): 2, ("10.0.0.0", 24): "drop"}


def test_rack_next_hops_rewrite_macs_towards_the_host() -> None:
    """Member per port: set_output(port, port MAC, host MAC); next_hop refers to it."""
    p = plan(RACK)
    e = compute_routes(p, "rtsw1")
    sw = p.switch("rtsw1")
    member = {m.member_id: m for m in e.members}[2]
    assert member.profile == NAMES["selector"]
    assert member.action == Action(name=NAMES["next_action"], params=(
        ("port", 2), ("src_mac", mac_to_int(sw.port(2).mac)),
        ("dst_mac", mac_to_int(p.host("h2").nics[0].mac))))
    nh = [x for x in e.entries if x.table == NAMES["next_table"]]
    assert [(dict(x.match)["next_id"], x.member_id) for x in nh] == [
        (Exact(value=1), 1), (Exact(value=2), 2)]
    assert not e.groups


@pytest.mark.parametrize("mode", sorted(MODE_VALUES), ids=sorted(MODE_VALUES))
def test_switch_config_default_sets_mode_and_salt(mode: str) -> None:
    """The switch_config default action carries the mode value and the device id as salt."""
    (d,) = compute_routes(plan(RACK), "rtsw1", mode).defaults
    assert d.is_default and d.table == NAMES["config_table"]
    assert dict(d.action.params) == {"mode": MODE_VALUES[mode], "salt": 1}


@pytest.mark.parametrize("mode", ["ecmp", "eecmp"])
def test_rtsw_hashes_remote_racks_over_all_uplinks(mode: str) -> None:
    """ecmp/eecmp: every other rack's /24 goes to one group of both uplinks (5, 6)."""
    e = compute_routes(SMALL, "rtsw1", mode)
    r = routes_of(e)
    assert [r[(f"10.0.{k}.0", 24)] for k in (1, 2, 3)] == [UPLINK_GROUP] * 3
    (g,) = e.groups
    assert (g.group_id, g.members, g.max_size) == (UPLINK_GROUP, (5, 6), 2)


def test_rtsw_pins_each_remote_slice_to_one_uplink() -> None:
    """pin: each remote NIC's /32 takes port 5 (NIC ports 1, 3) or 6 (ports 2, 4); no group."""
    e = compute_routes(SMALL, "rtsw1", "pin")
    r = routes_of(e)
    assert [r[(f"10.0.1.{h}", 32)] for h in (1, 3, 5, 7)] == [5, 6, 5, 6]
    assert not e.groups


def test_ctsw_routes_each_rack_down() -> None:
    """A CTSW routes each rack's /24 to that rack's RTSW and drops the rest of its zone."""
    assert routes_of(compute_routes(SMALL, "ctsw1")) == {
        ("10.0.0.0", 24): 1, ("10.0.1.0", 24): 2, ("10.0.2.0", 24): 3, ("10.0.3.0", 24): 4,
        ("10.0.0.0", 16): "drop"}


def test_two_zones_ctsw_sends_other_zone_to_atsw_and_atsw_splits_by_zone() -> None:
    """two_zones: CTSW -> other zone's /16 up port 3; ATSW -> each zone's /16 over its CTSWs."""
    assert routes_of(compute_routes(TWO, "ctsw1"))[("10.1.0.0", 16)] == 3
    atsw = compute_routes(TWO, "atsw1")
    assert routes_of(atsw) == {("10.0.0.0", 16): 1025, ("10.1.0.0", 16): 1026}
    assert {g.group_id: g.members for g in atsw.groups} == {1025: (1, 2), 1026: (3, 4)}


def test_failure_deaggregates_the_zone_route_at_the_atsw() -> None:
    """rtsw1-ctsw1 down: atsw1 keeps 10.0/16 over ctsw1+ctsw2 and adds 10.0.0.0/24 -> ctsw2 only."""
    atsw = compute_routes(TWO, "atsw1", "ecmp", frozenset({"rtsw1-eth3--ctsw1-eth1"}))
    assert routes_of(atsw) == {("10.0.0.0", 16): 1025, ("10.0.0.0", 24): 2,
                               ("10.1.0.0", 16): 1026}


def test_new_member_sets_get_ids_from_2048_in_member_order() -> None:
    """ctsw1 loses its rack-1 link: rack 1 goes down the valley over (2, 3, 4) = group 2048."""
    e = compute_routes(SMALL, "ctsw1", "ecmp", frozenset({"rtsw1-eth5--ctsw1-eth1"}))
    assert routes_of(e)[("10.0.0.0", 24)] == OTHER_GROUP_BASE
    assert [(g.group_id, g.members) for g in e.groups] == [(2048, (2, 3, 4))]


def test_a_rack_cut_off_is_dropped_by_everyone() -> None:
    """Both uplinks of rtsw1 down: rtsw1 drops every other rack, the others drop rack 0."""
    failed = frozenset({"rtsw1-eth5--ctsw1-eth1", "rtsw1-eth6--ctsw2-eth1"})
    routes = compute_all(SMALL, "ecmp", failed)
    assert routes_of(routes["rtsw1"])[("10.0.1.0", 24)] == "drop"
    assert routes_of(routes["rtsw2"])[("10.0.0.0", 24)] == "drop"
    assert routes_of(routes["ctsw1"])[("10.0.0.0", 24)] == "drop"
    assert not routes["rtsw1"].groups


def lpm_ports(entries, ip: str) -> tuple[int, ...]:
    """What the entries do with a packet to `ip`: LPM, then the next hop's member ports."""
    value = ip_to_int(ip)
    best = None
    for e in entries.entries:
        if e.table != NAMES["route_table"]:
            continue
        (_, m), = e.match
        if value >> (32 - m.prefix_len) == m.value >> (32 - m.prefix_len):
            if best is None or m.prefix_len > best.match[0][1].prefix_len:
                best = e
    if best is None or best.action.name == NAMES["route_drop"]:
        return ()
    nid = dict(best.action.params)["next_id"]
    groups = {g.group_id: g.members for g in entries.groups}
    return groups.get(nid, (nid,))


@pytest.mark.parametrize("failed", [None, TWO_RTSW_CTSW[0], TWO_RTSW_CTSW[5], TWO_CTSW_ATSW[2]],
                         ids=lambda f: f or "no-failure")
@pytest.mark.parametrize("mode", sorted(MODE_VALUES))
def test_entries_forward_as_the_next_hops_say(mode: str, failed: str | None) -> None:
    """LPM over each switch's entries gives next_hop_ports for every NIC: one computation."""
    f = frozenset([failed] if failed else [])
    routes = compute_all(TWO, mode, f)
    want = two_expected(mode, failed)
    got = {(sw, ip): lpm_ports(routes[sw], ip) for sw, ip in want}
    assert got == want


def test_install_order_puts_members_before_references() -> None:
    """Members, then groups, then entries; the default action last."""
    e = compute_routes(SMALL, "rtsw1", "ecmp")
    order = e.install_order()
    kinds = [type(x).__name__ for x in order]
    assert kinds.index("Group") > max(i for i, k in enumerate(kinds) if k == "Member")
    assert order[-1].is_default
    assert e.delete_order()[-1] == e.members[0]


def test_compute_all_covers_every_switch() -> None:
    """compute_all returns one SwitchEntries per switch."""
    assert sorted(compute_all(TWO)) == sorted(s.name for s in TWO.switches)


def test_lpm_values_are_network_addresses() -> None:
    """Route prefixes carry no host bits."""
    for e in compute_routes(SMALL, "ctsw1").entries:
        for _, m in e.match:
            if isinstance(m, Lpm):
                assert m.value & ((1 << (32 - m.prefix_len)) - 1) == 0


def test_unknown_mode_is_rejected() -> None:
    """A mode outside pin/ecmp/eecmp is a ValueError."""
    with pytest.raises(ValueError, match="unknown routing mode"):
        compute_routes(plan(RACK), "rtsw1", "spray")


def test_unknown_link_id_is_rejected() -> None:
    """A failed link that is not a cable of the plan is a ValueError naming it."""
    with pytest.raises(ValueError, match="rtsw9-eth1--ctsw1-eth1"):
        RouteGraph(SMALL, frozenset({"rtsw9-eth1--ctsw1-eth1"}))
