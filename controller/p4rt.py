"""A P4Runtime client session to one switch (synchronous gRPC, one stream thread).

`SwitchSession(name, address, device_id)` opens a channel; `open()` starts
the StreamChannel and sends a MasterArbitrationUpdate with the election id
(primary when no other controller holds a higher one), `set_pipeline()`
pushes P4Info + device config with VERIFY_AND_COMMIT, `write()` sends
batched updates and unpacks a failure into a `WriteError` listing each
failed update (index, canonical code, message), `read()` streams entities
back, `read_counters()` reads an indexed counter by name. Reads need no
stream, so `open(primary=False)` gives a read-only observer (`aizone
status` uses that while `aizone up` holds the primary session).

Names defined here: `SwitchSession`, `CounterValue`, `INSERT`, `MODIFY`,
`DELETE`.
"""

from __future__ import annotations

import hashlib
import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from .entities import Entity, decode_entity, describe, encode_entity
from .errors import P4RuntimeError, UpdateError, WriteError
from .p4info import P4Schema
from .proto import p4i, p4r, p4r_grpc, rpc_code, rpc_status

__all__ = ["DELETE", "INSERT", "MODIFY", "CounterValue", "SwitchSession"]

INSERT = p4r.Update.INSERT
MODIFY = p4r.Update.MODIFY
DELETE = p4r.Update.DELETE
_TYPE_NAMES = {INSERT: "INSERT", MODIFY: "MODIFY", DELETE: "DELETE"}
BATCH = 256


@dataclass(frozen=True, kw_only=True)
class CounterValue:
    index: int
    packets: int
    bytes: int


def _code_name(code: int) -> str:
    try:
        return rpc_code.Code.Name(code)
    except ValueError:
        return str(code)


def _rpc_error(name: str, what: str, err: grpc.RpcError) -> P4RuntimeError:
    code = err.code() if hasattr(err, "code") else None
    code_name = code.name if code is not None else "UNKNOWN"
    details = err.details() if hasattr(err, "details") else str(err)
    return P4RuntimeError(f"{name}: {what} failed: {code_name}: {details}", code_name)


class SwitchSession:
    """One controller session to one switch (see the module docstring)."""

    def __init__(self, name: str, address: str, device_id: int, *, election_id: int = 1,
                 timeout: float = 10.0) -> None:
        self.name = name
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.timeout = timeout
        self.schema: P4Schema | None = None
        self.primary = False
        self._channel: grpc.Channel | None = None
        self._stub: Any = None
        self._requests: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self._arbitration: queue.Queue[Any] = queue.Queue()
        self._stream: Any = None
        self._reader: threading.Thread | None = None

    # --- connection --------------------------------------------------------

    def open(self, *, primary: bool = True) -> SwitchSession:
        """Connect; with `primary`, start the stream and win the arbitration."""
        self._channel = grpc.insecure_channel(self.address)
        try:
            grpc.channel_ready_future(self._channel).result(timeout=self.timeout)
        except grpc.FutureTimeoutError:
            self.close()
            raise P4RuntimeError(
                f"{self.name}: no P4Runtime server at {self.address} (is the switch running?)",
                "UNAVAILABLE") from None
        self._stub = p4r_grpc.P4RuntimeStub(self._channel)
        if primary:
            self._start_stream()
        return self

    def _uint128(self) -> p4r.Uint128:
        return p4r.Uint128(high=self.election_id >> 64, low=self.election_id & (2**64 - 1))

    def _start_stream(self) -> None:
        def requests() -> Iterator[p4r.StreamMessageRequest]:
            while True:
                item = self._requests.get()
                if item is None:
                    return
                yield item

        self._stream = self._stub.StreamChannel(requests())

        def read() -> None:
            try:
                for resp in self._stream:
                    if resp.WhichOneof("update") == "arbitration":
                        self._arbitration.put(resp.arbitration)
            except grpc.RpcError as err:
                self._arbitration.put(err)

        self._reader = threading.Thread(target=read, name=f"p4rt-{self.name}", daemon=True)
        self._reader.start()
        self._requests.put(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
            device_id=self.device_id, election_id=self._uint128())))
        try:
            got = self._arbitration.get(timeout=self.timeout)
        except queue.Empty:
            self.close()
            raise P4RuntimeError(f"{self.name}: no arbitration answer from {self.address}",
                                 "DEADLINE_EXCEEDED") from None
        if isinstance(got, grpc.RpcError):
            self.close()
            raise _rpc_error(self.name, "StreamChannel", got)
        if got.status.code != rpc_code.OK:
            self.close()
            raise P4RuntimeError(
                f"{self.name}: not primary (election id {self.election_id}): another controller "
                f"holds the switch ({_code_name(got.status.code)}: {got.status.message})",
                "ALREADY_EXISTS" if got.status.code == rpc_code.ALREADY_EXISTS else "UNKNOWN")
        self.primary = True

    def close(self) -> None:
        self._requests.put(None)
        if self._stream is not None:
            self._stream.cancel()
            self._stream = None
        if self._reader is not None:
            self._reader.join(timeout=2)
            self._reader = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        self.primary = False

    def __enter__(self) -> SwitchSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- pipeline ----------------------------------------------------------

    def set_pipeline(self, p4info: p4i.P4Info, device_config: bytes) -> None:
        """Push P4Info + device config (VERIFY_AND_COMMIT); the session's schema follows."""
        cookie = int.from_bytes(hashlib.sha256(device_config).digest()[:8], "big")
        req = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=self._uint128(),
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
            config=p4r.ForwardingPipelineConfig(p4info=p4info, p4_device_config=device_config,
                                                cookie=p4r.ForwardingPipelineConfig.Cookie(
                                                    cookie=cookie)))
        try:
            self._stub.SetForwardingPipelineConfig(req, timeout=max(self.timeout, 60))
        except grpc.RpcError as err:
            raise _rpc_error(self.name, "SetForwardingPipelineConfig", err) from None
        self.schema = P4Schema(p4info)

    def get_p4info(self) -> p4i.P4Info:
        """The P4Info the switch runs (and make it this session's schema)."""
        req = p4r.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        try:
            resp = self._stub.GetForwardingPipelineConfig(req, timeout=self.timeout)
        except grpc.RpcError as err:
            raise _rpc_error(self.name, "GetForwardingPipelineConfig", err) from None
        self.schema = P4Schema(resp.config.p4info)
        return resp.config.p4info

    def _need_schema(self) -> P4Schema:
        if self.schema is None:
            self.get_p4info()
        assert self.schema is not None
        return self.schema

    # --- write -------------------------------------------------------------

    def write(self, entities: Sequence[Entity], update: p4r.Update.Type.ValueType = INSERT) -> None:
        """Write `entities` with one update type, in batches; raises `WriteError`."""
        schema = self._need_schema()
        for start in range(0, len(entities), BATCH):
            chunk = entities[start:start + BATCH]
            updates = []
            for e in chunk:
                u_type = MODIFY if getattr(e, "is_default", False) else update
                updates.append(p4r.Update(type=u_type, entity=encode_entity(schema, e)))
            self.write_updates(updates, what=[describe(e) for e in chunk], first_index=start)

    def write_updates(self, updates: list[p4r.Update], *, what: list[str] | None = None,
                      first_index: int = 0) -> None:
        """Send raw updates in one WriteRequest; raises `WriteError` per failed update."""
        req = p4r.WriteRequest(device_id=self.device_id, election_id=self._uint128(),
                               updates=updates,
                               atomicity=p4r.WriteRequest.CONTINUE_ON_ERROR)
        try:
            self._stub.Write(req, timeout=self.timeout)
        except grpc.RpcError as err:
            raise self._write_error(err, updates, what, first_index) from None

    def _write_error(self, err: grpc.RpcError, updates: list[p4r.Update],
                     what: list[str] | None, first_index: int) -> P4RuntimeError:
        code = err.code().name if hasattr(err, "code") and err.code() else "UNKNOWN"
        status = None
        for key, value in (err.trailing_metadata() or ()) if hasattr(
                err, "trailing_metadata") else ():
            if key == "grpc-status-details-bin":
                status = rpc_status.Status()
                status.ParseFromString(value)
        if status is None or not status.details:
            return WriteError(self.name, len(updates), [UpdateError(
                index=first_index, code=code, message=err.details() or "",
                what="(whole batch)")], code)
        errors = []
        for i, detail in enumerate(status.details):
            perr = p4r.Error()
            detail.Unpack(perr)
            if perr.canonical_code == rpc_code.OK:
                continue
            label = ""
            if i < len(updates):
                label = _TYPE_NAMES.get(updates[i].type, "?")
                if what and i < len(what):
                    label += " " + what[i]
            errors.append(UpdateError(index=first_index + i, code=_code_name(perr.canonical_code),
                                      message=perr.message, what=label))
        return WriteError(self.name, len(updates), errors, code)

    def insert(self, entities: Sequence[Entity]) -> None:
        self.write(entities, INSERT)

    def modify(self, entities: Sequence[Entity]) -> None:
        self.write(entities, MODIFY)

    def delete(self, entities: Sequence[Entity]) -> None:
        self.write(entities, DELETE)

    # --- read --------------------------------------------------------------

    def read_raw(self, entities: Iterable[p4r.Entity]) -> list[p4r.Entity]:
        req = p4r.ReadRequest(device_id=self.device_id, entities=list(entities))
        out: list[p4r.Entity] = []
        try:
            for resp in self._stub.Read(req, timeout=self.timeout):
                out.extend(resp.entities)
        except grpc.RpcError as err:
            raise _rpc_error(self.name, "Read", err) from None
        return out

    def read_table(self, table: str) -> list[Entity]:
        """Every (non-default) entry of a table, decoded."""
        schema = self._need_schema()
        ent = p4r.Entity(table_entry=p4r.TableEntry(table_id=schema.table_id(table)))
        return [decode_entity(schema, e) for e in self.read_raw([ent])]

    def read_default(self, table: str) -> Entity | None:
        schema = self._need_schema()
        ent = p4r.Entity(table_entry=p4r.TableEntry(table_id=schema.table_id(table),
                                                    is_default_action=True))
        got = self.read_raw([ent])
        return decode_entity(schema, got[0]) if got else None

    def read_members(self, profile: str) -> list[Entity]:
        schema = self._need_schema()
        ent = p4r.Entity(action_profile_member=p4r.ActionProfileMember(
            action_profile_id=schema.action_profile_id(profile)))
        return [decode_entity(schema, e) for e in self.read_raw([ent])]

    def read_groups(self, profile: str) -> list[Entity]:
        schema = self._need_schema()
        ent = p4r.Entity(action_profile_group=p4r.ActionProfileGroup(
            action_profile_id=schema.action_profile_id(profile)))
        return [decode_entity(schema, e) for e in self.read_raw([ent])]

    def read_counters(self, counter: str, index: int | None = None) -> dict[int, CounterValue]:
        """An indexed counter's cells by index (all cells, or just `index`)."""
        schema = self._need_schema()
        entry = p4r.CounterEntry(counter_id=schema.counter_id(counter))
        if index is not None:
            entry.index.index = index
        out: dict[int, CounterValue] = {}
        for e in self.read_raw([p4r.Entity(counter_entry=entry)]):
            ce = e.counter_entry
            out[ce.index.index] = CounterValue(index=ce.index.index, packets=ce.data.packet_count,
                                               bytes=ce.data.byte_count)
        return out
