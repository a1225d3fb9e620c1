"""SetForwardingPipelineConfig's device config, over real gRPC: checked, and bare or in PI's wrapper.

A program file whose names carry code is refused with INVALID_ARGUMENT and
the switch keeps forwarding with its previous pipeline; a program file
wrapped in `p4.tmp.P4DeviceConfig`, as the p4lang tutorials' `p4runtime_lib`
sends it, installs like a bare one, in process and in a `p4switch` process
on each gRPC transport.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from p4switch.io import MemoryPorts
from p4switch.proto import p4r
from p4switch.server.devconfig import P4DeviceConfig, program_bytes
from tests.unit.irwalk import raw_nodes

from .conftest import DEVICE_ID, TRANSPORTS, Client, load_p4info, make_program_file, p4_id, update

A = p4r.SetForwardingPipelineConfigRequest
R = p4r.GetForwardingPipelineConfigRequest
DST = b"\x02\x00\x00\x00\x00\x05"


def frame() -> bytes:
    """A unicast frame small.p4 forwards by table `mac` (dst DST)."""
    return DST + b"\x02\x00\x00\x00\x00\x09" + b"\x12\x34" + b"\x00" * 46


def mac_entry(port: int) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=p4_id("tables", "ingress.mac"))
    te.match.add(field_id=1).exact.value = DST
    te.action.action.action_id = p4_id("actions", "ingress.set_port")
    te.action.action.params.add(param_id=1, value=bytes([port]))
    return te


def get_config(client: Client) -> p4r.ForwardingPipelineConfig:
    return client.stub.GetForwardingPipelineConfig(R(device_id=DEVICE_ID, response_type=R.ALL)).config


def _header_field(doc: dict[str, Any]) -> dict[str, Any]:
    return next(h for h in raw_nodes(doc, "HeaderType") if h["name"] == "ethernet_t")["fields"][0]


TARGETS: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
    ("parser-state", lambda d: raw_nodes(d, "ParserState")[1], "name"),
    ("table", lambda d: raw_nodes(d, "Table")[0], "name"),
    ("action", lambda d: raw_nodes(d, "Action")[1], "name"),
    ("header-field", _header_field, "name"),
]


def evil_program(find: Callable[[dict[str, Any]], dict[str, Any]], field: str, marker: Path) -> bytes:
    """small.p4's program file with one name replaced by Python that creates `marker`."""
    doc = json.loads(make_program_file())
    find(doc)[field] = f"x\nimport os; os.system('touch {marker}')\n"
    return json.dumps(doc).encode()


@pytest.fixture
def installed(client: Client, ports: MemoryPorts) -> Client:
    """small.p4 committed with cookie 7 and a `mac` entry to port 3, as a controller left it."""
    client.stream(10)
    client.set_pipeline(cookie=7)
    client.write(update("INSERT", table_entry=mac_entry(3)))
    return client


def assert_old_pipeline_in_force(client: Client, ports: MemoryPorts) -> None:
    cfg = get_config(client)
    assert cfg.cookie.cookie == 7 and cfg.p4_device_config == make_program_file()
    read = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=mac_entry(3).table_id)))
    assert [e.table_entry for e in read] == [mac_entry(3)]
    ports.inject(1, frame())
    assert ports.wait_sent(3) == frame()


@pytest.mark.parametrize("what,find,field", TARGETS, ids=[t[0] for t in TARGETS])
@pytest.mark.parametrize("wrapped", [False, True], ids=["bare", "in-p4deviceconfig"])
def test_program_file_with_code_in_a_name_is_refused_and_old_pipeline_stays(
        installed: Client, ports: MemoryPorts, tmp_path: Path, what, find, field, wrapped) -> None:
    """INVALID_ARGUMENT naming the field; nothing runs; the previous config still forwards."""
    marker = tmp_path / f"PWNED_{secrets.token_hex(8)}"
    blob = evil_program(find, field, marker)
    if wrapped:
        blob = P4DeviceConfig(reassign=True, device_data=blob).SerializeToString()
    with pytest.raises(grpc.RpcError) as e:
        installed.set_pipeline(p4info=load_p4info(), device_config=blob, cookie=8)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = e.value.details() or ""
    assert details.startswith("device config: invalid program file: program.")
    assert f".{field}: " in details and "is not a P4 identifier" in details
    assert not marker.exists()
    assert_old_pipeline_in_force(installed, ports)


def test_p4deviceconfig_has_pi_wire_format() -> None:
    """reassign (field 1, varint) and device_data (field 3, bytes) encode as PI's p4config.proto does."""
    msg = P4DeviceConfig(reassign=True, device_data=b'{"a":1}')
    assert msg.SerializeToString() == b"\x08\x01" + b"\x1a\x07" + b'{"a":1}'
    msg.extras.kv["port"] = "9090"  # field 2: Extras { map<string, string> kv = 1 }
    assert P4DeviceConfig.FromString(msg.SerializeToString()).extras.kv == {"port": "9090"}
    assert program_bytes(msg.SerializeToString()) == b'{"a":1}'


def tutorials_set_pipeline(client: Client, json_text: str) -> bytes:
    """SetForwardingPipelineConfig as p4runtime_lib (bmv2.py / switch.py) sends it; returns the config bytes."""
    device_config = P4DeviceConfig()
    device_config.reassign = True
    device_config.device_data = json_text.encode("utf-8")
    request = p4r.SetForwardingPipelineConfigRequest()
    request.election_id.low = 1
    request.device_id = DEVICE_ID
    config = request.config
    config.p4info.CopyFrom(load_p4info())
    config.p4_device_config = device_config.SerializeToString()
    request.action = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
    client.stub.SetForwardingPipelineConfig(request)
    return config.p4_device_config


def test_config_wrapped_as_the_tutorials_do_installs_and_forwards(client: Client, ports: MemoryPorts) -> None:
    """A P4DeviceConfig(reassign=True, device_data=<program file>) is the pipeline: a table entry
    written to it forwards a frame and reads back; Get answers the bytes as they were set."""
    client.stream(1)
    client.election_id = 1
    sent = tutorials_set_pipeline(client, make_program_file().decode())
    client.write(update("INSERT", table_entry=mac_entry(2)))
    ports.inject(1, frame())
    assert ports.wait_sent(2) == frame()
    read = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=mac_entry(2).table_id)))
    assert [e.table_entry for e in read] == [mac_entry(2)]
    assert get_config(client).p4_device_config == sent


@pytest.mark.parametrize("blob,needle", [
    (P4DeviceConfig(reassign=True).SerializeToString(), "a p4.tmp.P4DeviceConfig without device_data"),
    (P4DeviceConfig(device_data=b"\x08\x01\x1a\x02{}").SerializeToString(),
     "the device_data of its p4.tmp.P4DeviceConfig is not JSON"),
    (b"\xff\xff\xff\xff", "neither JSON nor a p4.tmp.P4DeviceConfig holding one"),
    (b"  {not json", "not a p4switch program file (bad JSON"),
], ids=["wrapper-without-data", "wrapper-of-a-wrapper", "garbage", "bad-json"])
def test_device_config_of_another_kind_is_refused_with_the_reason(
        installed: Client, ports: MemoryPorts, blob: bytes, needle: str) -> None:
    """Neither a program file nor a P4DeviceConfig holding one: INVALID_ARGUMENT saying which."""
    with pytest.raises(grpc.RpcError) as e:
        installed.set_pipeline(device_config=blob)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (e.value.details() or "").startswith("device config: ") and needle in (e.value.details() or "")
    assert_old_pipeline_in_force(installed, ports)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_p4switch_process_takes_the_tutorials_device_config(transport: str) -> None:
    """`p4switch --no-p4` as simple_switch_grpc is started: the tutorials' SetForwardingPipelineConfig
    (P4DeviceConfig around the program file) installs; an entry written reads back; Get answers it."""
    addr = f"127.0.0.1:{_free_port()}"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    proc = subprocess.Popen([sys.executable, "-m", "p4switch", "--no-p4", "--device-id", str(DEVICE_ID),
                             "--grpc-server-addr", addr, "--grpc-transport", transport],
                            cwd=root, stderr=subprocess.PIPE, text=True)
    client = Client(addr)
    try:
        deadline = time.monotonic() + 15
        while True:  # wait for the server to answer, as the tutorials' scripts do
            try:
                client.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=1)
                break
            except grpc.RpcError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr and proc.stderr.read()
                time.sleep(0.2)
        client.stream(1)
        client.election_id = 1
        sent = tutorials_set_pipeline(client, make_program_file().decode())
        client.write(update("INSERT", table_entry=mac_entry(4)))
        read = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=mac_entry(4).table_id)))
        assert [e.table_entry for e in read] == [mac_entry(4)]
        assert get_config(client).p4_device_config == sent
    finally:
        client.close()
        proc.terminate()
        assert proc.wait(10) == 0
