"""The model's flows use the jobs' connections: the same (src, dst, sport, dqpn) as the agents send.

The expected tuples are written by hand (the rule of traffic.connections:
destination QP 0x11 + (2 x sender rank + 1) x Q + q, source port 49152 +
crc32("<src>><dst>") % 16384, computed once with zlib and pasted); both the
model (`model.flows.collective_steps`) and the agents' jobs
(`traffic.collectives.build_jobs`) must produce exactly these.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from controller.jobs import predict_link_bytes
from controller.placement import place
from model.flows import collective_steps
from model.run import ModelConfig, run_model
from topologies.addressing import plan_addresses
from topologies.spec import load_spec
from traffic.collectives import Rank, build_jobs
from traffic.schema import Transport

SMALL = Path(__file__).resolve().parents[3] / "topologies" / "ai_zone_small.yaml"

IPS = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]
RING4_QP2 = {
    ("10.0.0.1", "10.0.0.2", 56915, 19), ("10.0.0.1", "10.0.0.2", 56915, 20),
    ("10.0.0.2", "10.0.0.3", 54726, 23), ("10.0.0.2", "10.0.0.3", 54726, 24),
    ("10.0.0.3", "10.0.0.4", 60251, 27), ("10.0.0.3", "10.0.0.4", 60251, 28),
    ("10.0.0.4", "10.0.0.1", 50349, 31), ("10.0.0.4", "10.0.0.1", 50349, 32),
}
# Incast of 3 ranks to rank 0, 1 QP: rank 1 -> 0 (dqpn 0x11 + 3) and rank 2 -> 0 (0x11 + 5).
INCAST3 = {("10.0.0.2", "10.0.0.1", 62698, 20), ("10.0.0.3", "10.0.0.1", 57300, 22)}


def model_tuples(pattern: str, n: int, qps: int, strategy: str) -> set[tuple[str, str, int, int]]:
    steps = collective_steps(pattern, np.arange(n), 4096 * n, ips=IPS[:n], qps=qps,
                             strategy=strategy, message_size=None, hosts=np.arange(n))
    return {(IPS[s], IPS[d], sp, q) for _, f in steps.variants
            for s, d, sp, q in zip(f.src.tolist(), f.dst.tolist(), f.sport.tolist(),
                                   f.qp.tolist(), strict=True)}


def job_tuples(pattern: str, n: int, qps: int, strategy: str) -> set[tuple[str, str, int, int]]:
    ranks = [Rank(host=f"h{i}", nic="eth0", ip=IPS[i]) for i in range(n)]
    jobs = build_jobs(pattern, ranks, 4096 * n, qps, strategy)
    out = set()
    for i, job in enumerate(jobs.values()):
        sending = {s.conn for step in job.steps for s in step.sends}
        out |= {(IPS[i], c.peer_ip, q.sport, q.remote) for c in job.connections
                if c.id in sending for q in c.qps}
    return out


@pytest.mark.parametrize("strategy", ["rr", "split"])
def test_ring_of_four_with_two_qps(strategy: str) -> None:
    """Ring of 4 ranks on 4 hosts, 2 QPs: model and jobs both send on the hand-worked tuples."""
    assert model_tuples("ring", 4, 2, strategy) == RING4_QP2
    assert job_tuples("allreduce", 4, 2, strategy) == RING4_QP2


def test_incast_of_three() -> None:
    """Incast of 3 to rank 0, 1 QP: the same two flows in the model and the jobs."""
    assert model_tuples("incast", 3, 1, "rr") == INCAST3
    assert job_tuples("incast", 3, 1, "rr") == INCAST3


@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_model_and_run_prediction_agree_per_link(mode: str) -> None:
    """ai_zone_small, 16 ranks packed, ring, 4 QPs: the model's frame bytes per fabric link are
    what `aizone run` reports as predicted for the jobs it builds (controller.jobs), both at
    the fabric's path MTU (its jumbo links': 4,096)."""
    spec = load_spec(SMALL)
    plan = plan_addresses(spec)
    fabric = {lk.id for lk in plan.links if lk.tier != "host"}
    r = run_model(spec, plan, ModelConfig(pattern="ring", ranks=16, mode=mode, qps=4,
                                          size=1 << 20, message_size=None, timing=False))
    model = {k: round(v) for k, v in r.link_totals().items() if k[0] in fabric}
    ranks = [Rank(host=x.host, nic=x.intf, ip=x.ip) for x in place(plan, 16, "ring", "packed", 0)]
    assert plan.path_mtu == 4096
    jobs = build_jobs("allreduce", ranks, 1 << 20, 4, transport=Transport(path_mtu=plan.path_mtu))
    run = predict_link_bytes(plan, mode, jobs)
    assert model == {k: v for k, v in run.items() if k[0] in fabric}
    assert len(model) > 4
