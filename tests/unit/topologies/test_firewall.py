"""The control ports' table (topologies.firewall) keeps them out of the ephemeral range, root.

Each case runs in a network namespace of its own (`unshare -n`): the nftables
table, `ip_local_port_range` and `ip_local_reserved_ports` all belong to the
namespace, so the machine's are not touched. The namespace's ephemeral range
is narrowed to 50001-50010, 50010 is reserved beforehand as the machine's own,
and `confine` is given 50001-50005: four connections held open at once must
then get exactly 50006-50009 as their local ports, and `release` must give
back 50001-50005 and leave 50010 reserved.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.root

ROOT = Path(__file__).resolve().parents[3]

# A new namespace's loopback is down: up, then the script.
UP_LO = 'ip link set lo up && exec "$1" -c "$2" "$3"'

SCRIPT = r"""
import json, socket, sys
from pathlib import Path
from topologies import firewall

ipv4 = Path("/proc/sys/net/ipv4")
(ipv4 / "ip_local_port_range").write_text("50001 50010\n")
(ipv4 / "ip_local_reserved_ports").write_text("50010\n")
lo = socket.socket(); lo.bind(("127.0.0.1", 40000)); lo.listen(16)
confine = sys.argv[1] == "confine"
if confine:
    firewall.confine(range(50001, 50006))
after_confine = (ipv4 / "ip_local_reserved_ports").read_text().strip()
held = []
for _ in range(4):
    c = socket.socket(); c.connect(("127.0.0.1", 40000)); held.append(c)
local = sorted(c.getsockname()[1] for c in held)
# The ports a switch could listen on now (a reserved one may still be asked for by number).
bindable = []
for port in range(50001, 50006):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port)); s.listen(); bindable.append(port)
    except OSError:
        pass
    s.close()
table = (firewall.confined_ports(), firewall.reserved_ports())
released = firewall.release()
print(json.dumps({"local": local, "bindable": bindable, "after_confine": after_confine, "table": table,
                  "released": released,
                  "after_release": (ipv4 / "ip_local_reserved_ports").read_text().strip()}))
"""


def _in_own_namespace(mode: str) -> dict[str, object]:
    if shutil.which("unshare") is None or shutil.which("nft") is None:
        pytest.fail("unshare (util-linux) and nft (nftables) are needed: `make apt-test`")
    out = subprocess.run(["unshare", "-n", "sh", "-c", UP_LO, "-", sys.executable, SCRIPT, mode], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_confined_ports_are_never_a_connections_local_port_and_come_back_on_release() -> None:
    got = _in_own_namespace("confine")
    assert got["local"] == [50006, 50007, 50008, 50009]
    assert got["bindable"] == [50001, 50002, 50003, 50004, 50005]
    assert got["after_confine"] == "50001-50005,50010"
    assert got["table"] == [[50001, 50002, 50003, 50004, 50005], [50001, 50002, 50003, 50004,
                                                                  50005]]
    assert got["released"] is True
    assert got["after_release"] == "50010"  # the namespace's own reservation stays


def test_without_the_table_connections_take_the_control_ports() -> None:
    # The same namespace without `confine`: the kernel hands out 50001-50005
    # too, and a switch can no longer listen on the port a connection holds
    # ("address in use"), which is what the reservation is there to stop.
    got = _in_own_namespace("none")
    taken = [p for p in got["local"] if 50001 <= p <= 50005]  # type: ignore[attr-defined]
    assert taken, got
    assert got["bindable"] == [p for p in range(50001, 50006) if p not in taken]
    assert got["released"] is False and got["after_release"] == "50010"


def test_a_port_already_reserved_is_not_taken_back_on_release() -> None:
    code = SCRIPT.replace('write_text("50010\\n")', 'write_text("50003,50010\\n")')
    out = subprocess.run(["unshare", "-n", "sh", "-c", UP_LO, "-", sys.executable, code,
                          "confine"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["table"][1] == [50001, 50002, 50004, 50005]
    assert got["after_confine"] == "50001-50005,50010"
    assert got["after_release"] == "50003,50010"
