"""The one list of intended differences between p4switch and BMv2, each with its reason.

The differential harness compares everything else byte for byte; an input a
deviation covers is run on its own and checked against what p4switch is
meant to do instead (`expect_p4switch`), and BMv2's answer is not compared.
A difference not covered here fails the run. `docs/p4switch.md` shows this
table; its test (`test_deviations.py`) keeps the two the same.

Names defined here: `Deviation`, `DEVIATIONS`, `covering`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Deviation:
    name: str
    p4switch: str  # what p4switch does
    bmv2: str  # what BMv2 does
    reason: str
    applies: Callable[[bytes], bool]  # to an input frame
    expect_p4switch: str  # "nothing out": p4switch sends no frame and no packet-in for it


def _mac_control(frame: bytes) -> bool:
    return len(frame) >= 14 and frame[12:14] == b"\x88\x08"


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        name="mac-control-consumed",
        p4switch="a received MAC-control frame (EtherType 0x8808: PAUSE, PFC) is consumed by the port's MAC "
                 "and counted in tm_stats, never parsed",
        bmv2="hands it to the parser like any frame",
        reason="IEEE 802.3 Annex 31B / 802.1Qbb: MAC-control frames terminate in the MAC and are never "
               "forwarded; p4switch's ports implement PFC, BMv2's have no MAC",
        applies=_mac_control,
        expect_p4switch="nothing out",
    ),
)


def covering(frame: bytes) -> Deviation | None:
    """The deviation that covers input `frame`, if any."""
    for d in DEVIATIONS:
        if d.applies(frame):
            return d
    return None
