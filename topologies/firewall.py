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
client for the fabric's certificate.

The same ports are also kept out of the kernel's ephemeral range while the
fabric runs. The default gRPC ports (20001 on) lie below Linux's
`ip_local_port_range` (32768-60999), but a topology may choose ports inside
it, and then any connection made while the switches start (the
controller's to the first switches, say) could be handed one of them as its
own local port, and the switch that should listen there would fail with
"address in use". `confine` adds the ports that were not reserved yet to
`net.ipv4.ip_local_reserved_ports` and remembers them in the table's second
set, `reserved_ports`; `release` takes exactly those out again, so a
reservation of the machine's own is left alone. (Both are per network
namespace, like the table.)

`confine(ports)` installs the table (replacing an older one), `release()`
deletes it; `aizone down` and `topologies.runstate.cleanup` release it,
also after a crash. Needs `nft` (Debian's nftables) and the kernel's
nf_tables.

Names defined here: `confine`, `release`, `confined_ports`,
`reserved_ports`, `FirewallError`, `TABLE`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .errors import NetworkError

__all__ = ["TABLE", "FirewallError", "confine", "confined_ports", "release", "reserved_ports"]

TABLE = "aizone"
_FAMILY = "inet"
# Ports the kernel never hands out as a connection's local port (per network namespace).
_RESERVED = Path("/proc/sys/net/ipv4/ip_local_reserved_ports")


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
    # An older table's reservations stay ours: they are carried into the new table.
    ours = sorted(set(reserved_ports()) | (set(wanted) - _read_reserved()))
    held = f"\n        elements = {{ {', '.join(str(p) for p in ours)} }}" if ours else ""
    # One transaction: the old table (if any) goes and the new one comes in together.
    script = f"""table {_FAMILY} {TABLE}
delete table {_FAMILY} {TABLE}
table {_FAMILY} {TABLE} {{
    set control_ports {{
        type inet_service
        elements = {{ {elements} }}
    }}
    set reserved_ports {{
        type inet_service{held}
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
    # After the table: a crash between the two leaves a reservation the table names.
    try:
        _write_reserved(_read_reserved() | set(ours))
    except OSError as e:
        raise FirewallError(f"cannot reserve the switches' control ports in {_RESERVED}: "
                            f"{e.strerror or e}") from None


def release() -> bool:
    """Delete the table, and give back the ports it reserved; True if there was one.
    Without nft there can be none."""
    if shutil.which("nft") is None:
        return False
    ours = set(reserved_ports())
    if ours:
        _write_reserved(_read_reserved() - ours)
    out = _nft(None, "delete", "table", _FAMILY, TABLE)
    return out.returncode == 0


def confined_ports() -> list[int]:
    """The ports the table holds now (empty: no table)."""
    return _set_elements("control_ports")


def reserved_ports() -> list[int]:
    """The ports the table reserved from the ephemeral range (empty: none, or no table)."""
    return _set_elements("reserved_ports")


def _set_elements(name: str) -> list[int]:
    if shutil.which("nft") is None:
        return []
    out = _nft(None, "-j", "list", "set", _FAMILY, TABLE, name)
    if out.returncode != 0:
        return []
    ports: list[int] = []
    for item in json.loads(out.stdout).get("nftables", []):
        for elem in item.get("set", {}).get("elem", []):
            if isinstance(elem, int):
                ports.append(elem)
    return sorted(ports)


def _read_reserved() -> set[int]:
    """`ip_local_reserved_ports` as a set ("8080,9148-9150" is four ports)."""
    ports: set[int] = set()
    for part in _RESERVED.read_text().strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        ports.update(range(int(low), int(high or low) + 1))
    return ports


def _write_reserved(ports: set[int]) -> None:
    """Write `ports` back as the kernel's list of ranges."""
    ranges: list[str] = []
    for port in sorted(ports):
        if ranges and ranges[-1].rpartition("-")[2] == str(port - 1):
            ranges[-1] = f"{ranges[-1].partition('-')[0]}-{port}"
        else:
            ranges.append(str(port))
    _RESERVED.write_text(",".join(ranges) + "\n")
