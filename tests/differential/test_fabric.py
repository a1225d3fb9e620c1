"""The fabric role programs (p4/*.p4) on p4switch and BMv2: generated routes, modes, frames, counters.

For each role program found in p4/ (whatever it holds when the suite runs),
`ENTRY_SETS` sets of writes are generated from its P4Info alone: routes of
every match kind, action-profile members and groups of 1-16 members, and the
default action of every table whose default is not const (the keyless
`switch_config` gets a random mode, pin/ecmp/eecmp, and salt that way), DSCP
and ECN classes from the QoS tables' keys. Each set is followed by hypothesis
batches of frames aimed at those entries: IPv4/IPv6, RoCEv2 with random
destination QPs, ARP, TTL 0/1/2/64/255, VLAN, truncated and MAC-control
frames. Counters are read back from both after each set.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from .generate import Pools, frames, program_writes
from .harness import Run

REPO = Path(__file__).resolve().parents[2]
ROLES = sorted((REPO / "p4").glob("*.p4"))
ENTRY_SETS, BATCHES, BATCH = 4, 4, 150


@pytest.mark.parametrize("entry_set", range(ENTRY_SETS))
@pytest.mark.parametrize("path", ROLES, ids=[p.stem for p in ROLES])
def test_role_program_matches_bmv2(path: Path, entry_set: int, rig, compiled) -> None:
    """Same writes and frames: the same write statuses, output frames per port and counters."""
    prog = compiled(path, (REPO / "p4" / "include",))
    run = Run(rig, prog)
    pools = Pools.from_bmv2_json(prog.bmv2_json)
    name = f"{path.stem}/{entry_set}".encode()
    diffs = run.write(program_writes(prog.p4info, random.Random(zlib.crc32(name)), pools))

    @seed(zlib.crc32(name))
    @settings(max_examples=BATCHES, database=None, deadline=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @given(st.lists(frames(pools), min_size=BATCH, max_size=BATCH))
    def check(batch: list[tuple[int, bytes]]) -> None:
        diffs.extend(run.batch(batch))

    check()
    diffs += run.counters()
    assert rig.alive() == {"bmv2": None, "p4switch": None}
    assert not diffs, "\n".join(diffs[:30])
