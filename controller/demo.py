"""The demo: bring a fabric up, prove it forwards, read it back, tear it down.

Steps (each one's outcome lands in the `DemoReport`):
1. bring-up (`controller.runner.bring_up`): compile, Mininet, pipelines, routes;
2. entries read back over P4Runtime equal what was installed;
3. `ping` from the first host to the last host (every reply must come back);
4. one RDMA WRITE (RoCEv2) from the first host to the last with
   `python -m traffic.agent send`, received and checked (ICRC, PSN order,
   length) by `python -m traffic.agent recv`;
5. port counters read over P4Runtime moved by at least the packets sent
   (first host's RTSW port received, last host's RTSW port sent).
The network is always torn down, also on failures and Ctrl-C.

Library code: raises nothing for a failing check (the report says what
failed), but lets errors of bring-up (`SpecError`, `NetworkError`,
`ControllerError`) propagate after teardown, for the CLI to map.

Names defined here: `DemoReport`, `CheckResult`, `run_demo`, `ping`,
`parse_ping`, `rdma_write`, `counter_deltas`, `entities_match`.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from .entities import Entity, describe
from .fabric import PortCounters
from .runner import RunningFabric, Step, bring_up

__all__ = [
    "CheckResult",
    "DemoReport",
    "counter_deltas",
    "entities_match",
    "parse_ping",
    "ping",
    "rdma_write",
    "print_demo",
    "run_demo",
]


@dataclass(kw_only=True)
class CheckResult:
    name: str
    ok: bool
    detail: str


@dataclass(kw_only=True)
class DemoReport:
    """What the demo did and saw; `ok` when every check passed."""

    topology: str = ""
    target: str = ""
    src: str = ""
    dst: str = ""
    checks: list[CheckResult] = field(default_factory=list)
    ping: dict[str, Any] = field(default_factory=dict)
    sender: dict[str, Any] = field(default_factory=dict)
    receiver: dict[str, Any] = field(default_factory=dict)
    counters: list[dict[str, Any]] = field(default_factory=list)
    entries: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str) -> bool:
        self.checks.append(CheckResult(name=name, ok=ok, detail=detail))
        return ok

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "topology": self.topology, "target": self.target,
            "src": self.src, "dst": self.dst,
            "checks": [vars(c) for c in self.checks], "ping": self.ping,
            "sender": self.sender, "receiver": self.receiver, "counters": self.counters,
            "entries": self.entries,
        }


_PING = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")


def parse_ping(out: str, count: int) -> tuple[int, int, float | None]:
    """(transmitted, received, average RTT in ms) from iputils' or busybox's ping output."""
    m = _PING.search(out)
    sent, got = (int(m.group(1)), int(m.group(2))) if m else (count, 0)
    rtt = re.search(r"= [\d.]+/([\d.]+)/", out)
    return sent, got, float(rtt.group(1)) if rtt else None


def ping(fab: RunningFabric, src: str, dst_ip: str, count: int = 3) -> dict[str, Any]:
    """Echo requests from host `src` to `dst_ip` with iputils `ping`: transmitted, received, average RTT."""
    host = fab.net.host(src)
    sent, got, avg = parse_ping(host.cmd(f"ping -n -c {count} -i 0.2 -W 3 {dst_ip}"), count)
    return {"src": src, "dst_ip": dst_ip, "transmitted": sent, "received": got,
            "avg_rtt_ms": avg}


def _agent(*args: str) -> list[str]:
    return [sys.executable, "-m", "traffic.agent", *args]


def _json_out(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return {"error": text.strip()[-300:] or "no output"}


def rdma_write(fab: RunningFabric, src: str, dst: str, *, size: int = 4096, qp: int = 17,
               timeout: float = 60.0) -> tuple[dict[str, Any], dict[str, Any]]:
    """One RDMA WRITE of `size` bytes from `src` to `dst`; (sender, receiver) JSON reports."""
    s_nic, d_nic = fab.plan.host(src).nics[0], fab.plan.host(dst).nics[0]
    h_src, h_dst = fab.net.host(src), fab.net.host(dst)
    with tempfile.TemporaryDirectory(prefix="aizone-demo-") as tmp:
        ready = Path(tmp) / "ready"
        recv = h_dst.popen(_agent("recv", "--iface", d_nic.intf, "--messages", "1",
                                  "--timeout", str(timeout), "--json", "--ready-file", str(ready)))
        try:
            deadline = time.monotonic() + 30
            while not ready.exists() and recv.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if not ready.exists():
                if recv.poll() is None:
                    recv.kill()
                out, err = recv.communicate(timeout=10)
                text = out.decode(errors="replace") + "\n" + err.decode(errors="replace")
                return {}, {"error": f"receiver did not start: {_json_out(text).get('error', text)}"}
            send = h_src.popen(_agent("send", "--iface", s_nic.intf, "--dst-ip", d_nic.ip,
                                      "--qps", str(qp), "--messages", "1", "--size", str(size),
                                      "--json"))
            s_out, s_err = send.communicate(timeout=timeout)
            r_out, r_err = recv.communicate(timeout=timeout + 10)
        finally:
            for p in (recv,):
                if p.poll() is None:
                    p.kill()
                    p.wait()
    sender = _json_out(s_out.decode(errors="replace") + "\n" + s_err.decode(errors="replace"))
    receiver = _json_out(r_out.decode(errors="replace") + "\n" + r_err.decode(errors="replace"))
    return sender, receiver


def counter_deltas(before: dict[str, dict[int, PortCounters]],
                   after: dict[str, dict[int, PortCounters]]) -> list[dict[str, Any]]:
    """Per switch port: rx/tx packets and bytes gained between two readings."""
    out = []
    for sw, ports in after.items():
        for port, a in sorted(ports.items()):
            b = before.get(sw, {}).get(port)
            out.append({
                "switch": sw, "port": port,
                "rx_packets": a.rx_packets - (b.rx_packets if b else 0),
                "tx_packets": a.tx_packets - (b.tx_packets if b else 0),
                "rx_bytes": a.rx_bytes - (b.rx_bytes if b else 0),
                "tx_bytes": a.tx_bytes - (b.tx_bytes if b else 0),
            })
    return out


def entities_match(installed: list[Entity], read: list[Entity]) -> tuple[bool, str]:
    """Installed and read-back entities equal as sets; else a short description of the diff."""
    a, b = set(installed), set(read)
    if a == b:
        return True, f"{len(a)} entities read back as installed"
    missing = sorted(describe(e) for e in a - b)
    extra = sorted(describe(e) for e in b - a)
    parts = []
    if missing:
        parts.append(f"{len(missing)} missing (e.g. {missing[0]})")
    if extra:
        parts.append(f"{len(extra)} unexpected (e.g. {extra[0]})")
    return False, "; ".join(parts)


def run_demo(topology: str | Path, *, target: str = "auto", build_dir: str | Path | None = None,
             progress: Step | None = None, rdma_size: int = 4096,
             mode: str | None = None) -> DemoReport:
    """Run the demo on `topology` (see the module docstring); always tears down."""
    step = progress or (lambda _name: _null())
    report = DemoReport(topology=str(topology))
    with bring_up(topology, target=target, build_dir=build_dir, progress=progress,
                  mode=mode) as fab:
        report.target = fab.target
        src, dst = fab.plan.hosts[0].name, fab.plan.hosts[-1].name
        report.src, report.dst = src, dst
        dst_ip = fab.plan.host(dst).ip

        with step("reading entries back over P4Runtime"):
            for sw, entries in fab.installed.items():
                read = fab.ctl.read_entities(sw)
                ok, detail = entities_match(entries.install_order(), read)
                report.entries[sw] = len(read)
                report.add(f"{sw} entries read back", ok, detail)
            before = fab.ctl.all_port_counters()

        with step(f"ping {src} -> {dst} ({dst_ip})"):
            report.ping = ping(fab, src, dst_ip)
            p = report.ping
            report.add(f"ping {src} -> {dst}", p["received"] == p["transmitted"] > 0,
                       f"{p['received']}/{p['transmitted']} replies"
                       + (f", avg rtt {p['avg_rtt_ms']:.1f} ms" if p["avg_rtt_ms"] else ""))

        with step(f"RDMA WRITE {rdma_size} B {src} -> {dst}"):
            report.sender, report.receiver = rdma_write(fab, src, dst, size=rdma_size)
            s, r = report.sender, report.receiver
            sent_ok = "error" not in s and s.get("packets", 0) > 0
            report.add("RDMA WRITE sent", sent_ok,
                       s.get("error") or f"{s.get('packets')} packets, {s.get('bytes')} bytes")
            intact = ("error" not in r and r.get("messages_complete", 0) >= 1
                      and r.get("payload_bytes", 0) >= rdma_size
                      and not any(r.get(k) for k in ("icrc_errors", "psn_errors",
                                                       "sequence_errors", "length_errors")))
            report.add("RDMA WRITE received intact", intact, r.get("error") or (
                f"{r.get('messages_complete')} message(s), {r.get('payload_bytes')} payload bytes, "
                f"ICRC errors {r.get('icrc_errors')}, PSN errors {r.get('psn_errors')}"))

        with step("reading port counters over P4Runtime"):
            after = fab.ctl.all_port_counters()
            report.counters = counter_deltas(before, after)
            src_nic, dst_nic = fab.plan.host(src).nics[0], fab.plan.host(dst).nics[0]
            sent = report.ping.get("transmitted", 0) + int(report.sender.get("packets", 0) or 0)
            rx = _delta(report.counters, src_nic.switch, src_nic.switch_port, "rx_packets")
            tx = _delta(report.counters, dst_nic.switch, dst_nic.switch_port, "tx_packets")
            report.add("counters moved", rx >= sent and tx >= sent,
                       f"{src_nic.switch} port {src_nic.switch_port} rx +{rx}, "
                       f"{dst_nic.switch} port {dst_nic.switch_port} tx +{tx}, "
                       f"packets sent {sent}")
    return report


def print_demo(console: Console, report: DemoReport) -> None:
    """The demo's report for people: checks, the RDMA WRITE, counters."""
    console.print(f"[bold]aizone demo[/] on {report.topology} ({report.target}): "
                  f"{report.src} -> {report.dst}")
    t = Table(title="what ran")
    t.add_column("check")
    t.add_column("result")
    t.add_column("detail")
    for c in report.checks:
        t.add_row(c.name, "[green]ok[/]" if c.ok else "[red]FAILED[/]", c.detail)
    console.print(t)
    s, r = report.sender, report.receiver
    if s or r:
        x = Table(title="RoCEv2 RDMA WRITE")
        for col in ("", "packets", "bytes", "payload bytes", "ICRC errors", "PSN errors"):
            x.add_column(col, justify="right")
        x.add_row(f"sent by {report.src}", str(s.get("packets", "-")), str(s.get("bytes", "-")),
                  str(s.get("payload_bytes", "-")), "", "")
        x.add_row(f"received by {report.dst}", str(r.get("packets", "-")),
                  str(r.get("bytes", "-")), str(r.get("payload_bytes", "-")),
                  str(r.get("icrc_errors", "-")), str(r.get("psn_errors", "-")))
        console.print(x)
    if report.counters:
        ct = Table(title="switch port counters during the demo (read over P4Runtime)")
        for col in ("switch", "port", "rx packets", "tx packets", "rx bytes", "tx bytes"):
            ct.add_column(col, justify="right")
        for row in report.counters:
            ct.add_row(row["switch"], str(row["port"]), str(row["rx_packets"]),
                       str(row["tx_packets"]), str(row["rx_bytes"]), str(row["tx_bytes"]))
        console.print(ct)
    if report.ok:
        console.print("[bold green]demo passed[/]")
    else:
        failed = [c.name for c in report.checks if not c.ok] or ["no check ran"]
        console.print(f"[bold red]demo failed:[/] {', '.join(failed)}")

def _delta(rows: list[dict[str, Any]], switch: str, port: int, key: str) -> int:
    for row in rows:
        if row["switch"] == switch and row["port"] == port:
            return int(row[key])
    return 0


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
