"""DirectCounterEntry and DirectMeterEntry: the direct resources of a table's entries.

Writes set (MODIFY only) and reads return the counter or meter config held
by one entry, the default entry, a table's entries or every table's that
has one; the entry is found through `tableentries`.

Names defined here: `write_direct_counter`, `read_direct_counters`,
`write_direct_meter`, `read_direct_meters`.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4switch.pipeline.state import TableEntry
from p4switch.proto import p4i, p4r
from p4switch.server.pipeline_state import PipelineState
from p4switch.server.tableentries import (
    MODIFY,
    _check_meter_counter_data,
    _device,
    _entries,
    _meter_tuple,
    decode_match,
    default_direct_supported,
    encode_entry,
    find_entry,
    set_direct,
)
from p4switch.translate import UNIMPLEMENTED, P4RTError, invalid


def _direct_target(st: PipelineState, te: p4r.TableEntry, what: dict, kind: str,
                   *, live: bool = True) -> tuple[p4i.Table, TableEntry]:
    """The entry a direct resource belongs to; `live=False` gives only its key (writes
    then get NOT_FOUND from the device, without scanning the table)."""
    t = st.index.table(te.table_id)
    if t.preamble.id not in what:
        raise invalid(f"table {t.preamble.name!r} has no direct {kind}")
    if te.is_default_action:
        if te.match or te.priority:
            raise invalid("the default entry has no match and priority 0")
        if not default_direct_supported(_device(st)):
            raise P4RTError(UNIMPLEMENTED, f"direct {kind}s of the default entry are not supported "
                                           "by this pipeline (it does not count misses)")
        return t, _device(st).table_default(t.preamble.name)
    match = decode_match(st, t, te.match)
    if not live:
        return t, TableEntry(match=match, priority=te.priority)
    return t, find_entry(st, t, match, te.priority)


def write_direct_counter(st: PipelineState, utype: int, msg: p4r.DirectCounterEntry) -> None:
    """Set the direct counter of one entry (or the default entry) (MODIFY only)."""
    if utype != MODIFY:
        raise invalid("DirectCounterEntry can only be modified")
    t, e = _direct_target(st, msg.table_entry, st.index.table_counter, "counter",
                          live=not msg.HasField("data"))
    if not msg.HasField("data"):
        return
    set_direct(st, t, e, packets=msg.data.packet_count, bytes_=msg.data.byte_count)


def read_direct_counters(st: PipelineState, msg: p4r.DirectCounterEntry) -> Iterator[p4r.DirectCounterEntry]:
    """Direct counters of one entry, of a table's entries, or of every table with one."""
    te = msg.table_entry
    req = p4r.TableEntry(counter_data=p4r.CounterData())
    if te.table_id == 0:
        tables = [st.index.tables[tid] for tid in st.index.table_counter]
    else:
        t = st.index.table(te.table_id)
        if t.preamble.id not in st.index.table_counter:
            raise invalid(f"table {t.preamble.name!r} has no direct counter")
        tables = [t]
        if te.match or te.is_default_action:
            _, e = _direct_target(st, te, st.index.table_counter, "counter")
            yield p4r.DirectCounterEntry(table_entry=encode_entry(st, t, e, p4r.TableEntry()),
                                         data=encode_entry(st, t, e, req).counter_data)
            return
    for t in tables:
        for e in _entries(st, t.preamble.name):
            if e.is_default:
                continue
            yield p4r.DirectCounterEntry(table_entry=encode_entry(st, t, e, p4r.TableEntry()),
                                         data=p4r.CounterData(packet_count=e.counter_packets,
                                                              byte_count=e.counter_bytes))


def write_direct_meter(st: PipelineState, utype: int, msg: p4r.DirectMeterEntry) -> None:
    """Configure the direct meter of one entry (or the default entry) (MODIFY only)."""
    if utype != MODIFY:
        raise invalid("DirectMeterEntry can only be modified")
    t, e = _direct_target(st, msg.table_entry, st.index.table_meter, "meter", live=False)
    if msg.HasField("counter_data"):
        _check_meter_counter_data(msg.counter_data)
    cfg = _meter_tuple(msg.config) if msg.HasField("config") else None
    set_direct(st, t, e, meter_config=cfg)


def read_direct_meters(st: PipelineState, msg: p4r.DirectMeterEntry) -> Iterator[p4r.DirectMeterEntry]:
    """Direct meter configs of one entry, of a table's entries, or of every table with one."""
    te = msg.table_entry
    req = p4r.TableEntry(meter_config=p4r.MeterConfig())

    def one(t: p4i.Table, e: TableEntry) -> p4r.DirectMeterEntry:
        """The DirectMeterEntry of entry `e` of table `t`, with its config if set."""
        out = p4r.DirectMeterEntry(table_entry=encode_entry(st, t, e, p4r.TableEntry()))
        full = encode_entry(st, t, e, req)
        if full.HasField("meter_config"):
            out.config.CopyFrom(full.meter_config)
        return out

    if te.table_id == 0:
        for tid in st.index.table_meter:
            t = st.index.tables[tid]
            for e in _entries(st, t.preamble.name):
                if not e.is_default:
                    yield one(t, e)
        return
    t = st.index.table(te.table_id)
    if te.match or te.is_default_action:
        _, e = _direct_target(st, te, st.index.table_meter, "meter")
        yield one(t, e)
        return
    if t.preamble.id not in st.index.table_meter:
        raise invalid(f"table {t.preamble.name!r} has no direct meter")
    for e in _entries(st, t.preamble.name):
        if not e.is_default:
            yield one(t, e)


__all__ = ["write_direct_counter", "read_direct_counters", "write_direct_meter",
           "read_direct_meters"]
