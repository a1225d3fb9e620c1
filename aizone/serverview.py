"""`aizone topo show TOPO --servers [A,B,...]`: where each node of a fabric would run.

Prints the placement `topologies.serverplacement.place_on_servers` makes
(the topology's `servers.placement` pinning what it names), from the
expected loads `aizone up --servers` places by
(`controller.expectedload`: a ring AllReduce over every NIC, packed, 8
QPs, in the topology's routing mode): per server, its switches and hosts
and the Mb/s and frames per second its switches are expected to handle;
then every link that crosses servers (a tunnel when the fabric runs) with
its expected load, and the total. `--json` prints
`ServerPlacement.to_json()`. No root, no ssh: nothing is started.

Names defined here: `show_placement`.
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from controller.expectedload import REFERENCE_QPS, expected_link_mbps
from topologies.addressing import plan_addresses
from topologies.mtu import ROCE_FRAME
from topologies.serverplacement import place_on_servers
from topologies.spec import FabricSpec

from .output import EXIT_INPUT, EXIT_OK, emit_json, fail

__all__ = ["show_placement"]


def show_placement(args: argparse.Namespace, spec: FabricSpec) -> int:
    """Print where `spec`'s nodes would run on `args.servers` (empty: the topology's)."""
    servers: tuple[str, ...] = tuple(args.servers) or (
        tuple(spec.servers.names) if spec.servers else ())
    if not servers:
        return fail(f"{args.topo}: no servers to place on: give --servers A,B,... or a "
                    f"servers: section (names: [...]) in the topology", EXIT_INPUT)
    fixed = spec.servers.placement if spec.servers else None
    plan = plan_addresses(spec)
    try:
        placement = place_on_servers(plan, servers, fixed,
                                     loads=expected_link_mbps(plan, spec.routing.mode))
    except ValueError as exc:
        return fail(f"{args.topo}: {exc}", EXIT_INPUT)
    if emit_json(args, placement.to_json()):
        return EXIT_OK
    console = Console(highlight=False)
    nodes = Table(title=f"{spec.name} on {len(servers)} servers (the first runs the controller)")
    for column in ("server", "switches", "hosts", "switch load Mb/s", "frames/s"):
        nodes.add_column(column)
    for server in servers:
        on = sorted(n for n, s in placement.nodes.items() if s == server)
        mbps = placement.switch_load_mbps.get(server, 0.0)
        nodes.add_row(server, " ".join(n for n in on if not n.startswith("h")) or "-",
                      " ".join(n for n in on if n.startswith("h")) or "-", f"{mbps:.1f}",
                      f"{mbps * 1e6 / 8 / ROCE_FRAME:,.0f}")
    console.print(nodes)
    console.print(f"expected loads: a ring AllReduce over every NIC, packed, {REFERENCE_QPS} QPs, "
                  f"{spec.routing.mode}, at the links' rates (each switch counts every frame it "
                  f"takes in and every one it sends)")
    cross = Table(title=f"{len(placement.crossing)} links cross servers (tunnels), expected "
                        f"load {placement.cut_load_mbps:.1f} Mb/s")
    for column in ("link", "from", "to", "load Mb/s"):
        cross.add_column(column)
    for c in placement.crossing:
        cross.add_row(c.link, f"{c.a} @ {c.a_server}", f"{c.b} @ {c.b_server}",
                      f"{c.load_mbps:.1f}")
    console.print(cross)
    return EXIT_OK
