"""What the fabric tests of PFC share: a fabric of their own, and what "lossless" means.

- `own_fabric(topology, target, build_dir, *flags)`: `aizone up` with `flags` (say
  `--pfc program`), the API client while it is up, then `aizone down`, which must leave
  nothing; one at a time, as the machine runs one fabric.
- `assert_lossless(round)`: an incast on the lossless class with PFC on lost nothing
  (`controller.lossless.IncastRound`).
- `pfc_off(topology, out_dir, rates)`: the topology with PFC off on every tier (and other
  rates), same name (its compiled programs are reused).

Names defined here: `own_fabric`, `assert_lossless`, `pfc_off`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import yaml
from fabric_support import fabric_up

from controller.client import ApiClient
from controller.lossless import IncastRound
from experiments.fabric import variant

__all__ = ["assert_lossless", "own_fabric", "pfc_off"]


@contextlib.contextmanager
def own_fabric(topology: Path, target: str, build_dir: Path, *flags: str
               ) -> Iterator[ApiClient]:
    """`aizone up TOPOLOGY --target T FLAGS`, its API while up, `aizone down` (clean) after."""
    with fabric_up(topology, target, build_dir, *flags), ApiClient() as api:
        yield api


def assert_lossless(got: IncastRound) -> None:
    """An incast on the lossless class with PFC on: every byte arrives, nothing is sent
    twice, no switch drops (no drop reason, no TM drop, every switch's class-3 packets in
    equal its packets out: BMv2's queue drops are counted nowhere else), and PAUSE frames
    were sent upstream (counted by the job and per port in the statistics)."""
    r = got.result
    assert r["status"] == "ok", r["errors"]
    assert r["bytes_received"] == r["bytes_sent"] and r["bytes_ok"] is True
    assert got.job["tm"]["pauses_sent"] > 0 and got.pauses, got.job["tm"]
    assert got.job["tm"]["tm_dropped"] == 0 and not got.job["switch_drops"], got.job
    assert r["retransmitted"] == 0, r
    assert not got.lost, got.lost


def pfc_off(topology: Path, out_dir: Path, rates: dict[str, float] | None = None) -> Path:
    """`topology` with PFC off on each of its tiers, and `rates` (tier -> Mb/s) when given
    (experiments.fabric.variant); its links at MTU 1,500, the frames the PFC-off incasts' sizes
    were chosen in (1,082 bytes: at the presets' jumbo 4,154, the same bytes are a quarter of
    the frames and no longer overflow the queues, which count frames)."""
    tiers = yaml.safe_load(topology.read_text())["links"]
    changes: dict[str, object] = {f"links.{t}.pfc.enabled": False for t in tiers}
    changes["mtu"] = 1500
    changes.update({f"links.{t}.rate_mbps": r for t, r in (rates or {}).items()})
    return variant(topology, out_dir, f"{topology.stem}-pfc-off", changes)
