"""Digest lists on the stream: buffering, de-duplication, acks (spec §9.9)."""

from __future__ import annotations

from p4switch.io import MemoryPorts
from p4switch.proto import p4r
from p4switch.translate import FAILED_PRECONDITION

from .conftest import Client, p4_id, update

DIGEST = p4_id("digests", "learn_t")


def learn_frame(src: int) -> bytes:
    return b"\x01" * 6 + src.to_bytes(6, "big") + b"\x88\xb6" + bytes(46)


def enable(c: Client, **cfg) -> None:
    c.write(update("INSERT", digest_entry=p4r.DigestEntry(digest_id=DIGEST, config=p4r.DigestEntry.Config(**cfg))))


def next_digest(c: Client, timeout: float = 2.0) -> p4r.DigestList:
    while True:
        msg = c.streams[0].recv(timeout)
        if msg.HasField("digest"):
            return msg.digest


def test_digest_is_sent_as_struct_of_bitstrings(primary: Client, ports: MemoryPorts) -> None:
    """With max_list_size 1 every distinct digest is one DigestList, members in P4Info order."""
    enable(primary, max_list_size=1)
    ports.inject(3, learn_frame(0xAB))
    d = next_digest(primary)
    assert d.digest_id == DIGEST and len(d.data) == 1
    assert [m.bitstring for m in d.data[0].struct.members] == [b"\xab", b"\x03"]


def test_no_digests_without_a_digest_entry(primary: Client, ports: MemoryPorts) -> None:
    """Digest generation is off until a DigestEntry enables it."""
    ports.inject(3, learn_frame(0xAB))
    assert primary.streams[0].no_message()


def test_unacked_duplicates_are_suppressed_until_ack(primary: Client, ports: MemoryPorts) -> None:
    """A digest already sent and not acked is not sent again; after the ack it is."""
    enable(primary, max_list_size=1, ack_timeout_ns=10**10)
    ports.inject(3, learn_frame(1))
    d = next_digest(primary)
    ports.inject(3, learn_frame(1))
    assert primary.streams[0].no_message()
    primary.streams[0].send(p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(digest_id=DIGEST, list_id=d.list_id)))
    # The switch handles a stream's messages in order and answers an empty one with a
    # StreamError: once that answer is here, the ack before it has been taken.
    primary.streams[0].send(p4r.StreamMessageRequest())
    assert primary.streams[0].recv().error.canonical_code == FAILED_PRECONDITION
    ports.inject(3, learn_frame(1))
    assert next_digest(primary).list_id > d.list_id


def test_lists_fill_up_to_max_list_size(primary: Client, ports: MemoryPorts) -> None:
    """Distinct digests are batched until max_list_size."""
    enable(primary, max_list_size=3, max_timeout_ns=10**10)
    for src in (1, 2, 2, 3):
        ports.inject(3, learn_frame(src))
    assert len(next_digest(primary).data) == 3


def test_partial_list_is_flushed_after_max_timeout(primary: Client, ports: MemoryPorts) -> None:
    """A buffer that does not fill is sent once max_timeout_ns has passed."""
    enable(primary, max_list_size=10, max_timeout_ns=50_000_000)
    ports.inject(3, learn_frame(7))
    assert len(next_digest(primary).data) == 1


def test_ack_for_unknown_digest_is_stream_error(primary: Client) -> None:
    """A DigestListAck naming no P4Info digest gets an INVALID_ARGUMENT StreamError."""
    primary.streams[0].send(p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(digest_id=5, list_id=1)))
    err = primary.streams[0].recv().error
    assert err.canonical_code == 3 and err.digest_list_ack.digest_list_ack.digest_id == 5
