"""p4switch's traffic manager with its buffer counted in bytes (`--buffer-unit bytes`), on
real ports: native PFC's XOFF at a depth in bytes whatever the frames' size, and the
priority group's headroom beyond XOFF, then tail drop (p4switch only: BMv2's queues count
packets; its PFC is the program's, which counts bytes too: test_pfc.py).

An RTSW with 8 priority queues; ports 1 (HOST) and 2 (EGRESS) at 1 Mb/s with native PFC on
class 3. A PAUSE sent into EGRESS (quanta 0xFFFF: 33.5 s at 1 Mb/s) holds class 3 there,
so what HOST sends stays queued until the test sends XON into EGRESS. Thresholds go
through the control API (`set_pfc`), in bytes.

Names defined here: the tests, and `switch_options`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from . import scenarios as sc
from .helpers import Dataplane
from .packets import flow_tag, pfc_pause, udp4
from .switch import SwitchOptions

ROLE = "rtsw"
HOST, EGRESS = sc.HOST, 2
XOFF_BYTES, XON_BYTES = 4000, 1100

# The switch's own XOFF and XON out of HOST (port 1), written out by hand (IEEE
# 802.1Qbb): destination 01:80:c2:00:00:01, source 02:50:46:43:00:01 (p4switch's
# per-port PAUSE MAC), EtherType 0x8808, opcode 0x0101, class-enable vector 0x0008,
# eight quanta (class 3's: 0xffff, or 0), 26 zero bytes of padding: 60 bytes.
XOFF_FRAME = bytes.fromhex(
    "0180c2000001" "025046430001" "8808" "0101" "0008"
    "0000" "0000" "0000" "ffff" "0000" "0000" "0000" "0000") + bytes(26)
XON_FRAME = bytes.fromhex(
    "0180c2000001" "025046430001" "8808" "0101" "0008"
    "0000" "0000" "0000" "0000" "0000" "0000" "0000" "0000") + bytes(26)


def switch_options(target: str) -> SwitchOptions:
    return SwitchOptions(priority_queues=8, port_speed={HOST: 0.001, EGRESS: 0.001},
                         pfc={HOST: "3", EGRESS: "3"}, buffer_unit="bytes")


@pytest.fixture(autouse=True)
def _p4switch_only(target: str) -> None:
    if target != "p4switch":
        pytest.skip("a buffer counted in bytes is p4switch's traffic manager's; BMv2's queues "
                    "count packets (its PFC, in the program, counts bytes: test_pfc.py)")


@pytest.fixture(autouse=True)
def _released(dp: Dataplane) -> Iterator[None]:
    """After each test, pass or fail: EGRESS resumed and what it held gone, so the next test
    starts from an empty priority group (the switch runs for the whole module)."""
    yield
    dp.send(EGRESS, pfc_pause({3: 0}, in_port=EGRESS))
    _wait(dp, f"{HOST}/3", "charge", 0, timeout=30)
    dp.ports.clear()


def _is_pfc(frame: bytes) -> bool:
    return frame[12:16] == b"\x88\x08\x01\x01"


def _queue(dp: Dataplane, key: str) -> dict:
    return dp.sut.ctl({"cmd": "tm"})["tm"]["queues"].get(key, {})


def _wait(dp: Dataplane, key: str, field: str, want: int, timeout: float = 15.0) -> int:
    """Poll the traffic manager's `field` of queue `key` until it is `want`; the last value."""
    deadline = time.monotonic() + timeout
    while True:
        got = _queue(dp, key).get(field, 0)
        if got == want or time.monotonic() > deadline:
            return int(got)
        time.sleep(0.05)


def _hold_egress(dp: Dataplane, headroom: int) -> None:
    """Class 3 routed HOST -> EGRESS (one frame through first: the pipeline's first frames
    after a push are slow) and held there; HOST's PG XOFF/XON 4,000 / 1,100 B with
    `headroom` bytes beyond XOFF."""
    sc._pfc_class_setup(dp, {"10.5.0.0/16": EGRESS})
    dp.send(HOST, udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=999))
    assert [flow_tag(r.frame) for r in dp.collect(1, [EGRESS], timeout=15)] == [999]
    dp.sut.ctl({"cmd": "set_pfc", "port": HOST, "priorities": [3], "xoff": XOFF_BYTES,
                "xon": XON_BYTES, "headroom": headroom})
    dp.ports.clear()
    before = _queue(dp, f"{EGRESS}/3").get("pauses_received", 0)
    dp.send(EGRESS, pfc_pause({3: 0xFFFF}, in_port=EGRESS))
    assert _wait(dp, f"{EGRESS}/3", "pauses_received", before + 1) == before + 1


def _release(dp: Dataplane, n: int) -> None:
    """XON into EGRESS: the `n` held frames leave in order, XON leaves HOST, the PG empties."""
    dp.send(EGRESS, pfc_pause({3: 0}, in_port=EGRESS))
    out = dp.collect(n, [EGRESS], timeout=30)
    assert [flow_tag(r.frame) for r in out] == list(range(n))
    xon = dp.ports.take(HOST, _is_pfc, timeout=5)
    assert xon is not None and xon.frame == XON_FRAME, xon and xon.frame.hex()
    assert _wait(dp, f"{HOST}/3", "charge", 0) == 0


# The same 4,000 bytes: 63 small frames (62 x 64 = 3,968 < 4,000 <= 4,032) or
# 4 full ones (3 x 1,082 = 3,246 < 4,000 <= 4,328).
SIZES = [pytest.param(0, 64, 62, id="64-byte-frames"),
         pytest.param(1034, 1082, 3, id="1082-byte-frames")]


@pytest.mark.parametrize(("size", "length", "below"), SIZES)
def test_native_xoff_at_the_same_bytes_for_small_and_full_frames(dp, size, length, below):
    """XOFF (byte for byte) leaves HOST with the frame that brings its PG to 4,000 bytes,
    whatever the frames' size: not after 62 small frames or 3 full ones, at the 63rd or
    the 4th; XON once they have all left."""
    _hold_egress(dp, headroom=8000)
    pkts = [bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=i, size=size))
            for i in range(below + 1)]
    assert {len(p) for p in pkts} == {length}
    for p in pkts[:below]:
        dp.send(HOST, p)
    assert _wait(dp, f"{HOST}/3", "charge", below * length) == below * length
    assert not [r for r in dp.ports.pending([HOST]) if _is_pfc(r.frame)], "XOFF below 4,000 B"
    dp.send(HOST, pkts[below])
    xoff = dp.ports.take(HOST, _is_pfc, timeout=5)
    assert xoff is not None and xoff.frame == XOFF_FRAME, xoff and xoff.frame.hex()
    assert _queue(dp, f"{HOST}/3")["charge"] == (below + 1) * length
    _release(dp, below + 1)


def test_native_headroom_holds_two_frames_past_xoff_then_drops(dp):
    """Headroom 2,164 B (two 1,082-B frames). Frames 1-3 (3,246 B) stay below XOFF; the 4th
    would take the PG to 4,328 B, above 4,000, so it goes to the headroom and XOFF leaves;
    the 5th fills the headroom (2,164 B); the 6th fits nowhere and is dropped, counted at
    EGRESS's class-3 queue. Five leave, in order, once EGRESS resumes."""
    _hold_egress(dp, headroom=2 * 1082)
    dropped = _queue(dp, f"{EGRESS}/3").get("dropped", 0)
    pkts = [bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=i, size=1034)) for i in range(6)]
    for p in pkts[:5]:
        dp.send(HOST, p)
    assert _wait(dp, f"{HOST}/3", "headroom_used", 2164) == 2164
    assert _queue(dp, f"{HOST}/3")["charge"] == 5 * 1082
    xoff = dp.ports.take(HOST, _is_pfc, timeout=5)
    assert xoff is not None and xoff.frame == XOFF_FRAME, xoff and xoff.frame.hex()
    dp.send(HOST, pkts[5])
    assert _wait(dp, f"{EGRESS}/3", "dropped", dropped + 1) == dropped + 1
    assert _queue(dp, f"{HOST}/3")["charge"] == 5 * 1082
    _release(dp, 5)
