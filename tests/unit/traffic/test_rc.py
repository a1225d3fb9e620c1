"""The RC state machine, requester and responder fed frames by hand: segmentation, AckReq,
coalesced ACKs, go-back-N on a NAK, duplicates, the local ACK timeout, fatal NAKs."""

from __future__ import annotations

from typing import Any

import pytest

from traffic.endpoint import Endpoint
from traffic.frames import Flow, Rx, decode, immdt, pattern, reth
from traffic.rc import RcOptions, Requester, Responder, Wqe, WriteDone
from traffic.roce import Opcode, Syndrome

# QP 0x11 on A and QP 0x22 on B, both sending from UDP port 50000.
A = Endpoint(mac="02:00:00:00:00:01", ip="10.9.0.1", port=50000, qpn=0x11)
B = Endpoint(mac="02:00:00:00:00:02", ip="10.9.0.2", port=50000, qpn=0x22)
TIMEOUT = 0.1


def _rx(frame: bytes) -> Rx:
    rx = decode(frame)
    assert rx is not None and rx.icrc_ok
    return rx


class Pair:
    """A requester on A (QP 0x11) connected to a responder on B (QP 0x22); frames by hand."""

    def __init__(self, psn: int = 0, rkey: int | None = None, **options: Any) -> None:
        self.options = RcOptions(ack_timeout=TIMEOUT, **options)
        to_b = Flow(src=A, dst=B, dscp=26)
        to_a = Flow(src=B, dst=A, dscp=26)
        self.completed: list[object] = []
        self.writes: list[WriteDone] = []
        self.answers: list[bytes] = []
        self.req = Requester(to_b, psn=psn, options=self.options,
                             on_complete=lambda w, t: self.completed.append(w.tag))
        self.resp = Responder(to_a, psn=psn, options=self.options, on_write=self.writes.append,
                              emit=lambda f: self.answers.append(f), rkey=rkey)

    def post(self, tag: object, length: int, *, imm: int | None = None, va: int = 0x1000,
             rkey: int = 0, now: float = 0.0) -> None:
        self.req.post(Wqe(tag=tag, va=va, rkey=rkey, length=length, imm=imm,
                          path_mtu=self.options.path_mtu), now)

    def transmit(self, now: float = 0.0) -> list[bytes]:
        """Everything the requester may send now."""
        out = []
        frame = self.req.next_frame(now)
        while frame is not None:
            out.append(frame)
            frame = self.req.next_frame(now)
        return out

    def deliver(self, frames: list[bytes], now: float = 0.0) -> list[bytes]:
        """Frames to the responder as one receive batch; returns its NAKs and its one ACK."""
        for frame in frames:
            self.resp.receive(_rx(frame), now)
        self.resp.send_ack()
        out, self.answers = self.answers, []
        return out

    def answer(self, frames: list[bytes], now: float = 0.0) -> None:
        for frame in frames:
            self.req.on_ack(_rx(frame), now)


def _fields(frames: list[bytes]) -> list[tuple[int, int, bool, int]]:
    """(opcode, PSN, AckReq, payload length) per frame."""
    return [(rx.opcode, rx.psn, rx.ackreq, len(rx.payload)) for rx in map(_rx, frames)]


def test_a_write_is_first_middle_last_with_consecutive_psns_across_the_wrap() -> None:
    """3000 bytes at MTU 1024: First/Middle/Last-with-immediate, PSNs 0xFFFFFF, 0, 1."""
    pair = Pair(psn=0xFFFFFF)
    pair.post("w", 3000, imm=0xABCD)
    frames = pair.transmit()
    assert _fields(frames) == [
        (Opcode.RC_RDMA_WRITE_FIRST, 0xFFFFFF, False, 1024),
        (Opcode.RC_RDMA_WRITE_MIDDLE, 0x000000, False, 1024),
        (Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x000001, True, 952),
    ]
    first, last = _rx(frames[0]), _rx(frames[2])
    assert (first.va, first.dlen, last.imm) == (0x1000, 3000, 0xABCD)
    assert pair.deliver(frames) and pair.writes == [WriteDone(0x1000, 3000, 0xABCD, 0.0, 0.0)]


def test_ackreq_on_every_16th_psn_and_on_the_last_packet() -> None:
    """40 packets with ack_every=16: AckReq on PSNs 15, 31 and 39 only."""
    pair = Pair()
    pair.post("w", 40 * 1024)
    asked = [psn for _, psn, ackreq, _ in _fields(pair.transmit()) if ackreq]
    assert asked == [15, 31, 39]


def test_one_batch_gets_one_coalesced_ack() -> None:
    """Three AckReq packets in one receive batch: one ACK, PSN 39, MSN 1."""
    pair = Pair()
    pair.post("w", 40 * 1024)
    answers = pair.deliver(pair.transmit())
    assert len(answers) == 1
    ack = _rx(answers[0])
    assert (ack.opcode, ack.dqpn, ack.psn, ack.syndrome, ack.msn) == (
        Opcode.RC_ACKNOWLEDGE, 0x11, 39, Syndrome.ACK_UNLIMITED, 1)
    pair.answer(answers)
    assert pair.completed == ["w"] and pair.req.idle


def test_a_lost_packet_is_nakked_once_and_resent_go_back_n() -> None:
    """Packet PSN 3 of 10 is lost: one NAK(PSN 3), then PSNs 3..9 again, all placed intact."""
    pair = Pair()
    pair.post("w", 10 * 1024)
    frames = pair.transmit()
    answers = pair.deliver(frames[:3] + frames[4:])
    naks = [_rx(f) for f in answers if _rx(f).syndrome == Syndrome.NAK_PSN_SEQUENCE_ERROR]
    assert [(n.psn, n.msn) for n in naks] == [(3, 0)]
    assert pair.resp.counters.out_of_sequence == 6
    assert pair.resp.counters.naks_sent == 1
    pair.answer(answers, now=0.01)
    resent = pair.transmit(now=0.01)
    assert [psn for _, psn, _, _ in _fields(resent)] == [3, 4, 5, 6, 7, 8, 9]
    assert _fields(resent)[0][2] is True  # AckReq on the first packet after a rewind
    assert pair.req.counters.retransmitted == 7 and pair.req.counters.naks_received == 1
    pair.answer(pair.deliver(resent, now=0.02), now=0.02)
    assert pair.completed == ["w"]
    assert pair.writes == [WriteDone(0x1000, 10 * 1024, None, 0.0, 0.02)]
    assert pair.resp.counters.data_errors == 0 and pair.resp.counters.packets_received == 10


def test_a_nak_completes_the_writes_before_it() -> None:
    """Two WRITEs, the second's first packet lost: the NAK acknowledges the first WRITE."""
    pair = Pair()
    pair.post("one", 2048)
    pair.post("two", 2048)
    frames = pair.transmit()
    pair.answer(pair.deliver(frames[:2] + frames[3:]))
    assert pair.completed == ["one"]


def test_a_lost_ack_times_out_and_duplicates_are_acknowledged_not_placed() -> None:
    """ACK lost: after the timeout the requester resends; the responder ACKs the duplicates."""
    pair = Pair()
    pair.post("w", 5 * 1024)
    frames = pair.transmit()
    assert len(pair.deliver(frames)) == 1  # the ACK, lost on the way
    pair.req.poll(TIMEOUT * 0.99)
    assert pair.transmit(TIMEOUT * 0.99) == []  # not yet
    pair.req.poll(TIMEOUT)
    resent = pair.transmit(TIMEOUT)
    assert [psn for _, psn, _, _ in _fields(resent)] == [0, 1, 2, 3, 4]
    answers = pair.deliver(resent, now=TIMEOUT)
    assert [(_rx(a).syndrome, _rx(a).psn, _rx(a).msn) for a in answers] == [
        (Syndrome.ACK_UNLIMITED, 4, 1)]
    assert pair.resp.counters.duplicates == 5 and len(pair.writes) == 1
    pair.answer(answers, now=TIMEOUT)
    assert pair.completed == ["w"]
    assert (pair.req.counters.timeouts, pair.req.counters.retransmitted) == (1, 5)


def test_retries_exhausted_put_the_qp_in_error() -> None:
    """With retry_count=2 and no answer ever, the third timeout fails the QP."""
    pair = Pair(retry_count=2)
    pair.post("w", 1024)
    pair.transmit()
    for k in range(1, 4):
        pair.req.poll(k * TIMEOUT)
        pair.transmit(k * TIMEOUT)
    assert pair.req.error is not None and "retry count exceeded" in pair.req.error
    assert pair.req.counters.timeouts == 3 and pair.req.next_deadline() is None


def test_an_ack_restarts_the_timer() -> None:
    """Progress at t=0.09 moves the deadline to 0.09 + timeout: no timeout at 0.1."""
    pair = Pair()
    pair.post("w", 40 * 1024)
    frames = pair.transmit()
    pair.answer(pair.deliver(frames[:16]), now=0.09)
    pair.req.poll(TIMEOUT)
    assert pair.req.counters.timeouts == 0
    assert pair.req.next_deadline() == pytest.approx(0.09 + TIMEOUT)


def test_stale_and_ghost_acks_are_ignored() -> None:
    """An ACK for a PSN never sent, and one for a PSN acknowledged already, change nothing."""
    pair = Pair()
    pair.post("w", 4 * 1024)
    frames = pair.transmit()
    to_a = pair.resp.flow
    pair.answer([to_a.ack(1000)])  # ghost: never sent
    assert pair.completed == [] and pair.req.counters.stale_acks == 1
    pair.answer([to_a.ack(1)])
    pair.answer([to_a.ack(0)])  # older than what is acknowledged
    assert pair.req.counters.stale_acks == 2 and pair.req.outstanding == 2
    pair.answer(pair.deliver(frames))
    assert pair.completed == ["w"]


def test_the_window_bounds_outstanding_packets() -> None:
    """window=8: eight packets go, the ninth waits for an ACK."""
    pair = Pair(window=8, ack_every=4)
    pair.post("w", 20 * 1024)
    first = pair.transmit()
    assert len(first) == 8 and _fields(first)[-1][2] is True  # the window edge asks for an ACK
    pair.answer(pair.deliver(first[:4]))
    assert len(pair.transmit()) == 4


def test_a_middle_without_a_first_is_nakked_invalid_request_and_fatal() -> None:
    """Opcode order broken: NAK invalid request (0x61); the requester's QP goes to error."""
    pair = Pair()
    stray = Flow(src=A, dst=B, dscp=26).frame(Opcode.RC_RDMA_WRITE_MIDDLE, 0,
                                              payload=pattern(0, 1024))
    answers = pair.deliver([stray])
    assert [(_rx(a).syndrome, _rx(a).psn) for a in answers] == [(Syndrome.NAK_INVALID_REQUEST, 0)]
    assert pair.resp.counters.protocol_errors == 1 and pair.resp.expected_psn == 0
    pair.post("w", 1024)
    pair.transmit()
    pair.answer(answers)
    assert pair.req.error is not None and "invalid request" in pair.req.error


def test_a_wrong_rkey_is_nakked_remote_access_error() -> None:
    """The responder checks the R_Key of a WRITE's first packet."""
    pair = Pair(rkey=0x5555)
    pair.post("w", 100, rkey=0x6666)
    answers = pair.deliver(pair.transmit())
    assert [_rx(a).syndrome for a in answers] == [Syndrome.NAK_REMOTE_ACCESS_ERROR]
    assert pair.writes == []


def test_a_length_that_disagrees_with_the_reth_is_an_invalid_request() -> None:
    """An Only packet whose payload is shorter than its DMA length is refused."""
    pair = Pair()
    to_b = pair.req.flow
    bad = to_b.frame(Opcode.RC_RDMA_WRITE_ONLY, 0, ackreq=True, ext=reth(0, 0, 100),
                     payload=pattern(0, 60))
    assert [_rx(a).syndrome for a in pair.deliver([bad])] == [Syndrome.NAK_INVALID_REQUEST]


def test_bytes_that_differ_from_their_address_pattern_are_data_errors() -> None:
    """A packet with a valid ICRC but the wrong bytes for its address is counted."""
    pair = Pair()
    to_b = pair.req.flow
    wrong = to_b.frame(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0, ackreq=True,
                       ext=reth(0x1000, 0, 64) + immdt(1), payload=pattern(0x2000, 64))
    pair.deliver([wrong])
    assert pair.resp.counters.data_errors == 1 and len(pair.writes) == 1


def test_an_empty_write_is_one_only_packet() -> None:
    """A zero-byte WRITE with immediate: one Only packet, completes like any other."""
    pair = Pair()
    pair.post("empty", 0, imm=7)
    frames = pair.transmit()
    assert _fields(frames) == [(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0, True, 0)]
    pair.answer(pair.deliver(frames))
    assert pair.completed == ["empty"] and pair.writes[0].imm == 7
