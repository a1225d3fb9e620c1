"""aizone traffic: RoCEv2 packets, QP-scaling strategies and host agents.

The few names most users need are re-exported here; the modules hold the
rest: ``roce`` (packets), ``pfc`` (PAUSE frames), ``qpscale`` (strategies),
``link`` (interfaces, raw sockets, ARP), ``sender`` / ``receiver`` (the two
halves of a host agent) and ``agent`` (the ``python -m traffic.agent`` CLI).
"""

from __future__ import annotations

from traffic.errors import TrafficError
from traffic.qpscale import STRATEGIES, Post, round_robin, split
from traffic.receiver import Receiver, RecvConfig, run_receiver
from traffic.roce import RETH, ImmDt, Malformed, RoceInfo, parse, rdma_write, segment_write
from traffic.sender import SendConfig, run_sender

__all__ = [
    "RETH",
    "STRATEGIES",
    "ImmDt",
    "Malformed",
    "Post",
    "Receiver",
    "RecvConfig",
    "RoceInfo",
    "SendConfig",
    "TrafficError",
    "parse",
    "rdma_write",
    "round_robin",
    "run_receiver",
    "run_sender",
    "segment_write",
    "split",
]
