"""Roles with a stratum.P4RoleConfig: what a named role may write, read and receive."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import any_pb2

from p4switch.io import MemoryPorts
from p4switch.proto import p4r
from p4switch.server.roles import P4RoleConfig

from .conftest import DEVICE_ID, Client, Stream, update, write_errors
from .test_service import BCAST, mac_entry
from .test_tableentries import lpm_entry

MAC, LPM = 33554435, 0x02000001


def role_config(*, exclusive=(), shared=(), packet_ins=False, push=False, flt=None) -> any_pb2.Any:
    cfg = P4RoleConfig(exclusive_p4_ids=exclusive, shared_p4_ids=shared, receives_packet_ins=packet_ins,
                       can_push_pipeline=push)
    if flt is not None:
        cfg.packet_in_filter.metadata_id, cfg.packet_in_filter.value = flt
    out = any_pb2.Any()
    out.Pack(cfg)
    return out


def arbitrate(client: Client, role: str, config: any_pb2.Any | None, election_id: int = 10) -> Stream:
    s = Stream(client.stub)
    client.streams.append(s)
    mau = p4r.MasterArbitrationUpdate(device_id=DEVICE_ID)
    mau.election_id.low = election_id
    mau.role.name = role
    if config is not None:
        mau.role.config.CopyFrom(config)
    s.send(p4r.StreamMessageRequest(arbitration=mau))
    return s


def role_client(server, name: str, config: any_pb2.Any | None) -> tuple[Client, Stream]:
    c = Client(f"127.0.0.1:{server.port}")
    c.role = name
    s = arbitrate(c, name, config)
    assert s.recv_arbitration().status.code == 0
    return c, s


@pytest.fixture
def routes(primary: Client, server):
    """A role 'routes' that may write only the LPM table."""
    c, s = role_client(server, "routes", role_config(exclusive=[LPM]))
    yield c
    c.close()


def test_named_role_writes_its_tables(routes: Client, primary: Client) -> None:
    """An entity listed in the role config is written; the default role sees it."""
    routes.write(update("INSERT", table_entry=lpm_entry()))
    assert len(primary.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=LPM)))) == 1


def test_named_role_write_outside_its_config_is_permission_denied(routes: Client) -> None:
    """Each update outside the role is refused with PERMISSION_DENIED, the others applied."""
    with pytest.raises(grpc.RpcError) as e:
        routes.write(update("INSERT", table_entry=lpm_entry()),
                     update("INSERT", table_entry=mac_entry(0xAA, 3)))
    assert [x.canonical_code for x in write_errors(e.value)] == [0, 7]


def test_named_role_without_push_right_cannot_set_the_pipeline(routes: Client) -> None:
    """SetForwardingPipelineConfig needs can_push_pipeline."""
    with pytest.raises(grpc.RpcError) as e:
        routes.set_pipeline()
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_read_with_a_role_returns_only_its_entities(routes: Client, primary: Client) -> None:
    """ReadRequest.role narrows a wildcard read to the role's tables."""
    primary.write(update("INSERT", table_entry=lpm_entry()), update("INSERT", table_entry=mac_entry(0xAA, 3)))
    req = p4r.ReadRequest(device_id=DEVICE_ID, role="routes", entities=[p4r.Entity(table_entry=p4r.TableEntry())])
    got = [e for r in primary.stub.Read(req) for e in r.entities]
    assert [e.table_entry.table_id for e in got] == [LPM]
    everything = {e.table_entry.table_id for e in primary.read(p4r.Entity(table_entry=p4r.TableEntry()))}
    assert {LPM, MAC} <= everything


def test_read_with_unknown_role_is_not_found(primary: Client) -> None:
    """A role no controller ever arbitrated for is NOT_FOUND."""
    req = p4r.ReadRequest(device_id=DEVICE_ID, role="nobody", entities=[p4r.Entity(table_entry=p4r.TableEntry())])
    with pytest.raises(grpc.RpcError) as e:
        list(primary.stub.Read(req))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("role,config", [
    ("", role_config(exclusive=[LPM])),
    ("r", any_pb2.Any(type_url="type.googleapis.com/p4.v1.Entity", value=b"")),
], ids=["config-on-default-role", "config-of-unknown-scheme"])
def test_bad_role_config_ends_the_stream_with_invalid_argument(client: Client, role, config) -> None:
    """A role config outside the agreed scheme is INVALID_ARGUMENT on arbitration."""
    s = arbitrate(client, role, config)
    s.done.wait(2)
    assert s.error is not None and s.error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_exclusive_ids_of_another_role_are_invalid_argument(routes: Client, client: Client) -> None:
    """Two roles cannot both claim a P4 id that one holds exclusively."""
    s = arbitrate(client, "other", role_config(shared=[LPM]))
    s.done.wait(2)
    assert s.error is not None and s.error.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("packet_ins,expected", [(True, True), (False, False)], ids=["receives", "does-not"])
def test_packet_in_reaches_a_named_role_only_when_configured(server, primary: Client, ports: MemoryPorts,
                                                             packet_ins: bool, expected: bool) -> None:
    """receives_packet_ins decides whether a named role's primary gets PacketIns."""
    c, s = role_client(server, "cpu", role_config(shared=[MAC], packet_ins=packet_ins))
    try:
        ports.inject(1, BCAST)  # small.p4 sends broadcasts to the CPU
        got = not s.no_message(0.5)
        assert got is expected
    finally:
        c.close()
