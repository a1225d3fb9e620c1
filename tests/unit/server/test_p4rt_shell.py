"""p4runtime-shell (with `p4.*` aliased to finsy's protos) against an in-process p4switch.

One scenario, because p4runtime-shell keeps its client in module globals:
setup (pushes route.p4), insert/read/modify/delete a route, read its direct
counter after a packet, a PacketOut leaving on its port, a PacketIn sniffed,
teardown.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from google.protobuf import text_format

from p4switch.io import MemoryPorts
from p4switch.proto import alias_p4_modules
from p4switch.server import P4RuntimeServer

from .conftest import compiled, switch_factory
from .test_with_pipeline import ipv4_frame

alias_p4_modules()
sh = pytest.importorskip(
    "p4runtime_sh.shell",
    reason="p4runtime-shell is installed by `make setup` (pip install --no-deps p4runtime-shell==0.0.6)")

from p4runtime_sh.p4runtime import P4RuntimeWriteException  # noqa: E402

TABLE = "MyIngress.ipv4_route"


@pytest.fixture
def shell(tmp_path) -> Iterator[MemoryPorts]:
    info, blob = compiled("route.p4")
    (tmp_path / "p4info.txtpb").write_text(text_format.MessageToString(info))
    (tmp_path / "route.json").write_bytes(blob)
    ports = MemoryPorts([1, 2, 3])
    srv = P4RuntimeServer(device_id=1, address="127.0.0.1:0", transmit=ports.transmit, cpu_port=255,
                          factory=switch_factory).start()
    ports.start(srv.process)
    sh.setup(device_id=1, grpc_addr=f"127.0.0.1:{srv.port}", election_id=(0, 1), verbose=False,
             config=sh.FwdPipeConfig(str(tmp_path / "p4info.txtpb"), str(tmp_path / "route.json")))
    try:
        yield ports
    finally:
        sh.teardown()
        srv.stop(grace=0)


def route(port: str) -> object:
    te = sh.TableEntry(TABLE)(action="MyIngress.route")
    te.match["hdr.ipv4.dst_addr"] = "10.0.2.0/24"
    te.action["port"] = port
    te.action["dmac"] = "02:00:00:00:02:02"
    return te


def test_p4runtime_shell_drives_p4switch(shell: MemoryPorts) -> None:
    """setup, entries, counters, packet-out and packet-in all work through p4runtime-shell."""
    ports = shell
    route("2").insert()
    got = list(sh.TableEntry(TABLE).read())
    assert len(got) == 1 and got[0].action["port"].value == b"\x02"

    with pytest.raises(P4RuntimeWriteException) as e:  # duplicate insert
        route("2").insert()
    assert "ALREADY_EXISTS" in str(e.value)

    ports.inject(1, ipv4_frame())
    assert ports.wait_sent(2) is not None
    dc = sh.DirectCounterEntry("MyIngress.route_counter")
    dc.table_entry = route("2")
    counted = list(dc.read())
    assert counted[0].packet_count == 1 and counted[0].byte_count == len(ipv4_frame())

    route("3").modify()
    assert list(sh.TableEntry(TABLE).read())[0].action["port"].value == b"\x03"
    ports.inject(1, ipv4_frame())
    assert ports.wait_sent(3) is not None

    sh.PacketOut(payload=ipv4_frame(), egress_port="1", _pad="0").send()
    assert ports.wait_sent(1) == ipv4_frame()

    packet_in = sh.PacketIn()
    arp = bytes.fromhex("ffffffffffff020000000101" "0806") + bytes(28)
    ports.inject(3, arp)
    msgs = list(packet_in.sniff(timeout=0.5))
    assert msgs and msgs[0].packet.payload == arp
    assert msgs[0].packet.metadata[0].value == b"\x03"

    route("3").delete()
    assert list(sh.TableEntry(TABLE).read()) == []
    assert "p4.v1.p4runtime_pb2" in sys.modules
