"""The gRPC transports: the native one is built and serves; both behave alike at the edges.

The RPC semantics are tested (on both transports) by test_service,
test_arbitration and test_tls; here: what belongs to the transport itself
(malformed bytes, unknown methods, big batches and reads off the gRPC
threads, concurrent clients, shutdown with open streams, interpreter exit).
"""

from __future__ import annotations

import gc
import os
import queue
import subprocess
import sys
import threading
import time
import weakref

import grpc
import pytest
from google.protobuf import any_pb2

from p4switch.proto import p4r
from p4switch.server import P4RuntimeServer
from p4switch.server.runtime import READ_CHUNK
from p4switch.server.transport import INLINE_UPDATES, native_available

from .conftest import DEVICE_ID, TRANSPORTS, Client, each_transport, update, write_errors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LPM_TABLE, SET_NHOP = 0x02000001, 0x01000001


transport = pytest.fixture(params=TRANSPORTS)(each_transport)


def route(i: int, port: int = 1) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=LPM_TABLE)
    fm = te.match.add(field_id=1)
    fm.lpm.value, fm.lpm.prefix_len = (0x0A000000 + (i << 8)).to_bytes(4, "big"), 24
    te.action.action.action_id = SET_NHOP
    te.action.action.params.add(param_id=1, value=port.to_bytes(2, "big"))
    te.action.action.params.add(param_id=2, value=(0x020000000000 + i).to_bytes(6, "big"))
    return te


def run_child(*lines: str) -> subprocess.CompletedProcess:
    """Run Python `lines` in a child process from the project root (a crash there fails only it)."""
    code = "\n".join((f"import sys; sys.path.insert(0, {ROOT!r})", *lines))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_native_transport_is_built() -> None:
    """The install built the C++ transport (libgrpc++-dev and pkg-config are set up by `make`)."""
    assert native_available() == "", f"native gRPC transport not built: {native_available()}"
    srv = P4RuntimeServer(address="127.0.0.1:0")
    try:
        assert srv.transport == "NativeTransport"
    finally:
        srv.stop(grace=0)


def test_unknown_method_is_unimplemented(client: Client) -> None:
    """A method the service does not have gets UNIMPLEMENTED."""
    call = client.channel.unary_unary("/p4.v1.P4Runtime/NoSuchMethod")
    with pytest.raises(grpc.RpcError) as e:
        call(b"", timeout=5)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_malformed_request_is_refused_and_server_keeps_serving(client: Client) -> None:
    """Bytes that are not a WriteRequest fail the call (no crash); the next call is answered."""
    call = client.channel.unary_unary("/p4.v1.P4Runtime/Write")
    with pytest.raises(grpc.RpcError) as e:
        call(b"\xff\xff\xff\xff", timeout=5)
    assert e.value.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.INTERNAL)
    assert client.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5).p4runtime_api_version


def test_big_batch_and_read_across_chunks(primary: Client) -> None:
    """A batch bigger than what runs inline, with a failure inside, then a read of several chunks."""
    n = max(INLINE_UPDATES * 2, 300)
    updates = [update("INSERT", table_entry=route(i)) for i in range(n)]
    updates[n // 2] = update("DELETE", table_entry=route(n + 5))  # not there: NOT_FOUND
    with pytest.raises(grpc.RpcError) as e:
        primary.write(*updates)
    codes = [x.canonical_code for x in write_errors(e.value)]
    assert len(codes) == n and codes[n // 2] == grpc.StatusCode.NOT_FOUND.value[0]
    assert codes.count(0) == n - 1
    rest = [update("INSERT", table_entry=route(i)) for i in range(n, 1000)]
    primary.write(*rest)
    responses = list(primary.stub.Read(p4r.ReadRequest(
        device_id=DEVICE_ID, entities=[p4r.Entity(table_entry=p4r.TableEntry(table_id=LPM_TABLE))])))
    got = [e.table_entry for r in responses for e in r.entities]
    assert len(got) == 999
    assert len(responses) >= 999 // READ_CHUNK
    assert {bytes(t.match[0].lpm.value) for t in got} == {route(i).match[0].lpm.value
                                                          for i in range(1000) if i != n // 2}


def test_concurrent_writers_from_several_connections(primary: Client, server: P4RuntimeServer) -> None:
    """Four connections writing one update per request at once: every write lands exactly once."""
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        c = Client(f"127.0.0.1:{server.port}")
        try:
            for i in range(k * 100, k * 100 + 100):
                c.write(update("INSERT", table_entry=route(i)))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    got = primary.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=LPM_TABLE)))
    assert len(got) == 400


def test_stop_ends_open_streams(client: Client, server: P4RuntimeServer) -> None:
    """Stopping the server ends a controller's StreamChannel (the client sees the stream end)."""
    s = client.stream(10)
    server.stop(grace=0)
    assert s.done.wait(5)


@pytest.mark.parametrize("transport", ["native"])
def test_exit_with_a_live_server_is_clean(transport: str) -> None:
    """A process that exits without stopping its server (and with a stream open) exits 0, no crash."""
    proc = run_child(
        "from p4switch.server import P4RuntimeServer",
        "from tests.unit.server.conftest import Client",
        f"srv = P4RuntimeServer(device_id=1, address='127.0.0.1:0', transport={transport!r})",
        "c = Client(f'127.0.0.1:{srv.port}'); c.stream(10)",
        "print('up', flush=True)",
    )
    assert proc.stdout.strip() == "up"
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_unary_call_without_a_request_is_refused(client: Client, transport: str) -> None:
    """A unary method whose client half-closes without sending a request fails (nothing runs)."""
    call = client.channel.stream_stream("/p4.v1.P4Runtime/Capabilities")
    with pytest.raises(grpc.RpcError) as e:
        list(call(iter(()), timeout=5))
    assert e.value.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNIMPLEMENTED)


def test_malformed_stream_message_after_many_answers_ends_only_that_stream(client: Client) -> None:
    """Many stream messages that each get a StreamError back, then bytes that are no message:
    that stream ends with an error, promptly, and the server goes on serving."""
    bidi = client.channel.stream_stream("/p4.v1.P4Runtime/StreamChannel")
    other = p4r.StreamMessageRequest(other=any_pb2.Any(type_url="x")).SerializeToString()
    outcomes: list[object] = []

    def one() -> None:
        def requests():
            yield from [other] * 200
            yield b"\xff\xff\xff"
        try:
            outcomes.append(sum(1 for _ in bidi(requests(), timeout=20)))
        except grpc.RpcError as e:
            outcomes.append(e.code())

    threads = [threading.Thread(target=one, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a stream never ended"
    assert all(o in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.INTERNAL) for o in outcomes), outcomes
    assert client.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5).p4runtime_api_version


def test_writes_wait_off_the_grpc_threads_while_the_device_is_busy(primary: Client, server: P4RuntimeServer) -> None:
    """While the device is held (a long pipeline commit, say), queued writes do not stop the server
    from answering other calls; they complete once it is free."""
    lock = server.runtime.lock
    lock.acquire()
    results: queue.Queue = queue.Queue()
    try:
        def writer(i: int) -> None:
            try:
                primary.write(update("INSERT", table_entry=route(i)))
                results.put(None)
            except grpc.RpcError as e:
                results.put(e)

        threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(6)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        assert results.empty()  # all waiting for the device
        # answered while the device is still held (a blocked server would miss the deadline)
        assert primary.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5).p4runtime_api_version
    finally:
        lock.release()
    for t in threads:
        t.join(10)
    assert [results.get(timeout=1) for _ in range(6)] == [None] * 6
    assert len(primary.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=LPM_TABLE)))) == 6


def test_a_stopped_server_is_freed(transport: str) -> None:
    """stop() leaves nothing holding the service, the runtime or its device."""
    srv = P4RuntimeServer(device_id=1, address="127.0.0.1:0", transport=transport).start()
    c = Client(f"127.0.0.1:{srv.port}")
    c.stream(10)
    runtime = weakref.ref(srv.runtime)
    srv.stop(grace=0)
    c.close()
    del srv
    for _ in range(50):
        gc.collect()
        if runtime() is None:
            break
        time.sleep(0.05)
    assert runtime() is None


@pytest.mark.skipif(bool(native_available()), reason="native transport not built")
def test_native_stream_reading_pauses_until_resumed() -> None:
    """The raw transport: a sink answering False gets no further message until call.resume()."""
    from p4switch.server import _native  # type: ignore[attr-defined]

    got: queue.Queue = queue.Queue()
    calls: list = []

    class Sink:
        def message(self, data: bytes) -> bool:
            got.put(data)
            return False

        def closed(self) -> None:
            got.put(None)

        def done(self) -> None:
            pass

    def handler(call, data):
        calls.append(call)
        got.put(data)
        return Sink()

    server = _native.Server(handler, 1 << 20)
    port = server.start("127.0.0.1:0", None)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            requests: queue.Queue = queue.Queue()
            responses = ch.stream_stream("/x.Y/Z")(iter(requests.get, None), timeout=10)
            for m in (b"a", b"b", b"c"):
                requests.put(m)
            assert got.get(timeout=5) == b"a"  # the first message goes to the handler
            assert got.get(timeout=5) == b"b"  # the sink pauses here
            with pytest.raises(queue.Empty):
                got.get(timeout=0.5)
            assert calls[0].resume()
            assert got.get(timeout=5) == b"c"  # paused again after it
            assert calls[0].resume()
            # A resume that comes before its pause is recorded cancels that pause:
            assert calls[0].resume()  # a read is outstanding: remembered
            requests.put(b"d")
            assert got.get(timeout=5) == b"d"  # the sink asks to pause; the early resume wins
            requests.put(b"e")
            assert got.get(timeout=5) == b"e"  # so e comes without a new resume ...
            requests.put(b"f")
            with pytest.raises(queue.Empty):  # ... and after e the pause holds
                got.get(timeout=0.5)
            assert calls[0].write(b"out")
            calls[0].finish(0, "")
            assert list(responses) == [b"out"]
    finally:
        server.stop(0)


def test_without_the_extension_the_server_falls_back_to_grpcio() -> None:
    """Where the extension was not built, the default server is grpcio's, with a warning that says why."""
    proc = run_child(
        "sys.modules['p4switch.server._native'] = None  # as if never built",
        "import logging; logging.basicConfig(level=logging.WARNING)",
        "from p4switch.server import P4RuntimeServer",
        "from p4switch.server.transport import native_available",
        "from tests.unit.server.conftest import Client",
        "from p4switch.proto import p4r",
        "srv = P4RuntimeServer(device_id=1, address='127.0.0.1:0').start()",
        "c = Client(f'127.0.0.1:{srv.port}')",
        "print(srv.transport, bool(native_available()), c.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version)",
        "c.close(); srv.stop(0)",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    name, missing, version = proc.stdout.split()
    assert (name, missing) == ("GrpcioTransport", "True") and version.startswith("1.4.")
    assert "native gRPC transport is not built" in proc.stderr


@pytest.mark.skipif(bool(native_available()), reason="native transport not built")
def test_native_stop_from_two_threads_is_safe() -> None:
    """A second stop() while the first is still waiting out its grace period leaves the
    server intact for the calls it still serves (run in a child: a fault kills only it)."""
    proc = run_child(
        "import threading, time",
        "import grpc",
        "from p4switch.server import _native",
        "seen = []",
        "def handle(call, data):",
        "    seen.append(data); call.finish(0, '', b'', [b'ok'])",
        "srv = _native.Server(handle, 1 << 20); port = srv.start('127.0.0.1:0', None)",
        "ch = grpc.insecure_channel(f'127.0.0.1:{port}')",
        "def late():",
        "    time.sleep(0.6); yield b'late'",
        "calls = [ch.stream_stream('/x/U')(late()) for _ in range(4)]",
        "time.sleep(0.3)",
        "first = threading.Thread(target=srv.stop, args=(2.0,)); first.start()",
        "time.sleep(0.05); srv.stop(0); first.join()",
        "codes = []",
        "for c in calls:",
        "    try: codes.append(list(c))",
        "    except grpc.RpcError as e: codes.append(e.code().name)",
        "print(len(seen), codes)",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("4 "), proc.stdout  # the late first messages were all handled


@pytest.mark.skipif(bool(native_available()), reason="native transport not built")
def test_native_failed_start_leaves_nothing_alive() -> None:
    """A native transport that cannot bind raises ServerError and keeps nothing alive."""
    import socket

    from p4switch.server.runtime import DeviceRuntime
    from p4switch.server.service import P4RuntimeService
    from p4switch.server.transport import NativeTransport, ServerError

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        service = P4RuntimeService(DeviceRuntime(1, None))
        ref = weakref.ref(service)
        with pytest.raises(ServerError):
            NativeTransport(service, f"127.0.0.1:{taken.getsockname()[1]}", None)
        del service
        gc.collect()
        assert ref() is None
    finally:
        taken.close()
