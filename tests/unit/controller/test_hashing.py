"""Tests for controller.hashing: known answers, and agreement with the programs on a real pipeline.

Known answers are worked out independently of the module: CRC-32 with
`binascii.crc32` over the packed 40-byte input, CRC-16/ARC with the
bit-by-bit definition below (poly 0x8005 reflected = 0xA001, init 0), and one
case by hand. Agreement: p4/rtsw.p4 on p4switch's in-memory pipeline, with
groups of 2..16 members, every mode and several salts, must send each
random flow out of the port `choose_member` names.
"""

from __future__ import annotations

import binascii
import functools
import random
import struct
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from controller import hashing
from controller.routes import NAMES
from tests.provides import net_lock, unavailable

REPO = Path(__file__).resolve().parents[3]


def crc16_arc(data: bytes) -> int:
    """CRC-16/ARC by its definition: reflected poly 0xA001, init 0, no final XOR."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def packed(src: int, dst: int, proto: int, sport: int, dport: int, qp: int) -> bytes:
    return (src.to_bytes(16, "big") + dst.to_bytes(16, "big") + bytes([proto])
            + sport.to_bytes(2, "big") + dport.to_bytes(2, "big") + qp.to_bytes(3, "big"))


def test_crc16_check_value() -> None:
    """CRC-16/ARC of b'123456789' is 0xBB3D (the catalogue's check value)."""
    assert hashing.crc16(b"123456789") == 0xBB3D == crc16_arc(b"123456789")


def test_hand_worked_member_of_a_tiny_case() -> None:
    """flow 0 (all-zero key input aside), salt 1: key = 0x9E3779B1; crc16 of it, mod 3."""
    # ecmp_key(0, salt=1) = (0 ^ 1) * 0x9E3779B1 = 0x9E3779B1 (mod 2^32)
    assert int(hashing.ecmp_key(0, 1)) == 0x9E3779B1
    # ... and salt 3: 3 * 0x9E3779B1 = 0x1DAA66D13, mod 2^32 = 0xDAA66D13
    assert int(hashing.ecmp_key(0, 3)) == 0xDAA66D13
    want = crc16_arc(bytes([0x9E, 0x37, 0x79, 0xB1]))
    assert int(hashing.member_index(0x9E3779B1, 3)) == want % 3


def test_flow_hash_equals_binascii_crc32_of_the_packed_fields() -> None:
    """10.0.0.1 -> 10.0.2.5 UDP 49152 -> 4791 QP 17: crc32 = 0x6acffe73 (binascii)."""
    src, dst = 0x0A000001, 0x0A000205
    assert binascii.crc32(packed(src, dst, 17, 49152, 4791, 17)) == 0x6ACFFE73
    assert int(hashing.flow_hash(src, dst, 17, 49152, 4791, 17, mode="eecmp")) == 0x6ACFFE73


@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_vectorised_matches_the_definition_on_random_flows(mode: str) -> None:
    """1,000 random flows: flow, key and member equal binascii + bitwise crc16, per mode."""
    rng = random.Random(7)
    flows = [(rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(8), rng.getrandbits(16),
              rng.getrandbits(16), rng.getrandbits(24)) for _ in range(1000)]
    salts = [rng.getrandbits(32) for _ in flows]
    sizes = [rng.randint(1, 16) for _ in flows]
    cols = [np.array(c, dtype=np.int64) for c in zip(*flows, strict=True)]
    got = hashing.choose_member(*cols, mode=mode, salt=np.array(salts), members=np.array(sizes))
    for (s, d, pr, sp, dp, q), salt, n, g in zip(flows, salts, sizes, got, strict=True):
        if mode == "pin":
            s, pr, sp, dp, q = 0, 0, 0, 0, 0
        elif mode == "ecmp":
            q = 0
        flow = binascii.crc32(packed(s, d, pr, sp, dp, q)) % 0xFFFFFFFF
        key = ((flow ^ salt) * 0x9E3779B1) & 0xFFFFFFFF
        assert g == crc16_arc(key.to_bytes(4, "big")) % n


def test_scalar_and_vector_agree_and_ipv6_is_hashed_as_128_bits() -> None:
    """choose_member_one equals choose_member; an IPv6 source packs as its 16 bytes."""
    args = (0x0A000001, 0x0A010103, 17, 49152, 4791, 17)
    assert hashing.choose_member_one(*args, mode="eecmp", salt=9, members=2) == int(
        hashing.choose_member(*args, mode="eecmp", salt=9, members=2))
    v6 = 0x20010DB8 << 96 | 1
    assert hashing.flow_hash_bytes(v6, 2, 17, 1, 2, 3, mode="eecmp") == binascii.crc32(
        packed(v6, 2, 17, 1, 2, 3)) % 0xFFFFFFFF


def test_unknown_mode_and_empty_group_are_errors() -> None:
    """A mode outside pin/ecmp/eecmp, or a group of 0 members, is a ValueError."""
    with pytest.raises(ValueError, match="unknown routing mode"):
        hashing.flow_hash(1, 2, 3, 4, 5, 6, mode="spray")
    with pytest.raises(ValueError, match="at least one member"):
        hashing.member_index(1, 0)


# --- agreement with the P4 program on p4switch's pipeline --------------------------

R = "FabricIngress.routing."
PORT_OF = {m: 100 + m for m in range(1, 17)}  # member id -> port


@functools.cache
def rtsw_program():
    from p4switch.frontend import compile_file

    return compile_file(REPO / "p4" / "rtsw.p4", include_dirs=[REPO / "p4" / "include"])


@pytest.fixture(scope="module")
def pipeline():
    """rtsw.p4 with 16 members (ids 1..16, created in ascending id) and a group per size 2..16.

    Group n (members 1..n) is next_id n, reached by 10.n.0.0/16.
    """
    from p4switch.pipeline import PortHarness
    from p4switch.pipeline.state import ActionCall, FieldMatch, Group, Member, TableEntry

    h = PortHarness(rtsw_program(), cpu_port=255)
    s = h.switch
    for mid, port in sorted(PORT_OF.items()):
        s.member_insert(NAMES["selector"], Member(member_id=mid, action=ActionCall(
            action=NAMES["next_action"], args=(port, 0x0200000000AA, 0x0200000000BB))))
    for n in range(2, 17):
        s.group_insert(NAMES["selector"], Group(group_id=n, members=[(m, 1) for m in range(1, n + 1)]))
        s.table_insert(NAMES["next_table"], TableEntry(
            match={0: FieldMatch(kind="exact", value=n)}, group_id=n))
        s.table_insert(NAMES["route_table"], TableEntry(
            match={0: FieldMatch(kind="lpm", value=0x0A000000 | n << 16, prefix_len=16)},
            action=ActionCall(action=NAMES["route_action"], args=(n,))))
    yield h
    h.close()


def roce(src: int, dst: int, sport: int, qp: int) -> bytes:
    bth = struct.pack(">BBHII", 0x0A, 0, 0xFFFF, qp & 0xFFFFFF, 0)
    ip = lambda v: ".".join(str(v >> s & 0xFF) for s in (24, 16, 8, 0))  # noqa: E731
    return bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
                 / IP(src=ip(src), dst=ip(dst), ttl=64) / UDP(sport=sport, dport=4791) / bth
                 / (b"\x00" * 16))


def set_config(h, mode: str, salt: int) -> None:
    from p4switch.pipeline.state import ActionCall

    h.switch.table_set_default(NAMES["config_table"], ActionCall(
        action=NAMES["config_action"], args=(hashing.MODES[mode], salt)))


@pytest.mark.parametrize("salt", [0, 1, 7, 0xDEADBEEF], ids=lambda s: f"salt{s:#x}")
@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_pipeline_picks_the_member_hashing_predicts(pipeline, mode: str, salt: int) -> None:
    """8 random RoCEv2 flows per group size 2..16: the port out equals choose_member's member."""
    set_config(pipeline, mode, salt)
    rng = random.Random(hash((mode, salt)) & 0xFFFF)
    rows = []
    for n in range(2, 17):
        for _ in range(8):
            rows.append((0x0A000000 | rng.getrandbits(16), 0x0A000000 | n << 16 | rng.getrandbits(16),
                         rng.randrange(1024, 65536), rng.getrandbits(24), n))
    src, dst, sport, qp, n = (np.array(c) for c in zip(*rows, strict=True))
    want = hashing.choose_member(src, dst, 17, sport, 4791, qp, mode=mode, salt=salt, members=n)
    got = []
    for s, d, sp, q, _ in rows:
        (port, _frame), = pipeline.send(1, roce(s, d, sp, q))
        got.append(port)
    assert got == [PORT_OF[int(i) + 1] for i in want]


# --- agreement with BMv2 (simple_switch, programmed with simple_switch_CLI) ---------

BMV2_TOOLS = ("p4c-bm2-ss", "simple_switch", "simple_switch_CLI")


def _bmv2_missing() -> str | None:
    import os
    import shutil

    path = os.environ.get("PATH", "") + os.pathsep + "/opt/p4tools/bin"
    missing = [t for t in BMV2_TOOLS if not shutil.which(t, path=path)]
    if missing:
        return f"BMv2 needs {', '.join(missing)} (on PATH or in /opt/p4tools/bin)"
    if os.geteuid() != 0:
        return "the BMv2 check needs root (veth pairs and raw sockets)"
    return None


@pytest.fixture(scope="module")
def bmv2(tmp_path_factory):
    """simple_switch on rtsw.p4 (p4c-bm2-ss): port 1 in, ports 2..17 = members 1..16.

    Members are created in ascending member order (handles 0..15), a group per
    size 2..16 (members 1..n) is reached by 10.n.0.0/16, as in `pipeline`.
    The fixture takes the shared network lock (/tmp/aizone-net.lock) itself
    while its veths exist (`tests.provides.net_lock`; under `flock` it holds it already).
    """
    import os
    import socket
    import subprocess
    import time
    import uuid

    why = _bmv2_missing()
    if why:
        unavailable("bmv2", why)
    env = {**os.environ, "PATH": os.environ.get("PATH", "") + os.pathsep + "/opt/p4tools/bin"}
    with net_lock(120):
        out = tmp_path_factory.mktemp("bmv2")
        subprocess.run(["p4c-bm2-ss", "-I", str(REPO / "p4" / "include"),
                        "-o", str(out / "rtsw.json"), str(REPO / "p4" / "rtsw.p4")],
                       check=True, capture_output=True, env=env)
        tag = f"hb{uuid.uuid4().hex[:5]}"
        ports = list(range(1, 18))
        for p in ports:
            subprocess.run(["ip", "link", "add", f"{tag}s{p}", "type", "veth", "peer", "name",
                            f"{tag}h{p}"], check=True)
            for end in ("s", "h"):
                subprocess.run(["ip", "link", "set", f"{tag}{end}{p}", "up"], check=True)
                subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{tag}{end}{p}.disable_ipv6=1"],
                               check=False)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            thrift = s.getsockname()[1]
        cmd = ["simple_switch", "--thrift-port", str(thrift), "--device-id", "9"]
        for p in ports:
            cmd += ["-i", f"{p}@{tag}s{p}"]
        proc = subprocess.Popen([*cmd, str(out / "rtsw.json")], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        socks = {}
        try:
            lines = []
            for mid in range(1, 17):
                lines.append(f"act_prof_create_member {NAMES['selector']} {NAMES['next_action']} "
                             f"{mid + 1} 0x0200000000aa 0x0200000000bb")
            for n in range(2, 17):
                lines.append(f"act_prof_create_group {NAMES['selector']}")
                for h in range(n):
                    lines.append(f"act_prof_add_member_to_group {NAMES['selector']} {h} {n - 2}")
                lines.append(f"table_indirect_add_with_group {NAMES['next_table']} {n} => {n - 2}")
                lines.append(f"table_add {NAMES['route_table']} {NAMES['route_action']} "
                             f"10.{n}.0.0/16 => {n}")
            deadline = time.monotonic() + 30
            while True:
                r = subprocess.run(["simple_switch_CLI", "--thrift-port", str(thrift)],
                                   input="\n".join(lines) + "\n", text=True, capture_output=True,
                                   env=env)
                if "Could not connect" not in r.stdout + r.stderr or time.monotonic() > deadline:
                    break
                time.sleep(0.3)
            assert "Error" not in r.stdout, r.stdout[-2000:]
            for p in ports:
                sk = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
                sk.bind((f"{tag}h{p}", 0))
                sk.setblocking(False)
                socks[p] = sk

            def cli(text: str) -> str:
                return subprocess.run(["simple_switch_CLI", "--thrift-port", str(thrift)],
                                      input=text + "\n", text=True, capture_output=True,
                                      env=env).stdout

            yield socks, cli
        finally:
            for sk in socks.values():
                sk.close()
            os.killpg(proc.pid, 15)
            proc.wait(10)
            for p in ports:
                subprocess.run(["ip", "link", "del", f"{tag}s{p}"], check=False,
                               capture_output=True)


def _bmv2_port(socks, frame: bytes, timeout: float = 3.0) -> int | None:
    import select
    import time

    for sk in socks.values():  # drop anything left over
        while True:
            try:
                sk.recv(65535)
            except BlockingIOError:
                break
    socks[1].send(frame)
    deadline = time.monotonic() + timeout
    want = frame[26:34]  # the IPv4 addresses identify our packet
    while time.monotonic() < deadline:
        ready, _, _ = select.select([s for p, s in socks.items() if p != 1], [], [], 0.2)
        for sk in ready:
            data = sk.recv(65535)
            if data[26:34] == want:
                return next(p for p, s in socks.items() if s is sk)
    return None


@pytest.mark.parametrize("mode", ["pin", "ecmp", "eecmp"])
def test_bmv2_picks_the_member_hashing_predicts(bmv2, mode: str) -> None:
    """BMv2: 2 random RoCEv2 flows per group size 2..16 and two salts go where choose_member says."""
    socks, cli = bmv2
    rng = random.Random(5 + hashing.MODES[mode])
    for salt in (3, 0x9E3779B1):
        cli(f"table_set_default {NAMES['config_table']} {NAMES['config_action']} "
            f"{hashing.MODES[mode]} {salt}")
        got, want = [], []
        for n in range(2, 17):
            for _ in range(2):
                s = 0x0A000000 | rng.getrandbits(16)
                d = 0x0A000000 | n << 16 | rng.getrandbits(16)
                sp, q = rng.randrange(1024, 65536), rng.getrandbits(24)
                want.append(int(hashing.choose_member(s, d, 17, sp, 4791, q, mode=mode, salt=salt,
                                                      members=n)) + 2)
                got.append(_bmv2_port(socks, roce(s, d, sp, q)))
        assert got == want
