"""DeviceRuntime's memory management after Writes (settle_heap): a large batch's entries
are frozen out of the collector's sight, a small one's are not, and the refreeze bound
frees cyclic garbage that a settle froze."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from p4switch.proto import p4i, p4r
from p4switch.server import runtime
from p4switch.server.runtime import DeviceRuntime

from .conftest import CPU_PORT, compiled, switch_factory

COMMIT = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
TABLE = "MyIngress.ipv4_route"


def _id(objs: object, name: str) -> int:
    for o in objs:  # type: ignore[attr-defined]
        if o.preamble.name == name:
            return int(o.preamble.id)
    raise KeyError(name)


@pytest.fixture
def rt() -> Iterator[tuple[DeviceRuntime, p4i.P4Info]]:
    info, blob = compiled("route.p4")
    dev = DeviceRuntime(1, switch_factory, cpu_port=CPU_PORT)
    dev.set_pipeline(COMMIT, p4r.ForwardingPipelineConfig(p4info=info, p4_device_config=blob))
    try:
        yield dev, info
    finally:
        dev.close()
        gc.unfreeze()


def _routes(info: p4i.P4Info, first: int, n: int) -> list[p4r.Update]:
    """INSERTs of n /24 routes, 10.<first..>.0/24 -> port 1, a distinct dmac each."""
    tid, aid = _id(info.tables, TABLE), _id(info.actions, "MyIngress.route")
    out = []
    for i in range(first, first + n):
        u = p4r.Update(type=p4r.Update.INSERT)
        te = u.entity.table_entry
        te.table_id = tid
        fm = te.match.add(field_id=1)
        fm.lpm.value = (0x0A000000 + (i << 8)).to_bytes(4, "big")
        fm.lpm.prefix_len = 24
        a = te.action.action
        a.action_id = aid
        a.params.add(param_id=1, value=b"\x01")
        a.params.add(param_id=2, value=(0x020000000000 + i).to_bytes(6, "big"))
        out.append(u)
    return out


def _installed(dev: DeviceRuntime) -> list[object]:
    st = dev.committed
    assert st is not None and st.device is not None
    return list(st.device.table_entries(TABLE, copy=False))


def _tracked(objs: list[object]) -> int:
    """How many of objs the collector's generations hold (not frozen)."""
    ids = {id(o) for o in objs}
    return sum(1 for o in gc.get_objects() if id(o) in ids)


def test_a_large_write_freezes_its_entries_a_small_one_does_not(
        rt: tuple[DeviceRuntime, p4i.P4Info]) -> None:
    dev, info = rt
    assert dev.write(_routes(info, 0, 1)) == [None]
    small = _installed(dev)
    assert len(small) == 1 and _tracked(small) == 1  # still in the generations
    assert dev.write(_routes(info, 1, 300)) == [None] * 300
    entries = _installed(dev)
    assert len(entries) == 301
    assert _tracked(entries) == 0  # all frozen, the earlier one with them


def test_the_refreeze_bound_frees_cyclic_garbage_a_settle_froze(
        rt: tuple[DeviceRuntime, p4i.P4Info], monkeypatch: pytest.MonkeyPatch) -> None:
    dev, info = rt

    class Cycle:
        pass

    c = Cycle()
    c.me = c  # type: ignore[attr-defined]
    dead = weakref.ref(c)
    assert dev.write(_routes(info, 0, 300)) == [None] * 300  # settles: c is frozen, alive
    del c
    gc.collect()
    assert dead() is not None  # frozen garbage: the full collection does not see it
    monkeypatch.setattr(runtime, "REFREEZE_AFTER", 0)
    assert dev.write(_routes(info, 300, 300)) == [None] * 300  # over the bound: refreeze
    assert dead() is None
    assert len(_installed(dev)) == 600
