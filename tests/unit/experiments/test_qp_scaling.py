"""qp-scaling's findings from results written by hand: what the split note says of the
switches' accounting (packets, bytes with `--buffer bytes`, BMv2's) and of the pauses,
paused time and machine load split drew next to rr."""

from __future__ import annotations

import pytest

from experiments import qp_scaling
from experiments.schema import Column, ExperimentResult, Point, Run, summarize_runs


def _point(strategy: str, qps: int, pauses: float, paused: float, cpu: float,
           time_s: float) -> Point:
    return summarize_runs(Point(params={"mode": "eecmp", "qps": qps, "strategy": strategy},
                                runs=[Run(repeat=0, metrics={
                                    "time_s": time_s, "switch_pauses": pauses,
                                    "paused_s": paused, "machine_cpu": cpu,
                                    "up_imbalance": 1.2, "predicted_up": 1.2})]))


def _result(target: str, sizes: dict) -> ExperimentResult:
    result = ExperimentResult(
        experiment="qp-scaling", title="QPs", command="aizone experiment qp-scaling",
        started="2026-12-03T00:00:00+00:00", target=target, topology="t.yaml",
        topology_name="ai_zone_small", repeat=1, sizes={"message bytes": 4096, **sizes},
        params=[Column(key=k, label=k) for k in ("mode", "qps", "strategy")],
        metrics=[Column(key="time_s", label="time", unit="s")],
        points=[_point("rr", 8, 1, 0.1, 0.87, 11.4), _point("split", 8, 96, 15.6, 0.71, 19.9)])
    result.tally()
    return result


@pytest.mark.parametrize(("target", "sizes", "counted"), [
    ("p4switch", {"buffer": "bytes"}, "queues and PFC counted bytes in these runs"),
    ("p4switch", {}, "queues and PFC thresholds count packets here"),
    ("bmv2", {}, "BMv2's queues count packets, not bytes (its PFC, the programs', counts bytes"),
], ids=["p4switch-bytes", "p4switch-packets", "bmv2"])
def test_split_note_says_what_the_queues_counted_and_what_split_drew(target, sizes, counted):
    """4,096-B messages over 8 QPs: 512-B pieces, 2x rr's packets; then the accounting, and
    96 PAUSEs against 1, 15.6 s paused against 0.1, the machine 71 % busy against 87 %."""
    note = qp_scaling._pieces_note(_result(target, sizes), 8)
    assert note.startswith("Split over 8 QPs cuts each 4096-B message into 512-B pieces: "
                           "2x the packets of rr for the same bytes; ")
    assert counted in note
    assert ("Split drew 96 PAUSEs against rr's 1, 15.6 s of the hosts' time paused against 0.1 "
            "and the machine 71% busy against 87%") in note
