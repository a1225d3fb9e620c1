"""The servers a fabric runs on, as `--servers A,B,...` names them.

The first one is the machine that runs `aizone up` (`topologies.serverplacement`
puts the nodes on them). Kept apart from the placement so that the `aizone`
command's parser reads the list without loading networkx.

Names defined here: `parse_servers`, `servers_argument` (the same for argparse).
"""

from __future__ import annotations

import argparse

__all__ = ["parse_servers", "servers_argument"]


def parse_servers(text: str, *, where: str = "--servers") -> tuple[str, ...]:
    """"a,b,c" -> ("a", "b", "c"); ValueError naming `where` for empty or repeated names."""
    names = tuple(n.strip() for n in text.split(","))
    if not names or any(not n for n in names):
        raise ValueError(f"{where} {text!r}: give server names separated by commas "
                         f"(e.g. localhost,10.0.0.2)")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{where} {text!r}: server {dup[0]} is named twice")
    return names


def servers_argument(text: str) -> tuple[str, ...]:
    """`--servers A,B,...` for argparse (`type=`): the names, or its error with the reason."""
    try:
        return parse_servers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
