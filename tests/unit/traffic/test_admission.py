"""Receiver-driven admission: grants by slot, re-sent when unused, deduplicated; on the wire a
sender writes only what was granted, where it was granted, after the grant arrived."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traffic.admission import (
    CTS_QKEY,
    GRANT_VA_BASE,
    Cts,
    GrantBook,
    Granter,
    decode_cts,
    encode_cts,
)
from traffic.collectives import build_jobs
from traffic.frames import decode
from traffic.roce import Opcode
from traffic.schema import Admission


def _granter(sent: list[Cts], **kw: Any) -> Granter:
    args = {"channels": 2, "channel_buffer": 8192, "slots": 2, "rkey": 7, "cts_timeout": 0.1}
    args.update(kw)
    return Granter(send=sent.append, **args)


def test_a_grant_round_trips_through_its_payload() -> None:
    """encode_cts/decode_cts keep every field; other payloads are not grants."""
    cts = Cts(step=3, slot=1, seq=99, size=4096, va=0x7F00_0000_1000, rkey=0xABCD)
    assert decode_cts(encode_cts(cts)) == cts
    assert decode_cts(b"something else entirely, 28+ bytes") is None


def test_the_receiver_grants_every_free_slot_then_one_per_completion() -> None:
    """2 channels x 2 slots of 4 KiB, 20000 bytes due: 4 grants, then the 5th (3616) on slot 0."""
    sent: list[Cts] = []
    granter = _granter(sent)
    granter.open_step(0, 20000, now=0.0)
    assert [(c.slot, c.seq, c.size, c.va - GRANT_VA_BASE) for c in sent] == [
        (0, 0, 4096, 0), (1, 1, 4096, 4096), (2, 2, 4096, 8192), (3, 3, 4096, 12288)]
    assert granter.max_in_flight == 16384
    granter.completed(0, GRANT_VA_BASE, now=0.01)
    assert [(c.slot, c.seq, c.size) for c in sent[4:]] == [(0, 4, 3616)]
    for slot in (1, 2, 3, 0):
        granter.completed(0, GRANT_VA_BASE + slot * 4096, now=0.02)
    assert len(sent) == 5  # everything granted
    assert all(c.rkey == 7 and c.step == 0 for c in sent)


def test_an_unused_grant_is_sent_again_with_the_same_sequence_number() -> None:
    """No message for a grant within the timeout: the same CTS goes out again."""
    sent: list[Cts] = []
    granter = _granter(sent, channels=1, slots=1, channel_buffer=4096)
    granter.open_step(2, 4096, now=0.0)
    granter.poll(0.05)
    assert len(sent) == 1
    granter.poll(0.1)
    assert sent == [sent[0], sent[0]] and granter.grants_resent == 1
    assert granter.next_event() == 0.2


def test_a_completion_for_another_step_frees_nothing() -> None:
    """A late message of step 0 does not free a slot granted for step 1."""
    sent: list[Cts] = []
    granter = _granter(sent, channels=1, slots=1, channel_buffer=4096)
    granter.open_step(1, 8192, now=0.0)
    granter.completed(0, GRANT_VA_BASE, now=0.01)
    assert len(sent) == 1


def test_the_sender_uses_each_grant_once_in_order() -> None:
    """GrantBook: duplicates (re-sent grants) are ignored, grants are taken per step in order."""
    book = GrantBook()
    a = Cts(step=0, slot=0, seq=0, size=10, va=1, rkey=0)
    b = Cts(step=0, slot=1, seq=1, size=10, va=2, rkey=0)
    c = Cts(step=1, slot=0, seq=2, size=10, va=1, rkey=0)
    assert book.add(a) and book.add(b) and book.add(c) and not book.add(a)
    assert (book.received, book.duplicates) == (3, 1)
    assert [book.take(0), book.take(0), book.take(0)] == [a, b, None]
    assert book.take(1) == c


def test_incast_with_admission_writes_only_granted_bytes(hosts: Callable[..., Any]) -> None:
    """3 -> 1 with 2 channels x 64 KiB: every WRITE follows its grant, at its address, within it."""
    mem = hosts(4, rate_mbps=100)
    adm = Admission()
    jobs = build_jobs("incast", mem.ranks, 300_000, qps=2, admission=adm)
    reports = mem.run(jobs)
    assert all(r.status == "ok" for r in reports.values())
    assert reports["h0"].steps[0].bytes_received == 900_000
    granted: dict[tuple[str, int], tuple[float, int]] = {}  # (sender NIC, VA) -> (time, size)
    writes = 0
    for d in mem.net.log:
        rx = decode(d.frame)
        if rx is None:
            continue
        if rx.opcode == Opcode.UD_SEND_ONLY:
            assert d.src == "h0-eth0" and rx.qkey == CTS_QKEY
            assert d.frame[15] >> 2 == 48  # the control class
            cts = decode_cts(rx.payload)
            assert cts is not None
            granted[(d.dst, cts.va)] = (d.time, cts.size)
        elif rx.opcode in (Opcode.RC_RDMA_WRITE_FIRST, Opcode.RC_RDMA_WRITE_ONLY):
            when, size = granted[(d.src, rx.va)]  # KeyError: a write nobody granted
            assert when < d.time and rx.dlen <= size
            writes += 1
    assert writes == 3 * -(-300_000 // 16384)
    cap = adm.channels * adm.channel_buffer
    assert 0 < reports["h0"].max_granted_in_flight <= cap
    assert reports["h0"].grants_sent == writes
    assert sum(reports[h].grants_received for h in ("h1", "h2", "h3")) == writes


def test_a_lost_grant_is_sent_again_and_the_job_completes(hosts: Callable[..., Any]) -> None:
    """The first CTS is dropped: it goes again after the timeout, and the data follows."""
    mem = hosts(2, rate_mbps=100)
    lost = {"n": 0}

    def drop_first_grant(frame: bytes, src: str) -> bool:
        rx = decode(frame)
        if rx is not None and rx.opcode == Opcode.UD_SEND_ONLY and lost["n"] == 0:
            lost["n"] = 1
            return True
        return False

    mem.net.drop = drop_first_grant
    jobs = build_jobs("incast", mem.ranks, 20_000,
                      admission=Admission(channels=1, slots=1, channel_buffer=32768,
                                          cts_timeout_ms=20))
    reports = mem.run(jobs)
    assert reports["h0"].status == "ok" and reports["h0"].grants_resent == 1
    assert reports["h0"].steps[0].bytes_received == 20_000
