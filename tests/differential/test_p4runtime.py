"""P4Runtime answers compared directly: the same request to simple_switch_grpc and p4switch."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from p4switch.proto import p4r

from .deviations import DEVIATIONS

BASIC = Path(__file__).resolve().parents[1] / "unit" / "frontend" / "corpus" / "valid" / "basic.p4"


def _read_status(session, entities: list[p4r.Entity]) -> grpc.StatusCode:
    try:
        session.read(entities)
    except grpc.RpcError as e:
        return e.code()
    return grpc.StatusCode.OK


@pytest.mark.parametrize("entities", [[p4r.Entity()], [p4r.Entity(table_entry=p4r.TableEntry()), p4r.Entity()]],
                         ids=["unset", "unset-after-a-valid-one"])
def test_read_of_an_unset_entity_is_invalid_argument_on_both(entities, rig, compiled) -> None:
    """A ReadRequest whose Entity has no oneof set: INVALID_ARGUMENT (the spec's) from p4switch,
    UNKNOWN from BMv2 (the listed deviation read-unset-entity)."""
    assert "read-unset-entity" in {d.name for d in DEVIATIONS}
    rig.load(compiled(BASIC))
    got = {name: _read_status(s, entities) for name, s in rig.sessions()}
    assert got == {"bmv2": grpc.StatusCode.UNKNOWN, "p4switch": grpc.StatusCode.INVALID_ARGUMENT}
