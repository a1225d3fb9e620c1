"""The p4switch-ctl JSON API: port stats and traffic manager settings."""

from __future__ import annotations

import pytest

from p4switch.ctl import CtlError, CtlServer, request
from p4switch.io import MemoryPorts
from p4switch.server import P4RuntimeServer

from .conftest import Client


class TmDevice:
    """Stands in for a pipeline with traffic manager settings."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def set_port_speed(self, port: int, gbps: float) -> None:
        self.calls.append(("speed", port, gbps))

    def set_pfc(self, port: int, priorities: list[int], xoff=None, xon=None) -> None:
        if any(p > 7 for p in priorities):
            raise ValueError("priority must be 0..7")
        self.calls.append(("pfc", port, tuple(priorities), xoff, xon))


@pytest.fixture
def ctl(server: P4RuntimeServer, primary: Client, ports: MemoryPorts):
    srv = CtlServer("127.0.0.1:0", server.runtime, ports).start()
    yield f"127.0.0.1:{srv.address[1]}", server.runtime.committed.device
    srv.stop()


def test_ports_reports_counters(ctl, ports: MemoryPorts) -> None:
    """`ports` answers per-port rx/tx counters."""
    ports.inject(1, b"\x00" * 60)
    reply = request(ctl[0], {"cmd": "ports"})
    assert reply["ok"] and reply["ports"]["1"]["rx_packets"] == 1


def test_settings_reach_the_pipeline(ctl, monkeypatch) -> None:
    """A setting calls the pipeline method of the same name."""
    addr, dev = ctl
    tm = TmDevice()
    monkeypatch.setattr(dev, "set_port_speed", tm.set_port_speed, raising=False)
    monkeypatch.setattr(dev, "set_pfc", tm.set_pfc, raising=False)
    assert request(addr, {"cmd": "set_port_speed", "port": 1, "gbps": 25}) == {"ok": True}
    assert request(addr, {"cmd": "set_pfc", "port": 2, "priorities": [3], "xoff": 40}) == {"ok": True}
    assert tm.calls == [("speed", 1, 25), ("pfc", 2, (3,), 40, None)]
    bad = request(addr, {"cmd": "set_pfc", "port": 2, "priorities": [9]})
    assert not bad["ok"] and "0..7" in bad["error"]


@pytest.mark.parametrize("req,needle", [
    ({"cmd": "reboot"}, "unknown command"),
    ({"cmd": "set_queue_rate", "port": 1, "pps": 5}, "not supported"),
    ({"cmd": "set_port_speed", "gbps": 5, "speed": 1}, "unknown field"),
], ids=["unknown-command", "unsupported-by-pipeline", "unknown-field"])
def test_bad_requests_answer_errors(ctl, req, needle) -> None:
    """Errors are answered, never raised."""
    reply = request(ctl[0], req)
    assert not reply["ok"] and needle in reply["error"]


def test_ctl_refuses_non_loopback_address() -> None:
    """The control API only listens on loopback."""
    with pytest.raises(CtlError):
        CtlServer("0.0.0.0:0", None, None)
