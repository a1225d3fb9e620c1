"""Client arbitration over StreamChannel (P4Runtime spec §6)."""

from __future__ import annotations

import grpc
import pytest

from p4switch.proto import p4r
from p4switch.translate import uint128

from .conftest import DEVICE_ID, TRANSPORTS, Client, Stream, each_transport, update

OK, NOT_FOUND, ALREADY_EXISTS = 0, 5, 6


transport = pytest.fixture(params=TRANSPORTS)(each_transport)


def test_first_controller_becomes_primary_with_ok_status(client: Client) -> None:
    """The only controller with an election id is primary and told so with OK."""
    s = client.stream(5, wait=False)
    mau = s.recv_arbitration()
    assert mau.status.code == OK
    assert mau.device_id == DEVICE_ID
    assert uint128(mau.election_id) == 5


def test_lower_election_id_becomes_backup_with_already_exists(client: Client) -> None:
    """A second controller with a lower id is a backup; only it is notified."""
    a = client.stream(10)
    b = client.stream(5, wait=False)
    mau = b.recv_arbitration()
    assert mau.status.code == ALREADY_EXISTS
    assert uint128(mau.election_id) == 10
    assert a.no_message()


def test_higher_election_id_takes_over_and_everyone_is_told(client: Client) -> None:
    """A new controller with a higher id becomes primary; the old primary gets ALREADY_EXISTS."""
    a = client.stream(10)
    b = client.stream(20, wait=False)
    assert b.recv_arbitration().status.code == OK
    mau = a.recv_arbitration()
    assert mau.status.code == ALREADY_EXISTS
    assert uint128(mau.election_id) == 20


def test_reused_election_id_terminates_stream_with_invalid_argument(client: Client) -> None:
    """Two live controllers may not share an election id for the same role."""
    client.stream(10)
    b = client.stream(10, wait=False)
    assert b.done.wait(2)
    assert b.error is not None and b.error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_unknown_device_id_terminates_stream_with_not_found(client: Client) -> None:
    """Arbitration for a device the server does not serve fails with NOT_FOUND."""
    s = client.stream(10, device_id=99, wait=False)
    assert s.done.wait(2)
    assert s.error is not None and s.error.code() == grpc.StatusCode.NOT_FOUND


def test_changing_device_id_on_a_stream_is_failed_precondition(client: Client) -> None:
    """A live stream cannot switch to another device id."""
    s = client.stream(10)
    s.arbitrate(11, device_id=DEVICE_ID + 1)
    assert s.done.wait(2)
    assert s.error.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_changing_role_on_a_stream_is_failed_precondition(client: Client) -> None:
    """A live stream cannot switch roles."""
    s = client.stream(10)
    s.arbitrate(10, role="other")
    assert s.done.wait(2)
    assert s.error.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_primary_leaving_tells_backups_there_is_no_primary(client: Client) -> None:
    """When the primary's stream closes, backups get NOT_FOUND with the highest id seen."""
    a = client.stream(10)
    b = client.stream(5)
    c = client.stream(7)
    a.close()
    for s in (b, c):
        mau = s.recv_arbitration()
        assert mau.status.code == NOT_FOUND
        assert uint128(mau.election_id) == 10


def test_backup_with_lower_id_does_not_take_over_after_primary_leaves(client: Client) -> None:
    """The highest id ever seen stays the bar: a backup with a lower id stays backup."""
    a = client.stream(10)
    b = client.stream(5)
    a.close()
    b.recv_arbitration()
    with pytest.raises(grpc.RpcError) as e:
        client.write(election_id=5)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_backup_raising_its_id_becomes_primary(client: Client) -> None:
    """Three controllers: a backup that re-arbitrates with the highest id takes over."""
    a = client.stream(10)
    b = client.stream(5)
    c = client.stream(7)
    c.arbitrate(30)
    assert c.recv_arbitration().status.code == OK
    assert a.recv_arbitration().status.code == ALREADY_EXISTS
    assert b.recv_arbitration().status.code == ALREADY_EXISTS
    client.set_pipeline(election_id=30)
    client.write(election_id=30)


def test_primary_downgrading_itself_tells_everyone(client: Client) -> None:
    """A primary that re-arbitrates with a lower id becomes backup; all get NOT_FOUND."""
    a = client.stream(10)
    b = client.stream(5)
    a.arbitrate(3)
    assert a.recv_arbitration().status.code == NOT_FOUND
    assert b.recv_arbitration().status.code == NOT_FOUND


def test_unset_election_id_is_always_backup(client: Client) -> None:
    """A controller without an election id never becomes primary; no id in the reply."""
    s = Stream(client.stub)
    client.streams.append(s)
    s.arbitrate(None)
    mau = s.recv_arbitration()
    assert mau.status.code == NOT_FOUND
    assert not mau.HasField("election_id")


def test_write_from_backup_is_permission_denied(client: Client) -> None:
    """Only the primary's election id may write."""
    client.stream(10)
    client.stream(5)
    with pytest.raises(grpc.RpcError) as e:
        client.write(election_id=5)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_write_without_any_stream_is_permission_denied(client: Client) -> None:
    """No arbitration, no writes."""
    with pytest.raises(grpc.RpcError) as e:
        client.write()
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_roles_have_independent_primaries(client: Client) -> None:
    """The same election id may be primary in two roles."""
    a = client.stream(10, role="r1", wait=False)
    b = client.stream(10, role="r2", wait=False)
    assert a.recv_arbitration().status.code == OK
    mau = b.recv_arbitration()
    assert mau.status.code == OK
    assert mau.role.name == "r2"


def test_write_for_unknown_role_is_not_found(client: Client) -> None:
    """A role no controller arbitrated for does not exist."""
    client.stream(10)
    client.role = "nobody"
    with pytest.raises(grpc.RpcError) as e:
        client.write()
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_write_to_unknown_device_is_not_found(client: Client) -> None:
    """Write to a device id the server does not serve."""
    client.stream(10)
    with pytest.raises(grpc.RpcError) as e:
        client.write(device_id=42)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_write_before_pipeline_is_failed_precondition(client: Client) -> None:
    """The primary cannot write before a pipeline config is set."""
    client.stream(10)
    with pytest.raises(grpc.RpcError) as e:
        client.write(update("MODIFY", counter_entry=p4r.CounterEntry(counter_id=1)))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
