"""IEEE 802.1Qbb priority flow control frames as p4switch's ports build and read them.

A PFC frame is a MAC control frame (EtherType 0x8808, opcode 0x0101) to
01:80:c2:00:00:01 with a class-enable vector and eight 16-bit pause quanta;
bridges never forward MAC control frames. The traffic manager (`p4switch.tm`)
sends them upstream and honours them; the tests build them with the same
function, so a frame is written in one place.

Names defined here: `build_pause_frame`, `parse_pause_frame`, `is_mac_control`,
`port_mac`, `PFC_ETHERTYPE`, `PFC_OPCODE`, `PFC_DST`, `MIN_FRAME`.
"""

from __future__ import annotations

__all__ = ["MIN_FRAME", "PFC_DST", "PFC_ETHERTYPE", "PFC_OPCODE", "build_pause_frame",
           "is_mac_control", "parse_pause_frame", "port_mac"]

PFC_ETHERTYPE = 0x8808
PFC_OPCODE = 0x0101
PFC_DST = bytes.fromhex("0180c2000001")
MIN_FRAME = 60  # bytes without the FCS


def build_pause_frame(quanta: dict[int, int], src_mac: bytes = b"\x00" * 6) -> bytes:
    """A PFC PAUSE frame (60 bytes, no FCS) pausing priority p for quanta[p] (0 = resume).

    Destination 01:80:c2:00:00:01, EtherType 0x8808, opcode 0x0101, the
    class-enable vector (bit p set for each listed priority), then eight
    16-bit quanta (priority 0 first), zero padding to the minimum frame size.
    """
    enable = 0
    times = [0] * 8
    for p, q in quanta.items():
        enable |= 1 << p
        times[p] = q & 0xFFFF
    body = PFC_DST + src_mac + PFC_ETHERTYPE.to_bytes(2, "big") + PFC_OPCODE.to_bytes(2, "big")
    body += enable.to_bytes(2, "big") + b"".join(t.to_bytes(2, "big") for t in times)
    return body + b"\x00" * (MIN_FRAME - len(body))


def is_mac_control(frame: bytes) -> bool:
    """EtherType 0x8808 (MAC control: PAUSE/PFC): never forwarded by a bridge."""
    return len(frame) >= 14 and frame[12] == 0x88 and frame[13] == 0x08


def parse_pause_frame(frame: bytes) -> dict[int, int] | None:
    """priority -> quanta of a PFC PAUSE frame; None when the frame is not one."""
    if len(frame) < 34 or frame[12:14] != b"\x88\x08" or frame[14:16] != b"\x01\x01":
        return None
    enable = int.from_bytes(frame[16:18], "big")
    return {p: int.from_bytes(frame[18 + 2 * p:20 + 2 * p], "big") for p in range(8) if enable >> p & 1}


def port_mac(port: int) -> bytes:
    """The source MAC of PAUSE frames sent out of `port` (locally administered, per port)."""
    return bytes((0x02, 0x50, 0x46, 0x43)) + (port & 0xFFFF).to_bytes(2, "big")
