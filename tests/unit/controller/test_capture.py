"""Capture points named the way aizone names things, tcpdump's bounds, and a stopped capture trimmed."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapReader, wrpcap

from aizone.traffic_cmds import trim_pcap
from controller.capture import CaptureError, capture_point, tcpdump_argv
from topologies.addressing import plan_addresses
from topologies.spec import load_spec

SMALL = Path(__file__).resolve().parents[3] / "topologies" / "ai_zone_small.yaml"
PLAN = plan_addresses(load_spec(SMALL))


@pytest.mark.parametrize(("target", "intf", "host"), [
    ("h1", "h1-eth0", "h1"),
    ("h1-eth1", "h1-eth1", "h1"),
    ("rtsw1:6", "rtsw1-eth6", None),
    ("rtsw1-eth6", "rtsw1-eth6", None),
    ("rtsw1-ctsw2", "rtsw1-eth6", None),
    ("ctsw2-rtsw1", "ctsw2-eth1", None),
])
def test_points(target: str, intf: str, host: str | None) -> None:
    point = capture_point(PLAN, target)
    assert (point.intf, point.host) == (intf, host)


@pytest.mark.parametrize(("target", "said"), [
    ("rtsw1:9", "rtsw1 has no port 9 (ports 1, 2, 3, 4, 5, 6)"),
    ("rtsw1-ctsw1/1", "rtsw1 and ctsw1 have 1 link(s) (index 0..0)"),
    ("rtsw9:1", "is not a capture point of ai_zone_small"),
    ("h9-eth0", "is not a capture point"),
])
def test_bad_points_say_what_can_be_captured(target: str, said: str) -> None:
    with pytest.raises(CaptureError, match=said.replace("(", r"\(").replace(")", r"\)")):
        capture_point(PLAN, target)


def test_tcpdump_command_line_and_bounds() -> None:
    point = capture_point(PLAN, "rtsw1:5")
    assert tcpdump_argv(point, count=10, bpf="udp port 4791") == [
        "tcpdump", "-i", "rtsw1-eth5", "-n", "-s", "256", "-U", "-w", "-", "--immediate-mode",
        "-c", "10", "udp port 4791"]
    assert tcpdump_argv(point, bpf="arp", check_only=True)[-2:] == ["-d", "arp"]
    with pytest.raises(CaptureError, match="snaplen 32"):
        tcpdump_argv(point, snaplen=32)
    with pytest.raises(CaptureError, match="count 0"):
        tcpdump_argv(point, count=0)


def test_a_capture_cut_mid_packet_is_trimmed_to_its_whole_records(tmp_path: Path) -> None:
    path = tmp_path / "cut.pcap"
    frames = [Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / bytes(range(i, i + 60))
              for i in range(5)]
    wrpcap(str(path), frames)
    whole = path.stat().st_size
    with open(path, "ab") as f:  # the next record's header and half its bytes
        f.write(b"\x00" * 8 + (74).to_bytes(4, "little") * 2 + b"\xab" * 30)
    assert trim_pcap(path) == len(frames)
    assert path.stat().st_size == whole
    assert [bytes(p) for p, _ in RawPcapReader(str(path))] == [bytes(f) for f in frames]
