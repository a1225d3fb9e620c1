"""Per-link delay on the veths, without netem: the kernel's side of the delay line.

This kernel has no netem and no fq (measured: `tc qdisc add ... fq` and
`... netem` answer "qdisc kind is unknown"; only pfifo, bfifo, htb and
clsact are here), so no qdisc can hold a frame until a time. The delay is
therefore held in one user-space process, `topologies.delayline`, and the
kernel only steers frames to it, the same way whatever the switch target:

    frame leaves intf X ── clsact egress: tc-bpf program ──► not marked:
        redirect to the door veth D (X's own pair, `azdl<N>a`/`azdl<N>b`
        in X's namespace) ──► the delay line reads it on D's far end,
        holds it `delay` seconds, and sends it out of X again with
        SO_MARK = DELAY_MARK ──► marked: the program lets it pass to X's
        qdisc (htb, the link's rate) ──► the cable.

So a hop costs its delay and then its serialisation at the link's rate, as
on a cable, and the link's queue (htb's) stays where it was. The mark is
the delay line's alone; the veth clears it when a frame crosses into
another namespace, and a switch sends new frames (mark 0), so every hop is
delayed once.

The classifier is eight instructions, assembled here and loaded with the
bpf(2) system call (no compiler on this machine, no object file to ship);
pyroute2 attaches it by file descriptor, from inside X's namespace (the
delay line steps into each namespace to open its sockets and attach):

    r0 = *(u32 *)(r1 + 8)        ; __sk_buff.mark
    if r0 != DELAY_MARK goto +2
    r0 = 0                       ; TC_ACT_OK: on to the qdisc
    exit
    r1 = door ifindex
    r2 = 0                       ; to the door's egress
    call bpf_redirect            ; TC_ACT_REDIRECT
    exit

Names defined here: `EgressDelay`, `egress_delays`, `redirect_program`,
`load_program`, `make_door`, `attach_redirect`, `LinkDelayError`,
`DELAY_MARK`.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import subprocess
from dataclasses import dataclass

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

from .addressing import AddressPlan
from .errors import NetworkError
from .latency import LatencySpec
from .mtu import DEFAULT_MTU

__all__ = ["DELAY_MARK", "EgressDelay", "LinkDelayError", "attach_redirect", "egress_delays",
           "load_program", "make_door", "redirect_program"]

# The socket mark of frames the delay line sends back out ("azdl").
DELAY_MARK = 0x617A646C

_BPF_PROG_LOAD = 5
_BPF_PROG_TYPE_SCHED_CLS = 3
_SKB_MARK = 8  # offsetof(struct __sk_buff, mark), fixed by the UAPI
_BPF_FUNC_REDIRECT = 23
_SYS_BPF = {"x86_64": 321, "aarch64": 280}


class LinkDelayError(NetworkError):
    """The delay could not be set on an interface; says which and why."""


@dataclass(frozen=True, kw_only=True)
class EgressDelay:
    """One interface's delay: frames leaving `intf` (in `netns`, None: the root one) wait `delay_s`.

    `door`: the index of its door veth pair (`azdl<door>a`, `azdl<door>b`); `mtu`: the
    doors' MTU, the link's (a frame longer than a veth's MTU does not cross it).
    """

    node: str
    intf: str
    netns: str | None
    delay_s: float
    door: int
    mtu: int = DEFAULT_MTU

    @property
    def door_in(self) -> str:
        """The door end frames are redirected to."""
        return f"azdl{self.door}a"

    @property
    def door_out(self) -> str:
        """The door end the delay line reads."""
        return f"azdl{self.door}b"


def egress_delays(plan: AddressPlan, latency: LatencySpec,
                  netns_of: dict[str, str]) -> tuple[EgressDelay, ...]:
    """Every interface's delay: its link's propagation plus, on a switch, the switch's latency.

    Both scaled by `plan.scale` (real microseconds to emulated seconds);
    interfaces with no delay are left out. `netns_of`: host name -> its
    namespace (switch interfaces are in the root one).
    """
    out: list[EgressDelay] = []
    for link in plan.links:
        for node, intf in ((link.a, link.a_intf), (link.b, link.b_intf)):
            us = latency.egress_us(link.tier, _role(plan, node))
            if us <= 0:
                continue
            out.append(EgressDelay(node=node, intf=intf, netns=netns_of.get(node),
                                   delay_s=us * 1e-6 * plan.scale, door=len(out),
                                   mtu=plan.mtu))
    return tuple(out)


def _role(plan: AddressPlan, node: str) -> str | None:
    return next((s.role for s in plan.switches if s.name == node), None)


def _insn(code: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    # struct bpf_insn: u8 code; u8 dst_reg:4, src_reg:4; s16 off; s32 imm.
    return struct.pack("<BBhi", code, (src << 4) | dst, off, imm)


def redirect_program(door_ifindex: int) -> bytes:
    """The classifier's instructions (little-endian eBPF) for a door of `door_ifindex`."""
    mark = struct.unpack("<i", struct.pack("<I", DELAY_MARK))[0]
    return b"".join([
        _insn(0x61, dst=0, src=1, off=_SKB_MARK),   # ldxw r0, [r1+8]
        _insn(0x55, dst=0, off=2, imm=mark),        # jne r0, DELAY_MARK, +2
        _insn(0xB7, dst=0, imm=0),                  # mov64 r0, TC_ACT_OK
        _insn(0x95),                                # exit
        _insn(0xB7, dst=1, imm=door_ifindex),       # mov64 r1, ifindex
        _insn(0xB7, dst=2, imm=0),                  # mov64 r2, 0 (egress)
        _insn(0x85, imm=_BPF_FUNC_REDIRECT),        # call bpf_redirect
        _insn(0x95),                                # exit
    ])


def load_program(code: bytes) -> int:
    """Load a tc classifier into the kernel; returns its file descriptor.

    Raises `LinkDelayError` with the verifier's log when the kernel refuses it.
    """
    nr = _SYS_BPF.get(platform.machine())
    if nr is None:
        raise LinkDelayError(f"link delay: no bpf(2) system call number for {platform.machine()}")
    insns = ctypes.create_string_buffer(code, len(code))
    license_ = ctypes.create_string_buffer(b"Dual MIT/GPL")
    log = ctypes.create_string_buffer(4096)
    # union bpf_attr for BPF_PROG_LOAD: prog_type, insn_cnt, insns, license,
    # log_level, log_size, log_buf; prog_name at 48; the rest zero.
    attr = ctypes.create_string_buffer(128)
    struct.pack_into("<IIQQIIQ", attr, 0, _BPF_PROG_TYPE_SCHED_CLS, len(code) // 8,
                     ctypes.addressof(insns), ctypes.addressof(license_), 1, len(log),
                     ctypes.addressof(log))
    struct.pack_into("16s", attr, 48, b"aizone_delay")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(nr), ctypes.c_int(_BPF_PROG_LOAD), attr,
                      ctypes.c_uint(len(attr)))
    if fd < 0:
        err = ctypes.get_errno()
        detail = log.value.decode(errors="replace").strip()
        raise LinkDelayError(f"link delay: the kernel refused the delay program: "
                             f"{os.strerror(err)}{': ' + detail if detail else ''}")
    return int(fd)


def _run(netns: str | None, argv: list[str], what: str) -> None:
    full = [*(["ip", "netns", "exec", netns] if netns else []), *argv]
    done = subprocess.run(full, capture_output=True, text=True)
    if done.returncode != 0:
        raise LinkDelayError(f"link delay on {what}: `{' '.join(argv)}` failed: "
                             f"{(done.stderr or done.stdout).strip()}")


def make_door(d: EgressDelay) -> None:
    """Create `d`'s door pair in its namespace: up, no ARP, no IPv6 (it carries no traffic
    of its own)."""
    _run(d.netns, ["ip", "link", "add", d.door_in, "type", "veth", "peer", "name",
                   d.door_out], d.intf)
    for end in (d.door_in, d.door_out):
        subprocess.run([*(["ip", "netns", "exec", d.netns] if d.netns else []), "sysctl", "-qw",
                        f"net.ipv6.conf.{end}.disable_ipv6=1"], capture_output=True)
        _run(d.netns, ["ip", "link", "set", end, "mtu", str(d.mtu), "arp", "off", "up"], d.intf)


def attach_redirect(intf: str, door_in: str) -> None:
    """Send every unmarked frame leaving `intf` through `door_in` (clsact egress, tc-bpf).

    Works in the calling process's namespace: the delay line calls it from
    inside each one (pyroute2's own way into a namespace forks the caller,
    and a forked copy of an asyncio daemon answers signals on its behalf).
    """
    _run(None, ["tc", "qdisc", "replace", "dev", intf, "clsact"], intf)
    with IPRoute() as ipr:
        found, door = ipr.link_lookup(ifname=intf), ipr.link_lookup(ifname=door_in)
        if not found or not door:
            raise LinkDelayError(f"link delay: no interface {intf if not found else door_in}")
        fd = load_program(redirect_program(door[0]))
        try:
            ipr.tc("add-filter", "bpf", found[0], ":1", fd=fd, name="aizone_delay",
                   parent="ffff:fff3", direct_action=True, prio=1)
        except NetlinkError as exc:
            raise LinkDelayError(f"link delay on {intf}: attaching the delay program "
                                 f"failed: {exc}") from None
        finally:
            os.close(fd)
