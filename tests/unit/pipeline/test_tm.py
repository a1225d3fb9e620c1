"""Traffic manager: strict priority, tail drop, PFC PAUSE in and out (p4switch/tm.py)."""

from __future__ import annotations

import threading

import pytest
from conftest import ctl_frame, report

from p4switch.tm import PfcConfig, TmConfig, TrafficManager, build_pause_frame, parse_pause_frame


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
