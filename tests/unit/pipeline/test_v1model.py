"""v1model packet paths as BMv2 simple_switch runs them (program: p4/v1m.p4)."""

from __future__ import annotations

import pytest
from conftest import ctl_frame, report

from p4switch.pipeline.state import CloneSession, MulticastGroup, Replica


@pytest.fixture
def sw(make_switch):
    return make_switch("v1m")


def test_unicast_reports_normal_instance_and_ingress_port(sw):
    """A plain packet leaves on egress_spec with instance_type 0 and its metadata."""
    out = sw.send(5, ctl_frame(0))
    assert [p for p, _ in out] == [2]
    r = report(out[0][1])
    assert r["instance_type"] == 0
    assert r["ingress_port"] == 5
    assert r["egress_port"] == 2
    assert r["packet_length"] == len(ctl_frame(0))
    assert out[0][1].endswith(b"payload!")


def test_mark_to_drop_in_ingress_drops(sw):
    """mark_to_drop sets egress_spec to the drop port: nothing is sent."""
    assert sw.send(1, ctl_frame(11)) == []
    assert sw.switch.stats["dropped"] == 1


def test_mark_to_drop_in_egress_drops(sw):
    """egress_spec == drop port at the end of egress drops the packet."""
    assert sw.send(1, ctl_frame(15)) == []


def test_exit_keeps_what_ingress_did_before_it(sw):
    """exit ends ingress; egress_spec set before it holds."""
    out = sw.send(1, ctl_frame(7))
    assert [p for p, _ in out] == [3]


def test_multicast_replicates_in_group_order_with_rid(sw):
    """mcast_grp replicates to each (port, rid) with instance_type 5."""
    sw.switch.mcast_group_set(MulticastGroup(group_id=9, replicas=[
        Replica(egress_port=4, instance=1), Replica(egress_port=3, instance=1),
        Replica(egress_port=6, instance=2)]), 9)
    out = sw.send(1, ctl_frame(2, arg2=9))
    assert [(p, report(d)["egress_rid"], report(d)["instance_type"]) for p, d in out] == [
        (3, 1, 5), (4, 1, 5), (6, 2, 5)]


def test_multicast_to_unknown_group_drops(sw):
    """A multicast group that is not configured sends nothing."""
    assert sw.send(1, ctl_frame(2, arg2=77)) == []


def test_ingress_clone_copies_original_with_zeroed_metadata(sw):
    """clone(I2E) sends the packet as received, instance_type 1, standard metadata reset."""
    sw.switch.clone_session_set(CloneSession(session_id=5, replicas=[Replica(egress_port=7, instance=0)]), 5)
    out = sw.send(3, ctl_frame(1, arg=5))
    assert sorted(p for p, _ in out) == [2, 7]
    clone = next(d for p, d in out if p == 7)
    r = report(clone)
    assert r["instance_type"] == 1
    assert r["ingress_port"] == 0  # BMv2 resets metadata of copies
    orig = next(d for p, d in out if p == 2)
    assert report(orig)["instance_type"] == 0


def test_clone_preserving_field_list_keeps_annotated_fields(sw):
    """clone_preserving_field_list copies @field_list(1) user metadata into the clone."""
    sw.switch.clone_session_set(CloneSession(session_id=6, replicas=[Replica(egress_port=7, instance=0)]), 6)
    out = sw.send(3, ctl_frame(13, arg=6))
    clone = next(d for p, d in out if p == 7)
    assert report(clone)["pass_"] == 7


def test_clone_to_unconfigured_session_does_nothing(sw):
    """A clone to a missing session only sends the original."""
    out = sw.send(3, ctl_frame(1, arg=42))
    assert [p for p, _ in out] == [2]


def test_clone_session_truncates_copies(sw):
    """packet_length_bytes truncates the clone, not the original."""
    sw.switch.clone_session_set(CloneSession(session_id=5, replicas=[Replica(egress_port=7, instance=0)],
                                             packet_length_bytes=20), 5)
    out = sw.send(3, ctl_frame(1, arg=5))
    lens = {p: len(d) for p, d in out}
    assert lens[7] == 20
    assert lens[2] > 20


def test_egress_clone_has_instance_type_2(sw):
    """clone(E2E) copies the egress packet with instance_type 2."""
    sw.switch.clone_session_set(CloneSession(session_id=4, replicas=[Replica(egress_port=8, instance=3)]), 4)
    out = sw.send(1, ctl_frame(14, arg=4))
    types = sorted((p, report(d)["instance_type"]) for p, d in out)
    assert types == [(2, 0), (8, 2)]


def test_resubmit_runs_ingress_again_with_preserved_fields(sw):
    """resubmit_preserving_field_list re-runs ingress once; instance_type 6; kept fields survive."""
    out = sw.send(4, ctl_frame(3))
    assert len(out) == 1
    r = report(out[0][1])
    assert r["ig_instance_type"] == 6  # ingress sees RESUBMIT
    assert r["instance_type"] == 0  # BMv2 sets NORMAL again before enqueueing
    assert r["pass_"] == 1
    assert r["saved_port"] == 4


def test_recirculate_runs_the_deparsed_packet_again(sw):
    """recirculate sends the egress output back to ingress with instance_type 4."""
    out = sw.send(4, ctl_frame(4))
    assert len(out) == 1
    data = out[0][1]
    r = report(data)  # the last pass's report comes first after ctl
    assert r["ig_instance_type"] == 4
    assert r["instance_type"] == 0
    assert r["pass_"] == 1
    # the first pass's report became payload of the second
    assert len(data) == len(ctl_frame(4)) + 2 * 23


def test_digest_reports_struct_values(sw):
    """digest() delivers the struct's member values to the digest handler."""
    sw.send(6, ctl_frame(5, src=bytes.fromhex("0a0b0c0d0e0f")))
    assert sw.digests == [("digest_t", (0x0A0B0C0D0E0F, 6))]


def test_truncate_limits_output_length(sw):
    """truncate(n) sends at most n bytes."""
    out = sw.send(1, ctl_frame(6, arg=30))
    assert len(out[0][1]) == 30


def test_register_write_then_read(sw):
    """register.write then read in the same packet returns the value."""
    out = sw.send(1, ctl_frame(8, arg=3, val=0xDEADBEEF))
    assert report(out[0][1])["result"] == 0xDEADBEEF
    assert sw.switch.register_read("I.r", 3) == 0xDEADBEEF


def test_register_out_of_range_leaves_destination(sw):
    """An out-of-range register index leaves the destination unchanged (0)."""
    out = sw.send(1, ctl_frame(8, arg=200, val=5))
    assert report(out[0][1])["result"] == 0


def test_hash_crc16_over_field_list_matches_bmv2_packing(sw):
    """hash() packs the fields MSB-first and runs crc16 (CRC-16/ARC)."""
    from p4switch.pipeline import hashes

    out = sw.send(1, ctl_frame(9, val=0x12345678))
    want = hashes.crc16(bytes.fromhex("020000000001") + bytes.fromhex("12345678"))
    assert report(out[0][1])["result"] == want


def test_unconfigured_meter_is_green_and_configured_turns_red(sw):
    """meters mark GREEN until configured; a 1-packet burst at ~0 rate turns RED."""
    out = sw.send(1, ctl_frame(10, arg=1))
    assert report(out[0][1])["color"] == 0
    sw.switch.meter_set("I.m", 1, (1, 10, 1, 1))
    colors = [report(sw.send(1, ctl_frame(10, arg=1))[0][1])["color"] for _ in range(3)]
    assert colors[0] == 0
    assert colors[-1] == 2


def test_counter_counts_packets_by_index(sw):
    """counter.count(index) increments packets and bytes of that index."""
    sw.send(1, ctl_frame(1))
    sw.send(1, ctl_frame(1))
    packets, bytes_ = sw.switch.counter_read("I.ops", 1)
    assert packets == 2
    assert bytes_ == 2 * len(ctl_frame(1))


def test_non_ctl_packet_skips_ingress_logic(sw):
    """return in ingress ends it: plain ethernet goes to port 2."""
    frame = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x06" + b"x" * 30
    out = sw.send(1, frame)
    assert [p for p, _ in out] == [2]


def test_truncated_ctl_header_sets_parser_error_and_continues(sw):
    """A short packet ends the parser with PacketTooShort and still reaches ingress/egress."""
    frame = ctl_frame(0)[:17]
    out = sw.send(1, frame)
    assert len(out) == 1
    data = out[0][1]
    # ethernet (14) + report (23) + the 3 unparsed bytes as payload
    assert len(data) == 14 + 23 + 3
    r = dict(zip(("instance_type",), [data[14]], strict=False))
    assert r["instance_type"] == 0
    assert data[14 + 7] == 1  # parser_error field: PacketTooShort


def test_failed_assert_drops_and_counts(sw, caplog):
    """assert(false) drops the packet and counts an error; log_msg logs at DEBUG."""

    assert [p for p, _ in sw.send(1, ctl_frame(16, val=0))] == [2]
    assert sw.send(1, ctl_frame(16, val=1)) == []
    assert sw.switch.stats["errors"] == 1


def test_log_msg_formats_its_data(make_switch, caplog):
    """log_msg substitutes {} with the data values on the p4switch.pipeline logger."""
    import logging

    with caplog.at_level(logging.DEBUG, logger="p4switch.pipeline"):
        h = make_switch("v1m")  # compiled while DEBUG is on
        h.send(1, ctl_frame(16, val=0))
    assert "op 16 val=0" in caplog.text


# A PAUSE frame (MAC control, 802.3 Annex 31B): v1m.p4 does not parse it, so its ingress
# sends it on to port 2 unchanged but for the report its egress appends.
PAUSE = b"\x01\x80\xc2\x00\x00\x01" + b"\x02\x00\x00\x00\x00\x09" + b"\x88\x08\x00\x01\xff\xff" + bytes(42)


def test_a_batch_of_frames_comes_out_as_the_frames_one_by_one(make_switch):
    """`process_many` (the port loop's batch) gives what `process` gives frame by frame:
    the same frames out in the same order, counted the same, through clones, a resubmit,
    a recirculation, a drop, a truncated frame and a MAC control frame in the batch."""
    frames = [ctl_frame(0, val=1), ctl_frame(1, arg=5, val=2), ctl_frame(11, val=3),
              ctl_frame(3, val=4), ctl_frame(0, val=5)[:16], PAUSE, ctl_frame(4, val=6),
              ctl_frame(0, val=7)]
    one, many = make_switch("v1m"), make_switch("v1m")
    for h in (one, many):
        h.switch.clone_session_set(CloneSession(session_id=5, replicas=[Replica(egress_port=7, instance=0)]), 5)
    for f in frames:
        one.switch.process(3, f)
    one.switch.drain(5)
    many.switch.process_many(3, frames)
    many.switch.drain(5)
    got = many.take()
    assert got == one.take()
    # by hand from v1m.p4 (the ctl header's `val` at bytes 18-22; egress appends a 23-byte
    # report to a 30-byte ctl frame): val 1 to port 2; val 2's I2E clone to 7 first, then
    # val 2 (no traffic manager: each copy's egress runs as it is made); val 3 dropped;
    # val 4 to 2 after its resubmit; the truncated frame to 2 (a parser error, report
    # appended); the PAUSE to 2 (not parsed as ctl); val 6 to 2 after its recirculation,
    # with two reports; val 7 to 2
    val = [int.from_bytes(d[18:22], "big") if d[12:14] == b"\x88\xb5" and len(d) >= 53 else None
           for _, d in got]
    assert [(p, len(d)) for p, d in got] == [(2, 53), (7, 53), (2, 53), (2, 53), (2, 39), (2, 83),
                                             (2, 76), (2, 53)]
    assert val == [1, 2, 2, 4, None, None, 6, 7]
    assert many.switch.stats == one.switch.stats
    assert (many.switch.stats["rx"], many.switch.stats["dropped"], many.switch.stats["parser_errors"]) \
        == (10, 1, 1)  # 8 frames, a resubmit and a recirculation
