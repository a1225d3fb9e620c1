"""The stream side of one P4Runtime device: packets, digests and idle timeouts of the committed pipeline.

`DeviceStream` moves what the StreamChannel carries between the committed
pipeline's Device, the ports and the controllers:

* `process(port, data)` is what the port loop calls for every received frame
  (`process_many(port, frames)` for a batch of them, in one call to a Device
  that has `process_many`); it goes to the committed Device (dropped and
  counted when there is none).
* the Device's output reaches `device_output`: frames sent to the CPU port are
  packet-ins (BMv2 framing: the @controller_header("packet_in") header in front
  of the packet), and so are calls of the Device's packet-in handler; other
  frames go to the ports (`transmit`).
* `packet_out` turns a PacketOut into a Device `packet_out` call.
* digests from the Device go through a `DigestEngine` to `digest_sink`;
  `digest_ack` acknowledges a DigestList.
* an `IdleScanner` sends idle-timeout notifications for `support_timeout`
  tables to `idle_sink`.

`runtime.DeviceRuntime` owns the pipeline configs: it calls `commit` when a
config is committed and clears `committed` when it closes.

Names defined here: `DeviceStream`, `Transmit`, `PacketInSink`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from p4switch.proto import p4d, p4r
from p4switch.server import tableentries
from p4switch.server.digests import DigestEngine
from p4switch.server.idle import IdleScanner
from p4switch.server.pipeline_state import PipelineState
from p4switch.translate import (
    FAILED_PRECONDITION,
    INVALID_ARGUMENT,
    P4RTError,
    decode_value,
    encode_value,
    pack_controller_header,
    unpack_controller_header,
)

Transmit = Callable[[int, bytes], None]
PacketInSink = Callable[[p4r.PacketIn], None]


class DeviceStream:
    """Packet-in/out, digests and idle timeouts of one device's committed pipeline (see module docstring).

    `lock` is the device's lock (`DeviceRuntime.lock`), held while an idle
    notification reads `controller_metadata`.
    """

    def __init__(self, lock: threading.RLock, *, transmit: Transmit | None = None,
                 cpu_port: int | None = None) -> None:
        self.lock = lock
        self.cpu_port = cpu_port
        self._transmit = transmit or (lambda port, data: None)
        self.committed: PipelineState | None = None
        self.packet_in_sink: PacketInSink | None = None
        self.digest_sink: Callable[[p4r.DigestList], None] | None = None
        self.idle_sink: Callable[[p4r.IdleTimeoutNotification], None] | None = None
        self.rx_no_pipeline = 0
        self.digests = DigestEngine(self._send_digest, self._digest_config)
        self.idle = IdleScanner(self._idle_tables, self._notify_idle)

    def commit(self, st: PipelineState) -> None:
        """Stream for a newly committed pipeline: fresh digest and idle state, our handlers on its Device."""
        self.committed = st
        self.digests.reset()
        self.idle.reset()
        if any(tc.idle_ok for tc in st.tcodec.values()):
            self.idle.start()
        dev = st.device
        if dev is None:
            return
        setter = getattr(dev, "set_packet_in_handler", None)
        if setter is not None:
            setter(self._on_packet_in)
        setter = getattr(dev, "set_digest_handler", None)
        if setter is not None:
            setter(self._on_digest)

    def close(self) -> None:
        """Stop the digest and idle-timeout threads."""
        self.digests.close()
        self.idle.close()

    # -- packets ------------------------------------------------------------

    def process(self, port: int, data: bytes) -> None:
        """A frame received on a port (called from the port loop)."""
        st = self.committed
        if st is None or st.device is None:
            self.rx_no_pipeline += 1
            return
        st.device.process(port, data)

    def process_many(self, port: int, frames: list[bytes]) -> None:
        """Frames received on a port in one batch, in order (called from the port loop)."""
        st = self.committed
        if st is None or st.device is None:
            self.rx_no_pipeline += len(frames)
            return
        dev = st.device
        many = getattr(dev, "process_many", None)
        if many is not None:
            many(port, frames)
        else:
            for data in frames:
                dev.process(port, data)

    def device_output(self, port: int, data: bytes) -> None:
        """A frame the Device sends: a packet-in when it is for the CPU port, else out of `port`."""
        if self.cpu_port is not None and port == self.cpu_port:
            st = self.committed
            meta = st.index.cpm.get("packet_in") if st is not None else None
            if meta is None:
                self._emit_packet_in(data, {})
                return
            values, payload = unpack_controller_header(meta, data)
            self._emit_packet_in(payload, values)
            return
        self._transmit(port, data)

    def _on_packet_in(self, payload: bytes, metadata: dict[str, int]) -> None:
        st = self.committed
        ids: dict[int, int] = {}
        if st is not None and "packet_in" in st.index.cpm:
            for m in st.index.cpm["packet_in"].metadata:
                if m.name in metadata:
                    ids[m.id] = metadata[m.name]
        self._emit_packet_in(payload, ids)

    def _emit_packet_in(self, payload: bytes, values: dict[int, int]) -> None:
        sink = self.packet_in_sink
        if sink is None:
            return
        msg = p4r.PacketIn(payload=payload)
        for mid in sorted(values):
            msg.metadata.add(metadata_id=mid, value=encode_value(values[mid]))
        sink(msg)

    def packet_out(self, msg: p4r.PacketOut) -> None:
        """Inject a PacketOut; P4RTError (for a StreamError) when it is malformed."""
        st = self.committed
        if st is None or st.device is None:
            raise P4RTError(FAILED_PRECONDITION, "no forwarding pipeline config is set")
        meta = st.index.cpm.get("packet_out")
        by_id: dict[int, int] = {}
        if meta is not None:
            known = {m.id: m for m in meta.metadata}
            for pm in msg.metadata:
                m = known.get(pm.metadata_id)
                if m is None:
                    raise P4RTError(INVALID_ARGUMENT, f"unknown packet_out metadata id {pm.metadata_id}")
                if pm.metadata_id in by_id:
                    raise P4RTError(INVALID_ARGUMENT, f"packet_out metadata id {pm.metadata_id} given twice")
                by_id[pm.metadata_id] = decode_value(pm.value, m.bitwidth, f"packet_out metadata {m.name!r}")
            missing = [m.name for m in meta.metadata if m.id not in by_id]
            if missing:
                raise P4RTError(INVALID_ARGUMENT, f"packet_out metadata {missing} missing")
        elif msg.metadata:
            raise P4RTError(INVALID_ARGUMENT, "the program has no packet_out controller header")
        dev = st.device
        inject = getattr(dev, "packet_out", None)
        if inject is not None:
            names = {m.id: m.name for m in meta.metadata} if meta is not None else {}
            inject(msg.payload, {names[i]: v for i, v in by_id.items()})
        else:
            if self.cpu_port is None:
                raise P4RTError(FAILED_PRECONDITION, "no CPU port (start p4switch with --cpu-port)")
            header = pack_controller_header(meta, by_id) if meta is not None else b""
            dev.process(self.cpu_port, header + msg.payload)

    # -- digests ------------------------------------------------------------

    def _on_digest(self, name: str, values: Any) -> None:
        """A digest from the data plane (forwarding thread).

        `values` is the digest struct as a dict by member name or a sequence in
        member order, a list's members in order, or one int for a bit<W> digest
        (or a sequence of one). The P4Data has the shape of the digest's
        P4Info type: a struct's or a tuple's members, or one bitstring.
        """
        st = self.committed
        if st is None:
            return
        d = st.digest_by_name.get(name)
        if d is None or d.preamble.id not in st.digests:
            return
        data = p4d.P4Data()
        kind = d.type_spec.WhichOneof("type_spec")
        if isinstance(values, dict):
            names = st.digest_members.get(d.preamble.id) or list(values)
            for n in names:
                data.struct.members.add(bitstring=encode_value(int(values.get(n, 0))))
        elif isinstance(values, (list, tuple)) and kind == "bitstring" and len(values) == 1:
            data.bitstring = encode_value(int(values[0]))
        elif isinstance(values, (list, tuple)):
            members = data.tuple.members if kind == "tuple" else data.struct.members
            for v in values:
                members.add(bitstring=encode_value(int(v)))
        else:
            data.bitstring = encode_value(int(values))
        self.digests.offer(d.preamble.id, data)

    def _digest_config(self, digest_id: int) -> p4r.DigestEntry.Config | None:
        st = self.committed
        return st.digests.get(digest_id) if st is not None else None

    def _send_digest(self, msg: p4r.DigestList) -> None:
        sink = self.digest_sink
        if sink is not None:
            sink(msg)

    def digest_ack(self, ack: p4r.DigestListAck) -> None:
        """A controller's DigestListAck (P4RTError for an unknown digest id)."""
        st = self.committed
        if st is None or ack.digest_id not in st.index.digests:
            raise P4RTError(INVALID_ARGUMENT, f"unknown digest id {ack.digest_id}")
        self.digests.ack(ack.digest_id, ack.list_id)

    # -- idle timeouts ------------------------------------------------------

    def _idle_tables(self) -> tuple[list[tuple[int, str]], Any]:
        st = self.committed
        if st is None or st.device is None:
            return [], None
        return [(tc.id, tc.name) for tc in st.tcodec.values() if tc.idle_ok], st.device

    def _notify_idle(self, table_id: int, entries: list[Any]) -> None:
        """One IdleTimeoutNotification for entries of one table (scanner thread)."""
        sink = self.idle_sink
        if sink is None:
            return
        msg = p4r.IdleTimeoutNotification()
        with self.lock:  # controller_metadata is written under this lock
            st = self.committed
            if st is None:
                return
            tc = st.tcodec.get(table_id)
            if tc is None:
                return
            empty = p4r.TableEntry()
            for e in entries:
                tableentries.encode_entry(st, tc.table, e, empty, msg.table_entry.add())
        msg.timestamp = time.time_ns()
        sink(msg)


__all__ = ["DeviceStream", "Transmit", "PacketInSink"]
