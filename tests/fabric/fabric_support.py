"""Helpers for fabric tests: leftover checks, running the aizone CLI, a fabric up for a
test (`fabric_up`), a capture during one (`capturing`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from controller.hostagents import agents_dir
from experiments.sizes import running_ack_timeout_ms as experiment_ack_timeout_ms
from tests.provides import unavailable
from topologies.addressing import AddressPlan, plan_addresses
from topologies.runstate import OUR_INTF, read_state, root_links
from topologies.spec import FabricSpec, load_spec
from traffic.agentclient import AgentClient
from traffic.collectives import Rank
from traffic.flowjobs import flow_jobs, received, sent
from traffic.schema import Transport

ROOT = Path(__file__).resolve().parents[2]


def marked_processes() -> list[str]:
    """Processes carrying the aizone run marker (cmdlines)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if env.startswith(b"AIZONE_RUN=") or b"\0AIZONE_RUN=" in env:
            out.append(f"{entry.name}: {cmd}")
    return out


def our_namespaces() -> list[str]:
    """Network namespaces (by inode) that hold a marked process other than the root one.

    Mininet's host namespaces are anonymous: they live as long as a process
    in them does, so "no namespace left" means no process of ours holds one.
    Other projects' processes on a shared machine are not counted.
    """
    root = os.stat("/proc/self/ns/net").st_ino
    out = set()
    for line in marked_processes():
        pid = line.split(":", 1)[0]
        try:
            ino = os.stat(f"/proc/{pid}/ns/net").st_ino
        except OSError:
            continue
        if ino != root:
            out.add(str(ino))
    return sorted(out)


def leftovers() -> dict[str, list[str]]:
    """What a finished run must not leave: processes, namespaces, interfaces, state file,
    reserved ports."""
    reserved = Path("/proc/sys/net/ipv4/ip_local_reserved_ports").read_text().strip()
    return {
        "processes": marked_processes(),
        "netns": our_namespaces(),
        "interfaces": [n for n in root_links() if OUR_INTF.match(n)],
        "pinned": pinned_namespaces(),
        "state": ["run.json"] if read_state() is not None else [],
        "reserved ports": [reserved] if reserved else [],
    }


def assert_clean(before: dict[str, list[str]] | None = None) -> None:
    now = leftovers()
    if before is not None:
        now = {k: [x for x in v if x not in before.get(k, [])] for k, v in now.items()}
    assert now == {k: [] for k in now}, f"leftovers: {now}"


def aizone(*args: str, user: str | None = None, timeout: float = 600,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the aizone CLI (`python -m aizone.cli`), optionally as another user."""
    cmd = [sys.executable, "-m", "aizone.cli", *args]
    if user:
        # The user keeps only the right to read any directory, so that a checkout
        # under a private directory (mktemp -d is 0700) still imports.
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user if user != 'nobody' else 'nogroup'}",
               "--clear-groups", "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", *cmd]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@contextlib.contextmanager
def fabric_up(topology: Path, target: str, build_dir: Path, *flags: str
              ) -> Iterator[dict[str, Any]]:
    """`aizone up TOPOLOGY --target T FLAGS --json`, its status while up, `aizone down` after,
    which must leave nothing behind."""
    before = leftovers()
    up = aizone("up", str(topology), "--target", target, "--build-dir", str(build_dir),
                *flags, "--json")
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        yield json.loads(up.stdout)
    finally:
        down = aizone("down")
        assert down.returncode == 0, down.stderr
        assert_clean(before)


@contextlib.contextmanager
def capturing(where: str, pcap: Path, seconds: float) -> Iterator[dict[str, Any]]:
    """`aizone capture WHERE -w PCAP --seconds S --json` running (it has said "capturing")
    for the body; on leaving, its end awaited (it must succeed) and its summary JSON in the
    dict yielded, under "summary"."""
    cap = subprocess.Popen([sys.executable, "-m", "aizone.cli", "capture", where, "-w",
                            str(pcap), "--seconds", str(seconds), "--json"], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = cap.stderr
    assert err is not None
    line = err.readline()
    if not line.startswith("capturing"):
        cap.kill()
        raise AssertionError(line + err.read())
    rest: list[str] = []
    drain = threading.Thread(target=lambda: rest.extend(err.readlines()))
    drain.start()
    got: dict[str, Any] = {"line": line}
    try:
        yield got
    finally:
        out, _ = cap.communicate(timeout=120)
        drain.join(10)
    assert cap.returncode == 0, "".join(rest)
    got["summary"] = json.loads(out)


def require_tshark() -> None:
    """Skip (or, where this machine declares tshark, fail) a test that reads captures with
    tshark when there is none on PATH."""
    if shutil.which("tshark") is None:
        unavailable("tshark", "no tshark on PATH (Debian's package `tshark`, installed by "
                              "`make apt-test`)")


def assert_check_passes(hosts: int, nics: int) -> None:
    """`aizone check --json` on the running fabric passes for every pair: each NIC of each of
    `hosts` hosts (`nics` each) pings the same NIC of every other host, and one RoCEv2 write
    crosses each ordered pair of hosts."""
    proc = aizone("check", "--json")
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"check printed no JSON (exit {proc.returncode}): "
                             f"{proc.stdout[-2000:]}{proc.stderr}") from None
    failed = data.get("failed", [])
    assert proc.returncode == 0, (proc.returncode, len(failed), failed[:20], proc.stderr[-2000:])
    assert data["ok"] and data["failed"] == []
    assert data["pings"] == hosts * (hosts - 1) * nics
    assert data["roce"] == hosts * (hosts - 1)


def pinned_namespaces() -> list[str]:
    """Host namespaces pinned under /run/netns by aizone (aizone-<host>)."""
    d = Path("/run/netns")
    return sorted(p.name for p in d.iterdir() if p.name.startswith("aizone-")) if d.is_dir() else []


def in_host(host: str, *argv: str) -> list[str]:
    """A command line that runs `argv` inside a running fabric's host (its pinned namespace)."""
    return ["ip", "netns", "exec", f"aizone-{host}", *argv]


def last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            try:
                data: dict[str, Any] = json.loads(line)
                return data
            except ValueError:
                continue
    raise AssertionError(f"no JSON in {text[-500:]!r}")


def running_ack_timeout_ms(fan_in: int = 1) -> float:
    """The running fabric's RC ACK timeout as `aizone run` computes it for a job whose
    `fan_in` QPs send to one NIC (`experiments.sizes.running_ack_timeout_ms`: full queues on
    the longest path at the slowest tier, what those QPs can have in flight, the round trip
    its scaled `latency:` adds)."""
    spec, plan = running_plan()
    return experiment_ack_timeout_ms(spec, plan, fan_in=fan_in)


def running_plan() -> tuple[FabricSpec, AddressPlan]:
    """The running fabric's topology and its plan (from its run state)."""
    state = read_state()
    assert state is not None, "no fabric is up"
    spec = load_spec(Path(state.meta["topology"]))
    return spec, plan_addresses(spec)


class Flow:
    """One RoCEv2 flow between two hosts of a running fabric, through their traffic agents.

    The fabric's own agents (`controller.hostagents`) run the two jobs of
    `traffic.flowjobs`: RDMA WRITEs over RC, `messages` of `size` bytes,
    whole messages round-robin over `qps` (comma-separated destination QPs),
    UDP source port 49152, in class `cls`, paced at `rate_mbps` in all
    (None: the line rate), at the fabric's path MTU and with the RC ACK timeout `aizone run`
    gives a job of that many QPs into one NIC on the running fabric (`running_ack_timeout_ms`),
    as the daemon's own jobs. The destination's job
    starts first and is running before the source's starts; `run()` sends
    and returns (source summary, destination summary),
    `traffic.flowjobs.sent` / `received`.
    """

    def __init__(self, src: str, src_intf: str, dst: str, dst_intf: str, dst_ip: str, *,
                 messages: int, size: int = 1024, qps: str = "17", rate_mbps: float | None = None,
                 cls: Literal["data", "control"] = "data") -> None:
        self.src, self.dst = src, dst
        self.src_client = AgentClient(agents_dir() / f"{src}.sock")
        self.dst_client = AgentClient(agents_dir() / f"{dst}.sock")
        nics = {n["name"]: n for n in self.src_client.ping()["nics"]}
        src_rank = Rank(host=src, nic=src_intf, ip=nics[src_intf]["ip"])
        self.jobs = flow_jobs(src_rank, Rank(host=dst, nic=dst_intf, ip=dst_ip),
                              qps=[int(q, 0) for q in qps.split(",")], sport=49152,
                              messages=messages, size=size, cls=cls, rate_mbps=rate_mbps,
                              transport=Transport(path_mtu=running_plan()[1].path_mtu,
                                                  ack_timeout_ms=running_ack_timeout_ms(
                                                      fan_in=len(qps.split(",")))))
        self._dst_report: dict[str, Any] = {}
        self._dst_error: list[BaseException] = []
        self.receiver: threading.Thread | None = None

    def start_receiver(self, timeout: float = 60) -> None:
        """Submit the destination's job; return once its agent runs it."""
        def run() -> None:
            try:
                self._dst_report.update(self.dst_client.run(self.jobs[self.dst], timeout))
            except BaseException as exc:  # noqa: BLE001 - handed to received()
                self._dst_error.append(exc)

        self.receiver = threading.Thread(target=run, daemon=True)
        self.receiver.start()
        deadline = time.monotonic() + 30
        while self.dst_client.status()["state"] == "idle":
            if self._dst_error or time.monotonic() > deadline:
                raise AssertionError(f"{self.dst}'s agent did not take the job: {self._dst_error}")
            time.sleep(0.05)

    def send(self, timeout: float = 120) -> dict[str, Any]:
        """Run the source's job; its summary (`traffic.flowjobs.sent`)."""
        return sent(self.src_client.run(self.jobs[self.src], timeout))

    def received(self, timeout: float = 120) -> dict[str, Any]:
        """Wait for the destination's job; its summary (`traffic.flowjobs.received`)."""
        assert self.receiver is not None
        self.receiver.join(timeout)
        if self._dst_error:
            raise self._dst_error[0]
        assert self._dst_report, f"{self.dst}'s job did not end within {timeout} s"
        return received(self._dst_report)

    def run(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start the receiver, send, and return both summaries."""
        self.start_receiver()
        got_sent = self.send()
        return got_sent, self.received()
