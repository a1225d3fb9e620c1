"""The per-host agent and its client.

Without root: the client's errors (nothing at the path, an agent that
answers nonsense or nothing) and the command line. As root: agents in
network namespaces (``lab`` fixture), joined by a Linux bridge or by a
forwarding shim (``shim.py``) that drops one packet or sends a PAUSE.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from traffic.agentclient import AgentClient, AgentError, AgentUnreachable, JobFailed
from traffic.collectives import Rank, build_jobs
from traffic.hostagent import build_parser
from traffic.report import summarize
from traffic.schema import HostReport, Transport

SHIM = Path(__file__).with_name("shim.py")


# -- the client, without root


def test_an_agent_that_is_not_there_is_unreachable(tmp_path: Path) -> None:
    """No socket file: AgentUnreachable naming the path."""
    path = tmp_path / "h9.sock"
    with pytest.raises(AgentUnreachable, match=f"agent at {path} is unreachable"):
        AgentClient(path).ping()


def test_a_socket_nobody_listens_on_is_unreachable(tmp_path: Path) -> None:
    """A stale socket file (its agent died): AgentUnreachable."""
    path = tmp_path / "stale.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()
    with pytest.raises(AgentUnreachable, match="Connection refused"):
        AgentClient(path).status()


@contextmanager
def _one_shot(path: Path, reply: bytes | None) -> Iterator[None]:
    """A listener that answers one request with ``reply`` (None: never answers)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    done = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        if reply is not None:
            conn.sendall(reply)
        done.wait(5)
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield
    done.set()
    thread.join(5)
    server.close()


def test_an_answer_that_is_not_json_is_an_agent_error(tmp_path: Path) -> None:
    """Garbage on the socket is reported as such, not as a crash."""
    path = tmp_path / "garbage.sock"
    with _one_shot(path, b"hello\n"):
        with pytest.raises(AgentError, match="not JSON"):
            AgentClient(path).ping()


def test_an_agent_that_never_answers_times_out(tmp_path: Path) -> None:
    """run() waits for the job's timeout plus a grace, then says which request went unanswered."""
    path = tmp_path / "mute.sock"
    with _one_shot(path, None):
        client = AgentClient(path)
        start = time.monotonic()
        with pytest.raises(AgentError, match="did not answer 'status' within 0.5 s"):
            client._ok({"op": "status"}, timeout=0.5)
        assert time.monotonic() - start < 5


def test_a_failed_job_answer_raises_job_failed_with_the_report(tmp_path: Path) -> None:
    """ok: false with a report: JobFailed carries the agent's message and report."""
    path = tmp_path / "failed.sock"
    answer = {"ok": False, "error": "h1: job 'j' timeout: step 2 of 4 ...", "report": {"x": 1}}
    with _one_shot(path, json.dumps(answer).encode() + b"\n"):
        with pytest.raises(JobFailed, match="step 2 of 4") as info:
            AgentClient(path).run({"name": "j"}, timeout=1)
    assert info.value.report == {"x": 1}


def test_the_command_line_has_the_contracts_flags() -> None:
    """--host, --socket, --nic, --rate-mbps and the class flags, with the qos defaults."""
    args = build_parser().parse_args(
        ["--host", "h1", "--socket", "/run/aizone/agents/h1.sock", "--nic", "h1-eth0,h1-eth1",
         "--rate-mbps", "100"])
    assert (args.data_dscp, args.data_prio, args.data_ecn) == (26, 3, 2)
    assert (args.control_dscp, args.control_prio) == (48, 7)
    assert args.nic == "h1-eth0,h1-eth1"


# -- agents in namespaces (root)


def _bridged(lab: Any, n: int, rate_mbps: float) -> tuple[list[Rank], list[AgentClient]]:
    """n hosts h0..h{n-1} (10.66.0.K+1/24 on hK-eth0) on one Linux bridge, an agent each."""
    br = lab.ns("br")
    ranks, clients = [], []
    for i in range(n):
        ns = lab.ns(f"h{i}")
        lab.veth(ns, f"h{i}-eth0", br, f"p{i}")
        lab.address(ns, f"h{i}-eth0", f"10.66.0.{i + 1}/24")
        ranks.append(Rank(host=f"h{i}", nic=f"h{i}-eth0", ip=f"10.66.0.{i + 1}"))
    lab.bridge(br, [f"p{i}" for i in range(n)])
    for i in range(n):
        ns = f"aztl{lab.tag}h{i}"
        clients.append(AgentClient(lab.agent(ns, f"h{i}", f"h{i}-eth0", rate_mbps)))
    return ranks, clients


def _run_all(clients: list[AgentClient], jobs: dict[str, Any], timeout: float) -> dict[str, Any]:
    with ThreadPoolExecutor(len(clients)) as pool:
        futures = {h: pool.submit(clients[int(h[1:])].run, job, timeout) for h, job in jobs.items()}
        return {h: f.result() for h, f in futures.items()}


@pytest.mark.root
def test_agents_run_a_ring_allreduce_with_the_byte_counts_right(lab: Any) -> None:
    """3 agents on a bridge, 60 KB AllReduce over 2 QPs: 4 steps of 20 KB each way, intact."""
    ranks, clients = _bridged(lab, 3, rate_mbps=50)
    ping = clients[0].ping()
    assert ping["host"] == "h0" and ping["nics"][0]["ip"] == "10.66.0.1" and not ping["busy"]
    jobs = build_jobs("allreduce", ranks, 60_000, qps=2, message_bytes=8192,
                      start_at=time.time() + 1.0)
    reports = _run_all(clients, jobs, timeout=60)
    for h, body in reports.items():
        report = HostReport.model_validate(body)
        assert report.status == "ok", (h, report.error)
        assert [(s.bytes_sent, s.bytes_received) for s in report.steps] == [(20_000, 20_000)] * 4
        assert report.counters.data_errors == 0 and report.counters.icrc_errors == 0
        assert report.cpu_seconds > 0 and 0 < report.cpu_share < 4
        assert report.start == pytest.approx(jobs[h].start_at, abs=0.05)
    result = summarize("allreduce", ranks, 60_000, reports, jobs=jobs)
    assert result.bytes_ok and result.status == "ok" and result.busbw_factor == pytest.approx(4 / 3)
    counters = clients[1].counters()["counters"]["h1-eth0"]
    assert counters["packets_received"] >= 4 * 20  # 20 KB per step in 1 KiB packets


@pytest.mark.root
def test_status_shows_the_running_step_and_stop_ends_it(lab: Any) -> None:
    """A slow job (1 Mb/s): status says running, step 0, the peer; stop makes run answer stopped."""
    ranks, clients = _bridged(lab, 2, rate_mbps=1)
    jobs = build_jobs("incast", ranks, 1_000_000)
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(clients[i].run, jobs[f"h{i}"], 60) for i in range(2)]
        status: dict[str, Any] = {}
        for _ in range(100):
            status = clients[0].status()
            if status["state"] == "running" and status["progress"][0]["done"] > 0:
                break
            time.sleep(0.05)
        assert (status["state"], status["step"], status["steps"]) == ("running", 0, 1)
        assert status["progress"][0]["peer"] == "10.66.0.2"
        assert clients[0].stop()["stopped"] is True
        with pytest.raises(JobFailed, match="stopped") as info:
            runs[0].result()
        assert info.value.report is not None and info.value.report["status"] == "stopped"
        clients[1].stop()
        with pytest.raises(JobFailed):
            runs[1].result()
    assert clients[0].status()["state"] == "idle"


@pytest.mark.root
def test_a_peer_that_never_answers_times_out_naming_step_and_peer(lab: Any) -> None:
    """h1 runs no job: h0's writes are never acknowledged; run raises JobFailed at the timeout."""
    ranks, clients = _bridged(lab, 2, rate_mbps=10)
    jobs = build_jobs("incast", ranks, 10_000, transport=Transport(ack_timeout_ms=500))
    with pytest.raises(JobFailed, match=r"timeout: step 0 of 1 .*send to 10\.66\.0\.1") as info:
        clients[1].run(jobs["h1"], timeout=2)
    assert info.value.report is not None and info.value.report["counters"]["timeouts"] >= 1


@pytest.mark.root
def test_a_path_mtu_above_the_nics_mtu_is_refused_naming_both(lab: Any) -> None:
    """path_mtu 2,048 on 1,500-byte veths: refused before anything is sent, with the NIC, its
    MTU and the largest path MTU that fits (1,024); the agent then runs a job that fits."""
    ranks, clients = _bridged(lab, 2, rate_mbps=10)
    jobs = build_jobs("incast", ranks, 10_000, transport=Transport(path_mtu=2048))
    with pytest.raises(AgentError, match=r"connection .*: path_mtu 2048 makes IP packets of up to "
                                         r"2112 bytes, above the MTU 1500 of h1-eth0 \(the largest "
                                         r"path MTU that fits is 1024\)"):
        clients[1].run(jobs["h1"], timeout=10)
    assert clients[1].counters()["counters"]["h1-eth0"]["frames_sent"] == 0
    assert clients[1].status()["state"] == "idle"
    fits = build_jobs("incast", ranks, 10_000, transport=Transport(path_mtu=1024),
                      start_at=time.time() + 1.0)
    reports = _run_all(clients, fits, timeout=30)
    assert all(HostReport.model_validate(r).status == "ok" for r in reports.values())


def _shimmed(lab: Any, rate_mbps: float, *shim_args: str) -> tuple[list[Rank], list[AgentClient],
                                                                      Any, Path]:
    """h0 -- shim -- h1: the shim forwards between them and may drop or pause."""
    h0, shim, h1 = lab.ns("h0"), lab.ns("shim"), lab.ns("h1")
    lab.veth(h0, "h0-eth0", shim, "left")
    lab.veth(shim, "right", h1, "h1-eth0")
    lab.address(h0, "h0-eth0", "10.67.0.1/24")
    lab.address(h1, "h1-eth0", "10.67.0.2/24")
    ready, log = lab.tmp / "shim.ready", lab.tmp / "shim.json"
    proc = lab.popen(shim, str(SHIM), "--left", "left", "--right", "right", "--ready", str(ready),
                     "--log", str(log), *shim_args)
    for _ in range(300):
        if ready.exists() or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert ready.exists(), proc.communicate()
    ranks = [Rank(host="h0", nic="h0-eth0", ip="10.67.0.1"),
             Rank(host="h1", nic="h1-eth0", ip="10.67.0.2")]
    clients = [AgentClient(lab.agent(h0, "h0", "h0-eth0", rate_mbps)),
               AgentClient(lab.agent(h1, "h1", "h1-eth0", rate_mbps))]
    return ranks, clients, proc, log


def _shim_log(proc: Any, log: Path) -> dict[str, Any]:
    proc.terminate()
    proc.communicate(timeout=10)
    result: dict[str, Any] = json.loads(log.read_text())
    return result


@pytest.mark.root
def test_a_dropped_packet_is_retransmitted_and_the_message_arrives_intact(lab: Any) -> None:
    """The shim drops h0's 5th WRITE packet to h1: one NAK, go-back-N, every byte verified."""
    ranks, clients, proc, log = _shimmed(lab, 20, "--drop-nth", "5")
    # h0 -> h1 only: an incast of two ranks rooted at h1
    jobs = build_jobs("incast", ranks, 64 * 1024, root=1, start_at=time.time() + 0.5)
    reports = {h: HostReport.model_validate(r) for h, r in _run_all(clients, jobs, 60).items()}
    shim = _shim_log(proc, log)
    dropped = shim["events"]["dropped"]
    sender, receiver = reports["h0"].counters, reports["h1"].counters
    assert reports["h1"].steps[0].bytes_received == 64 * 1024
    assert receiver.data_errors == 0 and receiver.icrc_errors == 0
    assert (receiver.naks_sent, sender.naks_received) == (1, 1)
    assert sender.retransmitted >= 1 and sender.timeouts == 0
    # on the wire: the dropped PSN went by twice (the lost copy and the retransmission)
    copies = [f for f in shim["frames"] if f[1] == "lr" and f[2] in range(6, 12)
              and f[3] == dropped["psn"]]
    assert len(copies) == 2 and copies[1][0] > dropped["time"]
    assert any(f[1] == "rl" and f[2] == 0x11 for f in shim["frames"])  # the NAK/ACKs came back


@pytest.mark.root
def test_a_pause_frame_stops_the_data_priority_for_its_quanta(lab: Any) -> None:
    """PAUSE(prio 3, 10000 quanta) at 10 Mb/s = 512 ms: no data from h0 in that window."""
    ranks, clients, proc, log = _shimmed(lab, 10, "--pause-after", "10", "--pause-quanta",
                                         "10000")
    jobs = build_jobs("incast", ranks, 100 * 1024, root=1, start_at=time.time() + 0.5)
    reports = {h: HostReport.model_validate(r) for h, r in _run_all(clients, jobs, 60).items()}
    shim = _shim_log(proc, log)
    paused_at = shim["events"]["paused"]["time"]
    pause = 10000 * 512 / 10e6
    data = [f[0] for f in shim["frames"] if f[1] == "lr" and f[2] in range(6, 12)]
    # Frames already on their way when the PAUSE left the shim arrive within a millisecond;
    # after that nothing until the quanta have run out at h0 (which heard it after paused_at).
    late = [t for t in data if paused_at + 0.002 < t < paused_at + pause]
    assert late == []
    assert min(t for t in data if t > paused_at + 0.002) >= paused_at + pause
    sender = reports["h0"].counters
    assert sender.pause_frames == 1
    assert sender.paused_seconds == pytest.approx(pause, rel=1e-6)
    assert reports["h1"].steps[0].bytes_received == 100 * 1024
