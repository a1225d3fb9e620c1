"""Traffic manager: strict priority, tail drop, PFC PAUSE in and out (p4switch/tm.py)."""

from __future__ import annotations

import threading

import pytest
from conftest import ctl_frame, report

from p4switch.pfcframe import build_pause_frame, parse_pause_frame
from p4switch.tm import TrafficManager
from p4switch.tmconfig import PfcConfig, TmConfig


class Recorder:
    def __init__(self) -> None:
        self.got: list[tuple[int, int, object]] = []
        self.raw: list[tuple[int, bytes]] = []
        self.lock = threading.Lock()

    def deliver(self, port, prio, item, depth):
        with self.lock:
            self.got.append((port, prio, item))

    def send_raw(self, port, frame):
        with self.lock:
            self.raw.append((port, frame))


@pytest.fixture
def tm_factory():
    made = []

    def make(**cfg):
        cfg.setdefault("speed_bps", 1e6)  # slow ports: a 0xFFFF-quanta PAUSE lasts ~33 s
        rec = Recorder()
        tm = TrafficManager(rec.deliver, TmConfig(**cfg), send_raw=rec.send_raw)
        made.append(tm)
        return tm, rec

    yield make
    for tm in made:
        tm.close()


def pause(tm, port, prios, quanta=0xFFFF):
    assert tm.receive_pause(port, build_pause_frame({p: quanta for p in prios}))


def test_pause_frame_round_trip():
    """build/parse PAUSE frames: class-enable vector and per-priority quanta."""
    f = build_pause_frame({3: 100, 5: 0})
    assert len(f) == 60 and f[12:16] == b"\x88\x08\x01\x01"
    assert parse_pause_frame(f) == {3: 100, 5: 0}
    assert parse_pause_frame(b"\x00" * 60) is None


def test_strict_priority_serves_higher_queue_first(tm_factory):
    """With both queues backed up, priority 1 drains before priority 0."""
    tm, rec = tm_factory(queues=2, pfc={None: PfcConfig(priorities=frozenset({0, 1}))})
    pause(tm, 5, [0, 1])
    for i in range(3):
        tm.enqueue(5, 0, f"lo{i}")
        tm.enqueue(5, 1, f"hi{i}")
    pause(tm, 5, [0, 1], quanta=0)
    assert tm.drain()
    assert [x for _, _, x in rec.got] == ["hi0", "hi1", "hi2", "lo0", "lo1", "lo2"]


def test_tail_drop_counts_per_queue(tm_factory):
    """A full queue drops the arriving packet and counts it."""
    tm, rec = tm_factory(queues=1, depth=4, pfc={None: PfcConfig(priorities=frozenset({0}))})
    pause(tm, 2, [0])
    depths = [tm.enqueue(2, 0, i) for i in range(6)]
    assert depths == [0, 1, 2, 3, None, None]
    assert tm.drops[(2, 0)] == 2
    pause(tm, 2, [0], quanta=0)
    assert tm.drain()
    assert len(rec.got) == 4


def test_received_pause_stops_only_that_priority(tm_factory):
    """A PAUSE for priority 1 holds queue 1 while queue 0 keeps flowing."""
    tm, rec = tm_factory(queues=2, pfc={None: PfcConfig(priorities=frozenset({1}))})
    pause(tm, 3, [1])
    assert tm.paused(3, 1) and not tm.paused(3, 0)
    tm.enqueue(3, 1, "held")
    tm.enqueue(3, 0, "flows")
    assert tm.drain(timeout=0.3) is False
    assert [x for _, _, x in rec.got] == ["flows"]
    pause(tm, 3, [1], quanta=0)
    assert tm.drain()
    assert [x for _, _, x in rec.got] == ["flows", "held"]


def test_pause_expires_after_quanta_bit_times(tm_factory):
    """quanta x 512 bit-times at the port speed later, the queue resumes by itself."""
    tm, rec = tm_factory(queues=1, speed_bps=1e6, pfc={None: PfcConfig(priorities=frozenset({0}))})
    pause(tm, 4, [0], quanta=50)  # 25.6 ms at 1 Mb/s
    tm.enqueue(4, 0, "x")
    assert tm.drain(timeout=2.0)
    assert rec.got == [(4, 0, "x")]


def test_xoff_then_xon_sent_upstream(tm_factory):
    """Charging xoff packets to (ingress port, prio) sends PAUSE upstream; draining sends resume."""
    tm, rec = tm_factory(queues=1, pfc={1: PfcConfig(priorities=frozenset({0}), xoff=3, xon=1),
                                        9: PfcConfig(priorities=frozenset({0}))})
    pause(tm, 9, [0])
    for i in range(3):
        tm.enqueue(9, 0, i, ingress_port=1)
    assert [(p, parse_pause_frame(f)) for p, f in rec.raw] == [(1, {0: 0xFFFF})]
    pause(tm, 9, [0], quanta=0)
    assert tm.drain()
    assert [(p, parse_pause_frame(f)) for p, f in rec.raw] == [(1, {0: 0xFFFF}), (1, {0: 0})]


def test_switch_priority_queue_and_pfc_pause(make_switch):
    """On a Switch, a PAUSE frame on a port holds that priority's packets; they carry their priority."""
    h = make_switch("v1m", priority_queues=8, pfc={None: "3"}, port_speed={None: "0.001"})
    pause_frame = build_pause_frame({3: 0xFFFF})
    h.switch.process(2, pause_frame)  # consumed by the TM, not the pipeline
    assert h.send(1, ctl_frame(12, arg=3), timeout=0.2) == []
    h.switch.process(2, build_pause_frame({3: 0}))
    h.switch.drain()
    out = h.take()
    assert [p for p, _ in out] == [2]
    assert report(out[0][1])["priority"] == 3
    assert h.switch.tm.pauses_received[(2, 3)] == 2


def test_priority_beyond_queues_is_dropped(make_switch):
    """standard_metadata.priority >= number of queues drops the packet (BMv2)."""
    h = make_switch("v1m", priority_queues=2)
    assert h.send(1, ctl_frame(12, arg=5)) == []
    assert [p for p, _ in h.send(1, ctl_frame(12, arg=1))] == [2]


def test_run_time_queue_depth_and_stats(make_switch):
    """set_queue_depth/set_pfc at run time start the TM; tm_stats reports per queue."""
    h = make_switch("v1m")
    s = h.switch
    s.set_port_speed(None, 0.001)
    s.set_pfc(2, [0])
    s.set_queue_depth(2, 2, priority=0)
    s.process(2, build_pause_frame({0: 0xFFFF}))
    for _ in range(4):
        s.process(1, ctl_frame(0))
    st = s.tm_stats()["queues"]["2/0"]
    assert st["depth"] == 2 and st["dropped"] == 2 and st["paused"]
    s.process(2, build_pause_frame({0: 0}))
    s.drain()
    assert len(h.take()) == 2


# ---------------------------------------------------------------- deterministic scenarios
# A VirtualClock drives the traffic manager without a thread: time only moves in
# advance(), so the outcomes below do not depend on the machine's speed.

from p4switch.tmconfig import VirtualClock  # noqa: E402

LINE = 1e7  # the upstream sender's line rate (port 1: 10 Mb/s)


def lossless_switch(make_switch, pfc: bool, **extra):
    """Port 1 (10 Mb/s) feeds port 2 (1 Mb/s) at priority 3: port 2 is the slow egress."""
    opts = dict(priority_queues=8, port_speed={1: "0.01", 2: "0.001"}, clock=VirtualClock(),
                queue_depth=64)
    if pfc:
        opts["pfc"] = {None: "3"}
    opts.update(extra)
    return make_switch("v1m", **opts)


def honouring_sender(h, n: int) -> tuple[int, list[int]]:
    """Send n frames into port 1 at line rate, obeying PAUSE frames coming back on port 1.

    Returns (frames delivered on port 2, quanta of every PFC frame seen on port 1).
    """
    sw = h.switch
    paused_until = 0.0
    delivered = 0
    seen: list[int] = []
    frame = ctl_frame(12, arg=3)
    sent = 0
    while sent < n or not sw.tm.idle():
        for port, data in h.take():
            if port == 2:
                delivered += 1
            elif port == 1:
                q = parse_pause_frame(data)
                assert q is not None and set(q) == {3}
                seen.append(q[3])
                now = sw.clock()
                paused_until = now + q[3] * 512 / LINE if q[3] else 0.0
        if sent < n and sw.clock() >= paused_until:
            sw.process(1, frame)
            sent += 1
            sw.advance(len(frame) * 8 / LINE)
        else:
            sw.advance(1e-4)
    for port, _ in h.take():
        delivered += port == 2
    return delivered, seen


def test_pfc_slow_egress_pauses_upstream_and_drops_nothing(make_switch):
    """A lossless priority filling a slow port's queue sends PAUSE upstream; nothing is dropped."""
    h = lossless_switch(make_switch, pfc=True)
    delivered, seen = honouring_sender(h, 300)
    st = h.switch.tm_stats()["queues"]
    assert delivered == 300
    assert st["2/3"]["dropped"] == 0
    assert seen and seen[0] == 0xFFFF and 0 in seen  # XOFF, later XON
    assert st["1/3"]["pauses_sent"] >= 1 and st["1/3"]["resumes_sent"] >= 1
    assert st["2/3"]["max_depth"] <= 64


def test_without_pfc_the_slow_egress_tail_drops(make_switch):
    """The same traffic without PFC overflows the 64-packet queue and is counted as dropped."""
    h = lossless_switch(make_switch, pfc=False)
    delivered, seen = honouring_sender(h, 300)
    st = h.switch.tm_stats()["queues"]["2/3"]
    assert seen == []
    assert st["dropped"] > 0 and delivered == 300 - st["dropped"]


def test_xoff_is_refreshed_while_congestion_lasts(make_switch):
    """While the charge stays above XON, PAUSE is re-sent before the previous one expires."""
    h = lossless_switch(make_switch, pfc=True, port_speed={1: "10", 2: "0.001"})
    sw = h.switch
    sw.process(2, build_pause_frame({3: 0xFFFF}))  # downstream holds port 2 (33 s at 1 Mb/s)
    for _ in range(50):
        sw.process(1, ctl_frame(12, arg=3))
    sw.advance(0.02)  # pause time at 10 Gb/s: 3.36 ms, refreshed every 1.68 ms
    pauses = [parse_pause_frame(d)[3] for p, d in h.take() if p == 1]
    assert len(pauses) >= 10 and set(pauses) == {0xFFFF}
    assert sw.tm_stats()["queues"]["1/3"]["pauses_sent"] == len(pauses)


def test_received_pause_lasts_quanta_times_512_bit_times(make_switch):
    """PAUSE(100 quanta) at 1 Mb/s holds the queue 51.2 ms; paused time is counted."""
    h = lossless_switch(make_switch, pfc=True)
    sw = h.switch
    sw.process(2, build_pause_frame({3: 100}))
    sw.process(1, ctl_frame(12, arg=3))
    sw.advance(0.0511)
    assert h.take() == []
    sw.advance(0.0002)
    assert [p for p, _ in h.take()] == [2]
    st = sw.tm_stats()["queues"]["2/3"]
    assert st["pauses_received"] == 1 and st["paused_time"] == pytest.approx(0.0512)


def test_a_pause_frame_in_a_batch_goes_to_the_traffic_manager(make_switch):
    """In a batch (`process_many`, the port loop's) a PAUSE frame on a port with native
    PFC is taken by the traffic manager, not run through the program, and the frames
    around it go through the pipeline in order."""
    h = make_switch("v1m", priority_queues=8, pfc={None: "3"})
    sw = h.switch
    sw.process_many(2, [ctl_frame(0, val=1), build_pause_frame({3: 100}), ctl_frame(0, val=2)])
    sw.drain(5)
    out = h.take()
    assert [(p, int.from_bytes(d[18:22], "big")) for p, d in out] == [(2, 1), (2, 2)]
    assert (sw.stats["rx"], sw.mac_control_rx) == (2, 1)
    assert sw.tm_stats()["queues"]["2/3"]["pauses_received"] == 1


def test_pause_frames_reach_the_program_without_native_pfc(make_switch):
    """Without native PFC on the port a MAC control frame (EtherType 0x8808) goes to the
    program, as on BMv2 (the P4 programs honour PFC themselves); it is still counted."""
    h = make_switch("v1m")
    h.send(1, build_pause_frame({3: 5}))
    assert h.switch.stats["rx"] == 1 and h.switch.mac_control_rx == 1


def test_queue_depth_and_rate_per_priority_at_run_time(make_switch):
    """set_queue_depth/set_queue_rate on one (port, priority): tail drops and pacing follow."""
    h = lossless_switch(make_switch, pfc=False, port_speed=None)
    sw = h.switch
    sw.set_queue_depth(2, 3, priority=3)
    sw.set_queue_rate(2, 100, priority=3)
    for _ in range(6):
        sw.process(1, ctl_frame(12, arg=3))
    st = sw.tm_stats()["queues"]["2/3"]
    assert st["dropped"] == 2 and st["capacity"] == 3 and st["rate_pps"] == 100
    assert len(h.take()) == 1  # the first left at once; the queue then held 3, tail-dropped 2
    sw.advance(0.0199)
    assert len(h.take()) == 1
    sw.advance(0.0102)
    assert len(h.take()) == 2


@pytest.mark.parametrize("action", ["drop", "forward"])
def test_pfc_watchdog_breaks_a_storm(make_switch, action):
    """A queue paused past the detection time drops or forwards its packets until the storm ends."""
    h = lossless_switch(make_switch, pfc=True, port_speed={1: "0.01", 2: "1"})
    sw = h.switch
    sw.set_pfc_watchdog(2, [3], detection_ms=10, restoration_ms=20, action=action)
    storm = build_pause_frame({3: 0xFFFF})  # 33.5 ms at 1 Gb/s, re-sent every ms
    sw.process(2, storm)
    for _ in range(4):
        sw.process(1, ctl_frame(12, arg=3))
    for _ in range(15):
        sw.advance(0.001)
        sw.process(2, storm)
    st = sw.tm_stats()["queues"]["2/3"]
    assert st["watchdog"]["storm"] and st["watchdog"]["storms"] == 1
    out = [p for p, _ in h.take() if p == 2]
    if action == "drop":
        assert out == [] and st["wd_dropped"] == 4
    else:
        assert out == [2] * 4 and st["wd_dropped"] == 0
    sw.advance(0.021)  # no PAUSE for the restoration time: the storm ends
    assert not sw.tm_stats()["queues"]["2/3"]["watchdog"]["storm"]
    sw.process(2, build_pause_frame({3: 0}))
    sw.process(1, ctl_frame(12, arg=3))
    sw.advance(0.001)
    assert [p for p, _ in h.take()] == [2]


def test_watchdog_is_off_by_default(make_switch):
    """Without set_pfc_watchdog a storm holds the queue indefinitely (lossless)."""
    h = lossless_switch(make_switch, pfc=True, port_speed={1: "0.01", 2: "1"})
    sw = h.switch
    sw.process(2, build_pause_frame({3: 0xFFFF}))
    sw.process(1, ctl_frame(12, arg=3))
    for _ in range(50):
        sw.advance(0.001)
        sw.process(2, build_pause_frame({3: 0xFFFF}))
    st = sw.tm_stats()["queues"]["2/3"]
    assert st["watchdog"] is None and st["depth"] == 1 and h.take() == []


def test_lossless_class_fed_by_many_ingress_ports_drops_nothing(tm_factory):
    """Three ingress ports with PFC each reach XOFF on one egress queue shorter than their sum.

    Queue 8, XOFF 4: 3 x 6 packets = 18 queue on egress port 9 (more than 8) and
    nothing is dropped: each ingress is paused at 4 and holds at most 6 < 8. Without
    PFC on the ingress ports the same arrivals tail-drop at 8.
    """
    pfc = PfcConfig(priorities=frozenset({3}), xoff=4, xon=2)
    tm, rec = tm_factory(queues=8, depth=8, pfc={p: pfc for p in (1, 2, 3, 9)})
    pause(tm, 9, [3])
    for i in range(6):
        for ingress in (1, 2, 3):
            assert tm.enqueue(9, 3, (ingress, i), ingress_port=ingress) is not None
    assert tm.depth(9, 3) == 18 and tm.drops[(9, 3)] == 0
    assert sorted(p for p, f in rec.raw if parse_pause_frame(f) == {3: 0xFFFF}) == [1, 2, 3]
    # One ingress past its queue length of packets: its own packets are dropped.
    assert tm.enqueue(9, 3, "a", ingress_port=1) is not None  # 7th
    assert tm.enqueue(9, 3, "b", ingress_port=1) is not None  # 8th
    assert tm.enqueue(9, 3, "c", ingress_port=1) is None
    assert tm.drops[(9, 3)] == 1
    pause(tm, 9, [3], quanta=0)
    assert tm.drain()
    assert len(rec.got) == 20

    lossy, _ = tm_factory(queues=8, depth=8, pfc={9: pfc})
    pause(lossy, 9, [3])
    kept = [lossy.enqueue(9, 3, i, ingress_port=1 + i % 3) for i in range(18)]
    assert sum(d is not None for d in kept) == 8 and lossy.drops[(9, 3)] == 10


def test_settings_changed_after_packets_were_queued_take_effect(tm_factory):
    """The traffic manager keeps what each (port, priority) lookup found: every run-time
    change (depth, thresholds, PFC, the thresholds cleared) must show on the next packet."""
    tm, rec = tm_factory(queues=1, depth=4,
                         pfc={1: PfcConfig(priorities=frozenset({0}), xoff=3, xon=1)})
    pause(tm, 9, [0])  # port 9 holds everything it is given
    tm.enqueue(9, 0, "a")
    tm.enqueue(9, 0, "b")
    tm.set_depth(9, 2)  # looked up at 4 twice above: now full
    assert tm.enqueue(9, 0, "c") is None and tm.drops[(9, 0)] == 1
    tm.set_depth(9, 10)
    assert tm.enqueue(9, 0, "d") == 2
    tm.set_thresholds(1, 0, xoff=2, xon=0)  # was 3
    tm.enqueue(9, 0, "e", ingress_port=1)
    assert rec.raw == []
    tm.enqueue(9, 0, "f", ingress_port=1)
    assert [(p, parse_pause_frame(f)) for p, f in rec.raw] == [(1, {0: 0xFFFF})]
    tm.clear_thresholds(1, [0])  # back to the PfcConfig's 3
    assert tm.settings.pfc_for(1, 0) == (3, 1, 0xFFFF, None)
    tm.set_pfc(1, None)  # off: the PAUSE sent is taken back at once
    assert [(p, parse_pause_frame(f)) for p, f in rec.raw][-1] == (1, {0: 0})
    assert tm.settings.pfc_for(1, 0) is None
    tm.set_pfc(1, PfcConfig(priorities=frozenset({0}), xoff=3, xon=1))
    assert tm.settings.pfc_for(1, 0) == (3, 1, 0xFFFF, None)
