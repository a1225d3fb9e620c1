"""PFC in the P4 program (p4/include/control/pfc.p4), the same on every target: XOFF/XON
sent out of the ingress port as a lossless queue fills and drains, PFC frames received
holding their class towards that port for their time, the PFC watchdog.

An RTSW with 8 priority queues; port 2 drains each queue at 100 packets/s (p4switch's
--queue-rate, BMv2's set_queue_rate), the other ports are not shaped. No native PFC
(p4switch's --pfc): every PFC frame here is the program's.
"""

from __future__ import annotations

import pytest

from . import scenarios as sc
from .switch import SwitchOptions

ROLE = "rtsw"


def switch_options(target: str) -> SwitchOptions:
    return SwitchOptions(priority_queues=8, queue_rate={2: 100})


def test_pfc_xoff_then_xon_sent_out_of_the_ingress_port(dp):
    """A lossless queue past XOFF sends one PFC frame (byte for byte) upstream, XON when drained."""
    sc.xoff_then_xon_from_the_program(dp, egress=2)


def test_pfc_xoff_refreshed_per_period_not_per_packet(dp, target, request):
    """While the queue stays up, XOFF is re-sent each refresh period; one XON at the end."""
    if target == "bmv2":
        # Known, not yet understood: on BMv2 one of the 40 lossless packets of this burst
        # does not come out (the same scenario passes on p4switch). Reported as xfail, not
        # skipped, until it is found and fixed (docs/bmv2.md, "PFC on BMv2").
        request.applymarker(pytest.mark.xfail(reason="BMv2 loses one packet of the burst",
                                              strict=False))
    sc.xoff_refreshed_while_the_queue_stays_up(dp, egress=2)


def test_pfc_pause_holds_its_class_to_its_port_for_its_time(dp):
    """A received PFC frame holds class 3 to that port quanta x 512 bit-times; others flow."""
    sc.pause_holds_its_class_for_its_time(dp, port=3, other=4)


def test_pfc_xon_releases_held_packets_in_order(dp):
    """Quanta 0 ends the pause at once; the held packets leave in the order they came."""
    sc.xon_releases_a_pause_early(dp, port=3)


def test_pfc_watchdog_releases_a_pause_that_never_ends(dp):
    """A PFC storm holds a class no longer than the watchdog; the storm is counted."""
    sc.watchdog_releases_a_pause_that_never_ends(dp, port=3)
