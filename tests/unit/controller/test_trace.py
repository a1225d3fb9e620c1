"""Tests for controller.trace's choice of flow: a trace follows the numbers a run sends.

The expected numbers are worked out by hand from the allocation's rule
(traffic/connections.py's docstring: the receiver's QP q of the connection
from rank s with Q QPs is 0x11 + (2s + 1) x Q + q), or read from the jobs
the agents are given (`traffic.collectives.build_jobs`), not from the
functions under test.
"""

from __future__ import annotations

from typing import Any

import pytest

from controller.trace import TraceFlow, job_flow, pair_flow, resolve_flow
from topologies.addressing import AddressPlan, plan_addresses
from topologies.spec import parse_spec
from traffic.collectives import Rank, build_jobs

PLAN = plan_addresses(parse_spec({"name": "small", "zones": [
    {"racks": [{"count": 2, "hosts": 2, "nics": 2}], "ctsws": 2}]}))


def nic(plan: AddressPlan, host: str, k: int = 0) -> Any:
    return plan.host(host).nics[k]


def sent_by(host: str, ranks: list[Rank], pattern: str, qps: int, *, peer_ip: str,
            sport_per_qp: bool = False) -> list[tuple[int, int]]:
    """(destination QP, source port) of each QP the agent of `host` sends to `peer_ip` on."""
    jobs = build_jobs(pattern, ranks, 4096, qps, name="job7-" + pattern,
                      sport_per_qp=sport_per_qp)
    (conn,) = [c for c in jobs[host].connections
               if c.peer_ip == peer_ip and any(s.conn == c.id for st in jobs[host].steps
                                               for s in st.sends)]
    return [(q.remote, q.sport) for q in conn.qps]


def ranks_of(plan: AddressPlan, nics: list[str]) -> list[Rank]:
    by = {n.intf: n for n in plan.nics()}
    return [Rank(host=by[x].host, nic=x, ip=by[x].ip) for x in nics]


def test_a_pair_is_rank_0_to_rank_1_by_hand() -> None:
    """h1 -> h3 with 4 QPs, QP #2: destination QP 0x11 + 1 x 4 + 2 = 23."""
    flow = pair_flow(PLAN, "h1", "h3", qps=4, qp_index=2)
    assert (flow.src, flow.dst_ip, flow.qp) == (nic(PLAN, "h1").intf, nic(PLAN, "h3").ip, 23)
    assert flow.connection == "r0>r1" and flow.job is None


@pytest.mark.parametrize("qps,per_qp", [(1, False), (4, False), (4, True)],
                         ids=["1qp", "4qp", "4qp-sport-per-qp"])
def test_a_pair_traces_what_a_two_host_run_sends(qps: int, per_qp: bool) -> None:
    """Each QP of h1 -> h3 has the destination QP and source port h1's agent sends with."""
    ranks = ranks_of(PLAN, [nic(PLAN, "h1").intf, nic(PLAN, "h3").intf])
    agent = sent_by("h1", ranks, "allreduce", qps, peer_ip=nic(PLAN, "h3").ip,
                    sport_per_qp=per_qp)
    traced = [pair_flow(PLAN, "h1", "h3", qps=qps, qp_index=q, sport_per_qp=per_qp)
              for q in range(qps)]
    assert [(f.qp, f.sport) for f in traced] == agent
    assert len({s for _, s in agent}) == (qps if per_qp else 1)


def job(nics: list[str], pattern: str = "allreduce", qps: int = 2) -> dict[str, Any]:
    """A job record as the daemon keeps it (`controller.jobs.run_collective`)."""
    return {"id": 7, "pattern": pattern, "ranks_nics": nics,
            "request": {"pattern": pattern, "qps": qps, "sport_per_qp": False}}


RING = [nic(PLAN, h).intf for h in ("h1", "h2", "h3", "h4")]


def test_a_jobs_connection_is_the_one_its_sender_sends_on() -> None:
    """Ring of 4, 2 QPs, r2>r3 QP #1: 0x11 + 5 x 2 + 1 = 28, as h3's agent sends to h4."""
    flow = job_flow(PLAN, job(RING), "r2>r3", 1)
    assert flow.qp == 28
    assert (flow.src, flow.dst_ip) == (RING[2], nic(PLAN, "h4").ip)
    agent = sent_by("h3", ranks_of(PLAN, RING), "allreduce", 2, peer_ip=nic(PLAN, "h4").ip)
    assert (flow.qp, flow.sport) == agent[1]
    assert (flow.job, flow.connection, flow.qp_index) == (7, "r2>r3", 1)


def test_a_jobs_first_connection_is_the_default() -> None:
    """Without a connection: r0>r1 (QP 0x11 + 1 x 2 + 0 = 19 for QP #0)."""
    flow = resolve_flow(PLAN, {7: job(RING)}, job=7)
    assert (flow.connection, flow.src, flow.qp) == ("r0>r1", RING[0], 19)


def test_an_incast_jobs_connections_go_to_the_root() -> None:
    """incast of 3 (root rank 0): r2>r0 exists, r0>r1 does not, and the error lists them."""
    record = job(RING[:3], pattern="incast", qps=1)
    assert job_flow(PLAN, record, "r2>r0").dst_ip == nic(PLAN, "h1").ip
    with pytest.raises(ValueError, match=r"job 7: no connection 'r0>r1'; it has r1>r0, r2>r0"):
        job_flow(PLAN, record, "r0>r1")


def test_explicit_numbers_replace_the_allocations_and_drop_its_name() -> None:
    """--sport/--qp: the flow is the given one, no connection's."""
    flow = resolve_flow(PLAN, {}, src="h1", dst="h3", sport=50000, qp=99)
    assert flow == TraceFlow(src=nic(PLAN, "h1").intf, dst_ip=nic(PLAN, "h3").ip, sport=50000,
                             qp=99)


@pytest.mark.parametrize("kw,message", [
    ({"job": 3}, r"no job 3: the daemon keeps the latest 50 \(7\.\.7\)"),
    ({"job": 7, "src": "h1"}, "leave out src, dst, qps and sport_per_qp"),
    ({"src": "h1"}, "give a source and a destination, or a job"),
    ({"src": "h1", "dst": "h3", "connection": "r0>r1"}, "give the job too"),
    ({"src": "h1", "dst": "h3", "qps": 2, "qp_index": 2}, r"qp_index=2: must be 0\.\.1"),
    ({"job": 7, "qp_index": 2}, r"job 7: qp_index=2: connection r0>r1 has 2 QP\(s\), 0\.\.1"),
    ({"src": "h1", "dst": "h9"}, "no host, NIC or NIC address 'h9' in fabric small"),
    ({"src": "h1", "dst": "h1"}, "does not cross the fabric"),
], ids=["unknown-job", "job-and-src", "no-dst", "connection-without-job", "pair-qp-index",
        "job-qp-index", "unknown-host", "to-itself"])
def test_a_bad_request_says_what_is_wrong(kw: dict[str, Any], message: str) -> None:
    """Each bad combination is a ValueError naming the field and the values allowed."""
    with pytest.raises(ValueError, match=message):
        resolve_flow(PLAN, {7: job(RING)}, **kw)
