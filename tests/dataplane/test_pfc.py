"""PFC in the P4 program (p4/include/control/pfc.p4), the same on every target: priority
groups counted in bytes at ingress, XOFF out of the ingress port when one reaches its
threshold, XON as soon as that port's backlog has left; PFC frames received holding their
class towards that port for their time; the PFC watchdog.

An RTSW with 8 priority queues; port 2 drains each queue at 100 packets/s (p4switch's
--queue-rate, BMv2's set_queue_rate), the other ports are not shaped. No native PFC
(p4switch's --pfc): every PFC frame here is the program's. The PG registers
(`pg_in`, `pg_out`, index port x 8 + class) outlive the test's table entries, so every
scenario ends with its packets gone and its PG back at 0 bytes.

Names defined here: the tests, and `switch_options`.
"""

from __future__ import annotations

import pytest

from . import scenarios as sc
from .helpers import Dataplane
from .packets import flow_tag, pfc_pause, udp4
from .switch import SwitchOptions

ROLE = "rtsw"
EGRESS = 2
HOST = sc.HOST
OTHER = 3  # a second ingress port sharing EGRESS's class-3 queue
MAC = "02:aa:00:00:01:01"  # the PFC source MAC set for HOST
XOFF_BYTES, XON_BYTES = 4000, 1100

# The frames the program must send out of HOST, written out by hand (IEEE 802.1Qbb):
# destination 01:80:c2:00:00:01, source MAC, EtherType 0x8808, opcode 0x0101,
# class-enable vector 0x0008 (class 3), eight 16-bit quanta (class 3's: 0x1234 or 0),
# 26 zero bytes of padding: 60 bytes.
XOFF_FRAME = bytes.fromhex(
    "0180c2000001" "02aa00000101" "8808" "0101" "0008"
    "0000" "0000" "0000" "1234" "0000" "0000" "0000" "0000") + bytes(26)
XON_FRAME = bytes.fromhex(
    "0180c2000001" "02aa00000101" "8808" "0101" "0008"
    "0000" "0000" "0000" "0000" "0000" "0000" "0000" "0000") + bytes(26)


def switch_options(target: str) -> SwitchOptions:
    return SwitchOptions(priority_queues=8, queue_rate={EGRESS: 100})


def _is_pfc(frame: bytes) -> bool:
    return frame[12:16] == b"\x88\x08\x01\x01"


def _pg(dp: Dataplane, port: int) -> int:
    """Bytes the program counts for (port, class 3): in minus out, mod 2^32."""
    slot = dp.port_tc(port, 3)
    return (dp.register("pg_in", slot) - dp.register("pg_out", slot)) % 2**32


def _wait_pg(dp: Dataplane, port: int, want: int, timeout: float = 5.0) -> int:
    """Poll (port, class 3)'s PG bytes until they are `want`; the last value read."""
    got = dp.wait_counter(lambda: (_pg(dp, port), 0), (want, 0), timeout=timeout)
    return got[0]


def _admit(dp: Dataplane, port: int, pkts: list[bytes], group: int = 8) -> None:
    """Send `pkts` into `port` a group at a time, each group counted in by the program
    (`rx_port`) before the next: a burst sent at once into a switch that is busy holding
    packets can overrun its receive path before the program sees it."""
    for i in range(0, len(pkts), group):
        chunk = pkts[i:i + group]
        rx = dp.counter("rx_port", port)
        for p in chunk:
            dp.send(port, p)
        want = (rx.packets + len(chunk), rx.bytes + sum(len(p) for p in chunk))
        assert dp.wait_counter(lambda: dp.counter("rx_port", port), want) == want, \
            f"port {port}: the program did not see packets {i}..{i + len(chunk) - 1}"


def _lossless_from(dp: Dataplane, *ports: int, refresh_us: int = 60_000_000) -> None:
    """Routes 10.5/16 -> EGRESS, DSCP 24 -> class 3 -> queue 3; each of `ports` a lossless
    PG with XOFF/XON 4,000/1,100 bytes whose frames carry quanta 0x1234, refreshed every
    `refresh_us` (by default: not within a test)."""
    sc._pfc_class_setup(dp, {"10.5.0.0/16": EGRESS})
    for port in ports:
        dp.set_pfc_port(port, rate_bps=1e6, quanta=0x1234, refresh_us=refresh_us,
                        src_mac=MAC if port == HOST else None)
        dp.set_lossless(port, 3, xoff=XOFF_BYTES, xon=XON_BYTES)


# The same 4,000 bytes: 63 small frames (62 x 64 = 3,968 < 4,000 <= 4,032) or
# 4 full ones (3 x 1,082 = 3,246 < 4,000 <= 4,328).
SIZES = [pytest.param(0, 64, 62, id="64-byte-frames"),
         pytest.param(1034, 1082, 3, id="1082-byte-frames")]


@pytest.mark.parametrize(("size", "length", "below"), SIZES)
def test_pfc_xoff_at_the_same_bytes_for_small_and_full_frames(dp, size, length, below):
    """XOFF (byte for byte) leaves HOST with the packet that brings its PG to 4,000 bytes,
    whatever the frames' size; XON (byte for byte) once they have all left."""
    _lossless_from(dp, HOST)
    # EGRESS's class 3 paused (by a PFC frame into it), so nothing leaves meanwhile.
    dp.set_pfc_port(EGRESS, rate_bps=1e6)
    dp.set_lossless(EGRESS, 3, xoff=10**9, xon=10**9 - 1)
    slot = dp.port_tc(EGRESS, 3)
    rx = dp.counter("pfc_rx", slot).packets
    dp.send(EGRESS, pfc_pause({3: 0xFFFF}, in_port=EGRESS))
    assert dp.wait_counter(lambda: (dp.counter("pfc_rx", slot).packets, 0),
                           (rx + 1, 0))[0] == rx + 1, "the PAUSE into port 2 was not seen"
    pkts = [bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=i, size=size))
            for i in range(below + 1)]
    assert {len(p) for p in pkts} == {length}
    sent = dp.counter("pfc_tx", dp.port_tc(HOST, 3)).packets
    _admit(dp, HOST, pkts[:below])
    assert _wait_pg(dp, HOST, below * length) == below * length
    assert dp.counter("pfc_tx", dp.port_tc(HOST, 3)).packets == sent, "XOFF below 4,000 B"
    assert not [r for r in dp.ports.pending([HOST]) if _is_pfc(r.frame)]
    dp.send(HOST, pkts[below])
    xoff = dp.ports.take(HOST, _is_pfc, timeout=5)
    assert xoff is not None and xoff.frame == XOFF_FRAME, xoff and xoff.frame.hex()
    assert _pg(dp, HOST) == (below + 1) * length
    sc._resume(dp, EGRESS)
    out = dp.collect(below + 1, [EGRESS], timeout=20)
    assert [flow_tag(r.frame) for r in out] == list(range(below + 1))
    xon = dp.ports.take(HOST, _is_pfc, timeout=5)
    assert xon is not None and xon.frame == XON_FRAME, xon and xon.frame.hex()
    assert _wait_pg(dp, HOST, 0) == 0


def test_pfc_xon_as_soon_as_the_ports_backlog_has_left(dp):
    """8 frames from HOST, then 30 from port 3, queue up at port 2: HOST gets XOFF, and XON
    when 7 of its own 8 have left (1,082 B <= 1,100), while port 3's still fill the queue (not when the queue
    drains, nor when the pause runs out)."""
    _lossless_from(dp, HOST, OTHER)
    full = 1034
    mine = [bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=i, size=full)) for i in range(8)]
    theirs = [bytes(udp4("10.0.0.3", "10.5.0.1", dscp=24, tag=100 + i, size=full, in_port=OTHER))
              for i in range(30)]
    _admit(dp, HOST, mine)  # HOST's 8 are in before port 3's come: they lead the queue
    _admit(dp, OTHER, theirs)
    frames = [dp.ports.take(HOST, _is_pfc, timeout=10) for _ in range(2)]
    assert [f.frame if f else None for f in frames] == [XOFF_FRAME, XON_FRAME], \
        [f.frame.hex() if f else None for f in frames]
    out = dp.collect(38, [EGRESS], timeout=20)
    tags = [flow_tag(r.frame) for r in out]
    assert sorted(tags, key=lambda t: t or 0) == [*range(8), *range(100, 130)]
    mine_left = sorted(r.at for r in out if (flow_tag(r.frame) or 0) < 100)
    theirs_left = sorted(r.at for r in out if (flow_tag(r.frame) or 0) >= 100)
    xon_at = frames[1].at  # type: ignore[union-attr]
    # XON goes with HOST's 7th frame out (one frame, 1,082 B, is <= 1,100; two are not), with
    # 20 of port 3's still to leave after it. The XON and that 7th frame leave the same egress
    # pass by two ports, so either may reach its capture first (measured: 29 us apart); the
    # 6th and the 8th frames are a queue slot (10 ms at 100/s) before and after.
    assert mine_left[5] < xon_at < mine_left[7], (mine_left[5:], xon_at)
    assert xon_at < theirs_left[10], (xon_at, theirs_left[10])
    other = [dp.ports.take(OTHER, _is_pfc, timeout=5) for _ in range(2)]
    assert [f.frame[24:26] if f else None for f in other] == [b"\x12\x34", b"\x00\x00"]
    assert _wait_pg(dp, HOST, 0) == 0 and _wait_pg(dp, OTHER, 0) == 0


def test_pfc_xoff_refreshed_per_period_not_per_packet(dp):
    """While HOST's group stays above XON (port 2 paused, its 8 frames held and going round
    the loop at 100/s), XOFF is re-sent each 200-ms refresh, not on each pass; XON once
    they have left."""
    _lossless_from(dp, HOST, refresh_us=200_000)
    dp.set_pfc_port(EGRESS, rate_bps=1e6)
    dp.set_lossless(EGRESS, 3, xoff=10**9, xon=10**9 - 1)
    slot = dp.port_tc(EGRESS, 3)
    rx = dp.counter("pfc_rx", slot).packets
    dp.send(EGRESS, pfc_pause({3: 0xFFFF}, in_port=EGRESS))
    assert dp.wait_counter(lambda: (dp.counter("pfc_rx", slot).packets, 0),
                           (rx + 1, 0))[0] == rx + 1, "the PAUSE into port 2 was not seen"
    _admit(dp, HOST, [bytes(udp4("10.0.0.1", "10.5.0.1", dscp=24, tag=i, size=1034))
                      for i in range(8)])
    sent = [dp.ports.take(HOST, _is_pfc, timeout=5) for _ in range(3)]  # XOFF, 2 refreshes
    assert all(f is not None and f.frame == XOFF_FRAME for f in sent), \
        [f.frame.hex() if f else None for f in sent]
    first, last = sent[0].at, sent[-1].at  # type: ignore[union-attr]
    sc._resume(dp, EGRESS)
    assert len(dp.collect(8, [EGRESS], timeout=20)) == 8
    xon = dp.ports.take(HOST, lambda f: _is_pfc(f) and f == XON_FRAME, timeout=5)
    assert xon is not None, "no XON"
    more = [r for r in dp.ports.pending([HOST]) if _is_pfc(r.frame) and r.at < xon.at]
    # Held frames pass egress ~100 times a second; one XOFF per pass would be dozens here.
    periods = (xon.at - first) / 0.2
    assert len(sent) + len(more) <= periods + 2, (len(sent) + len(more), periods)
    assert last - first >= 0.2, "two refreshes inside one period"
    assert _wait_pg(dp, HOST, 0) == 0


def test_pfc_pause_holds_its_class_to_its_port_for_its_time(dp):
    """A received PFC frame holds class 3 to that port quanta x 512 bit-times; others flow."""
    sc.pause_holds_its_class_for_its_time(dp, port=3, other=4)


def test_pfc_xon_releases_held_packets_in_order(dp):
    """Quanta 0 ends the pause at once; the held packets leave in the order they came."""
    sc.xon_releases_a_pause_early(dp, port=3)


def test_pfc_line_joined_during_the_pause_drains_in_order(dp):
    """Past the pause, held packets not yet at their turn go round the drain lane; in order."""
    sc.a_line_joined_during_the_pause_drains_in_order(dp, port=EGRESS)


def test_pfc_watchdog_releases_a_pause_that_never_ends(dp):
    """A PFC storm holds a class no longer than the watchdog; the storm is counted."""
    sc.watchdog_releases_a_pause_that_never_ends(dp, port=3)
