"""`aizone topo show TOPO --servers [A,B,...]`: where each node of a fabric would run.

Prints the placement `topologies.serverplacement.place_on_servers` makes
(the topology's `servers.placement` pinning what it names): per server, its
switches and hosts; then every link that crosses servers (a tunnel when the
fabric runs) with its expected load, and the total. `--json` prints
`ServerPlacement.to_json()`. No root, no ssh: nothing is started.

Names defined here: `show_placement`.
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from topologies.addressing import plan_addresses
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
    try:
        placement = place_on_servers(plan_addresses(spec), servers, fixed)
    except ValueError as exc:
        return fail(f"{args.topo}: {exc}", EXIT_INPUT)
    if emit_json(args, placement.to_json()):
        return EXIT_OK
    console = Console(highlight=False)
    nodes = Table(title=f"{spec.name} on {len(servers)} servers (the first runs the controller)")
    for column in ("server", "switches", "hosts"):
        nodes.add_column(column)
    for server in servers:
        on = sorted(n for n, s in placement.nodes.items() if s == server)
        nodes.add_row(server, " ".join(n for n in on if not n.startswith("h")) or "-",
                      " ".join(n for n in on if n.startswith("h")) or "-")
    console.print(nodes)
    cross = Table(title=f"{len(placement.crossing)} links cross servers (tunnels), expected "
                        f"load {placement.cut_load_mbps:g} Mb/s")
    for column in ("link", "from", "to", "load Mb/s"):
        cross.add_column(column)
    for c in placement.crossing:
        cross.add_row(c.link, f"{c.a} @ {c.a_server}", f"{c.b} @ {c.b_server}",
                      f"{c.load_mbps:g}")
    console.print(cross)
    return EXIT_OK
