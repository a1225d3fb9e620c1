"""The incast experiment's PFC-on grid run back to back on one fabric: every run completes.

`aizone experiment incast` runs its PFC-on points (3 and 7 senders to h1,
with and without admission) one after the other on one fabric, repeat
after repeat; a run that errors there (seen: "no ARP reply from 10.0.0.0 on
h1-eth0 within 3 s" right after another run) is a result nobody can repeat.
This module does what the experiment does, with its own code
(`experiments.session.Session`, `experiments.fabric.variant`,
`experiments.sizes`, `experiments.incast`'s senders, sizes and fabric
changes, at the target's host rate from the capacity file): one fabric, the
experiment's calibration flow first, then the PFC-on grid `REPEAT` times
through, every run measured as the experiment measures it. Each run must
complete (no error: no ARP failure, no retry-exhausted QP, no timeout),
deliver every byte, drop nothing in the lossless class and retransmit
nothing; PFC must have acted (PAUSE frames sent by the switches) on every
point, or the grid did not test it.

Runs on the chosen target (`--target`/`AIZONE_TARGET`: p4switch or BMv2);
brings the fabric up itself, so run it under `flock /tmp/aizone-net.lock`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fabric_support import assert_clean, leftovers

from experiments import incast
from experiments.collective import Collective
from experiments.fabric import variant
from experiments.schema import Point, Run
from experiments.session import Options, Session
from experiments.sizes import sizes_for, target_rate

REPEAT = 2  # the grid twice through: every point follows another run on the same fabric
Grid = list[tuple[str, Point, Run]]


@pytest.fixture(scope="module")
def grid(target: str, build_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Grid:
    """The PFC-on grid, `REPEAT` times through on one fabric: (label, point, run) in run order."""
    before = leftovers()
    out = tmp_path_factory.mktemp("incast-repeat")
    sz = sizes_for(incast.NAME, quick=False)
    # the target's host rate, as `aizone experiment incast` takes it (BMv2's is lower)
    options = Options(out=out, target=target, repeat=REPEAT, build_dir=build_dir, quiet=True,
                      host_mbps=target_rate(target).rate_mbps)
    topology = variant(incast.BASE, out, f"{incast.NAME}-pfc-on", options.fabric(incast.BASE))
    session = Session(incast.NAME, incast.TITLE, options, topology=incast.BASE,
                      params=incast.PARAMS, metrics=incast.METRICS, sizes={}, repeat=REPEAT)
    runs: Grid = []
    with session, session.fabric(topology, mode="eecmp") as fabric:
        session.calibrate(fabric, "h1", "h3")
        nic = {h.name: h.nics[0].intf for h in fabric.plan.hosts}
        for rep in range(REPEAT):
            for admission in (False, True):
                for n in sz["senders"]:
                    nics = (nic["h1"], *(nic[h] for h in incast.SENDERS[:n]))
                    coll = Collective(pattern="incast", nics=nics, size=sz["size"],
                                      admission=admission, timeout=sz["timeout"])
                    point = session.point(pfc="on", admission=admission, senders=n)
                    label = (f"{n} senders, admission {'on' if admission else 'off'}, "
                             f"#{rep + 1}")
                    runs.append((label, point, session.measure(fabric, point, coll,
                                                               repeat=rep, label=label)))
    assert_clean(before)
    return runs


def test_the_grid_ran_every_point_each_repeat(grid: Grid) -> None:
    """3 and 7 senders x admission off and on, `REPEAT` times: 4 x REPEAT runs."""
    assert sorted(label for label, _, _ in grid) == sorted(
        f"{n} senders, admission {a}, #{r}" for n in (3, 7) for a in ("off", "on")
        for r in range(1, REPEAT + 1))


def test_no_run_fails_back_to_back(grid: Grid) -> None:
    """Every run completes (no ARP failure, no QP out of retries) and delivers every byte."""
    failed = [(label, run.error) for label, _, run in grid if run.error is not None]
    assert failed == []
    assert [label for label, _, run in grid if run.metrics.get("bytes_ok") != 1.0] == []


def test_the_lossless_class_loses_nothing_in_any_run(grid: Grid) -> None:
    """0 drops in the switches' queues and pipelines, 0 retransmissions, 0 ACK timeouts."""
    for label, _, run in grid:
        m = run.metrics
        assert (m.get("tm_dropped"), m.get("switch_drops"), m.get("retransmitted"),
                m.get("timeouts")) == (0, 0, 0, 0), label


def test_pfc_acted_on_every_run(grid: Grid) -> None:
    """The switches sent PAUSE frames and the senders' NICs received some, in every run."""
    quiet = [label for label, _, run in grid
             if not (run.metrics.get("switch_pauses") or 0) > 0
             or not (run.metrics.get("host_pauses") or 0) > 0]
    assert quiet == []
