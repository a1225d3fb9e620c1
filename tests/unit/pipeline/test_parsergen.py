"""Parser code generation: straight-line parsers behave exactly as the state-loop form."""

from __future__ import annotations

import random
import struct

import pytest
from conftest import ctl_frame, program
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from p4switch.pipeline import PortHarness, parsergen
from p4switch.pipeline.state import ActionCall, FieldMatch, Group, Member, TableEntry

R = "FabricIngress.routing."


def _rtsw_routes(h: PortHarness) -> None:
    s = h.switch
    for mid in (1, 2):
        s.member_insert(R + "ecmp_selector", Member(member_id=mid, action=ActionCall(
            action=R + "set_output", args=(10 + mid, 0x0200000000AA, 0x0200000000BB))))
    s.group_insert(R + "ecmp_selector", Group(group_id=1, members=[(1, 1), (2, 1)]))
    s.table_insert(R + "next_hop", TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    s.table_insert(R + "ipv4_route", TableEntry(match={0: FieldMatch(kind="lpm", value=0x0A000000, prefix_len=8)},
                                                action=ActionCall(action=R + "set_next_id", args=(1,))))


def _rtsw_frames() -> list[tuple[int, bytes]]:
    eth = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
    bth = struct.pack(">BBHII", 0x0A, 0, 0xFFFF, 77, 0)
    whole = [
        eth / IP(src="10.0.0.1", dst="10.0.1.2") / UDP(sport=1000, dport=4791) / bth / (b"\x00" * 16),
        eth / IP(src="10.0.0.1", dst="10.0.1.2") / UDP(sport=1000, dport=53) / b"dns",
        eth / IP(src="10.0.0.1", dst="10.0.1.2") / TCP(sport=1000, dport=80) / b"web",
        eth / IP(src="10.0.0.1", dst="10.0.1.2", frag=5) / b"fragment",
        eth / IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=1, dport=4791) / bth,
        eth / ARP(op=1, psrc="10.0.0.1", pdst="10.0.0.254"),
    ]
    frames = [(1, bytes(f)) for f in whole]
    roce = bytes(whole[0])
    frames += [(1, roce[:n]) for n in range(len(roce))]  # cut in every header
    frames += [(255, b"\x00\x18" + roce), (255, b"\x00\x18" + roce[:20])]  # packet_out, whole and cut
    pause = bytes.fromhex("0180c2000001020000000002" "8808" "0101" "0001") + bytes(16)
    frames += [(1, pause[:n]) for n in (14, 15, 16, 30, len(pause))]
    rng = random.Random(7)
    frames += [(rng.choice((1, 2)), rng.randbytes(rng.randrange(0, 90))) for _ in range(300)]
    return frames


def _v1m_frames() -> list[tuple[int, bytes]]:
    good = ctl_frame(op=0)
    rng = random.Random(11)
    return ([(1, good[:n]) for n in range(len(good) + 1)]
            + [(1, rng.randbytes(rng.randrange(0, 40))) for _ in range(200)])


def _outcome(h: PortHarness, frames: list[tuple[int, bytes]]) -> tuple[list, dict]:
    out = [h.send(port, f) for port, f in frames]
    return out, dict(h.switch.stats)


def _both(name: str, monkeypatch: pytest.MonkeyPatch, **options) -> tuple[PortHarness, PortHarness]:
    straight = PortHarness(program(name), **options)
    with monkeypatch.context() as m:
        m.setattr(parsergen, "MAX_UNFOLDED_STATES", 0)  # too big to unfold: the loop form
        loop = PortHarness(program(name), **options)
    assert "_g += 1" not in straight.switch.cp.source
    assert "_g += 1" in loop.switch.cp.source
    return straight, loop


@pytest.mark.parametrize("name,frames,setup", [
    ("rtsw", _rtsw_frames, _rtsw_routes),
    ("v1m", _v1m_frames, None),
], ids=["rtsw", "v1m"])
def test_straight_line_parser_matches_state_loop(monkeypatch, name, frames, setup):
    """Same frames out, same parser_error / drop counts, for whole, cut and random packets."""
    options = {"cpu_port": 255} if name == "rtsw" else {}
    straight, loop = _both(name, monkeypatch, **options)
    try:
        if setup is not None:
            setup(straight)
            setup(loop)
        got, want = _outcome(straight, frames()), _outcome(loop, frames())
        assert got == want
        assert want[1]["parser_errors"] > 0  # the cut packets did reach the error paths
    finally:
        straight.close()
        loop.close()


def test_header_stack_loop_keeps_the_state_loop():
    """A parse graph with a cycle (mpls.next until bottom of stack) is generated as a state loop."""
    with PortHarness(program("parse")) as h:
        assert "_g += 1" in h.switch.cp.source


@pytest.mark.parametrize("name", ["rtsw", "l3", "v1m"])
def test_acyclic_parse_graph_is_straight_line(name):
    """An acyclic parse graph has no state variable and no step count."""
    with PortHarness(program(name)) as h:
        src = h.switch.cp.source
        assert "_st = " not in src and "_g += 1" not in src
