"""The P4Runtime RPCs: pipeline config, Capabilities, Read/Write batches, packet I/O."""

from __future__ import annotations

import grpc
import pytest

from p4switch.io import MemoryPorts
from p4switch.proto import p4r
from p4switch.server import P4RUNTIME_API_VERSION, P4RuntimeServer

from .conftest import (
    DEVICE_ID,
    TRANSPORTS,
    Client,
    each_transport,
    load_p4info,
    make_program_file,
    update,
    write_errors,
)

A = p4r.SetForwardingPipelineConfigRequest
R = p4r.GetForwardingPipelineConfigRequest


transport = pytest.fixture(params=TRANSPORTS)(each_transport)


def get_config(client: Client, rtype: int = R.ALL, device_id: int = DEVICE_ID):
    return client.stub.GetForwardingPipelineConfig(
        R(device_id=device_id, response_type=rtype)).config


def test_capabilities_reports_api_version(client: Client) -> None:
    """Capabilities answers the P4Runtime version implemented."""
    resp = client.stub.Capabilities(p4r.CapabilitiesRequest())
    assert resp.p4runtime_api_version == P4RUNTIME_API_VERSION
    assert resp.p4runtime_api_version.startswith("1.4.")


def test_get_config_before_any_set_is_unset(client: Client) -> None:
    """Without a pipeline the response's config field is unset."""
    resp = client.stub.GetForwardingPipelineConfig(R(device_id=DEVICE_ID))
    assert not resp.HasField("config")


def test_get_config_unknown_device_is_not_found(client: Client) -> None:
    """GetForwardingPipelineConfig for another device id fails with NOT_FOUND."""
    with pytest.raises(grpc.RpcError) as e:
        get_config(client, device_id=7)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("rtype,p4info,blob,cookie", [
    (R.ALL, True, True, True),
    (R.COOKIE_ONLY, False, False, True),
    (R.P4INFO_AND_COOKIE, True, False, True),
    (R.DEVICE_CONFIG_AND_COOKIE, False, True, True),
], ids=["all", "cookie-only", "p4info-and-cookie", "device-config-and-cookie"])
def test_get_config_response_types(client: Client, rtype, p4info, blob, cookie) -> None:
    """Each response type fills exactly its fields, with read-write symmetry."""
    client.stream(10)
    client.set_pipeline(cookie=0xABC)
    cfg = get_config(client, rtype)
    assert cfg.HasField("p4info") == p4info
    assert bool(cfg.p4_device_config) == blob
    assert cfg.cookie.cookie == 0xABC
    if p4info:
        assert cfg.p4info == load_p4info()
    if blob:
        assert cfg.p4_device_config == make_program_file()


def test_verify_does_not_install(client: Client) -> None:
    """VERIFY checks the config and changes nothing."""
    client.stream(10)
    client.set_pipeline(action=A.VERIFY)
    assert not client.stub.GetForwardingPipelineConfig(R(device_id=DEVICE_ID)).HasField("config")


@pytest.mark.parametrize("action", [A.VERIFY, A.VERIFY_AND_SAVE, A.VERIFY_AND_COMMIT],
                         ids=["verify", "verify-and-save", "verify-and-commit"])
def test_set_config_without_config_is_invalid_argument(client: Client, action) -> None:
    """The verifying actions need a config."""
    client.stream(10)
    with pytest.raises(grpc.RpcError) as e:
        client.set_pipeline(action=action, config=False)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_bad_device_config_is_invalid_argument(client: Client) -> None:
    """A device config that is not a p4switch program file is refused."""
    client.stream(10)
    with pytest.raises(grpc.RpcError) as e:
        client.set_pipeline(device_config=b"{not json")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "program file" in e.value.details()


def test_p4info_not_matching_program_is_invalid_argument(client: Client) -> None:
    """The P4Info must describe the program in the device config (same tables/actions)."""
    client.stream(10)
    info = load_p4info()
    info.tables[0].preamble.name = "ingress.other"
    with pytest.raises(grpc.RpcError) as e:
        client.set_pipeline(p4info=info)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "ingress.other" in e.value.details()


def test_commit_without_saved_config_is_not_found(client: Client) -> None:
    """COMMIT needs a previous VERIFY_AND_SAVE."""
    client.stream(10)
    with pytest.raises(grpc.RpcError) as e:
        client.set_pipeline(action=A.COMMIT, config=False)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_commit_with_config_is_invalid_argument(client: Client) -> None:
    """COMMIT takes no config."""
    client.stream(10)
    client.set_pipeline(action=A.VERIFY_AND_SAVE)
    with pytest.raises(grpc.RpcError) as e:
        client.set_pipeline(action=A.COMMIT)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_save_then_commit_keeps_writes_made_in_between(client: Client, server: P4RuntimeServer) -> None:
    """Writes after VERIFY_AND_SAVE go to the saved pipeline and are live after COMMIT."""
    client.stream(10)
    client.set_pipeline(action=A.VERIFY_AND_SAVE)
    assert server.runtime.committed is None
    client.write(update("MODIFY", counter_entry=p4r.CounterEntry(
        counter_id=302055425, index=p4r.Index(index=3), data=p4r.CounterData(packet_count=9))))
    client.set_pipeline(action=A.COMMIT, config=False)
    got = client.read(p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=302055425, index=p4r.Index(index=3))))
    assert got[0].counter_entry.data.packet_count == 9


def test_verify_and_commit_discards_a_saved_config(client: Client, server: P4RuntimeServer) -> None:
    """After VERIFY_AND_SAVE, a VERIFY_AND_COMMIT wins: writes go to the committed pipeline."""
    client.stream(10)
    client.set_pipeline(action=A.VERIFY_AND_SAVE)
    client.set_pipeline(cookie=5)
    assert server.runtime.saved is None
    assert get_config(client, R.COOKIE_ONLY).cookie.cookie == 5
    with pytest.raises(grpc.RpcError) as e:
        client.set_pipeline(action=A.COMMIT, config=False)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_reconcile_and_commit_is_unimplemented(client: Client) -> None:
    """RECONCILE_AND_COMMIT is optional and not supported."""
    client.stream(10)
    with pytest.raises(grpc.RpcError) as e:
        client.set_pipeline(action=A.RECONCILE_AND_COMMIT)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_set_config_from_backup_is_permission_denied(client: Client) -> None:
    """Only the primary may set the pipeline."""
    client.stream(10)
    client.stream(5)
    with pytest.raises(grpc.RpcError) as e:
        client.set_pipeline(election_id=5)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_recommit_clears_forwarding_state(primary: Client) -> None:
    """VERIFY_AND_COMMIT of a new config starts from empty tables."""
    te = mac_entry(0x0A, 1)
    primary.write(update("INSERT", table_entry=te))
    primary.set_pipeline()
    assert primary.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=te.table_id))) == []


def test_read_before_pipeline_is_failed_precondition(client: Client) -> None:
    """Reads need a pipeline config too."""
    with pytest.raises(grpc.RpcError) as e:
        client.read(p4r.Entity(table_entry=p4r.TableEntry()))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_read_unknown_device_is_not_found(primary: Client) -> None:
    """Read from a device id the server does not serve."""
    with pytest.raises(grpc.RpcError) as e:
        primary.read(p4r.Entity(table_entry=p4r.TableEntry()), device_id=3)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_read_with_unset_entity_is_invalid_argument(primary: Client) -> None:
    """An Entity with no oneof set makes the ReadRequest malformed: INVALID_ARGUMENT, as PI answers."""
    with pytest.raises(grpc.RpcError) as e:
        primary.read(p4r.Entity(table_entry=p4r.TableEntry()), p4r.Entity())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "entity 1" in e.value.details()


def test_batch_errors_are_reported_per_update_in_order(primary: Client) -> None:
    """A batch with failures: UNKNOWN, one p4.v1.Error per update, successes applied."""
    ok = mac_entry(0x01, 1)
    with pytest.raises(grpc.RpcError) as e:
        primary.write(update("INSERT", table_entry=ok), update("INSERT", table_entry=ok),
                      update("DELETE", table_entry=mac_entry(0x02, 1)))
    assert e.value.code() == grpc.StatusCode.UNKNOWN
    assert [x.canonical_code for x in write_errors(e.value)] == [0, 6, 5]
    assert len(primary.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=ok.table_id)))) == 1


def test_rollback_atomicity_is_unimplemented(primary: Client) -> None:
    """Only CONTINUE_ON_ERROR batches are supported."""
    with pytest.raises(grpc.RpcError) as e:
        primary.write(update("INSERT", table_entry=mac_entry(1, 1)),
                      atomicity=p4r.WriteRequest.ROLLBACK_ON_ERROR)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_update_without_entity_or_type_is_invalid_argument(primary: Client) -> None:
    """UNSPECIFIED update type and an empty entity are refused per update."""
    with pytest.raises(grpc.RpcError) as e:
        primary.write(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity()),
                      p4r.Update(type=p4r.Update.UNSPECIFIED,
                                 entity=p4r.Entity(table_entry=mac_entry(1, 1))))
    assert [x.canonical_code for x in write_errors(e.value)] == [3, 3]


def mac_entry(mac: int, port: int) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=33554435)
    te.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    te.action.action.action_id = 16777221
    te.action.action.params.add(param_id=1, value=port.to_bytes(2, "big"))
    return te


# -- packet I/O --------------------------------------------------------------

FRAME = bytes.fromhex("0000000000aa" "000000000001" "0800") + b"x" * 50
BCAST = b"\xff" * 6 + bytes.fromhex("000000000001" "0806") + b"y" * 40


def test_frames_are_forwarded_by_the_installed_entries(primary: Client, ports: MemoryPorts) -> None:
    """A frame received on a port goes through the committed device to the chosen port."""
    primary.write(update("INSERT", table_entry=mac_entry(0xAA, 3)))
    ports.inject(1, FRAME)
    assert ports.wait_sent(3) == FRAME


def test_a_batch_of_frames_goes_through_the_committed_device_in_order(
        client: Client, server: P4RuntimeServer, ports: MemoryPorts) -> None:
    """`process_many` (the batched port loop's sink) forwards every frame of a batch by the
    installed entries, in order, the broadcast one to the CPU as a packet-in; before a
    pipeline is committed the whole batch is dropped and counted."""
    stream = server.runtime.stream
    server.process_many(1, [FRAME, FRAME])
    assert stream.rx_no_pipeline == 2
    assert ports.wait_sent(3, timeout=0.2) is None
    client.stream(10)
    client.set_pipeline()
    client.write(update("INSERT", table_entry=mac_entry(0xAA, 3)))
    frames = [FRAME[:-1] + bytes([i]) for i in range(5)]
    server.process_many(1, [*frames[:2], BCAST, *frames[2:]])
    assert [ports.wait_sent(3) for _ in frames] == frames
    msg = client.streams[0].recv()
    assert msg.packet.payload == BCAST
    assert stream.rx_no_pipeline == 2


def test_packet_in_reaches_the_primary_with_metadata(primary: Client, ports: MemoryPorts) -> None:
    """Frames the device sends to the CPU arrive as PacketIn with P4Info metadata ids."""
    s = primary.streams[0]
    ports.inject(2, BCAST)
    msg = s.recv()
    assert msg.packet.payload == BCAST
    meta = {m.metadata_id: m.value for m in msg.packet.metadata}
    assert meta == {1: b"\x02", 2: b"\x00"}


def test_packet_in_is_not_sent_to_backups(primary: Client, ports: MemoryPorts) -> None:
    """Only the primary takes part in packet I/O."""
    backup = primary.stream(5)
    ports.inject(2, BCAST)
    assert primary.streams[0].recv().HasField("packet")
    assert backup.no_message()


def test_packet_out_is_sent_to_its_egress_port(primary: Client, ports: MemoryPorts) -> None:
    """A PacketOut's metadata (by P4Info id) reaches the device by name."""
    out = p4r.PacketOut(payload=FRAME)
    out.metadata.add(metadata_id=1, value=b"\x04")
    out.metadata.add(metadata_id=2, value=b"\x00")
    primary.streams[0].send(p4r.StreamMessageRequest(packet=out))
    assert ports.wait_sent(4) == FRAME


@pytest.mark.parametrize("metadata", [
    [(9, b"\x01")], [(1, b"\x04")], [(1, b"\x04\x00"), (2, b"\x00")],
], ids=["unknown-id", "missing-field", "too-wide"])
def test_malformed_packet_out_is_dropped_with_stream_error(primary: Client, ports: MemoryPorts,
                                                           metadata) -> None:
    """Bad packet-out metadata: dropped, StreamError INVALID_ARGUMENT/OUT_OF_RANGE naming the packet."""
    out = p4r.PacketOut(payload=FRAME)
    for mid, value in metadata:
        out.metadata.add(metadata_id=mid, value=value)
    primary.streams[0].send(p4r.StreamMessageRequest(packet=out))
    err = primary.streams[0].recv().error
    assert err.canonical_code in (3, 11)
    assert err.packet_out.packet_out.payload == FRAME
    assert ports.wait_sent(4, timeout=0.2) is None


def test_packet_out_from_backup_is_permission_denied(primary: Client, ports: MemoryPorts) -> None:
    """A backup's packet-out is dropped with a PERMISSION_DENIED StreamError."""
    backup = primary.stream(5)
    out = p4r.PacketOut(payload=FRAME)
    out.metadata.add(metadata_id=1, value=b"\x04")
    out.metadata.add(metadata_id=2, value=b"\x00")
    backup.send(p4r.StreamMessageRequest(packet=out))
    assert backup.recv().error.canonical_code == 7
    assert ports.wait_sent(4, timeout=0.2) is None


def test_controller_that_never_reads_does_not_stall_forwarding(client: Client, ports: MemoryPorts,
                                                                server: P4RuntimeServer,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Packet-ins to a stuck controller are dropped once its queue is full; forwarding goes on."""
    import queue as _q

    from p4switch.server import arbitration

    # a small bound, so that it is reached whatever the HTTP/2 windows buffer first
    monkeypatch.setattr(arbitration, "STREAM_QUEUE_LIMIT", 64)

    requests: _q.Queue = _q.Queue()
    mau = p4r.MasterArbitrationUpdate(device_id=DEVICE_ID)
    mau.election_id.low = 10
    requests.put(p4r.StreamMessageRequest(arbitration=mau))
    call = client.stub.StreamChannel(iter(requests.get, None))
    next(call)  # the arbitration answer; nothing else is ever read
    client.set_pipeline()
    client.write(update("INSERT", table_entry=mac_entry(0xAA, 3)))
    for _ in range(6000):
        ports.inject(2, BCAST + bytes(1400))
    ports.inject(1, FRAME)
    assert ports.wait_sent(3) == FRAME
    ctl, _ = server.service.arbiter.primaries(DEVICE_ID)[0]
    assert ctl.dropped > 0
    requests.put(None)
    call.cancel()
