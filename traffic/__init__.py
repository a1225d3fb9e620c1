"""aizone traffic: RoCEv2 packets, the RC transport, collectives and the host agents.

The few names most users need are re-exported here, each loaded from its
module on first use (importing the package loads no scapy); the modules hold the
rest (``docs/traffic.md`` is the tour):

- packets: ``roce`` (scapy layers), ``builders`` (``rdma_write``...),
  ``parser`` (``parse``), ``frames`` (the same bytes from templates, for the
  hot path), ``pfc`` (PAUSE frames);
- transport: ``rc`` (requester and responder of one QP: PSNs, ACK/NAK,
  go-back-N, timeouts), ``nic`` (QPs, pacing, PFC, CNPs), ``dcqcn``
  (optional rate reaction), ``admission`` (clear-to-send grants);
- jobs: ``schema`` (jobs and reports), ``qpscale`` (split / rr),
  ``collectives`` (``build_jobs``), ``runner`` (a job on a host's NICs),
  ``report`` (nccl-tests' time, algbw, busbw over the hosts' reports);
- running: ``engine`` (NICs on raw sockets, one loop), ``hostagent``
  (the per-host agent daemon, ``python -m traffic.hostagent``; not
  re-exported here, which would load the module twice when it runs as
  ``-m``), ``agentclient`` (``AgentClient`` and its errors), ``flowjobs``
  (one flow between two NICs as the two hosts' jobs: what ``aizone
  trace`` and the fabric tests send), ``memnet`` (NICs joined in memory,
  for tests), ``link`` (interfaces, raw sockets, ARP).

Every packet the project sends goes through the RC transport: there is no
second, unacknowledged send path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topologies.lazyexports import lazy_exports

if TYPE_CHECKING:
    from traffic.builders import rdma_write, segment_write
    from traffic.collectives import PATTERNS, Rank, build_jobs
    from traffic.errors import TrafficError
    from traffic.parser import Malformed, RoceInfo, parse
    from traffic.qpscale import STRATEGIES, Post, round_robin, split
    from traffic.report import CollectiveResult, summarize
    from traffic.roce import RETH, ImmDt
    from traffic.schema import Admission, HostReport, Job, Transport

__getattr__ = lazy_exports(__name__, {
    "rdma_write": "builders",
    "segment_write": "builders",
    "PATTERNS": "collectives",
    "Rank": "collectives",
    "build_jobs": "collectives",
    "TrafficError": "errors",
    "Malformed": "parser",
    "RoceInfo": "parser",
    "parse": "parser",
    "STRATEGIES": "qpscale",
    "Post": "qpscale",
    "round_robin": "qpscale",
    "split": "qpscale",
    "CollectiveResult": "report",
    "summarize": "report",
    "RETH": "roce",
    "ImmDt": "roce",
    "Admission": "schema",
    "HostReport": "schema",
    "Job": "schema",
    "Transport": "schema",
})


__all__ = [
    "PATTERNS",
    "RETH",
    "STRATEGIES",
    "Admission",
    "CollectiveResult",
    "HostReport",
    "ImmDt",
    "Job",
    "Malformed",
    "Post",
    "Rank",
    "RoceInfo",
    "TrafficError",
    "Transport",
    "build_jobs",
    "parse",
    "rdma_write",
    "round_robin",
    "segment_write",
    "split",
    "summarize",
]
