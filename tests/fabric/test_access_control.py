"""Only the fabric's owner controls it: a running fabric probed as another user would (root, Mininet).

One `rack` fabric for the module, on --target. The other user is `nobody`
(uid 65534, no capabilities), running Debian's own python3 so that nothing
of root's environment helps it; the other network is a namespace the test
makes, joined to the root namespace by a veth of its own (documentation
addresses 198.51.100.0/30, on that veth only). What is checked, each
against a control that shows the probe itself works:

- the API over TCP answers `nobody` 401 without the token, `/exec` is 403
  over TCP even with it, and the Unix socket is permission denied;
- every switch control port (P4Runtime, BMv2's Thrift) is reset for
  `nobody` and silent from the other namespace, while a port of the test's
  own on the same address answers both; p4switch's control API is a 0600
  Unix socket that `nobody` cannot reach;
- P4Runtime takes no client without the fabric's certificate (plaintext,
  or TLS without a client certificate), and takes root's with it;
- the control ports are kept out of the kernel's ephemeral range, so no
  connection takes one as its local port while the switches start;
- the files under the state folder are root's alone;
- `aizone down` removes the firewall table and the CA, and gives the
  reserved ports back (`fabric_support.leftovers`).
"""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from fabric_support import ROOT, aizone, assert_clean, leftovers
from finsy.proto import p4r, p4r_grpc

from controller.access import read_token
from topologies.firewall import confined_ports, reserved_ports
from topologies.runstate import PKI_DIR, read_state, state_dir

RACK = ROOT / "topologies" / "rack.yaml"
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3"]
NS = "aizt-sec"
ROOT_IP, NS_IP = "198.51.100.1", "198.51.100.2"


@dataclass
class Fabric:
    status: dict[str, Any]
    switches: list[dict[str, Any]]
    api_port: int


@pytest.fixture(scope="module")
def fabric(target: str, build_dir: Path) -> Iterator[Fabric]:
    before = leftovers()
    up = aizone("up", str(RACK), "--target", target, "--build-dir", str(build_dir), "--json")
    assert up.returncode == 0, up.stdout + up.stderr
    status = json.loads(up.stdout)
    state = read_state()
    assert state is not None
    try:
        yield Fabric(status, state.switches, int(status["api"]["url"].rsplit(":", 1)[1]
                                                 .strip("/")))
    finally:
        down = aizone("down")
        assert down.returncode == 0, down.stderr
        assert_clean(before)


@pytest.fixture(scope="module")
def other_net() -> Iterator[str]:
    """A network namespace with a veth to the root one: ROOT_IP here, NS_IP there."""
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    subprocess.run(["ip", "link", "del", "aizt-r"], capture_output=True)
    cmds = [["ip", "netns", "add", NS],
            ["ip", "link", "add", "aizt-r", "type", "veth", "peer", "name", "aizt-n"],
            ["ip", "link", "set", "aizt-n", "netns", NS],
            ["ip", "addr", "add", f"{ROOT_IP}/30", "dev", "aizt-r"],
            ["ip", "link", "set", "aizt-r", "up"],
            ["ip", "-n", NS, "addr", "add", f"{NS_IP}/30", "dev", "aizt-n"],
            ["ip", "-n", NS, "link", "set", "aizt-n", "up"],
            ["ip", "-n", NS, "link", "set", "lo", "up"]]
    try:
        for cmd in cmds:
            subprocess.run(cmd, check=True, capture_output=True)
        yield NS
    finally:
        subprocess.run(["ip", "link", "del", "aizt-r"], capture_output=True)
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)


PROBE = """
import socket, sys
kind, where = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX if kind == "unix" else socket.AF_INET)
s.settimeout(2)
try:
    if kind == "unix":
        s.connect(where)
    else:
        host, port = where.rsplit(":", 1)
        s.connect((host, int(port)))
    print("connected")
except PermissionError:
    print("permission")
except ConnectionRefusedError:
    print("refused")
except (TimeoutError, socket.timeout):
    print("timeout")
except OSError as e:
    print("error", e.errno)
"""


def probe(kind: str, where: str, *, as_nobody: bool = False, netns: str | None = None) -> str:
    """How a connection to `where` ends: connected, refused, timeout or permission."""
    argv = (NOBODY if as_nobody else ["/usr/bin/python3"]) + ["-c", PROBE, kind, where]
    if netns:
        argv = ["ip", "netns", "exec", netns, *argv]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or out.stderr.strip()


def http_as_nobody(url: str, method: str = "GET", headers: dict[str, str] | None = None,
                   body: bytes | None = None) -> tuple[int, str]:
    code = ("import sys, json, urllib.request, urllib.error\n"
            "req = urllib.request.Request(sys.argv[1], method=sys.argv[2], "
            "headers=json.loads(sys.argv[3]), data=sys.argv[4].encode() or None)\n"
            "try:\n    r = urllib.request.urlopen(req, timeout=10); print(r.status, r.read().decode())\n"
            "except urllib.error.HTTPError as e:\n    print(e.code, e.read().decode())\n")
    out = subprocess.run(NOBODY + ["-c", code, url, method, json.dumps(headers or {}),
                                   (body or b"").decode()],
                         capture_output=True, text=True, timeout=30)
    status, _, text = out.stdout.strip().partition(" ")
    assert status.isdigit(), out.stdout + out.stderr
    return int(status), text


@pytest.fixture()
def listener() -> Iterator[int]:
    """A TCP port of the test's own on every address, accepting and answering a byte."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", 0))
    srv.listen()
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(1)
                    conn.sendall(b"y")
                except OSError:
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        t.join(2)
        srv.close()


def control_ports(fabric: Fabric) -> list[tuple[str, int]]:
    ports = []
    for sw in fabric.switches:
        ports.append((f"{sw['name']} P4Runtime", sw["grpc_port"]))
        if sw["target"] == "bmv2" and sw.get("thrift_port"):
            ports.append((f"{sw['name']} Thrift", sw["thrift_port"]))
    return ports


def test_the_switches_local_sockets_are_root_only(fabric: Fabric) -> None:
    """p4switch's ctl: a 0600 Unix socket in the 0700 folder (nobody denied, root connects);
    BMv2: no notifications socket under /tmp (its default place)."""
    if fabric.switches[0]["target"] == "bmv2":
        assert sorted(Path("/tmp").glob("bmv2-*-notifications.ipc")) == []
        return
    sockets = [sw["ctl_addr"].removeprefix("unix:") for sw in fabric.switches]
    assert sockets and all(Path(p).parent == state_dir() / "switches" for p in sockets)
    for path in sockets:
        assert stat.S_IMODE(Path(path).stat().st_mode) == 0o600, path
        assert probe("unix", path, as_nobody=True) == "permission", path
        assert probe("unix", path) == "connected", path


def test_nobody_gets_401_from_every_api_route_over_tcp(fabric: Fabric) -> None:
    """Status, a mode change, shutdown, exec, the page: 401 without the token; the fabric stays up."""
    base = f"http://127.0.0.1:{fabric.api_port}"
    for method, path, body in [("GET", "/api/v1/status", None),
                               ("POST", "/api/v1/mode", b'{"mode": "pin"}'),
                               ("POST", "/api/v1/exec", b'{"host": "h1", "argv": ["id"]}'),
                               ("POST", "/api/v1/shutdown", None), ("GET", "/", None),
                               ("GET", "/api/v1/events", None)]:
        status, text = http_as_nobody(base + path, method,
                                      {"content-type": "application/json"}, body)
        assert status == 401, (method, path, status, text)
    st = aizone("status", "--json")
    assert st.returncode == 0 and json.loads(st.stdout)["phase"] == "up"


def test_exec_over_tcp_is_refused_even_with_the_token(fabric: Fabric) -> None:
    """Root with the token over TCP: 403 for /exec; the CLI (Unix socket) runs it."""
    token = read_token()
    assert token
    status, text = http_as_nobody(f"http://127.0.0.1:{fabric.api_port}/api/v1/exec", "POST",
                                  {"Authorization": f"Bearer {token}",
                                   "content-type": "application/json"},
                                  b'{"host": "h1", "argv": ["id", "-u"]}')
    assert status == 403 and "Unix socket only" in text
    local = aizone("exec", "h1", "--", "id", "-u")
    assert local.returncode == 0 and local.stdout.strip().endswith("0"), local.stdout


def test_the_unix_socket_is_permission_denied_to_nobody(fabric: Fabric) -> None:
    """nobody cannot reach api.sock (the folder is 0700); root can (the control)."""
    sock = str(state_dir() / "api.sock")
    assert probe("unix", sock, as_nobody=True) == "permission"
    assert probe("unix", sock) == "connected"


def test_every_control_port_resets_nobody(fabric: Fabric, listener: int) -> None:
    """P4Runtime, Thrift and ctl ports: refused for nobody; the test's own port: answered."""
    assert probe("tcp", f"127.0.0.1:{listener}", as_nobody=True) == "connected"
    ports = control_ports(fabric)
    assert len(ports) == len(fabric.switches) * (2 if fabric.switches[0]["target"] == "bmv2" else 1)
    for what, port in ports:
        assert probe("tcp", f"127.0.0.1:{port}", as_nobody=True) == "refused", what
        assert probe("tcp", f"127.0.0.1:{port}") == "connected", what  # root: the owner


def test_no_control_port_is_reachable_from_another_namespace(fabric: Fabric, other_net: str,
                                                             listener: int) -> None:
    """From the other namespace the test's own port answers; every control port is silent."""
    assert probe("tcp", f"{ROOT_IP}:{listener}", netns=other_net) == "connected"
    for what, port in control_ports(fabric):
        assert probe("tcp", f"{ROOT_IP}:{port}", netns=other_net) == "timeout", what
    assert sorted(p for _, p in control_ports(fabric)) == confined_ports()


def test_the_control_ports_are_out_of_the_ephemeral_range(fabric: Fabric) -> None:
    """No connection gets a control port as its own local port while the fabric runs."""
    listed = Path("/proc/sys/net/ipv4/ip_local_reserved_ports").read_text().strip()
    reserved: set[int] = set()
    for part in filter(None, listed.split(",")):
        low, _, high = part.partition("-")
        reserved.update(range(int(low), int(high or low) + 1))
    ports = sorted(p for _, p in control_ports(fabric))
    assert set(ports) <= reserved, listed
    assert reserved_ports() == ports  # none of them was reserved before the run


def _capabilities(port: int, creds: grpc.ChannelCredentials | None) -> str:
    target = f"127.0.0.1:{port}"
    channel = grpc.secure_channel(target, creds) if creds else grpc.insecure_channel(target)
    with channel:
        try:
            stub = p4r_grpc.P4RuntimeStub(channel)
            return stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5).p4runtime_api_version
        except grpc.RpcError as exc:
            return f"error {exc.code().name}"


def test_p4runtime_takes_only_the_fabrics_certificate(fabric: Fabric) -> None:
    """Plaintext and TLS without a client certificate fail; the controller's certificate works."""
    pki = state_dir() / PKI_DIR
    ca, cert, key = ((pki / n).read_bytes() for n in ("ca.pem", "controller.pem",
                                                       "controller.key"))
    for sw in fabric.switches:
        port = sw["grpc_port"]
        assert _capabilities(port, None).startswith("error"), sw["name"]
        assert _capabilities(port, grpc.ssl_channel_credentials(ca)).startswith("error")
        good = _capabilities(port, grpc.ssl_channel_credentials(ca, key, cert))
        assert good.startswith("1."), (sw["name"], good)


def test_the_state_folder_is_root_only(fabric: Fabric) -> None:
    """Folder 0700; token, keys, run.json, logs and sockets 0600; nothing another user reads."""
    d = state_dir()
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    loose = []
    for path in d.rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077:
            loose.append(f"{path} {mode:o}")
    assert loose == []
    assert {"api.token", "api.sock", "run.json"} <= {p.name for p in d.iterdir()}
