"""A program that resubmits or recirculates a packet for ever (loop.p4) keeps the switch's
other ports and its control plane working, and ends when the controller deletes the entry
that loops it.

The lock that orders packets against table writes is let go every PENDING_SLICE passes;
what a packet left is run from a backlog by the ports' loop (`RawPorts`, on veths: the
`p4switch` command's way) or, with no loop (in-memory ports), by the caller between holds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from conftest import peer, program

from p4switch.io import RawPorts
from p4switch.pipeline import PortHarness, Switch
from p4switch.pipeline.packetpath import PENDING_SLICE
from p4switch.pipeline.state import ActionCall, FieldMatch, TableEntry

LOOPING, OTHER = 0x88B5, 0x88B6


def loop_entry(action: str, ethertype: int = LOOPING) -> TableEntry:
    return TableEntry(match={0: FieldMatch(kind="exact", value=ethertype)},
                      action=ActionCall(action=action if action == "NoAction" else f"LoopIngress.{action}",
                                        args=()))


def frame(ethertype: int, tag: bytes) -> bytes:
    return b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x09" + ethertype.to_bytes(2, "big") + tag.ljust(46, b".")


def within(timeout: float, call, *args):
    """`call(*args)`, run on a thread; fails if it has not returned within `timeout`, as
    when the switch's lock is never let go (the thread is then left behind, a daemon)."""
    done = threading.Event()
    result: list = []

    def run() -> None:
        try:
            result.append(call(*args))
        except BaseException as e:  # handed to the test's thread below
            result.append(e)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(timeout), f"{getattr(call, '__name__', call)} did not return in {timeout} s"
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]


def passes(sw: Switch) -> int:
    """Ingress passes so far: the counter, read as a P4Runtime Read would, under the lock."""
    return within(30, sw.counter_read, "LoopIngress.passes", 0)[0]


def wait_for_passes(sw: Switch, at_least: int, timeout: float = 60.0) -> int:
    """The ingress passes once at least `at_least` (fails after `timeout`: the loop never ran)."""
    deadline = time.monotonic() + timeout
    while (n := passes(sw)) < at_least:
        assert time.monotonic() < deadline, f"{n} passes after {timeout} s"
        time.sleep(0.05)
    return n


def received(s, tag: bytes) -> bytes:
    """The next frame on `s` that carries `tag` (times out after the socket's 10 s)."""
    while True:
        data = s.recv(2048)
        if data[14:14 + len(tag)] == tag:
            return data


@pytest.fixture(params=[("resubmit_again", {}), ("recirculate_again", {}),
                        ("resubmit_again", {"priority_queues": 2})],
                ids=["resubmit", "recirculate", "resubmit-with-traffic-manager"])
def looping(request, veths) -> Iterator[tuple[Switch, str]]:
    """loop.p4 on veths (ports 1 and 3), the ports' loop driving it, one EtherType looping."""
    action, options = request.param
    ports = RawPorts({p: a for p, (a, _) in veths.items()})
    sw = Switch(program("loop"), ports.transmit, tm_driver=ports, **options)
    sw.table_insert("LoopIngress.loops", loop_entry(action))
    ports.start(sw.process, sw.process_many)
    try:
        yield sw, action
    finally:
        ports.stop()
        sw.close()


@pytest.mark.root
def test_a_packet_looping_for_ever_leaves_the_switch_working(looping, veths) -> None:
    """While one packet loops: table writes complete, other frames are forwarded, and
    deleting the looping entry lets the packet out of port 3 and the passes stop."""
    sw, action = looping
    with peer(veths[3][1], 3) as out, peer(veths[1][1], 3) as into:
        into.send(frame(LOOPING, b"looper"))
        wait_for_passes(sw, 10 * PENDING_SLICE)
        within(30, sw.table_insert, "LoopIngress.loops", loop_entry("NoAction", 0x9999))
        entries = within(30, sw.table_entries, "LoopIngress.loops")
        assert [e.match[0].value for e in entries] == [LOOPING, 0x9999]
        into.send(frame(OTHER, b"bystander"))
        assert received(out, b"bystander")[12:14] == OTHER.to_bytes(2, "big")
        assert passes(sw) > 10 * PENDING_SLICE + 1  # still looping after the bystander
        within(30, sw.table_delete, "LoopIngress.loops", loop_entry(action))
        assert received(out, b"looper")[12:14] == LOOPING.to_bytes(2, "big")
    settled = passes(sw)
    time.sleep(0.3)
    assert passes(sw) == settled  # the loop ended with its entry


def test_with_no_ports_loop_the_caller_runs_the_loop_and_lets_the_lock_go() -> None:
    """In-memory ports: the looping frame's caller keeps running it, slice by slice; writes
    from another thread get the lock between slices, and the delete that ends the loop
    returns the caller with the frame sent."""
    h = PortHarness(program("loop"))
    try:
        sw = h.switch
        sw.table_insert("LoopIngress.loops", loop_entry("resubmit_again"))
        caller = threading.Thread(target=sw.process, args=(1, frame(LOOPING, b"looper")),
                                  daemon=True)
        caller.start()
        wait_for_passes(sw, 10 * PENDING_SLICE)
        assert caller.is_alive()
        within(30, sw.table_delete, "LoopIngress.loops", loop_entry("resubmit_again"))
        caller.join(30)
        assert not caller.is_alive()
        assert [(port, data[14:20]) for port, data in h.take()] == [(3, b"looper")]
    finally:
        h.close()
