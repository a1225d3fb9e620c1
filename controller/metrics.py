"""`GET /metrics`: the fabric in the Prometheus exposition format, through prometheus-client.

Nothing is counted twice: at each scrape, `FabricCollector` turns what the
daemon already holds into metric families: the statistics poller's latest
reading of every switch (`StatsPoller.previous`: the programs' counters,
cumulative since the switch started, and the queue registers of the last
interval), the links' state and reroutes, and the collectives run so far.
A scrape reads no switch, so it costs the fabric nothing; values are as old
as the last poll (`aizone_stats_poll_timestamp_seconds`).

Names follow Prometheus' conventions: base units (bytes, seconds, bits per
second), `_total` on counters, one metric per quantity with labels for
switch, port, peer, class, reason and link. The families:

- `aizone_port_{receive,transmit}_{bytes,packets}_total{switch,port,peer}`
  (`rx_port` / `tx_port`), `aizone_class_transmit_{bytes,packets}_total`
  `{switch,port,class}` (`tx_port_tc`), `aizone_ecn_marked_packets_total`,
- `aizone_switch_drops_total{switch,reason}` (the programs' drop reasons),
  `aizone_queue_drops_total{switch,port,class}` (p4switch's traffic manager),
- `aizone_pfc_pause_frames_{sent,received}_total{switch,port,class}` (the
  programs' PFC counters where it is on, plus p4switch's traffic manager),
- `aizone_queue_depth_packets` / `aizone_queue_peak_packets` (gauges: the
  last and the largest depth of the last interval, per (port, class)),
- `aizone_switch_up{switch,role}`, `aizone_link_up{link,tier,a,b}`,
  `aizone_link_transitions_total{link,direction}`,
  `aizone_link_reconvergence_seconds{link}` (the last reroute's),
- `aizone_jobs_total`, and per collective kept by the daemon (its latest 50)
  `aizone_job_seconds`, `aizone_job_busbw_bits_per_second`,
  `aizone_job_retransmitted_packets` `{collective,pattern,mode}` (the
  collective's id: `job` is the scrape job's label in Prometheus),
- `aizone_stats_poll_timestamp_seconds`.

Names defined here: `FabricCollector`, `MetricsSource`, `render`, `CONTENT_TYPE`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from topologies.addressing import AddressPlan

from .stats import DROP_REASONS, TCS, Reading

__all__ = ["CONTENT_TYPE", "FabricCollector", "MetricsSource", "render"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
PREFIX = "aizone"


@dataclass(frozen=True, kw_only=True)
class MetricsSource:
    """What the collector reads of the daemon at each scrape (each a callable: read then)."""

    plan: AddressPlan
    readings: Callable[[], Mapping[str, Reading]]  # the poller's latest reading per switch
    switch_up: Callable[[str], bool]
    link_up: Callable[[str], bool]
    transitions: Callable[[], Mapping[tuple[str, str], int]]  # (link, "down"|"up") -> count
    reconvergence: Callable[[], Mapping[str, float]]  # link -> the last reroute's seconds
    jobs: Callable[[], Mapping[int, dict[str, Any]]] = field(default=lambda: {})


def _counter(name: str, doc: str, labels: list[str]) -> CounterMetricFamily:
    return CounterMetricFamily(f"{PREFIX}_{name}", doc, labels=labels)


def _gauge(name: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=labels)


class FabricCollector(Collector):
    """A prometheus-client collector over a `MetricsSource` (see the module docstring)."""

    def __init__(self, source: MetricsSource) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        """Every metric family, read from the source now: ports, classes, fabric, jobs."""
        src = self.source
        readings = dict(src.readings())
        yield from self._ports(readings)
        yield from self._classes(readings)
        yield from self._fabric(readings)
        yield from self._jobs()

    def _ports(self, readings: dict[str, Reading]) -> Iterator[Metric]:
        labels = ["switch", "port", "peer"]
        fams = {
            ("rx", "bytes"): _counter("port_receive_bytes", "Bytes received on a switch port "
                                      "(the program's rx_port counter).", labels),
            ("rx", "packets"): _counter("port_receive_packets", "Packets received on a switch "
                                        "port.", labels),
            ("tx", "bytes"): _counter("port_transmit_bytes", "Bytes sent out of a switch port "
                                      "(the program's tx_port counter).", labels),
            ("tx", "packets"): _counter("port_transmit_packets", "Packets sent out of a switch "
                                        "port.", labels),
        }
        for name, r in sorted(readings.items()):
            for p in self.source.plan.switch(name).ports:
                values = [name, str(p.port), p.peer]
                for (way, unit), fam in fams.items():
                    cell = getattr(r, way).get(p.port)
                    if cell is not None:
                        fam.add_metric(values, getattr(cell, unit))
        yield from fams.values()

    def _classes(self, readings: dict[str, Reading]) -> Iterator[Metric]:
        labels = ["switch", "port", "class"]
        tx_bytes = _counter("class_transmit_bytes", "Bytes sent out of a port in a traffic "
                            "class (tx_port_tc).", labels)
        tx_packets = _counter("class_transmit_packets", "Packets sent out of a port in a "
                              "traffic class.", labels)
        ecn = _counter("ecn_marked_packets", "Packets the egress marked CE (ECN) per port and "
                       "class.", labels)
        sent = _counter("pfc_pause_frames_sent", "PFC frames (IEEE 802.1Qbb) sent for a "
                        "port's class: the program's and the traffic manager's.", labels)
        received = _counter("pfc_pause_frames_received", "PFC frames received on a port for a "
                            "class.", labels)
        tm_drops = _counter("queue_drops", "Packets the traffic manager dropped at a full "
                            "egress queue (p4switch).", labels)
        depth = _gauge("queue_depth_packets", "Egress queue depth the last packet of the last "
                       "interval saw.", labels)
        peak = _gauge("queue_peak_packets", "Largest egress queue depth of the last interval.",
                      labels)
        for name, r in sorted(readings.items()):
            pfc_known = bool(r.pfc_tx or r.pfc_rx or r.tm)
            for p in self.source.plan.switch(name).ports:
                for tc in range(TCS):
                    i = p.port * TCS + tc
                    values = [name, str(p.port), str(tc)]
                    if i in r.tx_tc:
                        tx_bytes.add_metric(values, r.tx_tc[i].bytes)
                        tx_packets.add_metric(values, r.tx_tc[i].packets)
                    if i in r.ecn:
                        ecn.add_metric(values, r.ecn[i].packets)
                    if i in r.depth:
                        depth.add_metric(values, r.depth[i])
                    if i in r.peak:
                        peak.add_metric(values, r.peak[i])
                    tm = (r.tm or {}).get(f"{p.port}/{tc}") or {}
                    n_sent = (r.pfc_tx[i].packets if i in r.pfc_tx else 0) + tm.get(
                        "pauses_sent", 0)
                    n_recv = (r.pfc_rx[i].packets if i in r.pfc_rx else 0) + tm.get(
                        "pauses_received", 0)
                    if pfc_known:
                        sent.add_metric(values, n_sent)
                        received.add_metric(values, n_recv)
                    if r.tm is not None:
                        tm_drops.add_metric(values, tm.get("dropped", 0))
        yield from (tx_bytes, tx_packets, ecn, sent, received, tm_drops, depth, peak)

    def _fabric(self, readings: dict[str, Reading]) -> Iterator[Metric]:
        src = self.source
        drops = _counter("switch_drops", "Packets the program dropped, by reason "
                         "(p4/include/define.p4).", ["switch", "reason"])
        for name, r in sorted(readings.items()):
            for idx, reason in DROP_REASONS.items():
                if idx in r.drops:
                    drops.add_metric([name, reason], r.drops[idx].packets)
        yield drops
        up = _gauge("switch_up", "1 when the daemon's P4Runtime session to the switch is "
                    "ready.", ["switch", "role"])
        for s in src.plan.switches:
            up.add_metric([s.name, s.role], 1.0 if src.switch_up(s.name) else 0.0)
        yield up
        link = _gauge("link_up", "1 when the link carries traffic (not failed, probes "
                      "answered).", ["link", "tier", "a", "b"])
        for lk in src.plan.links:
            link.add_metric([lk.id, lk.tier, lk.a, lk.b], 1.0 if src.link_up(lk.id) else 0.0)
        yield link
        moves = _counter("link_transitions", "Reroutes for a link going down or coming back.",
                         ["link", "direction"])
        for (lk_id, direction), n in sorted(src.transitions().items()):
            moves.add_metric([lk_id, direction], n)
        yield moves
        conv = _gauge("link_reconvergence_seconds", "Time the last reroute for a link took, "
                      "from the change to every switch written.", ["link"])
        for lk_id, seconds in sorted(src.reconvergence().items()):
            conv.add_metric([lk_id], seconds)
        yield conv
        polled = _gauge("stats_poll_timestamp_seconds", "When the statistics poller last read "
                        "a switch (UNIX time).", ["switch"])
        for name, r in sorted(readings.items()):
            polled.add_metric([name], r.at)
        yield polled

    def _jobs(self) -> Iterator[Metric]:
        jobs = dict(self.source.jobs())
        total = CounterMetricFamily(f"{PREFIX}_jobs", "Collectives run on the fabric (kept: "
                                    "the latest 50).")
        total.add_metric([], max(jobs) if jobs else 0)
        yield total
        # not "job": Prometheus keeps that label for the scrape job (it would rename ours)
        labels = ["collective", "pattern", "mode"]
        secs = _gauge("job_seconds", "A collective's time (nccl-tests' time).", labels)
        bus = _gauge("job_busbw_bits_per_second", "A collective's bus bandwidth "
                     "(nccl-tests' busbw), in bits per second.", labels)
        retx = _gauge("job_retransmitted_packets", "Packets the collective's RC transport "
                      "sent again.", labels)
        for job_id, job in sorted(jobs.items()):
            result = job.get("result") or {}
            values = [str(job_id), str(job.get("pattern")), str(job.get("mode"))]
            secs.add_metric(values, float(result.get("time_s", 0.0)))
            bus.add_metric(values, float(result.get("busbw_gbps", 0.0)) * 1e9)
            retx.add_metric(values, float(result.get("retransmitted", 0)))
        yield from (secs, bus, retx)


def render(source: MetricsSource) -> bytes:
    """One scrape: the exposition text of `source` (a registry of its own per call)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FabricCollector(source))
    return generate_latest(registry)
