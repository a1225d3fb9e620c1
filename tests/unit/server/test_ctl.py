"""The p4switch-ctl JSON API: port stats and traffic manager settings, on TCP and Unix sockets,
with bounded lines and connections and checked values."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from p4switch import ctl as ctl_module
from p4switch.ctl import MAX_CONNECTIONS, MAX_LINE, CtlError, CtlServer, request
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
    assert settings.thresholds[(1, 3)] == (30, 10, None)
    wd = settings.watchdog_of(1, 3)
    assert (wd.detection_s, wd.restoration_s, wd.action) == (0.1, 0.3, "forward")
    assert request(addr, {"cmd": "set_pfc_watchdog", "port": 1, "priorities": []}) == {"ok": True}
    assert settings.watchdog_of(1, 3) is None


def test_headroom_and_shared_buffer_reach_the_pipeline(ctl) -> None:
    """set_pfc and set_pfc_thresholds carry a headroom (thresholds without one keep set_pfc's);
    set_shared_buffer sets the pool and its alpha, and without a size takes the pool away;
    `tm` reports the buffer."""
    addr, dev = ctl
    assert request(addr, {"cmd": "set_pfc", "port": 1, "priorities": [3], "xoff": 40,
                          "xon": 20, "headroom": 25}) == {"ok": True}
    assert dev.tm.settings.pfc_for(1, 3) == (40, 20, 0xFFFF, 25)
    assert request(addr, {"cmd": "set_pfc_thresholds", "port": 1, "priority": 3,
                          "xoff": 36, "xon": 18}) == {"ok": True}
    assert dev.tm.settings.pfc_for(1, 3) == (36, 18, 0xFFFF, 25)  # set_pfc's headroom kept
    assert request(addr, {"cmd": "set_pfc_thresholds", "port": 1, "priority": 3,
                          "xoff": 30, "xon": 10, "headroom": 12}) == {"ok": True}
    assert dev.tm.settings.pfc_for(1, 3) == (30, 10, 0xFFFF, 12)
    assert request(addr, {"cmd": "set_shared_buffer", "size": 5000, "alpha": 0.5}) == {"ok": True}
    buffer = request(addr, {"cmd": "tm"})["tm"]["buffer"]
    assert (buffer["unit"], buffer["pool"], buffer["alpha"]) == ("packets", 5000, 0.5)
    assert request(addr, {"cmd": "set_shared_buffer"}) == {"ok": True}
    assert request(addr, {"cmd": "tm"})["tm"]["buffer"]["pool"] is None
    reply = request(addr, {"cmd": "set_shared_buffer", "alpha": 1})
    assert not reply["ok"] and "alpha needs a shared buffer" in reply["error"]
    reply = request(addr, {"cmd": "set_pfc", "port": 1, "priorities": [3], "headroom": -1})
    assert not reply["ok"] and "headroom" in reply["error"]


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


# ------------------------------------------------------------------ Unix socket


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    """A short directory for socket files (AF_UNIX paths hold at most 107 bytes)."""
    d = tempfile.mkdtemp(prefix="ctl", dir="/tmp")
    yield Path(d)
    shutil.rmtree(d)


def test_unix_socket_is_owner_only_serves_and_is_removed_on_stop(
        server: P4RuntimeServer, primary: Client, ports: MemoryPorts, sock_dir: Path) -> None:
    """`unix:PATH` listens on a 0600 socket file; request() speaks to it; stop() removes it."""
    path = sock_dir / "ctl.sock"
    srv = CtlServer(f"unix:{path}", server.runtime, ports).start()
    try:
        mode = os.lstat(path).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        assert srv.ctl_addr == f"unix:{path}"
        ports.inject(1, b"\x00" * 60)
        reply = request(f"unix:{path}", {"cmd": "ports"})
        assert reply["ok"] and reply["ports"]["1"]["rx_packets"] == 1
        assert request(f"unix:{path}", {"cmd": "set_port_speed", "port": 1, "gbps": 25}) == {"ok": True}
        assert server.runtime.committed.device.tm.settings.speed_of(1) == 25e9
    finally:
        srv.stop()
    assert not path.exists()


def test_unix_socket_is_never_open_to_others(monkeypatch, sock_dir: Path) -> None:
    """The socket file is created under umask 0077 (no group/other bit even before the chmod to
    0600) and the process umask is restored."""
    path = sock_dir / "ctl.sock"
    umasks: list[int] = []
    modes: list[int] = []
    real_umask, real_chmod = os.umask, os.chmod

    def spy_umask(mask: int) -> int:
        umasks.append(mask)
        return real_umask(mask)

    def spy_chmod(p, mode, *args, **kw):
        modes.append(stat.S_IMODE(os.lstat(p).st_mode))
        return real_chmod(p, mode, *args, **kw)

    before = real_umask(0o022)
    real_umask(before)
    monkeypatch.setattr(os, "umask", spy_umask)
    monkeypatch.setattr(os, "chmod", spy_chmod)
    srv = CtlServer(f"unix:{path}", None, None)
    srv.stop()
    assert umasks == [0o077, before]
    assert modes and modes[0] & 0o077 == 0
    assert not path.exists()


def test_stale_unix_socket_is_replaced(server: P4RuntimeServer, sock_dir: Path) -> None:
    """A socket file nobody listens on (a switch that died) is removed and listened on afresh."""
    path = sock_dir / "ctl.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()
    assert path.exists()
    srv = CtlServer(f"unix:{path}", server.runtime, None).start()
    try:
        assert request(f"unix:{path}", {"cmd": "ports"}) == {"ok": True, "ports": {}}
    finally:
        srv.stop()


def test_live_unix_socket_and_other_files_are_left_alone(sock_dir: Path) -> None:
    """A socket another switch listens on, or a file that is not a socket, is refused, not removed."""
    path = sock_dir / "ctl.sock"
    first = CtlServer(f"unix:{path}", None, None).start()
    try:
        with pytest.raises(CtlError, match="another process is listening on it"):
            CtlServer(f"unix:{path}", None, None)
        assert request(f"unix:{path}", {"cmd": "ports"})["ok"]
    finally:
        first.stop()
    other = sock_dir / "notes.txt"
    other.write_text("keep me")
    with pytest.raises(CtlError, match="exists and is not a socket"):
        CtlServer(f"unix:{other}", None, None)
    assert other.read_text() == "keep me"


@pytest.mark.parametrize("address,needle", [
    ("unix:", "needs a path"),
    ("127.0.0.1:http", "expected HOST:PORT"),
    ("127.0.0.1", "expected HOST:PORT"),
    ("10.0.0.1:9600", "loopback address or unix:/PATH"),
], ids=["unix-without-path", "port-not-a-number", "no-port", "not-loopback"])
def test_bad_ctl_addresses_are_refused_by_server_and_client(address, needle) -> None:
    """Both CtlServer and request() take only loopback HOST:PORT or unix:/PATH."""
    with pytest.raises(CtlError, match=needle):
        CtlServer(address, None, None)
    with pytest.raises(CtlError, match=needle):
        request(address, {"cmd": "ports"})


# ------------------------------------------------------------------ bounds


def _connect(addr: str) -> socket.socket:
    host, _, port = addr.rpartition(":")
    return socket.create_connection((host, int(port)), timeout=5)


def _read_line(s: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def ask(addr: str, line: bytes) -> dict:
    """Send one raw request line, return the decoded reply."""
    with _connect(addr) as s:
        s.sendall(line)
        return json.loads(_read_line(s))


def test_line_of_the_limit_is_served(ctl) -> None:
    """A request line of exactly MAX_LINE bytes (padded with spaces) is answered."""
    body = b'{"cmd": "ports"}'
    assert ask(ctl[0], body + b" " * (MAX_LINE - len(body)) + b"\n")["ok"]


def test_longer_line_is_refused_and_the_connection_closed(ctl) -> None:
    """One byte over MAX_LINE: an error reply, then the server closes without reading the rest."""
    with _connect(ctl[0]) as s:
        s.sendall(b'{"cmd": "ports", "pad": "' + b"a" * MAX_LINE)
        reply = json.loads(_read_line(s))
        assert reply == {"ok": False, "error": f"request line longer than {MAX_LINE} bytes"}
        assert s.recv(1) == b""  # closed after the answer


def test_connections_beyond_the_limit_are_refused(ctl) -> None:
    """With MAX_CONNECTIONS clients connected, one more is answered "too many" and closed; a slot
    freed is served again."""
    held = []
    try:
        for _ in range(MAX_CONNECTIONS):
            s = _connect(ctl[0])
            s.sendall(b'{"cmd": "ports"}\n')
            assert json.loads(_read_line(s))["ok"]  # being served: its slot is taken
            held.append(s)
        with _connect(ctl[0]) as extra:
            reply = json.loads(_read_line(extra))
            assert reply == {"ok": False, "error": f"too many connections (at most {MAX_CONNECTIONS})"}
            assert extra.recv(1) == b""
        held.pop().close()
        deadline = time.monotonic() + 5
        while True:  # the freed slot returns once its thread has seen the close
            reply = ask(ctl[0], b'{"cmd": "ports"}\n')
            if reply["ok"] or time.monotonic() > deadline:
                break
        assert reply["ok"]
    finally:
        for s in held:
            s.close()


def test_idle_connection_is_closed(ctl, monkeypatch) -> None:
    """A connection that sends nothing for IDLE_TIMEOUT seconds is closed by the switch."""
    monkeypatch.setattr(ctl_module._Handler, "timeout", 0.2)
    with _connect(ctl[0]) as s:
        start = time.monotonic()
        assert s.recv(1) == b""
        assert time.monotonic() - start < 4


# ------------------------------------------------------------------ values


@pytest.mark.parametrize("line,needle", [
    (b'{"cmd": "set_port_speed", "port": 1, "gbps": NaN}', "NaN is not a number"),
    (b'{"cmd": "set_port_speed", "port": 1, "gbps": Infinity}', "Infinity is not a number"),
    (b'{"cmd": "set_queue_rate", "port": 1, "pps": -Infinity}', "-Infinity is not a number"),
    (b'{"cmd": "set_queue_depth", "port": 1, "depth": true}', "'depth' must be an int 0..4294967295, not true"),
    (b'{"cmd": "set_queue_depth", "port": 1, "depth": "16"}', "'depth' must be an int"),
    (b'{"cmd": "set_queue_depth", "port": 1, "depth": 1.5}', "'depth' must be an int"),
    (b'{"cmd": "set_queue_depth", "port": 1, "depth": -1}', "'depth' must be an int"),
    (b'{"cmd": "set_queue_depth", "port": false, "depth": 4}', "'port' must be an int 0..4294967295 or null"),
    (b'{"cmd": "set_queue_depth", "port": 1, "depth": 4, "priority": 8}', "'priority' must be an int 0..7"),
    (b'{"cmd": "set_port_speed", "port": 1, "gbps": "10"}', "'gbps' must be a finite number >= 0"),
    (b'{"cmd": "set_port_speed", "port": 1, "gbps": -2.5}', "'gbps' must be a finite number >= 0"),
    (b'{"cmd": "set_pfc", "port": 1, "priorities": [true]}', "priorities must be a list of ints 0..7"),
    (b'{"cmd": "set_pfc", "port": 1, "priorities": [3], "xoff": 4.5}', "'xoff' must be an int"),
    (b'{"cmd": "set_pfc_thresholds", "port": 1, "priority": 3, "xoff": 9, "xon": null}', "'xon' is required"),
    (b'{"cmd": "set_pfc_watchdog", "port": 1, "priorities": [3], "detection_ms": true}',
     "'detection_ms' must be a finite number"),
    (b'[' * 30000 + b']' * 30000, "recursion"),
], ids=["nan", "infinity", "minus-infinity", "bool-as-int", "string-as-int", "float-as-int", "negative",
        "bool-port", "priority-8", "string-as-number", "negative-number", "bool-priority", "float-xoff",
        "null-required", "bool-as-number", "deep"])
def test_values_that_are_not_numbers_in_range_are_refused(ctl, line, needle) -> None:
    """NaN/Infinity, bools, strings and negative values are answered with the field's name, and
    the traffic manager is left untouched."""
    addr, dev = ctl
    reply = ask(addr, line + b"\n")
    assert reply["ok"] is False and needle in reply["error"]
    assert dev.tm is None  # nothing reached the pipeline
