"""Confine the switches' control ports to root on this machine (an nftables table of ours).

A switch process listens on TCP ports besides its data ports: P4Runtime
(mutual TLS, `topologies.pki`), and on BMv2 the Thrift runtime server,
which has no authentication at all and binds every address of the machine
(BMv2 opens it with the port only). aizone cannot change where BMv2 binds
Thrift, so while a fabric runs, an nftables table `inet aizone` holds two
rules over the set of the fabric's control ports:

- `input`: a packet to one of them that did not come in on `lo` is dropped,
  so nothing on the machine's networks, and no network namespace (the
  emulated hosts included), reaches them;
- `output`: a connection to one of them from a local process whose user is
  not root is refused with a TCP reset.

(p4switch's own control API needs none of this: it is a 0600 Unix socket
in the fabric's 0700 folder, `topologies.nodes.P4SwitchNode.ctl_addr`.)

So only root on this machine connects, and P4Runtime still asks root's
client for the fabric's certificate. `confine(ports)` installs the table
(replacing an older one), `release()` deletes it; `aizone down` and
`topologies.runstate.cleanup` release it, also after a crash. Needs `nft`
(Debian's nftables) and the kernel's nf_tables.

Names defined here: `confine`, `release`, `confined_ports`, `FirewallError`,
`TABLE`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable

from .nodes import NetworkError

__all__ = ["TABLE", "FirewallError", "confine", "confined_ports", "release"]

TABLE = "aizone"
_FAMILY = "inet"


class FirewallError(NetworkError):
    """The control ports cannot be confined (no nft, or the kernel refused the table)."""


def _nft(script: str | None = None, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("nft")
    if exe is None:
        raise FirewallError("nft is not installed (Debian's nftables): it confines the "
                            "switches' control ports to root; `make demo` installs it")
    argv = [exe, *args] if script is None else [exe, "-f", "-"]
    return subprocess.run(argv, input=script, capture_output=True, text=True, timeout=30)


def confine(ports: Iterable[int]) -> None:
    """Only root on this machine may connect to `ports` (TCP), until `release()`."""
    wanted = sorted({int(p) for p in ports})
    if not wanted:
        return
    elements = ", ".join(str(p) for p in wanted)
    # One transaction: the old table (if any) goes and the new one comes in together.
    script = f"""table {_FAMILY} {TABLE}
delete table {_FAMILY} {TABLE}
table {_FAMILY} {TABLE} {{
    set control_ports {{
        type inet_service
        elements = {{ {elements} }}
    }}
    chain input {{
        type filter hook input priority filter; policy accept;
        iifname != "lo" tcp dport @control_ports drop
    }}
    chain output {{
        type filter hook output priority filter; policy accept;
        tcp dport @control_ports meta skuid != 0 reject with tcp reset
    }}
}}
"""
    out = _nft(script)
    if out.returncode != 0:
        raise FirewallError(f"nft could not install table {_FAMILY} {TABLE}: "
                            f"{(out.stderr or out.stdout).strip().splitlines()[-1:]}")


def release() -> bool:
    """Delete the table; True if there was one. Without nft there can be none."""
    if shutil.which("nft") is None:
        return False
    out = _nft(None, "delete", "table", _FAMILY, TABLE)
    return out.returncode == 0


def confined_ports() -> list[int]:
    """The ports the table holds now (empty: no table)."""
    if shutil.which("nft") is None:
        return []
    out = _nft(None, "-j", "list", "set", _FAMILY, TABLE, "control_ports")
    if out.returncode != 0:
        return []
    ports: list[int] = []
    for item in json.loads(out.stdout).get("nftables", []):
        for elem in item.get("set", {}).get("elem", []):
            if isinstance(elem, int):
                ports.append(elem)
    return sorted(ports)
