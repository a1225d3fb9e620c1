"""The fabric role programs (p4/*.p4) on p4switch and BMv2: generated routes, modes, frames, counters.

For each role program found in p4/ (whatever it holds when the suite runs),
`ENTRY_SETS` sets of writes are generated from its P4Info alone: routes of
every match kind, action-profile members and groups of 1-16 members, and the
default action of every table whose default is not const (the keyless
`switch_config` gets a random mode, pin/ecmp/eecmp, and salt that way), DSCP
and ECN classes from the QoS tables' keys. Each set is followed by hypothesis
frames aimed at those entries: IPv4/IPv6, RoCEv2 with random destination
QPs, ARP, TTL 0/1/2/64/255, VLAN, truncated and MAC-control frames.
Counters are read back from both after each set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import differential

REPO = Path(__file__).resolve().parents[2]
ROLES = sorted((REPO / "p4").glob("*.p4"))
ENTRY_SETS, BATCHES, BATCH = 4, 4, 150


@pytest.mark.parametrize("entry_set", range(ENTRY_SETS))
@pytest.mark.parametrize("path", ROLES, ids=[p.stem for p in ROLES])
def test_role_program_matches_bmv2(path: Path, entry_set: int, rig, compiled) -> None:
    """Same writes and frames: the same write statuses, output frames per port and counters."""
    run, diffs = differential(rig, compiled(path), f"{path.stem}/{entry_set}", BATCHES, BATCH)
    assert rig.alive() == {"bmv2": None, "p4switch": None}
    assert not diffs, "\n".join(diffs[:30])
    assert run.frames, "no frame was compared (every batch unsettled)"
