"""The differential rig: BMv2 and p4switch as processes on veth ports, one P4Runtime client each.

`Rig` creates two sets of veth pairs (one per target, IPv6 off before the
links come up so the kernel sends nothing on them), starts
`simple_switch_grpc --no-p4` and `p4switch --no-p4` on the switch ends with
the same port numbers and `--cpu-port`, opens one AF_PACKET socket per test
end and one P4Runtime session (`Session`: primary arbitration on a
StreamChannel, packet-ins and DigestLists kept) per switch. The processes serve one program
after another: `load(Compiled)` pushes a program to both at once
(SetForwardingPipelineConfig); a target that refuses it is restarted and
`Refused` says why. `write` sends the same updates to both (one request
each) and returns each update's status; `exchange(frames)` sends each
(port, frame) to both switches, waits until both are quiet and returns what
each sent, per port as a sorted list (the order across ingress ports is not
defined on BMv2), packet-ins included (port `CPU`); `more(s)` waits longer
for late frames.

`compile_both(path)` compiles a program with p4c-bm2-ss (BMv2 JSON +
P4Info) and with p4switch's front end (its program file); the P4Info sent to
both is p4c's (the unit tests hold p4switch's equal to it). `p4c(path)` is
the p4c-bm2-ss half alone, cached by content (`P4cCache`).

Processes and veths are removed whatever happens. Everything here needs root
and runs under the shared network lock (the `rig` fixture takes it: conftest.py).

Names defined here: `Rig`, `Session`, `Refused`, `Compiled`, `Outputs`,
`compile_both`, `p4c`, `P4cCache`, `tools_missing`, `CPU`, `PORTS`.
"""

from __future__ import annotations

import hashlib
import json
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
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import text_format

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.frontend.preprocess import preprocess
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
PUSH_TIMEOUT = 8  # seconds; a push takes milliseconds, or hangs (see LOOPING_OPS): the target is restarted
# BMv2 swaps a pipeline only once no packet of the old one is left, and a
# resubmit/recirculate/egress-clone loop keeps one for ever without sending
# anything (so an exchange still ends quiet): after a program that has these
# primitives both switches are restarted before the next push
LOOPING_OPS = ('"resubmit"', '"recirculate"', '"clone_egress_pkt_to_egress"')
# frames/s offered to each switch. BMv2 forwards ~19k/s here, but reads each port
# through a libpcap ring of some 30 frames (its snaplen is 64 KiB): when the
# loaded machine holds its thread back for longer than that takes to fill, the
# kernel drops what comes next
RATE = 2000
QUIET = 0.08  # seconds without a frame from either switch that end an exchange

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


@dataclass(frozen=True)
class P4cOutput:
    """What p4c-bm2-ss made of a program: P4Info (text format) and BMv2 JSON, or its error."""

    p4info_text: str
    bmv2_json: bytes
    error: str = ""


class P4cCache:
    """p4c-bm2-ss outputs kept by content: the key is p4c's version and the preprocessed source.

    `root` None keeps nothing. A failed compilation is kept too (its stderr),
    so a program p4c refuses costs one run.
    """

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._version: str | None = None

    def version(self) -> str:
        if self._version is None:
            exe = shutil.which("p4c-bm2-ss", path=_path()) or "p4c-bm2-ss"
            run = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
            self._version = run.stdout.strip()
        return self._version

    def key(self, path: Path, include_dirs: list[Path]) -> str:
        text = preprocess(path, tuple(include_dirs)).text
        return hashlib.sha256(f"{self.version()}\0{path.name}\0{text}".encode()).hexdigest()[:32]

    def compile(self, path: Path, include_dirs: Iterable[Path] = ()) -> P4cOutput:
        incs = list(include_dirs)
        key = self.key(path, incs) if self.root is not None else ""
        if self.root is not None:
            hit = self.root / f"{key}.json"
            try:
                doc = json.loads(hit.read_text())
                return P4cOutput(p4info_text=doc["p4info"], bmv2_json=doc["bmv2"].encode(), error=doc["error"])
            except (OSError, ValueError, KeyError, TypeError):
                pass  # not there (or damaged): compiled again
        out = _run_p4c(path, incs)
        if self.root is not None:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.root / f"{key}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps({"p4info": out.p4info_text, "bmv2": out.bmv2_json.decode(),
                                       "error": out.error}))
            tmp.replace(self.root / f"{key}.json")
        return out


def _run_p4c(path: Path, incs: list[Path]) -> P4cOutput:
    with tempfile.TemporaryDirectory(prefix="aizone-p4c-") as d:
        js, info = Path(d) / f"{path.stem}.json", Path(d) / f"{path.stem}.p4info.txtpb"
        args = [shutil.which("p4c-bm2-ss", path=_path()) or "p4c-bm2-ss", "-o", str(js),
                "--p4runtime-files", str(info)]
        for inc in incs:
            args += ["-I", str(inc)]
        run = subprocess.run([*args, str(path)], capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            return P4cOutput(p4info_text="", bmv2_json=b"", error=run.stderr.strip())
        return P4cOutput(p4info_text=info.read_text(), bmv2_json=js.read_bytes())


def p4c(path: Path, include_dirs: Iterable[Path] = (), cache: P4cCache | None = None) -> P4cOutput:
    """p4c-bm2-ss's outputs for `path` (through `cache` when given)."""
    return (cache or P4cCache(None)).compile(path, include_dirs)


def compile_both(path: Path, include_dirs: Iterable[Path] = (), cache: P4cCache | None = None,
                 reference: P4cOutput | None = None) -> Compiled:
    """BMv2 JSON and P4Info from p4c-bm2-ss, the p4switch program file from its front end.

    `reference`: p4c's outputs when already made (the suite compiles ahead).
    Raises RuntimeError with p4c's words when p4c refuses the program.
    """
    incs = list(include_dirs)
    ref = reference or p4c(path, incs, cache)
    if ref.error:
        raise RuntimeError(f"p4c-bm2-ss {path.name}: {ref.error}")
    p4info = text_format.Parse(ref.p4info_text, p4i.P4Info())
    program = compile_file(path, include_dirs=incs)
    blob = ir.to_json(program, ref.p4info_text).encode()
    return Compiled(name=path.stem, p4info=p4info, bmv2_json=ref.bmv2_json, p4switch_program=blob)


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
        self.digest_lists: queue.Queue[p4r.DigestList] = queue.Queue()
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
                elif which == "digest":
                    self.digest_lists.put(msg.digest)
        except grpc.RpcError:
            pass

    def set_pipeline(self, info: p4i.P4Info, device_config: bytes) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=self.election,
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(info)
        req.config.p4_device_config = device_config
        self.stub.SetForwardingPipelineConfig(req, timeout=PUSH_TIMEOUT)

    def write(self, updates: list[p4r.Update]) -> list[tuple[int, str]]:
        """Apply `updates` in one request; (canonical code (0 for OK), message) of each."""
        if not updates:
            return []
        req = p4r.WriteRequest(device_id=self.device_id, election_id=self.election, updates=updates)
        try:
            self.stub.Write(req, timeout=60)
        except grpc.RpcError as e:
            return _update_codes(e, len(updates))
        return [(0, "")] * len(updates)

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

    def digests(self, count: int, timeout: float) -> list[p4r.DigestList]:
        """The DigestLists sent so far and those that come within `timeout` s, until `count` came."""
        out: list[p4r.DigestList] = []
        deadline = time.monotonic() + timeout
        while len(out) < count:
            try:
                out.append(self.digest_lists.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                break
        return out

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()


def _update_codes(e: grpc.RpcError, n: int) -> list[tuple[int, str]]:
    """(p4.v1.Error code, message) of each update of a failed write (PI and p4switch send the details)."""
    from p4switch.proto import rpc_status

    for key, value in (e.trailing_metadata() or ()):
        if key == "grpc-status-details-bin":
            status = rpc_status.Status.FromString(value)
            codes = []
            for detail in status.details:
                err = p4r.Error()
                if detail.Unpack(err):
                    codes.append((int(err.canonical_code), err.message))
            if len(codes) == n:
                return codes
    return [(int(e.code().value[0]), e.details() or "")] * n


class Refused(Exception):
    """A target refused a pipeline (SetForwardingPipelineConfig failed); it was restarted."""

    def __init__(self, target: str, reason: str) -> None:
        super().__init__(f"{target} refused the pipeline: {reason}")
        self.target = target
        self.reason = reason


@dataclass
class _Target:
    name: str
    proc: subprocess.Popen[bytes]
    session: Session
    socks: dict[int, socket.socket]
    log: Path
    frames: dict[int, list[bytes]] = field(default_factory=dict)
    ins: list[p4r.PacketIn] = field(default_factory=list)


class Rig:
    """Both targets running, with their ports' test ends open; a context manager.

    The switch processes are reused from program to program (each `load` is
    a SetForwardingPipelineConfig, which starts from empty tables and zeroed
    counters); a target that refuses a pipeline is restarted, so that no
    state of the refused push can leak into the next program.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.made: list[str] = []
        self.targets: dict[str, _Target] = {}
        self.loaded: str | None = None
        self.settled = True
        self.restarts = 0
        self._may_loop = False
        self._log_mark: dict[str, int] = {}
        self._pool = ThreadPoolExecutor(max_workers=len(TARGETS), thread_name_prefix="rig")

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Rig:
        try:
            self._veths()
            for name, t in zip(TARGETS, self._both(self._start), strict=True):
                self.targets[name] = t
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _both(self, fn: Callable[[str], Any]) -> list[Any]:
        """fn(target name) for both targets at once (gRPC calls and process starts wait without the GIL)."""
        futures = [self._pool.submit(fn, name) for name in TARGETS]
        return [f.result() for f in futures]

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
            trace = ["--log-console", "-L", "debug"] if os.environ.get("AIZONE_DIFF_TRACE") else []
            cmd = [exe, "--no-p4", "--device-id", str(DEVICE_ID), "--thrift-port", str(_free_port()), *ifs,
                   *trace, "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}", "--cpu-port", str(CPU)]
        else:
            cmd = [sys.executable, "-m", "p4switch", "--no-p4", "--device-id", str(DEVICE_ID), *ifs,
                   "--grpc-server-addr", f"127.0.0.1:{grpc_port}", "--cpu-port", str(CPU)]
        with log.open("ab") as out:
            # setpriv: the switch gets SIGTERM when this process dies, so a killed run leaves none
            # stdbuf: BMv2 prints some refusals on stdout, which a file would hold back
            proc = subprocess.Popen(["setpriv", "--pdeathsig", "TERM", "stdbuf", "-oL", "-eL", *cmd], stdout=out,
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
                time.sleep(0.1)

    @staticmethod
    def _stop(t: _Target) -> None:
        t.session.close()
        for s in t.socks.values():
            s.close()
        t.proc.terminate()
        try:
            t.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            t.proc.kill()
            t.proc.wait()

    def restart(self, name: str) -> None:
        """Stop target `name` and start it again (no pipeline)."""
        self._stop(self.targets.pop(name))
        self.restarts += 1
        self.targets[name] = self._start(name)

    def close(self) -> None:
        for t in self.targets.values():
            self._stop(t)
        self.targets.clear()
        while self.made:
            subprocess.run(["ip", "link", "del", self.made.pop()], capture_output=True)
        self._pool.shutdown(wait=False)

    # ------------------------------------------------------------------ use
    def sessions(self) -> Iterator[tuple[str, Session]]:
        for name, t in self.targets.items():
            yield name, t.session

    def load(self, compiled: Compiled) -> None:
        """Push `compiled` to both switches (a fresh pipeline: no entries, counters at zero).

        A target that refuses it is restarted and `Refused` names it with
        its reason: the gRPC status and what it logged meanwhile (PI prints
        why it refused a P4Info there, e.g. "Packed type for digest too complex").
        """
        configs = {"bmv2": compiled.bmv2_json, "p4switch": compiled.p4switch_program}
        self.loaded = None
        for name in TARGETS:
            if self._may_loop or self.targets[name].proc.poll() is not None:
                self.restart(name)  # a switch that died (or may loop) with the last program

        def push(name: str) -> str | None:
            t = self.targets[name]
            mark = self._log_mark[name] = t.log.stat().st_size
            try:
                t.session.set_pipeline(compiled.p4info, configs[name])
            except grpc.RpcError as e:
                time.sleep(0.05)  # the switch's own words reach its log
                logged = t.log.read_bytes()[mark:].decode(errors="replace").strip()
                return f"{e.code().name}: {e.details()}" + (f" (log: {logged})" if logged else "")
            return None

        errors = dict(zip(TARGETS, self._both(push), strict=True))
        for name, why in list(errors.items()):
            if why is not None:
                self.restart(name)
                if why.startswith("DEADLINE_EXCEEDED"):  # a hung switch: once more on a fresh one
                    errors[name] = push(name)
                    if errors[name] is not None:
                        self.restart(name)
        refused = [(n, w) for n, w in errors.items() if w is not None]
        self._may_loop = False
        if refused:
            raise Refused(refused[0][0], refused[0][1] or "")
        self.loaded = compiled.name
        self._may_loop = any(op in compiled.bmv2_json.decode() for op in LOOPING_OPS)
        self._collect(0.0)

    def alive(self) -> dict[str, int | None]:
        return {n: t.proc.poll() for n, t in self.targets.items()}

    def log_since_load(self, name: str) -> str:
        """What target `name` logged since the last push began."""
        return self.targets[name].log.read_bytes()[self._log_mark.get(name, 0):].decode(errors="replace")

    def log_tail(self, name: str, n: int = 1500) -> str:
        """The end of target `name`'s log (what a crashed switch said last)."""
        return self.targets[name].log.read_bytes()[-n:].decode(errors="replace")

    def write(self, updates: list[p4r.Update]) -> dict[str, list[tuple[int, str]]]:
        """Apply `updates` to both, one request per target; each update's (status code, message)."""
        return dict(zip(TARGETS, self._both(lambda n: self.targets[n].session.write(updates)), strict=True))

    def read(self, entities: list[p4r.Entity]) -> dict[str, list[p4r.Entity]]:
        return dict(zip(TARGETS, self._both(lambda n: self.targets[n].session.read(entities)), strict=True))

    def exchange(self, frames: list[tuple[int, bytes]], quiet: float = QUIET, limit: float = 3.0,
                 gap: float = 0.0, rate: float = 0.0) -> dict[str, Outputs]:
        """Send every (port, frame) to both switches; per target, what came out of each port.

        `gap` (seconds) spaces the frames so that no queue builds up on either
        target: what a program reads of queue depths is then 0 on both.
        Otherwise they go at `rate` frames/s (`RATE` when 0).
        The outputs are whatever came until both switches were quiet for
        `quiet` seconds; `more()` waits longer for late frames.
        """
        self._collect(0.0)  # whatever came late from the last exchange is not this one's
        for t in self.targets.values():
            t.frames = {}
            t.session.drain_packet_ins()
            t.ins = []
        start = time.monotonic()
        for i, (port, frame) in enumerate(frames):
            for t in self.targets.values():
                t.socks[port].send(frame)
            if gap:
                self._collect(gap)
                self._collect_until(start + (i + 1) / (rate or RATE))
            elif i % 4 == 3:
                # paced: BMv2 loses frames that come faster than it reads its ports
                self._collect_until(start + (i + 1) / (rate or RATE))
        # a switch that never goes quiet (a packet recirculated or cloned for
        # ever by the entries drawn) has no defined output to compare
        self.settled = self._settle(quiet, limit)
        return self.outputs()

    def more(self, seconds: float, limit: float | None = None) -> dict[str, Outputs]:
        """The last exchange's outputs after waiting `seconds` more for late frames.

        `settled` then says whether both switches went quiet for `seconds`
        within `limit` (default `seconds` + 1).
        """
        self.settled = self._settle(seconds, seconds + 1.0 if limit is None else limit)
        return self.outputs()

    def outputs(self) -> dict[str, Outputs]:
        out: dict[str, Outputs] = {}
        for name, t in self.targets.items():
            # frames from different ingress ports reach BMv2 on different
            # threads, so the order across them is not defined: a port's
            # output is compared as a sorted list (a multiset)
            got: Outputs = {p: sorted(fs) for p, fs in t.frames.items() if fs}
            t.ins.extend(t.session.drain_packet_ins())
            if t.ins:
                got[CPU] = sorted(pi.payload + b"".join(m.SerializeToString() for m in pi.metadata) for pi in t.ins)
            out[name] = got
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
                t.frames.setdefault(p, []).append(_with_vlan_tag(frame, anc))
                n += 1
        return n

    def _collect_until(self, deadline: float) -> None:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._collect(left)

    def _settle(self, quiet: float, limit: float = 3.0) -> bool:
        """Collect until nothing arrived for `quiet` seconds (packet-ins included); False at `limit`."""
        deadline = time.monotonic() + limit
        last = time.monotonic()
        ins = 0
        while time.monotonic() < deadline:
            n = self._collect(0.01)
            q = sum(t.session.packet_ins.qsize() for t in self.targets.values())
            if n or q != ins:
                last, ins = time.monotonic(), q
            elif time.monotonic() - last >= quiet:
                return True
        return False
