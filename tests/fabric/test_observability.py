"""What a network engineer watches a fabric with: Prometheus metrics and the P4Runtime write log.

On ai_zone_small (--target). One fabric and one Prometheus (Debian's `prometheus`, on a loopback port of
the test's, scraping the daemon every second with the fabric's token as its
bearer token) for the module. What is checked, each against a value read
another way:

- the exposition passes `promtool check metrics`, and over TCP it needs the
  token like every other route;
- after a ring AllReduce, the RoCE class's transmit counters Prometheus
  holds equal the switches' own `tx_port_tc` cells read over P4Runtime
  through the API (class 3 is idle once the job is done, so equal exactly);
- the job's busbw and time in Prometheus equal what `aizone run --json`
  printed;
- during a steady 4 Mb/s flow, PromQL's rate of rtsw1's uplink bytes and
  `aizone stats --json`'s load of the same links agree (medians of the
  samples taken while the flow ran, within 30 %: two windows, 5 s and 1 s);
- a failed link is `aizone_link_up 0` with one `down` transition, and
  restored `1` with one `up`;
- `aizone capture rtsw1-ctsw2` during an AllReduce writes a pcap that
  tshark (Debian's) decodes as RoCEv2: its RoCE data frames are exactly the
  class-3 frames both ends' switches counted out of that link, and
  tshark's opcode, QP and PSN of each equal scapy's reading of the file;
- `aizone up --pcap DIR` (this module's fabric) keeps a capture of every
  switch port from the start: a file per port, and the uplink's holds the
  AllReduce's RoCEv2 frames;
- `aizone routes --history SWITCH` after `aizone mode ecmp` holds, under
  that reason, exactly the inserts, modifies and deletes the mode switch
  reported for the switch, and the bring-up's writes under `start`.

On BMv2, `make test` runs the two that read the switches' own counts (the class counters,
the capture against the counters); the others check the daemon's exposition, history
and captures, the same on every target, and are marked `one_target`.
"""

from __future__ import annotations

import json
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fabric_support import ROOT, Flow, aizone, capturing, fabric_up, require_tshark

from controller.access import read_token
from controller.client import ApiClient
from tests.provides import unavailable
from topologies.runstate import state_dir

ZONE = ROOT / "topologies" / "ai_zone_small.yaml"
CLI = [sys.executable, "-m", "aizone.cli"]
TCS = 8
DATA_CLASS = 3  # the lossless RoCE class of the presets (qos: data_tc)
TX_TC = "FabricEgress.counters.tx_port_tc"


class Prometheus:
    """A Prometheus server of the test's: its HTTP API's instant queries."""

    def __init__(self, url: str) -> None:
        self.url = url

    def query(self, promql: str) -> list[dict[str, Any]]:
        q = urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{q}", timeout=10) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def values(self, promql: str, *labels: str) -> dict[tuple[str, ...], float]:
        return {tuple(s["metric"][k] for k in labels): float(s["value"][1])
                for s in self.query(promql)}

    def wait(self, what: Any, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            got = what()
            if got or time.monotonic() > deadline:
                return got
            time.sleep(0.5)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def pcaps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pcaps")


@pytest.fixture(scope="module")
def fabric(target: str, build_dir: Path, pcaps: Path) -> Iterator[dict[str, Any]]:
    with fabric_up(ZONE, target, build_dir, "--pcap", str(pcaps)) as status:
        yield status


@pytest.fixture(scope="module")
def prometheus(fabric: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[Prometheus]:
    if shutil.which("prometheus") is None:
        unavailable("prometheus", "no prometheus on PATH (Debian's package `prometheus`, "
                                  "installed by `make apt-test`)")
    tmp = tmp_path_factory.mktemp("prometheus")
    port = _free_port()
    token_file = state_dir() / "api.token"
    config = tmp / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: aizone\n"
        "    authorization: {credentials_file: " + str(token_file) + "}\n"
        "    static_configs: [{targets: ['127.0.0.1:8400']}]\n")
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "w"))  # noqa: SIM115
    prom = Prometheus(f"http://127.0.0.1:{port}")
    try:
        def scraped() -> bool:
            try:
                return bool(prom.query('up{job="aizone"} == 1'))
            except OSError:
                return False

        assert prom.wait(scraped, timeout=60), (tmp / "prometheus.log").read_text()[-2000:]
        yield prom
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.one_target
def test_exposition_passes_promtool_and_needs_the_token(fabric: dict[str, Any]) -> None:
    token = read_token(state_dir())
    url = "http://127.0.0.1:8400/metrics"
    assert httpx.get(url).status_code == 401
    r = httpx.get(url, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert 'aizone_switch_up{role="rtsw",switch="rtsw1"} 1.0' in r.text
    check = subprocess.run(["promtool", "check", "metrics"], input=r.text, text=True,
                           capture_output=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def test_counters_in_prometheus_equal_the_switches(fabric: dict[str, Any],
                                                    prometheus: Prometheus) -> None:
    run = aizone("run", "allreduce", "--ranks", "8", "--size", "256K", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    job = json.loads(run.stdout)
    api = ApiClient()
    try:
        def direct() -> dict[tuple[str, str], float]:
            out = {}
            for sw in ("rtsw1", "rtsw2", "ctsw1", "ctsw2"):
                cells = api.get(f"/counters/{sw}/{TX_TC}",
                                index=[p * TCS + DATA_CLASS for p in range(1, 7)])["cells"]
                for i, c in cells.items():
                    if c["bytes"]:
                        out[(sw, str(int(i) // TCS))] = float(c["bytes"])
            return out

        switches = direct()
        assert sum(switches.values()) > 0, "the AllReduce moved no class-3 byte"
        promql = f'aizone_class_transmit_bytes_total{{class="{DATA_CLASS}"}} > 0'

        def same() -> bool:
            got = {k: v for k, v in prometheus.values(promql, "switch", "port").items()
                   if k[0] in ("rtsw1", "rtsw2", "ctsw1", "ctsw2")}
            return got == switches

        assert prometheus.wait(same), (prometheus.values(promql, "switch", "port"), switches)

        sel = f'{{collective="{job["id"]}"}}'
        busbw = prometheus.wait(lambda: prometheus.values(
            f"aizone_job_busbw_bits_per_second{sel}", "pattern"))
        assert busbw == {(job["pattern"],): pytest.approx(job["result"]["busbw_gbps"] * 1e9)}
        secs = prometheus.values(f"aizone_job_seconds{sel}", "mode")
        assert secs == {(job["mode"],): pytest.approx(job["result"]["time_s"])}
    finally:
        api.close()


@pytest.mark.one_target
def test_a_failed_link_shows_in_prometheus(fabric: dict[str, Any],
                                           prometheus: Prometheus) -> None:
    link = next(lk for lk in fabric["links"] if lk["a"] == "rtsw1" and lk["b"] == "ctsw1")
    sel = f'{{link="{link["id"]}"}}'

    def up_is(v: float) -> bool:
        return prometheus.values(f"aizone_link_up{sel}", "tier") == {("rtsw_ctsw",): v}

    def moved(**counts: float) -> bool:
        # The gauge follows the link at once; its counter moves once the reroute has been
        # written, so one scrape can fall between the two.
        want = {(d,): n for d, n in counts.items()}
        return prometheus.values(f"aizone_link_transitions_total{sel}", "direction") == want

    assert prometheus.wait(lambda: up_is(1.0))
    down = aizone("link", "down", "rtsw1", "ctsw1")
    assert down.returncode == 0, down.stderr
    try:
        assert prometheus.wait(lambda: up_is(0.0))
        assert prometheus.wait(lambda: moved(down=1.0))
        conv = prometheus.values(f"aizone_link_reconvergence_seconds{sel}", "link")
        assert list(conv.values())[0] > 0
    finally:
        restore = aizone("link", "up", "rtsw1", "ctsw1")
        assert restore.returncode == 0, restore.stderr
    assert prometheus.wait(lambda: up_is(1.0))
    assert prometheus.wait(lambda: moved(down=1.0, up=1.0))


def _kinds(text: str) -> dict[str, int]:
    out = {"insert": 0, "modify": 0, "delete": 0}
    for line in text.splitlines():
        if line.strip().startswith("type: "):
            out[line.split(":", 1)[1].strip().lower()] += 1
    return out


@pytest.mark.one_target
def test_write_history_holds_the_mode_switch(fabric: dict[str, Any]) -> None:
    before = json.loads(aizone("routes", "--history", "rtsw1", "--json").stdout)["writes"]
    assert before and before[0]["reason"] == "start", before[:1]
    start = _kinds("\n".join(w["text"] for w in before if w["reason"] == "start"))
    assert start["insert"] > 20, start
    now = json.loads(aizone("status", "--json").stdout)["mode"]
    new = "ecmp" if now != "ecmp" else "pin"
    mode = aizone("mode", new, "--json")
    assert mode.returncode == 0, mode.stderr
    try:
        counts = json.loads(mode.stdout)["writes"]["rtsw1"]
        got = json.loads(aizone("routes", "--history", "rtsw1", "--json").stdout)["writes"]
        mine = [w for w in got[len(before):] if w["reason"] == f"mode {new}"]
        kinds = _kinds("\n".join(w["text"] for w in mine))
        assert kinds == {k: counts[k] for k in ("insert", "modify", "delete")}, (kinds, counts)
        assert sum(kinds.values()) == sum(w["updates"] for w in mine) > 0
        text = aizone("routes", "--history", "rtsw1", "--limit", "1")
        assert text.returncode == 0 and f"reason mode {new}" in text.stdout, text.stdout
    finally:
        back = aizone("mode", now)
        assert back.returncode == 0, back.stderr


def _class3_out(api: ApiClient, switch: str, port: int) -> int:
    cell = api.get(f"/counters/{switch}/{TX_TC}", index=[port * TCS + DATA_CLASS])["cells"]
    return int(next(iter(cell.values()))["packets"])


def test_a_capture_of_a_link_decodes_as_rocev2(fabric: dict[str, Any], tmp_path: Path) -> None:
    require_tshark()
    from scapy.contrib.roce import BTH
    from scapy.utils import rdpcap

    pcap = tmp_path / "uplink.pcap"
    with ApiClient() as api:
        edge = next(e for e in api.get("/topology")["edges"]
                    if e["a"] == "rtsw1" and e["b"] == "ctsw2")
        ends = [("rtsw1", edge["a_port"]), ("ctsw2", edge["b_port"])]
        with capturing("rtsw1-ctsw2", pcap, 25) as cap:
            assert cap["line"].startswith("capturing link rtsw1-ctsw2"), cap["line"]
            before = [_class3_out(api, sw, p) for sw, p in ends]
            run = aizone("run", "allreduce", "--ranks", "8", "--size", "256K", "--json")
            assert run.returncode == 0, run.stdout + run.stderr
            after = [_class3_out(api, sw, p) for sw, p in ends]
    summary = cap["summary"]
    sent = sum(a - b for a, b in zip(after, before, strict=True))
    assert sent > 0, "the AllReduce sent no data frame over rtsw1-ctsw2"
    fields = subprocess.run(
        ["tshark", "-r", str(pcap), "-Y", "infiniband && ip.dsfield.dscp == 26", "-T", "fields",
         "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn"],
        capture_output=True, text=True, timeout=120)
    assert fields.returncode == 0, fields.stderr
    decoded = [tuple(int(v, 0) for v in row.split("\t")) for row in fields.stdout.splitlines()]
    assert len(decoded) == sent, (len(decoded), sent, summary)
    frames = [p for p in rdpcap(str(pcap)) if BTH in p and p["IP"].tos >> 2 == 26]
    assert decoded == [(p[BTH].opcode, p[BTH].dqpn, p[BTH].psn) for p in frames]
    # IBTA RC opcodes: RDMA WRITE first 6, middle 7, last 8, last with immediate 9, only 10,
    # only with immediate 11; ACKs (17) travel in their QP's class, the data class. Whether
    # this one link carries ACKs too depends on how the reverse flows hash (they take the
    # other uplink for some QP numbers), so only the writes are required here.
    ops = {op for op, _, _ in decoded}
    assert ops <= {6, 7, 8, 9, 10, 11, 17} and ops & {6, 10}, ops


@pytest.mark.one_target
def test_up_pcap_keeps_every_port_from_the_start(fabric: dict[str, Any], pcaps: Path) -> None:
    require_tshark()
    with ApiClient() as api:
        edges = api.get("/topology")["edges"]
    ports = {f"{e['b']}-eth{e['b_port']}" for e in edges}
    ports |= {f"{e['a']}-eth{e['a_port']}" for e in edges if e["tier"] != "host"}
    files = {p.name for p in pcaps.iterdir()}
    assert {f"{p}.pcap0" for p in ports} <= files, sorted(ports - {f[:-6] for f in files})
    run = aizone("run", "allreduce", "--ranks", "8", "--size", "128K", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    # (tcpdump is still writing: tshark may say the last packet is cut short)
    count = subprocess.run(["tshark", "-r", str(pcaps / "rtsw1-eth6.pcap0"), "-Y", "infiniband"],
                           capture_output=True, text=True, timeout=120)
    assert len(count.stdout.splitlines()) > 0, count.stderr


@pytest.mark.one_target
def test_rates_in_prometheus_agree_with_aizone_stats(fabric: dict[str, Any],
                                                     prometheus: Prometheus,
                                                     tmp_path: Path) -> None:
    hosts = {h["name"]: h for h in fabric["hosts"]}
    src, dst = hosts["h1"]["nics"][0], hosts["h7"]["nics"][0]
    # ~49 s of data at 4 Mb/s: the sender takes seconds to start on a busy machine, and each
    # sample below runs `aizone stats` and a Prometheus query, 5-7 s a sample on this machine
    # when idle (measured with 24 s of data: 2-4 samples idle, 1 under CI's load, too few)
    # Messages of the preset's path MTU (4,096: jumbo links), so every frame is a full one:
    # BMv2 paces its queues in full frames, and a 1 KiB frame would take a 4 KiB one's slot.
    flow = Flow("h1", src["intf"], "h7", dst["intf"], dst["ip"], messages=6000, size=4096,
                rate_mbps=4, qps="17,18,19,20")
    flow.start_receiver(timeout=200)
    done: dict[str, Any] = {}
    sender = threading.Thread(target=lambda: done.update(flow.send(timeout=200)))
    sender.start()
    promql = ('8 * sum(rate(aizone_port_transmit_bytes_total{switch="rtsw1", '
              'peer=~"ctsw.*"}[5s]))')

    def uplinks_bps() -> float:
        snap = json.loads(aizone("stats", "--json").stdout)
        return sum(lk["a_to_b"]["bps"] for lk in snap["links"]
                   if lk["a"] == "rtsw1" and lk["tier"] == "rtsw_ctsw" and lk["a_to_b"])

    started = prometheus.wait(lambda: uplinks_bps() > 1e6 or not sender.is_alive(), 60)
    assert started and sender.is_alive(), "the flow never showed on rtsw1's uplinks"
    time.sleep(6)  # Prometheus's 5-s window now holds only the flow
    prom: list[float] = []
    stats: list[float] = []
    while sender.is_alive() and len(stats) < 8:
        got = prometheus.values(promql)
        bps = uplinks_bps()
        if got and sender.is_alive():
            prom.append(list(got.values())[0])
            stats.append(bps)
        time.sleep(0.5)
    sender.join(200)
    assert flow.received()["messages_complete"] == 6000
    assert len(stats) >= 2, (prom, stats)
    p, s = statistics.median(prom), statistics.median(stats)
    assert s > 1e6 and abs(p - s) <= 0.3 * s, (prom, stats)


def _nic_tcpdumps(intf: str) -> list[int]:
    """The pids of tcpdumps capturing `intf` (the module's `--pcap` ones are on switch ports)."""
    out = subprocess.run(["pgrep", "-f", f"^tcpdump -i {intf} "], capture_output=True,
                         text=True).stdout
    return [int(p) for p in out.split()]


@pytest.mark.one_target
def test_a_capture_nobody_reads_ends_on_time_and_frees_its_slot(fabric: dict[str, Any]) -> None:
    """A client asks for 3 s of h1-eth0, whole frames, while h1 floods the link, reads the
    status line and then nothing, keeping the connection open: the daemon's stream is held
    up by the client (flow control), yet tcpdump ends by its seconds and the capture's slot
    is given back (four more captures start), the client still not reading."""
    token = read_token(state_dir())
    assert token is not None
    with ApiClient() as api:
        h2 = next(n for n in api.get("/status")["hosts"] if n["name"] == "h2")
    flood = subprocess.Popen(["ip", "netns", "exec", "aizone-h1", "ping", "-f", "-q", "-s",
                              "1400", "-w", "30", h2["nics"][0]["ip"]],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        sock.connect(("127.0.0.1", 8400))
        sock.sendall(b"GET /api/v1/capture?target=h1-eth0&seconds=3&snaplen=65535 HTTP/1.1\r\n"
                     b"Host: 127.0.0.1:8400\r\nAuthorization: Bearer " + token.encode() +
                     b"\r\n\r\n")
        assert sock.recv(12) == b"HTTP/1.1 200"
        started = time.monotonic()
        while not _nic_tcpdumps("h1-eth0") and time.monotonic() < started + 3:
            time.sleep(0.05)
        assert _nic_tcpdumps("h1-eth0"), "tcpdump did not start"
        while _nic_tcpdumps("h1-eth0") and time.monotonic() < started + 15:
            time.sleep(0.2)
        assert not _nic_tcpdumps("h1-eth0"), "tcpdump outlived its 3 s with nobody reading"
        # Its slot is back although the response is still open and unread: four at once.
        url = "http://127.0.0.1:8400/api/v1/capture"
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
            got: list[int] = []
            threads = [threading.Thread(target=lambda n=n: got.append(client.get(
                url, params={"target": f"h{n}-eth0", "seconds": 2}).status_code))
                for n in (2, 3, 4, 5)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        assert got == [200] * 4, got
    finally:
        sock.close()
        flood.kill()
        flood.wait()
