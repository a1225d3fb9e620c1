"""Tests for controller.probes: the probe frame, and link state from probes seen and missed."""

from __future__ import annotations

import time
from pathlib import Path

from controller.build import CompiledProgram
from controller.intent import FabricIntent
from controller.probes import LinkProber, LinkState, parse_probe, probe_frame
from controller.sessions import FabricSessions
from topologies.addressing import plan_addresses
from topologies.spec import parse_spec

ROOT = Path(__file__).resolve().parents[3]


def test_probe_frame_layout() -> None:
    """LLDP nearest-bridge address, the port's MAC, EtherType 0x88cc, magic, ids; 60 bytes."""
    frame = probe_frame("02:a1:00:03:00:05", 3, 5, 0x01020304)
    assert frame[:6] == bytes.fromhex("0180c200000e")
    assert frame[6:12] == bytes.fromhex("02a100030005")
    assert frame[12:14] == b"\x88\xcc"
    assert frame[14:22] == b"AZPROBE1"
    assert frame[22:30] == bytes.fromhex("0003" "0005" "01020304")
    assert len(frame) == 60 and frame[30:] == bytes(30)


def test_parse_probe_round_trip_and_refusals() -> None:
    """A probe parses back; other frames (wrong type, wrong magic, short) give None."""
    assert parse_probe(probe_frame("02:00:00:00:00:01", 7, 2, 9)) == (7, 2, 9)
    other = bytearray(probe_frame("02:00:00:00:00:01", 7, 2, 9))
    other[12:14] = b"\x08\x00"
    assert parse_probe(bytes(other)) is None
    other = bytearray(probe_frame("02:00:00:00:00:01", 7, 2, 9))
    other[14] = ord("X")
    assert parse_probe(bytes(other)) is None
    assert parse_probe(b"\x00" * 20) is None


def _prober(changes: list[LinkState], prog: CompiledProgram) -> LinkProber:
    spec = parse_spec({"name": "t", "racks": [{"count": 2, "hosts": 1}], "ctsws": 1},
                      base_dir=ROOT / "topologies")
    plan = plan_addresses(spec)
    sessions = FabricSessions(plan, {"rtsw": prog, "ctsw": prog},
                              FabricIntent(spec=spec, plan=plan, mode="ecmp"))
    return LinkProber(plan, sessions, changes.append, interval=0.1, dead_after=0.5, up_after=3)


def test_a_direction_without_probes_takes_its_link_down_then_probes_bring_it_up(
        rtsw_program: CompiledProgram) -> None:
    """No probe for longer than dead_after: down, once; three probes in a row: up again."""
    changes: list[LinkState] = []
    prober = _prober(changes, rtsw_program)
    link = "rtsw1-eth2--ctsw1-eth1"
    assert prober.is_up(link)
    now = time.monotonic()
    for (sw, port), d in prober._dirs.items():  # every direction but one just seen
        d.last_seen = now - (1.0 if (sw, port) == ("ctsw1", 1) else 0.0)
    prober._check(now)
    prober._check(now + 0.05)
    assert [(c.link, c.up) for c in changes] == [(link, False)]
    assert changes[0].detected_after is not None and changes[0].detected_after >= 0.5
    assert not prober.is_up(link) and prober.is_up("rtsw2-eth2--ctsw1-eth2")
    probe = probe_frame("02:00:00:00:00:01", prober.plan.switch("ctsw1").index, 1, 1)
    for _ in range(2):
        prober.on_packet_in("rtsw1", 2, probe)
    assert not prober.is_up(link)
    prober.on_packet_in("rtsw1", 2, probe)
    assert prober.is_up(link) and [c.up for c in changes] == [False, True]


def test_a_probe_on_the_wrong_port_is_not_taken_for_the_link(
        rtsw_program: CompiledProgram) -> None:
    """A probe that arrives where the plan says it cannot is ignored (miscabling)."""
    changes: list[LinkState] = []
    prober = _prober(changes, rtsw_program)
    d = prober._dirs[("ctsw1", 1)]
    d.up, d.streak, d.last_seen = False, 0, 0.0
    probe = probe_frame("02:00:00:00:00:01", prober.plan.switch("ctsw1").index, 1, 1)
    for _ in range(5):
        prober.on_packet_in("rtsw2", 2, probe)
    assert d.streak == 0 and not d.up
