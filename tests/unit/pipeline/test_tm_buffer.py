"""The traffic manager's buffer counted in bytes: PFC XOFF at a depth in bytes, headroom
for what is on the wire after XOFF, a shared pool with dynamic thresholds (p4switch/tm.py,
`tmconfig.BufferConfig`).

Every traffic manager here runs on a `VirtualClock` without a thread: nothing leaves a
queue unless the test moves the clock, so depths and thresholds are exact. Items are
`bytes` and count their length. Expected values are worked out by hand in each test.
"""

from __future__ import annotations

import pytest

from p4switch.pfcframe import build_pause_frame, parse_pause_frame
from p4switch.tm import TrafficManager
from p4switch.tmconfig import BufferConfig, PfcConfig, TmConfig, VirtualClock

IN, OUT, PRIO = 1, 2, 3
FULL, SMALL = 1082, 64  # a RoCE frame at path MTU 1,024, and a minimum frame


class Wire:
    """What the traffic manager sends: delivered items and raw (PFC) frames per port."""

    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.raw: list[tuple[int, dict[int, int]]] = []

    def deliver(self, port, prio, item, depth) -> None:
        self.out.append(item)

    def send_raw(self, port, frame) -> None:
        self.raw.append((port, parse_pause_frame(frame)))

    def xoffs(self, port: int = IN) -> int:
        return sum(1 for p, q in self.raw if p == port and q.get(PRIO))

    def xons(self, port: int = IN) -> int:
        return sum(1 for p, q in self.raw if p == port and q.get(PRIO) == 0)


def make(unit: str = "bytes", *, pool: int | None = None, alpha: float | None = None,
         pfc: PfcConfig | None = None, depth: int = 10**9,
         speed_bps: float = 10e6) -> tuple[TrafficManager, Wire, VirtualClock]:
    clock = VirtualClock()
    wire = Wire()
    cfg = TmConfig(queues=8, depth=depth, speed_bps=speed_bps,
                   pfc={IN: pfc} if pfc is not None else {},
                   buffer=BufferConfig(unit=unit, pool=pool, alpha=alpha))
    tm = TrafficManager(wire.deliver, cfg, send_raw=wire.send_raw, size_of=len, clock=clock,
                        threaded=False)
    return tm, wire, clock


def fill_until_xoff(tm: TrafficManager, wire: Wire, size: int, limit: int = 10_000) -> int:
    """Packets of `size` bytes into IN (towards OUT, never served: the clock stands) until
    an XOFF leaves IN; how many it took."""
    for n in range(1, limit + 1):
        assert tm.enqueue(OUT, PRIO, bytes(size), ingress_port=IN) is not None
        if wire.xoffs():
            return n
    raise AssertionError(f"no XOFF after {limit} packets")


@pytest.mark.parametrize(("size", "packets"), [(FULL, 64), (SMALL, 1082)])
def test_xoff_at_the_same_bytes_for_small_and_full_frames(size, packets):
    """XOFF at 69,248 B (64 x 1,082 = 1,082 x 64): 64 full frames or 1,082 small ones; the
    bytes held when it leaves are the same."""
    tm, wire, _ = make(pfc=PfcConfig(priorities=frozenset({PRIO}), xoff=69_248, xon=34_624))
    assert fill_until_xoff(tm, wire, size) == packets
    assert tm.charge[(IN, PRIO)] == 69_248
    assert tm.stats()[f"{OUT}/{PRIO}"]["held"] == 69_248


@pytest.mark.parametrize(("size", "packets"), [(FULL, 64), (SMALL, 64)])
def test_counted_in_packets_xoff_comes_at_a_number_of_packets(size, packets):
    """The same threshold counted in packets (64) takes 64 packets whatever their size:
    69,248 B of full frames, 4,096 B of small ones."""
    tm, wire, _ = make("packets", pfc=PfcConfig(priorities=frozenset({PRIO}), xoff=64, xon=32))
    assert fill_until_xoff(tm, wire, size) == packets
    assert tm.charge[(IN, PRIO)] == 64


def test_xon_when_the_bytes_fall_to_xon():
    """40 full frames in (43,280 B), XOFF at 32 (34,624 B); served at 10 Mb/s, XON leaves with
    the 24th frame out, when 16 are left (17,312 B <= XON 17,312 B), not before."""
    tm, wire, clock = make(pfc=PfcConfig(priorities=frozenset({PRIO}), xoff=34_624, xon=17_312))
    for _ in range(40):
        tm.enqueue(OUT, PRIO, bytes(FULL), ingress_port=IN)
    assert wire.xoffs() == 1
    frame_s = FULL * 8 / 10e6  # 0.8656 ms a frame at 10 Mb/s
    while len(wire.out) < 23:
        tm.advance(frame_s / 4)
    assert wire.xons() == 0 and tm.charge[(IN, PRIO)] == 17 * FULL
    while len(wire.out) < 24:
        tm.advance(frame_s / 4)
    assert wire.xons() == 1 and tm.charge[(IN, PRIO)] == 16 * FULL


# One 10 Mb/s link, worked out by hand. Frames of 1,082 B arrive back to back, one every
# 1,082 x 8 / 10e6 = 0.8656 ms. XOFF at 16 frames (17,312 B): the 16th arrival (t = 15 x
# 0.8656 = 12.984 ms) sends it. The upstream stops 20 ms later (the round trip the fabric
# sizes headroom for, controller's PFC_RESPONSE_S): frames begun before t = 32.984 ms still
# come, those of t = 16 x 0.8656 ... 38 x 0.8656 = 32.893 ms: 23 frames, 24,886 B. The
# headroom the fabric gives this link: 10e6 / 8 x 0.020 + 1,514 = 26,514 B, which holds them.
ROUND_TRIP = 0.020
HEADROOM = 26_514
IN_FLIGHT = 23 * FULL


def _line_rate_until_pause_lands(tm: TrafficManager, wire: Wire, clock: VirtualClock) -> int:
    """Frames into IN at 10 Mb/s until ROUND_TRIP after the XOFF; how many were refused."""
    frame_s = FULL * 8 / 10e6
    dropped = 0
    t_xoff = None
    k = 0
    while t_xoff is None or k * frame_s < t_xoff + ROUND_TRIP:
        clock.t = k * frame_s
        if tm.enqueue(OUT, PRIO, bytes(FULL), ingress_port=IN) is None:
            dropped += 1
        if t_xoff is None and wire.xoffs():
            t_xoff = clock.t
        k += 1
    assert t_xoff == pytest.approx(15 * frame_s)
    assert k - 16 == 23  # the frames sent after the XOFF, as worked out above
    return dropped


def test_headroom_absorbs_what_is_on_the_wire_after_xoff():
    """OUT paused (a PAUSE received on it): the 23 frames that follow XOFF land in the
    26,514-B headroom, none dropped; the headroom holds 24,886 B, the pool 17,312 B."""
    pfc = PfcConfig(priorities=frozenset({PRIO}), xoff=16 * FULL, xon=8 * FULL, headroom=HEADROOM)
    tm, wire, clock = make(pfc=pfc, depth=16 * FULL)  # egress depth: lossless ignores it
    tm.set_pfc(OUT, PfcConfig(priorities=frozenset({PRIO})))
    assert tm.receive_pause(OUT, build_pause_frame({PRIO: 0xFFFF}))
    assert _line_rate_until_pause_lands(tm, wire, clock) == 0
    assert tm.headroom_used[(IN, PRIO)] == IN_FLIGHT == 24_886
    assert tm.buffer_stats()["pool_used"] == 16 * FULL
    assert tm.drops[(OUT, PRIO)] == 0


def test_headroom_short_of_the_round_trip_drops_the_excess():
    """The same with 23,000 B of headroom: 21 frames (22,722 B) fit, the other 2 are
    dropped and counted."""
    pfc = PfcConfig(priorities=frozenset({PRIO}), xoff=16 * FULL, xon=8 * FULL, headroom=23_000)
    tm, wire, clock = make(pfc=pfc)
    tm.set_pfc(OUT, PfcConfig(priorities=frozenset({PRIO})))
    assert tm.receive_pause(OUT, build_pause_frame({PRIO: 0xFFFF}))
    assert _line_rate_until_pause_lands(tm, wire, clock) == 2
    assert tm.headroom_used[(IN, PRIO)] == 21 * FULL
    assert tm.drops[(OUT, PRIO)] == 2


def test_headroom_is_given_back_first():
    """A PG 4 frames into its headroom: the first 4 frames out empty the headroom (XOFF stays
    asserted), the next ones leave the pool; a new arrival after XON goes to the pool."""
    pfc = PfcConfig(priorities=frozenset({PRIO}), xoff=8 * FULL, xon=2 * FULL, headroom=8 * FULL)
    tm, wire, clock = make(pfc=pfc)
    for _ in range(12):
        tm.enqueue(OUT, PRIO, bytes(FULL), ingress_port=IN)
    assert tm.headroom_used[(IN, PRIO)] == 4 * FULL and tm.pool_used == 8 * FULL
    frame_s = FULL * 8 / 10e6
    while len(wire.out) < 4:
        tm.advance(frame_s / 4)
    assert tm.headroom_used[(IN, PRIO)] == 0 and tm.pool_used == 8 * FULL
    while len(wire.out) < 10:
        tm.advance(frame_s / 4)
    assert wire.xons() == 1 and tm.pool_used == 2 * FULL
    tm.enqueue(OUT, PRIO, bytes(FULL), ingress_port=IN)
    assert tm.headroom_used[(IN, PRIO)] == 0 and tm.pool_used == 3 * FULL


@pytest.mark.parametrize(("alpha", "held"), [(1.0, 50_000), (2.0, 66_000), (0.5, 33_000)])
def test_dynamic_threshold_leaves_a_congested_queue_alpha_over_one_plus_alpha(alpha, held):
    """A 100,000-B pool, one lossy queue never served, 1,000-B packets: it holds at most
    alpha x the pool left free, q <= alpha (100,000 - q), so q <= alpha / (1 + alpha) x
    100,000: 50,000 B (alpha 1), 66,666 (2: 66 packets), 33,333 (0.5: 33 packets)."""
    tm, _, _ = make(pool=100_000, alpha=alpha)
    n = 0
    while tm.enqueue(OUT, 0, bytes(1000)) is not None:
        n += 1
    assert n * 1000 == held <= alpha / (1 + alpha) * 100_000 < held + 1000
    assert tm.drops[(OUT, 0)] == 1


def test_dynamic_threshold_keeps_room_for_a_second_queue():
    """Two congested queues fed in turn share a 90,000-B pool at alpha 1: each settles at
    alpha / (1 + 2 alpha) x 90,000 = 30,000 B. Without alpha (a static pool) the first
    takes it all and the second gets nothing."""
    tm, _, _ = make(pool=90_000, alpha=1.0)
    a = b = 0
    for _ in range(200):
        a += tm.enqueue(OUT, 0, bytes(1000)) is not None
        b += tm.enqueue(OUT + 1, 0, bytes(1000)) is not None
    assert (a * 1000, b * 1000) == (30_000, 30_000)
    static, _, _ = make(pool=90_000)
    while static.enqueue(OUT, 0, bytes(1000)) is not None:
        pass
    assert static.enqueue(OUT + 1, 0, bytes(1000)) is None
    assert static.pool_used == 90_000


def test_dynamic_threshold_lowers_a_pgs_xoff_point():
    """A lossless PG with XOFF at 80,000 B on a 100,000-B pool at alpha 1: XOFF comes at the
    dynamic point, 50,000 B (q <= 100,000 - q), in 1,000-B packets: with the 50th."""
    pfc = PfcConfig(priorities=frozenset({PRIO}), xoff=80_000, xon=40_000, headroom=20_000)
    tm, wire, _ = make(pool=100_000, alpha=1.0, pfc=pfc)
    assert fill_until_xoff(tm, wire, 1000) == 50
    assert tm.charge[(IN, PRIO)] == 50_000
    for _ in range(20):  # what comes after XOFF goes to the headroom, outside the pool
        tm.enqueue(OUT, PRIO, bytes(1000), ingress_port=IN)
    assert tm.headroom_used[(IN, PRIO)] == 20_000 and tm.pool_used == 50_000
    assert tm.enqueue(OUT, PRIO, bytes(1000), ingress_port=IN) is None


def test_egress_depth_counts_bytes():
    """A lossy queue of 10,000 B takes 9 full frames (9,738 B) or 156 small ones (9,984 B)."""
    for size, n in ((FULL, 9), (SMALL, 156)):
        tm, _, _ = make(depth=10_000)
        k = 0
        while tm.enqueue(OUT, 0, bytes(size)) is not None:
            k += 1
        assert k == n


def test_bad_buffer_settings_are_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match="unit must be 'packets' or 'bytes'"):
        BufferConfig(unit="cells")
    with pytest.raises(ValueError, match="alpha needs a shared buffer"):
        BufferConfig(alpha=1.0)
    with pytest.raises(ValueError, match="alpha must be > 0"):
        BufferConfig(pool=1000, alpha=0)
    tm, _, _ = make()
    with pytest.raises(ValueError, match="headroom must be >= 0"):
        tm.set_thresholds(IN, PRIO, 10, 5, headroom=-1)


def test_a_switch_counting_bytes_pauses_upstream_and_drops_nothing(make_switch):
    """The v1m program on a `Switch` whose buffer counts bytes: port 1 (10 Mb/s) feeds port 2
    (1 Mb/s) in class 3 with XOFF/XON 1,200 / 600 B and 1,200 B of headroom (20, 10 and 20
    of its 60-B frames); a sender that honours PAUSE gets all 300 frames through, XOFF and
    XON leave port 1, nothing is dropped, and the PG never holds more than XOFF + headroom.
    A queue given no depth holds 64 full frames' bytes (64 x 1,514 = 96,896 B)."""
    from test_tm import honouring_sender, lossless_switch

    h = lossless_switch(make_switch, pfc=True, buffer_unit="bytes", queue_depth=None)
    h.switch.set_pfc(None, [3], xoff=1200, xon=600, headroom=1200)
    delivered, seen = honouring_sender(h, 300)
    st = h.switch.tm_stats()
    assert delivered == 300 and seen[0] == 0xFFFF and 0 in seen
    assert st["buffer"]["unit"] == "bytes"
    assert st["queues"]["2/3"]["dropped"] == 0 and st["queues"]["2/3"]["capacity"] == 96_896
    assert st["queues"]["1/3"]["pfc"] == {"xoff": 1200, "xon": 600, "quanta": 0xFFFF,
                                          "headroom": 1200}
    assert 20 <= st["queues"]["2/3"]["max_depth"] <= 40


def test_pfc_defaults_count_full_frames_in_bytes(make_switch):
    """PFC turned on without thresholds: XOFF/XON 48/32 packets, or in a buffer that counts
    bytes 48 x 1,514 = 72,672 and 32 x 1,514 = 48,448 bytes (at start and by set_pfc)."""
    from test_tm import lossless_switch

    sw = lossless_switch(make_switch, pfc=True, buffer_unit="bytes").switch
    assert sw.tm.settings.pfc_for(1, 3)[:2] == (72_672, 48_448)
    sw.set_pfc(2, [3])
    assert sw.tm.settings.pfc_for(2, 3)[:2] == (72_672, 48_448)
    plain = lossless_switch(make_switch, pfc=True).switch
    assert plain.tm.settings.pfc_for(1, 3)[:2] == (48, 32)


def test_stats_show_a_groups_charge_before_its_port_sends_anything():
    """Three full frames in from IN, held at OUT, no XOFF yet: IN's priority group shows its
    3,246 B in `stats()` though IN has sent nothing (no queue of its own)."""
    tm, wire, _ = make(pfc=PfcConfig(priorities=frozenset({PRIO}), xoff=10 * FULL, xon=FULL))
    for _ in range(3):
        tm.enqueue(OUT, PRIO, bytes(FULL), ingress_port=IN)
    assert not wire.raw
    assert tm.stats()[f"{IN}/{PRIO}"]["charge"] == 3 * FULL == 3246
