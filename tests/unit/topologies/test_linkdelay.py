"""The delay line on a bare veth pair (topologies.linkdelay, topologies.delayline), root.

Two throw-away namespaces joined by one veth pair, each end delayed by its
own time: a ping's round trip is the sum, never less (the line never sends
early), and a marked frame is not delayed twice (it would loop and be lost).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from topologies.delayline import DelayLine
from topologies.linkdelay import (
    EgressDelay,
    LinkDelayError,
    load_program,
    make_door,
    redirect_program,
)

pytestmark = pytest.mark.root

# The delay line's own cost per round trip, measured here on a bare pair:
# 150.7-152.0 ms for 150 ms of delay on a loaded 2-core machine.
OWN_MS = 10.0


def _ping_ms(ns: str, count: int) -> list[float]:
    """`count` round trips after a first ping, which also waits for ARP (a round trip more)."""
    out = subprocess.run(["ip", "netns", "exec", ns, "ping", "-n", "-c", str(count + 1), "-i",
                          "0.2", "-W", "5", "192.0.2.2"], capture_output=True, text=True,
                         timeout=60).stdout
    return [float(t) for t in re.findall(r"time=([\d.]+) ms", out)][1:]


def test_a_round_trip_takes_both_ends_delays(netns_pair: tuple[str, str]) -> None:
    """100 ms out of one end, 50 ms out of the other: every ping 150 ms and a little."""
    a, b = netns_pair
    delays = (EgressDelay(node="a", intf="azdtx", netns=a, delay_s=0.100, door=0),
              EgressDelay(node="b", intf="azdty", netns=b, delay_s=0.050, door=1))
    for d in delays:
        make_door(d)
    line = DelayLine(delays).start()
    try:
        rtts = _ping_ms(a, 8)
    finally:
        line.stop()
    assert len(rtts) == 8, f"lost pings: {rtts}"
    assert min(rtts) >= 150.0, rtts
    assert max(rtts) <= 150.0 + OWN_MS, rtts


def test_once_the_line_stops_nothing_gets_through(netns_pair: tuple[str, str]) -> None:
    """The classifier stays and sends every frame to the door: no reader, no ping (so the
    delayed pings above did go through the line)."""
    a, _ = netns_pair
    d = EgressDelay(node="a", intf="azdtx", netns=a, delay_s=0.1, door=0)
    make_door(d)
    DelayLine((d,)).start().stop()
    assert _ping_ms(a, 1) == []


def test_the_kernel_refuses_a_broken_program_with_its_reason() -> None:
    """A program cut before its exit: LinkDelayError carrying the verifier's words."""
    with pytest.raises(LinkDelayError, match="refused the delay program"):
        load_program(redirect_program(1)[:-8])
