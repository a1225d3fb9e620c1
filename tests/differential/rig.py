"""The differential rig: BMv2 and p4switch as processes on veth ports, one P4Runtime client each.

`Rig` creates two sets of veth pairs (one per target, IPv6 off before the
links come up so the kernel sends nothing on them), starts
`simple_switch_grpc --no-p4` and `p4switch --no-p4` on the switch ends with
the same port numbers and `--cpu-port`, opens one AF_PACKET socket per test
end and one P4Runtime session (`Session`: primary arbitration on a
StreamChannel, packet-ins kept) per switch. A program is pushed to both
with `load(Compiled)`; `exchange(frames)` sends each (port, frame) to both
switches, waits until both are quiet and returns what each sent, per port as
a sorted list (the order across ingress ports is not defined on BMv2),
packet-ins included (port `CPU`).

`compile_both(path)` compiles a program with p4c-bm2-ss (BMv2 JSON +
P4Info) and with p4switch's front end (its program file); the P4Info sent to
both is p4c's (the unit tests hold p4switch's equal to it).

Processes and veths are removed whatever happens. Everything here needs root
and runs under `flock /tmp/aizone-net.lock` (the caller takes the lock).

Names defined here: `Rig`, `Session`, `Compiled`, `Outputs`, `compile_both`,
`tools_missing`, `CPU`, `PORTS`.
"""

from __future__ import annotations

import os
import queue
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from google.protobuf import text_format

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.proto import p4i, p4r, p4r_grpc

REPO = Path(__file__).resolve().parents[2]
TOOLS = "/opt/p4tools/bin"
PORTS = (1, 2, 3, 4)
CPU = 255
DEVICE_ID = 1
ETH_P_ALL = 0x0003
SOL_PACKET, PACKET_IGNORE_OUTGOING, PACKET_AUXDATA = 263, 23, 8
# per-target prefixes of the veth names: <p><port> on the switch, <p><port>t on the test side
PREFIX = {"bmv2": "dfb", "p4switch": "dfp"}
TARGETS = ("bmv2", "p4switch")

Outputs = dict[int, list[bytes]]  # port -> frames, sorted (CPU: packet-in payloads + metadata)


def _path() -> str:
    return os.pathsep.join([TOOLS, os.environ.get("PATH", "")])


def tools_missing() -> str | None:
    """Why the rig cannot run here, or None."""
    for tool in ("p4c-bm2-ss", "simple_switch_grpc"):
        if shutil.which(tool, path=_path()) is None:
            return f"{tool} not installed ({TOOLS} or PATH)"
    if os.geteuid() != 0:
        return "the differential rig needs root (veth pairs, raw sockets)"
    return None


@dataclass(frozen=True)
class Compiled:
    name: str
    p4info: p4i.P4Info
    bmv2_json: bytes
    p4switch_program: bytes


def compile_both(path: Path, include_dirs: Iterable[Path] = (), workdir: Path | None = None) -> Compiled:
    """BMv2 JSON and P4Info from p4c-bm2-ss, the p4switch program file from its front end."""
    incs = list(include_dirs)
    out = Path(workdir or tempfile.mkdtemp(prefix="aizone-diff-"))
    out.mkdir(parents=True, exist_ok=True)
    js, info = out / f"{path.stem}.json", out / f"{path.stem}.p4info.txtpb"
    args = [shutil.which("p4c-bm2-ss", path=_path()) or "p4c-bm2-ss", "-o", str(js), "--p4runtime-files", str(info)]
    for d in incs:
        args += ["-I", str(d)]
    run = subprocess.run([*args, str(path)], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        raise RuntimeError(f"p4c-bm2-ss {path.name}: {run.stderr.strip()}")
    p4info = text_format.Parse(info.read_text(), p4i.P4Info())
    program = compile_file(path, include_dirs=incs)
    blob = ir.to_json(program, text_format.MessageToString(p4info)).encode()
    return Compiled(name=path.stem, p4info=p4info, bmv2_json=js.read_bytes(), p4switch_program=blob)


def _ip(*args: str) -> None:
    run = subprocess.run(["ip", *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {run.stderr.strip()}")


def _with_vlan_tag(frame: bytes, anc: list[tuple[int, int, bytes]]) -> bytes:
    """The frame with the 802.1Q tag the kernel took out of it (tpacket_auxdata) put back."""
    for level, kind, data in anc:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(data) >= 20:
            status, _, _, _, _, tci, tpid = struct.unpack_from("=IIIHHHH", data)
            if status & 0x10 or tci:  # TP_STATUS_VLAN_VALID
                tpid = tpid if status & 0x40 else 0x8100  # TP_STATUS_VLAN_TPID_VALID
                return frame[:12] + struct.pack(">HH", tpid, tci) + frame[12:]
    return frame


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Session:
    """A primary P4Runtime session to one switch: pipeline push, writes, reads, packet-ins."""

    def __init__(self, addr: str, device_id: int = DEVICE_ID) -> None:
        self.device_id = device_id
        self.channel = grpc.insecure_channel(addr)
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.election = p4r.Uint128(high=0, low=1)
        self._out: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self.packet_ins: queue.Queue[p4r.PacketIn] = queue.Queue()
        self._arbitrated = threading.Event()
        self._stream = self.stub.StreamChannel(iter(self._out.get, None))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._out.put(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
            device_id=device_id, election_id=self.election)))
        if not self._arbitrated.wait(30):
            raise RuntimeError(f"{addr}: no arbitration answer")

    def _read(self) -> None:
        try:
            for msg in self._stream:
                which = msg.WhichOneof("update")
                if which == "arbitration":
                    self._arbitrated.set()
                elif which == "packet":
                    self.packet_ins.put(msg.packet)
        except grpc.RpcError:
            pass

    def set_pipeline(self, info: p4i.P4Info, device_config: bytes) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=self.election,
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(info)
        req.config.p4_device_config = device_config
        self.stub.SetForwardingPipelineConfig(req, timeout=120)

    def write(self, updates: list[p4r.Update]) -> list[int]:
        """Apply `updates` one request each; the canonical code of each (0 for OK)."""
        codes = []
        for u in updates:
            req = p4r.WriteRequest(device_id=self.device_id, election_id=self.election)
            req.updates.add().CopyFrom(u)
            try:
                self.stub.Write(req, timeout=30)
                codes.append(0)
            except grpc.RpcError as e:
                codes.append(_update_code(e))
        return codes

    def read(self, entities: list[p4r.Entity]) -> list[p4r.Entity]:
        req = p4r.ReadRequest(device_id=self.device_id, entities=entities)
        return [e for resp in self.stub.Read(req, timeout=60) for e in resp.entities]

    def drain_packet_ins(self) -> list[p4r.PacketIn]:
        out = []
        while True:
            try:
                out.append(self.packet_ins.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()


def _update_code(e: grpc.RpcError) -> int:
    """The p4.v1.Error code of a one-update write (PI and p4switch both send the details)."""
    from p4switch.proto import rpc_status

    for key, value in (e.trailing_metadata() or ()):
        if key == "grpc-status-details-bin":
            status = rpc_status.Status.FromString(value)
            for detail in status.details:
                err = p4r.Error()
                if detail.Unpack(err) and err.canonical_code:
                    return int(err.canonical_code)
    return int(e.code().value[0])


@dataclass
class _Target:
    name: str
    proc: subprocess.Popen[bytes]
    session: Session
    socks: dict[int, socket.socket]
    log: Path
    frames: dict[int, list[tuple[float, bytes]]] = field(default_factory=dict)


class Rig:
    """Both targets running, with their ports' test ends open; a context manager."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.made: list[str] = []
        self.targets: dict[str, _Target] = {}
        self.loaded: str | None = None
        self.settled = True

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Rig:
        try:
            self._veths()
            for name in TARGETS:
                self.targets[name] = self._start(name)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _veths(self) -> None:
        for prefix in PREFIX.values():
            for p in PORTS:
                a, b = f"{prefix}{p}", f"{prefix}{p}t"
                subprocess.run(["ip", "link", "del", a], capture_output=True)  # a leftover of a killed run
                _ip("link", "add", a, "type", "veth", "peer", "name", b)
                self.made.append(a)
                for n in (a, b):
                    Path(f"/proc/sys/net/ipv6/conf/{n}/disable_ipv6").write_text("1")
                    _ip("link", "set", n, "mtu", "9000")
                    _ip("link", "set", n, "up")

    def _start(self, name: str) -> _Target:
        grpc_port = _free_port()
        ifs = [a for p in PORTS for a in ("-i", f"{p}@{PREFIX[name]}{p}")]
        log = self.workdir / f"{name}.log"
        if name == "bmv2":
            exe = shutil.which("simple_switch_grpc", path=_path()) or "simple_switch_grpc"
            cmd = [exe, "--no-p4", "--device-id", str(DEVICE_ID), "--thrift-port", str(_free_port()), *ifs,
                   "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}", "--cpu-port", str(CPU)]
        else:
            cmd = [sys.executable, "-m", "p4switch", "--no-p4", "--device-id", str(DEVICE_ID), *ifs,
                   "--grpc-server-addr", f"127.0.0.1:{grpc_port}", "--cpu-port", str(CPU)]
        with log.open("wb") as out:
            # setpriv: the switch gets SIGTERM when this process dies, so a killed run leaves none
            proc = subprocess.Popen(["setpriv", "--pdeathsig", "TERM", *cmd], stdout=out,
                                    stderr=subprocess.STDOUT, cwd=self.workdir)
        try:
            session = self._connect(f"127.0.0.1:{grpc_port}", proc, log)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        socks = {}
        for p in PORTS:
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
            s.bind((f"{PREFIX[name]}{p}t", ETH_P_ALL))
            s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)  # VLAN tags back in place, as libpcap
            s.setblocking(False)
            socks[p] = s
        return _Target(name=name, proc=proc, session=session, socks=socks, log=log)

    @staticmethod
    def _connect(addr: str, proc: subprocess.Popen[bytes], log: Path) -> Session:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"switch exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                return Session(addr)
            except (grpc.FutureTimeoutError, RuntimeError, grpc.RpcError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def close(self) -> None:
        for t in self.targets.values():
            t.session.close()
            for s in t.socks.values():
                s.close()
            t.proc.terminate()
            try:
                t.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                t.proc.kill()
                t.proc.wait()
        self.targets.clear()
        while self.made:
            subprocess.run(["ip", "link", "del", self.made.pop()], capture_output=True)

    # ------------------------------------------------------------------ use
    def sessions(self) -> Iterator[tuple[str, Session]]:
        for name, t in self.targets.items():
            yield name, t.session

    def load(self, compiled: Compiled) -> None:
        """Push `compiled` to both switches (a fresh pipeline: no entries, counters at zero)."""
        self.targets["bmv2"].session.set_pipeline(compiled.p4info, compiled.bmv2_json)
        self.targets["p4switch"].session.set_pipeline(compiled.p4info, compiled.p4switch_program)
        self.loaded = compiled.name
        self._settle(0.3)

    def alive(self) -> dict[str, int | None]:
        return {n: t.proc.poll() for n, t in self.targets.items()}

    def write(self, updates: list[p4r.Update]) -> dict[str, list[int]]:
        return {n: s.write(updates) for n, s in self.sessions()}

    def read(self, entities: list[p4r.Entity]) -> dict[str, list[p4r.Entity]]:
        return {n: s.read(entities) for n, s in self.sessions()}

    def exchange(self, frames: list[tuple[int, bytes]], quiet: float = 0.12, limit: float = 3.0,
                 gap: float = 0.0) -> dict[str, Outputs]:
        """Send every (port, frame) to both switches; per target, what came out of each port.

        `gap` (seconds) spaces the frames so that no queue builds up on either
        target: what a program reads of queue depths is then 0 on both.
        """
        self._collect(0.0)  # whatever came late from the last exchange is not this one's
        for t in self.targets.values():
            t.frames = {}
            t.session.drain_packet_ins()
        for i, (port, frame) in enumerate(frames):
            for t in self.targets.values():
                t.socks[port].send(frame)
            if gap:
                self._collect(gap)
            elif i % 16 == 15:
                self._collect(0.0)  # keep the receive buffers short; pace the senders a little
        # a switch that never goes quiet (a packet recirculated or cloned for
        # ever by the entries drawn) has no defined output to compare
        self.settled = self._settle(quiet, limit)
        out: dict[str, Outputs] = {}
        for name, t in self.targets.items():
            # frames from different ingress ports reach BMv2 on different
            # threads, so the order across them is not defined: a port's
            # output is compared as a sorted list (a multiset)
            got: Outputs = {p: sorted(f for _, f in t.frames.get(p, [])) for p in PORTS}
            got = {p: fs for p, fs in got.items() if fs}
            ins = t.session.drain_packet_ins()
            if ins:
                got[CPU] = sorted(pi.payload + b"".join(m.SerializeToString() for m in pi.metadata) for pi in ins)
            out[name] = got
            t.frames = {}
        return out

    def _collect(self, timeout: float) -> int:
        fds = {s.fileno(): (t, p, s) for t in self.targets.values() for p, s in t.socks.items()}
        n = 0
        for fd in select.select(list(fds), [], [], timeout)[0]:
            t, p, s = fds[fd]
            while True:
                try:
                    frame, anc, _, _ = s.recvmsg(65535, 64)
                except BlockingIOError:
                    break
                frame = _with_vlan_tag(frame, anc)
                t.frames.setdefault(p, []).append((time.monotonic(), frame))
                n += 1
        return n

    def _settle(self, quiet: float, limit: float = 3.0) -> bool:
        """Collect until nothing arrived for `quiet` seconds (packet-ins included); False at `limit`."""
        deadline = time.monotonic() + limit
        last = time.monotonic()
        ins = 0
        while time.monotonic() < deadline:
            n = self._collect(0.02)
            q = sum(t.session.packet_ins.qsize() for t in self.targets.values())
            if n or q != ins:
                last, ins = time.monotonic(), q
            elif time.monotonic() - last >= quiet:
                return True
        return False
