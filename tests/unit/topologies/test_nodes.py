"""Tests for topologies.nodes: target registry and the switch command lines."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from topologies.addressing import plan_addresses
from topologies.nodes import SWITCH_CLASSES, Bmv2SwitchNode, P4SwitchNode
from topologies.ports import switch_settings
from topologies.spec import parse_spec
from topologies.switchproc import SwitchRecord
from topologies.targets import resolve_target, target_missing

# rtsw1 of one rack of two one-NIC hosts at 12.5 Mb/s under a CTSW at 20 Mb/s,
# the uplink tier without PFC and with a 100-packet queue.
SETTINGS = switch_settings(plan_addresses(parse_spec({
    "racks": [{"hosts": 2}], "ctsws": 1,
    "links": {"host": {"rate_mbps": 12.5},
              "rtsw_ctsw": {"rate_mbps": 20, "queue": 100, "pfc": {"enabled": False}}}})), "rtsw1")


def fake_tools(tmp_path: Path, *names: str) -> str:
    for name in names:
        path = tmp_path / name
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(tmp_path)


def test_registry_maps_names_to_classes() -> None:
    """The targets the CLI offers are the registry's keys."""
    assert SWITCH_CLASSES == {"p4switch": P4SwitchNode, "bmv2": Bmv2SwitchNode}


def test_auto_is_bmv2_only_with_both_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """auto -> bmv2 when simple_switch_grpc and p4c-bm2-ss are on PATH, else p4switch."""
    monkeypatch.setenv("PATH", fake_tools(tmp_path, "simple_switch_grpc"))
    assert resolve_target("auto") == "p4switch"
    assert target_missing("bmv2") == ["p4c-bm2-ss"]
    fake_tools(tmp_path, "p4c-bm2-ss")
    assert resolve_target("auto") == "bmv2"


def test_unknown_target_is_a_value_error() -> None:
    """A name outside the registry is refused."""
    with pytest.raises(ValueError, match="unknown target"):
        resolve_target("tofino")


def test_bmv2_queue_settings_are_depth_and_roce_frame_rate_per_port() -> None:
    """Rates in 1,082-B RoCE frames, rounded up: 12.5 Mb/s / (8 x 1082) = 1,444.1 -> 1,445
    frames/s, 20 Mb/s = 2,310.5 -> 2,311; depths 64, 64, 100; the host ports have PFC on class 3 (the uplink
    tier turns it off), so their queue 3, queue 0 (where the program holds paused
    packets) and queue 1 (the drain lane: the lowest queue no class uses, classes being 3
    and 7) get 1,024 packets of headroom, and the drain lane 2 x 1,445 = 2,890 frames/s."""
    assert Bmv2SwitchNode.cli_commands(SETTINGS) == [
        "set_queue_depth 64 1", "set_queue_depth 1024 1 0", "set_queue_depth 1024 1 1",
        "set_queue_depth 1024 1 3", "set_queue_rate 1445 1", "set_queue_rate 2890 1 1",
        "set_queue_depth 64 2", "set_queue_depth 1024 2 0", "set_queue_depth 1024 2 1",
        "set_queue_depth 1024 2 3", "set_queue_rate 1445 2", "set_queue_rate 2890 2 1",
        "set_queue_depth 100 3", "set_queue_rate 2311 3",
    ]


def test_switch_record_round_trips_through_json() -> None:
    """What run.json keeps of a switch reads back equal, settings included."""
    rec = SwitchRecord(name="rtsw1", role="rtsw", target="p4switch", argv=["p4switch", "--no-p4"],
                       grpc_port=50001, device_id=1, thrift_port=9090, ctl_port=52001,
                       log="/tmp/rtsw1.log", settings=SETTINGS.to_json(), token="t", pid=42,
                       start="100")
    data = rec.to_json()
    assert data["grpc_addr"] == "127.0.0.1:50001"
    assert SwitchRecord.from_json(data) == rec
    assert rec.switch_settings == SETTINGS


@pytest.fixture
def node_factory():
    made = []

    def make(cls, **kw):
        node = cls(f"rtsw{len(made) + 1}", device_id=3, grpc_port=50003, cpu_port=255,
                   thrift_port=9092, **kw)
        made.append(node)
        return node

    yield make
    for node in made:
        node.terminate()


@pytest.mark.skipif(os.geteuid() != 0, reason="Mininet nodes need root")
def test_p4switch_command_mirrors_simple_switch_grpc(node_factory) -> None:
    """p4switch gets --no-p4, device id, gRPC address and CPU port like simple_switch_grpc."""
    node = node_factory(P4SwitchNode)
    assert node.command() == [sys.executable, "-m", "p4switch", "--no-p4", "--device-id", "3",
                              "--grpc-server-addr", "127.0.0.1:50003", "--cpu-port", "255"]


@pytest.mark.skipif(os.geteuid() != 0, reason="Mininet nodes need root")
def test_bmv2_command_puts_target_options_after_dashes(node_factory) -> None:
    """simple_switch_grpc: own Thrift port; gRPC and CPU port options after `--`."""
    node = node_factory(Bmv2SwitchNode, json_path="/b/rtsw.json", log_console=True)
    assert node.command() == ["simple_switch_grpc", "/b/rtsw.json", "--device-id", "3",
                              "--thrift-port", "9092", "--log-console", "--",
                              "--grpc-server-addr", "127.0.0.1:50003", "--cpu-port", "255"]


@pytest.mark.skipif(os.geteuid() != 0, reason="Mininet nodes need root")
def test_p4switch_with_the_programs_pfc_gets_no_pfc_flag(node_factory) -> None:
    """native_pfc=False: per port Gb/s speed and queue depth, the ctl address, no --pfc."""
    node = node_factory(P4SwitchNode, settings=SETTINGS, ctl_port=52003, native_pfc=False)
    assert node.settings_args() == [
        "--priority-queues", "8",
        "--port-speed", "1=0.0125", "--queue-depth", "1=64",
        "--port-speed", "2=0.0125", "--queue-depth", "2=64",
        "--port-speed", "3=0.02", "--queue-depth", "3=100",
        "--ctl-addr", "127.0.0.1:52003",
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="Mininet nodes need root")
def test_p4switch_native_pfc_is_the_default_and_adds_its_classes(node_factory) -> None:
    """By default the traffic manager's PFC: --pfc PORT=CLASSES where the tier has PFC."""
    node = node_factory(P4SwitchNode, settings=SETTINGS, ctl_port=52003)
    assert node.settings_args() == [
        "--priority-queues", "8",
        "--port-speed", "1=0.0125", "--queue-depth", "1=64", "--pfc", "1=3",
        "--port-speed", "2=0.0125", "--queue-depth", "2=64", "--pfc", "2=3",
        "--port-speed", "3=0.02", "--queue-depth", "3=100",
        "--ctl-addr", "127.0.0.1:52003",
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="Mininet nodes need root")
def test_p4switch_with_a_buffer_in_bytes_gets_depths_in_bytes_and_its_pool(node_factory) -> None:
    """`buffer: {accounting: bytes, shared_mb: 2, alpha: 0.5}`: --buffer-unit bytes, the
    pool as --shared-buffer BYTES:ALPHA, each queue in bytes: 64 RoCE frames x 1,082 =
    69,248 B, 100 x 1,082 = 108,200 B."""
    settings = switch_settings(plan_addresses(parse_spec({
        "racks": [{"hosts": 2}], "ctsws": 1,
        "buffer": {"accounting": "bytes", "shared_mb": 2, "alpha": 0.5},
        "links": {"host": {"rate_mbps": 12.5},
                  "rtsw_ctsw": {"rate_mbps": 20, "queue": 100, "pfc": {"enabled": False}}}})),
        "rtsw1")
    node = node_factory(P4SwitchNode, settings=settings, ctl_port=52003)
    assert node.settings_args() == [
        "--priority-queues", "8", "--buffer-unit", "bytes", "--shared-buffer", "2000000:0.5",
        "--port-speed", "1=0.0125", "--queue-depth", "1=69248", "--pfc", "1=3",
        "--port-speed", "2=0.0125", "--queue-depth", "2=69248", "--pfc", "2=3",
        "--port-speed", "3=0.02", "--queue-depth", "3=108200",
        "--ctl-addr", "127.0.0.1:52003",
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="Mininet nodes need root")
def test_bmv2_gets_priority_queues_after_dashes(node_factory) -> None:
    """simple_switch_grpc: --priority-queues 8 is a target option (after `--`)."""
    node = node_factory(Bmv2SwitchNode, settings=SETTINGS)
    assert node.command()[-2:] == ["--priority-queues", "8"]
    assert node.command().index("--") < node.command().index("--priority-queues")



def test_bmv2_paces_jumbo_links_in_their_4_kib_frames() -> None:
    """A port whose links carry 4,154-byte RoCE frames (`mtu: 9000`): 20 Mb/s is
    20e6 / (8 x 4,154) = 601.8 -> 602 frames a second, not 2,311."""
    jumbo = replace(SETTINGS, ports=tuple(replace(p, frame=4154) for p in SETTINGS.ports))
    assert Bmv2SwitchNode.cli_commands(jumbo)[-2:] == ["set_queue_depth 100 3",
                                                       "set_queue_rate 602 3"]
