"""The PFC frames BMv2 and p4switch send for the same frames and queue state are the same.

One RTSW (p4/rtsw.p4) per target on veths (`tests.dataplane.switch`), 8 priority
queues, port 2 drained at 20 packets/s (p4switch's --queue-rate, BMv2's
set_queue_rate). The same burst of lossless packets (DSCP 24, class 3) comes in on
an ingress port and backs up port 2's class-3 queue past XOFF, then drains it below
XON: the priority group crosses each threshold once, at the same packet on both targets,
whatever their speeds (20 packets/s is far below what either forwards, even on a
busy machine: at 100 p4switch's first packets after a push came in too slowly for
native's XOFF of 48), so each sends exactly one XOFF and one XON out of the ingress
port. Sources compared:

- the programs' PFC (p4/include/control/pfc.p4) on BMv2 and on p4switch, the
  ingress port's priority group XOFF at 512 bytes (8 of the burst's 64-byte frames
  in the switch), XON at 128, no refresh within the burst, twice: from port 1 with
  quanta 0xFFFF and p4switch's native source MAC, from port 3 with the quanta an
  ai_zone_small host port gets (1,370: `topologies.ports.pfc_thresholds`) and another
  MAC;
- p4switch's native 802.1Qbb traffic manager (`--pfc 1=3`) for the first burst: its
  first XOFF and its XON (it may refresh in between; its thresholds are its own, so
  its burst is 56 packets).

Each frame is decoded field by field (destination 01:80:c2:00:00:01, source MAC,
EtherType 0x8808, opcode 0x0101, class-enable vector, the eight quanta, padding,
length), the fields compared between sources, then the bytes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.dataplane.helpers import Dataplane
from tests.dataplane.packets import udp4
from tests.dataplane.switch import SwitchOptions, SwitchUnderTest, build_program
from tests.provides import unavailable
from topologies.targets import target_missing

EGRESS, BURST, RATE = 2, 30, 20
NATIVE_BURST = 56  # native's XOFF threshold is its own (a share of the queue), above 30
FRAME = 64  # bytes of each frame of the bursts (udp4's)


@dataclass(frozen=True, kw_only=True)
class Burst:
    """One burst: where it comes in, what the program's PFC port entry says."""

    ingress: int
    quanta: int
    mac: str


BURSTS = (Burst(ingress=1, quanta=0xFFFF, mac="02:50:46:43:00:01"),  # p4switch's native MAC
          Burst(ingress=3, quanta=1370, mac="02:aa:00:00:03:03"))


def decode(frame: bytes) -> dict[str, Any]:
    """A PFC frame's fields (IEEE 802.1Qbb, MAC control), as sent (no FCS on veths)."""
    return {"dst": frame[0:6].hex(":"), "src": frame[6:12].hex(":"),
            "ethertype": int.from_bytes(frame[12:14], "big"),
            "opcode": int.from_bytes(frame[14:16], "big"),
            "class_enable": int.from_bytes(frame[16:18], "big"),
            "quanta": [int.from_bytes(frame[18 + 2 * c:20 + 2 * c], "big") for c in range(8)],
            "padding_zero": not any(frame[34:]), "length": len(frame)}


def _until_xon(dp: Dataplane, port: int, timeout: float = 10.0) -> list[bytes]:
    """The frames out of `port` up to and with the first class-3 XON (quanta 0)."""
    frames: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for r in dp.collect(1, [port], timeout=max(0.0, deadline - time.monotonic())):
            frames.append(r.frame)
            if decode(r.frame)["quanta"][3] == 0:
                return frames
    return frames


def _burst(dp: Dataplane, ingress: int, tag: int, n: int) -> None:
    for i in range(n):
        dp.send(ingress, bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=tag + i)))
    assert len(dp.collect(n, [EGRESS], timeout=15)) == n, "a lossless packet was lost"


def _run(target: str, out: Path, logs: Path, *, native: bool) -> dict[int, list[bytes]]:
    """Per burst's ingress port, the PFC frames `target` sent out of it (see the docstring)."""
    options = SwitchOptions(priority_queues=8, queue_rate={EGRESS: RATE},
                            pfc={1: "3"} if native else {})
    sut = SwitchUnderTest(target, build_program("rtsw", target, out), ports=5, options=options,
                          log_dir=logs)
    got: dict[int, list[bytes]] = {}
    try:
        sut.start()
        dp = Dataplane(sut)
        dp.add_route("10.5.0.0/16", dp.add_next_hop(EGRESS))
        dp.map_dscp(24, 3)
        dp.map_tc_to_queue(3, 3)
        for k, b in enumerate(BURSTS[:1] if native else BURSTS):
            if not native:  # the program's: thresholds and what its frames carry
                dp.set_pfc_port(b.ingress, rate_bps=10e6, quanta=b.quanta,
                                refresh_us=60_000_000, src_mac=b.mac)
                dp.set_lossless(b.ingress, 3, xoff=8 * FRAME, xon=2 * FRAME)
            _burst(dp, b.ingress, tag=100 * k, n=NATIVE_BURST if native else BURST)
            got[b.ingress] = _until_xon(dp, b.ingress)
        return got
    finally:
        sut.stop()


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[int, list[bytes]]]]:
    """source ("bmv2", "p4switch", "p4switch-native") -> ingress port -> frames sent."""
    missing = target_missing("bmv2")
    if missing:
        unavailable("bmv2", f"BMv2 needs {', '.join(missing)} on PATH")
    out = tmp_path_factory.mktemp("pfc-frames")
    yield {"bmv2": _run("bmv2", out / "bmv2", out / "bmv2-logs", native=False),
           "p4switch": _run("p4switch", out / "p4switch", out / "p4switch-logs", native=False),
           "p4switch-native": _run("p4switch", out / "p4switch", out / "native-logs",
                                   native=True)}


@pytest.mark.parametrize("burst", BURSTS, ids=[f"port{b.ingress}" for b in BURSTS])
def test_the_programs_pfc_frames_are_the_same_on_both_targets(frames, burst: Burst) -> None:
    """One XOFF, then one XON, out of the ingress port on each target; field by field the
    same, and what the PFC port entry and the class say; then byte for byte."""
    bmv2, p4s = frames["bmv2"][burst.ingress], frames["p4switch"][burst.ingress]
    assert len(bmv2) == len(p4s) == 2, ([f.hex() for f in bmv2], [f.hex() for f in p4s])
    for sent, quanta in zip((0, 1), (burst.quanta, 0), strict=True):
        a, b = decode(bmv2[sent]), decode(p4s[sent])
        assert a == b, (a, b)
        assert a == {"dst": "01:80:c2:00:00:01", "src": burst.mac, "ethertype": 0x8808,
                     "opcode": 0x0101, "class_enable": 1 << 3,
                     "quanta": [0, 0, 0, quanta, 0, 0, 0, 0], "padding_zero": True,
                     "length": 60}
    assert bmv2 == p4s


def test_the_programs_frames_equal_p4switch_natives(frames) -> None:
    """Native PFC's first XOFF and its XON out of port 1 have the fields (and bytes) of the
    programs' on both targets when the PFC port entry carries native's quanta and MAC."""
    native = frames["p4switch-native"][1]
    assert len(native) >= 2, [f.hex() for f in native]
    for source in ("bmv2", "p4switch"):
        program = frames[source][1]
        assert [decode(f) for f in (native[0], native[-1])] == [decode(f) for f in program]
        assert [native[0], native[-1]] == program
