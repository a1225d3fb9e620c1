"""Tests for topologies.nodes: target registry and the switch command lines."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from topologies.nodes import (
    SWITCH_CLASSES,
    Bmv2SwitchNode,
    P4SwitchNode,
    resolve_target,
    target_missing,
)


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


@pytest.fixture
def node_factory():
    made = []

    def make(cls, **kw):
        node = cls("rtsw1", device_id=3, grpc_port=50003, cpu_port=255, thrift_port=9092, **kw)
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
