"""The p4switch-ctl JSON API: port stats and traffic manager settings."""

from __future__ import annotations

import pytest

from p4switch.ctl import CtlError, CtlServer, request
from p4switch.io import MemoryPorts
from p4switch.server import P4RuntimeServer

from .conftest import Client


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


def test_settings_reach_the_pipeline(ctl) -> None:
    """Port speed, queue depth/rate and PFC settings change the running traffic manager."""
    addr, dev = ctl
    assert request(addr, {"cmd": "set_port_speed", "port": 1, "gbps": 25}) == {"ok": True}
    assert request(addr, {"cmd": "set_queue_depth", "port": 1, "depth": 16, "priority": 2}) == {"ok": True}
    assert request(addr, {"cmd": "set_queue_rate", "port": 3, "pps": 500}) == {"ok": True}
    assert request(addr, {"cmd": "set_pfc", "port": 2, "priorities": [3], "xoff": 40}) == {"ok": True}
    settings = dev.tm.settings
    assert settings.speed_of(1) == 25e9 and settings.depth_of(1, 2) == 16
    assert settings.rate_of(3, 0) == 500
    pfc = settings.pfc_of(2)
    assert pfc.priorities == {3} and pfc.xoff == 40
    reply = request(addr, {"cmd": "tm"})
    assert reply["ok"] and "queues" in reply["tm"]


@pytest.mark.parametrize("req,needle", [
    ({"cmd": "reboot"}, "unknown command"),
    ({"cmd": "set_queue_rate", "pps": 5}, "'port' is required"),
    ({"cmd": "set_pfc", "port": 2, "priorities": [9]}, "0..7"),
    ({"cmd": "set_port_speed", "gbps": 5, "speed": 1}, "unknown field"),
], ids=["unknown-command", "no-port", "pfc-priority-out-of-range", "unknown-field"])
def test_bad_requests_answer_errors(ctl, req, needle) -> None:
    """Errors are answered, never raised."""
    reply = request(ctl[0], req)
    assert not reply["ok"] and needle in reply["error"]


def test_ctl_refuses_non_loopback_address() -> None:
    """The control API only listens on loopback."""
    with pytest.raises(CtlError):
        CtlServer("0.0.0.0:0", None, None)


def test_pfc_thresholds_and_watchdog_reach_the_pipeline(ctl) -> None:
    """set_pfc_thresholds and set_pfc_watchdog change the running traffic manager."""
    addr, dev = ctl
    assert request(addr, {"cmd": "set_pfc", "port": 1, "priorities": [3]}) == {"ok": True}
    assert request(addr, {"cmd": "set_pfc_thresholds", "port": 1, "priority": 3,
                          "xoff": 30, "xon": 10}) == {"ok": True}
    assert request(addr, {"cmd": "set_pfc_watchdog", "port": 1, "priorities": [3], "detection_ms": 100,
                          "restoration_ms": 300, "action": "forward"}) == {"ok": True}
    settings = dev.tm.settings
    assert settings.thresholds[(1, 3)] == (30, 10)
    wd = settings.watchdog_of(1, 3)
    assert (wd.detection_s, wd.restoration_s, wd.action) == (0.1, 0.3, "forward")
    assert request(addr, {"cmd": "set_pfc_watchdog", "port": 1, "priorities": []}) == {"ok": True}
    assert settings.watchdog_of(1, 3) is None


@pytest.mark.parametrize("req,needle", [
    ({"cmd": "set_pfc_thresholds", "port": 1, "priority": 3, "xoff": 10}, "'xon' is required"),
    ({"cmd": "set_pfc_thresholds", "port": 1, "priority": 3, "xoff": 5, "xon": 9}, "xon < xoff"),
    ({"cmd": "set_pfc_watchdog", "port": 1}, "'priorities' is required"),
    ({"cmd": "set_pfc_watchdog", "port": 1, "priorities": [3], "action": "reboot"}, "'drop' or 'forward'"),
], ids=["thresholds-no-xon", "thresholds-xon-above-xoff", "watchdog-no-priorities", "watchdog-bad-action"])
def test_bad_pfc_requests_answer_errors(ctl, req, needle) -> None:
    """Bad PFC threshold/watchdog requests are answered with the reason."""
    reply = request(ctl[0], req)
    assert not reply["ok"] and needle in reply["error"]
