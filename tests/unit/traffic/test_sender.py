"""Sender: per-QP packet queues, PSN sequences, transmit order, config checks (no root)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from traffic.parser import RoceInfo, parse
from traffic.qpscale import decode_imm
from traffic.roce import Opcode
from traffic.sender import Frame, SendConfig, interleave

FramesFor = Callable[..., list[Frame]]


def _infos(frames: list[Frame]) -> list[RoceInfo]:
    infos = [parse(f.data) for f in frames]
    assert all(isinstance(i, RoceInfo) for i in infos)
    return infos  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("strategy", "writes_per_qp"), [("split", 4), ("round_robin", 1)], ids=["split", "round_robin"]
)
def test_each_qp_gets_the_writes_its_strategy_assigns(
    frames_for: FramesFor, strategy: str, writes_per_qp: int
) -> None:
    """4 messages over 4 QPs: split posts 4 writes per QP, round_robin 1."""
    infos = _infos(frames_for(strategy=strategy))
    ends = Counter(i.dest_qp for i in infos if i.imm is not None)
    assert ends == {qp: writes_per_qp for qp in (17, 18, 19, 20)}


def test_psns_count_up_per_qp_from_the_first_psn(frames_for: FramesFor) -> None:
    """Every QP's packets carry consecutive PSNs starting at the configured one."""
    infos = _infos(frames_for(strategy="split", psn=0xFFFFFE))
    for qp in (17, 18, 19, 20):
        psns = [i.psn for i in infos if i.dest_qp == qp]
        assert psns == [(0xFFFFFE + k) % (1 << 24) for k in range(len(psns))]


def test_frames_are_valid_rocev2_with_the_configured_headers(frames_for: FramesFor) -> None:
    """ICRC ok, DSCP, source port per QP, remote address per message."""
    infos = _infos(frames_for(strategy="round_robin", dscp=10, src_port_per_qp=True, size=1000))
    assert all(i.icrc_ok and i.ip_checksum_ok and i.dscp == 10 for i in infos)
    assert {i.dest_qp: i.src_port for i in infos} == {17: 49152, 18: 49153, 19: 49154, 20: 49155}
    for i in infos:
        message, chunks = decode_imm(i.imm)  # type: ignore[arg-type]
        assert chunks == 1 and i.reth is not None
        assert i.reth.va == 0x1000_0000 + message * 1000


def test_split_chunks_land_at_their_offsets(frames_for: FramesFor) -> None:
    """A split message's chunks write consecutive ranges of the message's buffer."""
    infos = _infos(frames_for(strategy="split", messages=1, size=4000))
    starts = sorted((i.reth.va, i.reth.dlen) for i in infos if i.reth is not None)
    assert starts == [(0x1000_0000 + k * 1000, 1000) for k in range(4)]


def test_interleave_takes_one_packet_per_qp_in_turn() -> None:
    """Transmit order visits QPs round-robin, skipping QPs that ran dry."""

    def frames(qp: int, n: int) -> list[Frame]:
        return [Frame(qp=qp, data=bytes([qp, k]), payload_len=0, post_end=False) for k in range(n)]

    order = [f.data for f in interleave({1: frames(1, 3), 2: frames(2, 1), 3: frames(3, 2)})]
    assert order == [b"\x01\x00", b"\x02\x00", b"\x03\x00", b"\x01\x01", b"\x03\x01", b"\x01\x02"]


def test_a_message_spanning_packets_uses_first_middle_last(frames_for: FramesFor) -> None:
    """A 3000-byte round-robin message at MTU 1024 is First, Middle, Last-with-immediate."""
    infos = _infos(frames_for(strategy="round_robin", qps=(5,), messages=1, size=3000))
    assert [i.opcode for i in infos] == [
        Opcode.RC_RDMA_WRITE_FIRST,
        Opcode.RC_RDMA_WRITE_MIDDLE,
        Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
    ]


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"qps": ()}, "qps"),
        ({"qps": (1, 1)}, "distinct"),
        ({"qps": (1 << 24,)}, "24 bits"),
        ({"strategy": "spray"}, "strategy"),
        ({"path_mtu": 1500}, "path_mtu"),
        ({"rate_mbps": 0}, "rate_mbps"),
        ({"priority": 8}, "priority"),
    ],
    ids=["no-qps", "duplicate-qps", "qp-too-big", "strategy", "mtu", "rate", "priority"],
)
def test_send_config_rejects_bad_values(overrides: dict[str, object], match: str) -> None:
    """Invalid configurations fail at construction with a message naming the field."""
    fields: dict[str, object] = {"iface": "x", "dst_ip": "10.0.0.1", "qps": (1,)}
    fields.update(overrides)
    with pytest.raises(ValueError, match=match):
        SendConfig(**fields)  # type: ignore[arg-type]
