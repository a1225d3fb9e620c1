"""The controller daemon: owns a running fabric and serves its local API.

`python -m controller.daemon --topology T [--target --mode ...]` (started by
`aizone up`, which then follows its progress over the API) brings the fabric
up and keeps it as the topology and the chosen mode say:

1. checks (spec, P4 files, root, target tools, nothing else running) and
   compiles the role programs (cached);
2. builds the Mininet network (`topologies.FabricNet`): hosts in pinned
   network namespaces, one switch process per switch, shaped links, the
   switches' port speed, queues and PFC set from the topology;
3. runs one primary P4Runtime session per switch (`controller.sessions`, on
   finsy): pipeline pushed, then every switch reconciled to the intent
   (routes for the mode, QoS, the link-probe ACL);
4. serves the API (`controller.api`: a Unix socket and loopback TCP) and
   runs the statistics poller, the link prober and a supervisor that
   restarts a switch process that died (its session reconciles it when it
   comes back);
5. on `aizone down` (SIGTERM, or the API's shutdown) stops everything it
   started and removes the network.

With `--attach` it re-attaches to a fabric whose daemon died (`run.json`
names its switches and pinned host namespaces, which outlive the daemon):
no network is built, the sessions reconnect and each switch is reconciled,
which writes nothing when the switch still holds the intent.

Operations the API calls: `status`, `topology`, `set_mode`, `acl` and
`set_acl`, `find_link` and `set_link`, `check`, `exec`, `capture`,
`routes`, `history`, `counters`, `trace`, `run_job`, `metrics`,
`shutdown`, the latest statistics. Each failure or change is an event on
the bus (`controller.events`).

Names defined here: `Daemon`, `DaemonConfig`, `DaemonError`, `build_parser`, `main`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from topologies.addressing import AddressPlan, plan_addresses
from topologies.nodes import SWITCH_CLASSES, NetworkError
from topologies.pki import FabricPki
from topologies.runstate import PKI_DIR, proc_start, read_state, state_dir, update_state
from topologies.spec import MODES, FabricSpec, Mode, SpecError, Target, load_spec

from .agents import HostAgents
from .build import CompiledProgram, compile_roles
from .entities import TableEntry
from .errors import ControllerError, DaemonError
from .events import EventBus
from .intent import PROBE_ETHERTYPE, FabricIntent
from .probes import LinkProber, LinkState
from .sessions import FabricSessions
from .stats import StatsPoller
from .tasks import DaemonTasks
from .writelog import WriteLog

__all__ = ["Daemon", "DaemonConfig", "DaemonError", "main"]

LOG = logging.getLogger("aizone.daemon")
API_SOCKET = "api.sock"
WRITE_LOG_DIR = "p4rt"  # per-switch logs of every P4Runtime write (controller.writelog)
THREADS = 256
DEFAULT_API_PORT = 8400
# The programs' own PFC (p4/include/control/pfc.p4) is tested switch by switch on both
# targets (tests/dataplane/test_pfc.py) but not yet turned on in fabrics: on a BMv2
# ai_zone_small it lost lossless packets and stalled transfers (RC retry counts exceeded),
# and on p4switch its recirculation costs most of a core per held port. Fabrics keep
# p4switch's native 802.1Qbb and BMv2 without PFC until it holds there (docs/bmv2.md).
PROGRAM_PFC_IN_FABRICS = False


@dataclass(frozen=True, kw_only=True)
class DaemonConfig:
    """What a daemon runs and how (its command line, `python -m controller.daemon`)."""

    topology: Path | None
    """The topology file to bring up (None with `attach`)."""
    target: Target = Target.AUTO
    """The switch target."""
    mode: Mode | None = None
    """The routing mode to start in (None: the topology's `routing.mode`)."""
    build_dir: Path = Path("build")
    """Where compiled programs and switch logs go."""
    api_host: str = "127.0.0.1"
    """The TCP address of the API (every request needs the fabric's token)."""
    api_port: int = DEFAULT_API_PORT
    """Its port: taken means the daemon fails, it never moves to another."""
    api_extra_hosts: tuple[str, ...] = ()
    """More Host names the TCP API answers to."""
    attach: bool = False
    """Re-attach to a running fabric whose daemon died, instead of building one."""
    stats_interval: float = 1.0
    """Seconds between statistics snapshots."""
    probe_interval: float = 0.2
    """Seconds between link probe rounds."""
    probe_dead_after: float = 1.0
    """A link whose probes have not arrived for this long is down."""
    log_console: bool = False
    """Switches log every packet into their log files."""
    pcap_dir: Path | None = None
    """Capture every switch port from the start into this folder (`controller.capture`)."""


@dataclass
class _Failure:
    """A link down, from the CLI or detected by probes, and what it cost."""

    link: str
    cause: str  # "admin" | "probe"
    at: float
    detected_after: float | None = None
    reconverged_after: float | None = None
    lost_packets: int | None = None


@dataclass
class _Runtime:
    spec: FabricSpec
    plan: AddressPlan
    target: str
    programs: dict[str, CompiledProgram]
    topology: Path
    net: Any = None  # FabricNet when this daemon built the network
    fabric: Any = None  # topologies.attach.FabricRuntime
    failures: dict[str, _Failure] = field(default_factory=dict)
    admin_down: set[str] = field(default_factory=set)
    restarts: list[dict[str, Any]] = field(default_factory=list)
    balances: dict[str, int] = field(default_factory=dict)  # see Daemon._link_balance
    # reroutes per (link, "down" | "up"), and the last one's time per link (GET /metrics)
    transitions: dict[tuple[str, str], int] = field(default_factory=dict)
    reconvergence: dict[str, float] = field(default_factory=dict)


class Daemon:
    """One running fabric and everything that keeps it as intended (see the module docstring)."""

    def __init__(self, config: DaemonConfig) -> None:
        self.config = config
        self.bus = EventBus()
        self.phase = "starting"
        self.error: str | None = None
        self.rt: _Runtime | None = None
        self.intent: FabricIntent | None = None
        self.sessions: FabricSessions | None = None
        self.stats: StatsPoller | None = None
        self.write_log: WriteLog | None = None
        self.pcaps: Any = None  # controller.capture.PortCaptures with --pcap
        self.prober: LinkProber | None = None
        self.agents: HostAgents | None = None
        self.jobs: dict[int, dict[str, Any]] = {}
        self._job_lock = asyncio.Lock()
        self.started_at = time.time()
        self.api_addresses: dict[str, str] = {}
        self._stop = asyncio.Event()
        # Every background task of the daemon (stats, probes, supervisor, reroutes).
        self.tasks = DaemonTasks(on_failure=self._task_failed)
        self._op_lock = asyncio.Lock()
        # Links an `aizone link up` is bringing back: it reroutes them itself (and reports
        # the reconvergence), so the probes seeing them again must not do it first.
        self._admin_restoring: set[str] = set()

    # --- helpers -------------------------------------------------------------

    def progress(self, step: str, **data: Any) -> None:
        """Log a step of the bring-up and publish it, with `data`, as a `progress` event."""
        LOG.info("%s %s", step, data or "")
        self.bus.publish("progress", {"step": step, **data})

    def _need(self) -> tuple[_Runtime, FabricIntent, FabricSessions]:
        if self.rt is None or self.intent is None or self.sessions is None or self.phase != "up":
            raise DaemonError(f"the fabric is not up (it is {self.phase})")
        return self.rt, self.intent, self.sessions

    def request_stop(self) -> None:
        """Ask `run` to tear the fabric down and return (what SIGTERM and shutdown do)."""
        self._stop.set()

    def _task_failed(self, name: str, exc: BaseException) -> None:
        """Fail fast: a background loop that died takes the daemon down, saying why."""
        self.error = f"{name} failed: {_one_line(exc)}"
        self.bus.publish("failed", {"error": self.error})
        self.request_stop()

    # --- the whole life ------------------------------------------------------------

    async def run(self) -> int:
        """Serve the API, bring the fabric up (or attach) and keep it until asked to stop.

        Everything started is stopped before it returns the exit code: 0, or 1
        when the bring-up or a background task failed (`error` says why).
        """
        loop = asyncio.get_running_loop()
        # Blocking work runs in threads: pings and agent calls for every host
        # at once (a collective needs all its hosts' calls in flight together,
        # so the pool must not be smaller than the fabric), TM reads, Mininet.
        loop.set_default_executor(ThreadPoolExecutor(max_workers=THREADS))
        self.bus.bind(loop)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.request_stop)
        from .access import new_token, token_path, write_token
        from .api import ApiServer

        # The fabric's secret: made here, kept 0600 beside the socket, never on a command
        # line or in a log (`aizone up` reads it to print the dashboard's URL).
        token = new_token()
        api = ApiServer(self, host=self.config.api_host, port=self.config.api_port,
                        unix_path=state_dir() / API_SOCKET, token=token,
                        extra_hosts=self.config.api_extra_hosts)
        code = 0
        try:
            write_token(token)
            await api.start()
            self.api_addresses = api.addresses
            self.progress("api", **api.addresses)
            start = asyncio.create_task(self._start(), name="start")
            stop = asyncio.create_task(self._stop.wait(), name="stop-wait")
            done, _ = await asyncio.wait({start, stop}, return_when=asyncio.FIRST_COMPLETED)
            if start in done and start.exception() is None:
                await stop
                if self.error:  # a background task failed (DaemonTasks' fail-fast)
                    code = 1
            elif start in done:
                exc = start.exception()
                self.error = _one_line(exc)
                self.phase = "failed"
                self.bus.publish("failed", {"error": self.error})
                LOG.error("bring-up failed: %s", self.error, exc_info=exc)
                code = 1
            else:
                start.cancel()
                try:
                    await start
                except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping anyway
                    pass
        finally:
            self.phase = "stopping"
            self.bus.publish("stopping", {})
            await self._teardown()
            self.phase = "down"
            self.bus.publish("down", {})
            await asyncio.sleep(0.2)  # let the event streams deliver "down"
            await api.stop()
            with contextlib.suppress(FileNotFoundError):
                token_path().unlink()
        return code

    async def _start(self) -> None:
        if self.config.attach:
            await self._attach()
        else:
            await self._bring_up()
        await self._run_control()
        self.phase = "up"
        self.progress("up", name=self.rt.plan.name if self.rt else "", target=self.rt.target
                      if self.rt else "", mode=self.intent.mode if self.intent else "")

    async def _bring_up(self) -> None:
        from topologies.net import FabricNet

        from .preflight import prepare

        cfg = self.config
        assert cfg.topology is not None
        self.progress("checking", topology=str(cfg.topology))
        spec, plan, target, sources = await asyncio.to_thread(prepare, cfg.topology, cfg.target)
        from topologies.runstate import cleanup

        await asyncio.to_thread(cleanup, stop_running=False)
        out = cfg.build_dir / plan.name / target
        self.progress("compiling", programs={r: str(p) for r, p in sources.items()}, target=target)
        programs = await asyncio.to_thread(compile_roles, sources, out, target=target)
        self.rt = _Runtime(spec=spec, plan=plan, target=target, programs=programs,
                           topology=cfg.topology)
        self.intent = FabricIntent(spec=spec, plan=plan, mode=cfg.mode or spec.routing.mode,
                                   program_pfc=PROGRAM_PFC_IN_FABRICS)
        meta = self._meta()
        net = FabricNet(plan, switch=SWITCH_CLASSES[target], log_dir=out / "logs",
                        log_console=cfg.log_console, meta=meta)
        self.rt.net = net
        self.progress("network", switches=len(plan.switches), hosts=len(plan.hosts))
        await asyncio.to_thread(net.start)
        from topologies.attach import FabricRuntime

        self.rt.fabric = FabricRuntime.from_net(net)
        if cfg.pcap_dir is not None:
            from .capture import PortCaptures

            self.pcaps = PortCaptures(plan, cfg.pcap_dir, self.rt.fabric.root_popen)
            first = await asyncio.to_thread(self.pcaps.start)
            self.progress("capturing", ports=len(first), directory=str(cfg.pcap_dir))

    async def _attach(self) -> None:
        from topologies.attach import FabricRuntime
        from topologies.runstate import owner_alive

        state = read_state()
        if state is None or not state.ready:
            raise DaemonError("no fabric to attach to (no run.json): start one with `aizone up`")
        if owner_alive(state) and state.owner_pid != os.getpid():
            raise DaemonError(f"the fabric's daemon is alive (pid {state.owner_pid})")
        topology = Path(state.meta.get("topology", ""))
        spec = load_spec(topology)
        plan = plan_addresses(spec)
        target = state.target
        programs = {
            role: CompiledProgram(role=role, target=target, source=Path(src),
                                  device_config=Path(state.meta["device_configs"][role]),
                                  p4info=Path(state.meta["p4info"][role]))
            for role, src in state.meta.get("sources", {}).items()}
        self.rt = _Runtime(spec=spec, plan=plan, target=target, programs=programs,
                           topology=topology)
        mode = self.config.mode or state.meta.get("mode") or spec.routing.mode
        self.intent = FabricIntent(spec=spec, plan=plan, mode=mode,
                                   program_pfc=PROGRAM_PFC_IN_FABRICS)
        self.rt.admin_down = set(state.meta.get("admin_down", []))
        self.intent.failed = frozenset(self.rt.admin_down)
        meta = self._meta()

        def take_over(st: Any) -> None:
            """Make this process the owner of `run.json`, with its metadata."""
            st.owner_pid, st.owner_start = os.getpid(), proc_start(os.getpid())
            st.meta.update(meta)

        state = update_state(take_over) or state
        self.rt.fabric = FabricRuntime.from_state(state, plan)
        self.progress("attached", switches=len(plan.switches), hosts=len(plan.hosts))

    def _meta(self) -> dict[str, Any]:
        assert self.rt is not None and self.intent is not None
        return {"topology": str(self.rt.topology.resolve()), "daemon": True,
                "api": self.api_addresses, "mode": self.intent.mode,
                "p4info": {r: str(p.p4info.resolve()) for r, p in self.rt.programs.items()},
                "device_configs": {r: str(p.device_config.resolve())
                                   for r, p in self.rt.programs.items()},
                "sources": {r: str(p.source.resolve()) for r, p in self.rt.programs.items()},
                "roles": {s.name: s.role for s in self.rt.plan.switches},
                "admin_down": sorted(self.rt.admin_down)}

    def _save_meta(self) -> None:
        meta = self._meta()

        def change(state: Any) -> None:
            """Update the metadata while `run.json` is still this process's."""
            if state.owner_pid == os.getpid():
                state.meta.update(meta)

        update_state(change)

    async def _run_control(self) -> None:
        rt, intent = self.rt, self.intent
        assert rt is not None and intent is not None
        self.prober = None
        fabric = rt.fabric
        pki = FabricPki(directory=state_dir() / PKI_DIR)
        self.write_log = WriteLog(state_dir() / WRITE_LOG_DIR, fresh=not self.config.attach)
        self.sessions = FabricSessions(
            rt.plan, rt.programs, intent, on_event=self.bus.publish,
            on_packet_in=self._packet_in, packet_in_types=(PROBE_ETHERTYPE,),
            configure=lambda name: asyncio.to_thread(fabric.configure_switch, name),
            tls=pki if pki.exists() else None, write_log=self.write_log)
        self.progress("sessions", switches=len(rt.plan.switches),
                      names=[s.name for s in rt.plan.switches])
        await self.sessions.start()
        await self.sessions.wait_ready(timeout=120)
        rates = {tier: getattr(getattr(rt.spec.links, tier), "rate_mbps", None)
                 for tier in ("host", "rtsw_ctsw", "ctsw_atsw")}
        self.prober = LinkProber(rt.plan, self.sessions, self._link_changed,
                                 interval=self.config.probe_interval,
                                 dead_after=self.config.probe_dead_after)
        self.prober.start(self.tasks)
        self.stats = StatsPoller(rt.plan, self.sessions, interval=self.config.stats_interval,
                                 rates={k: v for k, v in rates.items() if v},
                                 tm_source=rt.fabric.tm_stats if rt.fabric is not None else None,
                                 on_snapshot=lambda snap: self.bus.publish("stats", snap),
                                 program_pfc=intent.program_pfc,
                                 link_up=self._link_usable)
        self.stats.start(self.tasks)
        self.tasks.spawn(self._supervise(), "supervise")
        self.progress("agents", hosts=len(rt.plan.hosts))
        self.agents = HostAgents(rt.plan, rt.spec, rt.fabric)
        await self.agents.start()
        self._save_meta()

    async def _teardown(self) -> None:
        # One cancel path: stats, probes, the supervisor and any reroute still running.
        await self.tasks.cancel_all()
        if self.agents is not None:
            await asyncio.to_thread(self.agents.stop)
        if self.sessions is not None:
            try:
                await asyncio.wait_for(self.sessions.stop(), 10)
            except (TimeoutError, Exception):  # noqa: BLE001 - stopping anyway
                LOG.warning("P4Runtime sessions did not close cleanly")
        if self.pcaps is not None:
            await asyncio.to_thread(self.pcaps.stop)
        rt = self.rt
        if rt is not None and rt.net is not None:
            await asyncio.to_thread(rt.net.stop)
        elif rt is not None and rt.fabric is not None and self.phase != "failed":
            # An attached daemon also owns the network now: stop it like the original would.
            from topologies.runstate import cleanup

            await asyncio.to_thread(cleanup, stop_running=False)

    # --- reacting ----------------------------------------------------------------

    def _packet_in(self, switch: str, port: int, payload: bytes) -> None:
        if self.prober is not None:
            self.prober.on_packet_in(switch, port, payload)

    def _link_usable(self, link: str) -> bool:
        rt = self.rt
        if rt is None or link in rt.admin_down:
            return False
        return self.prober.is_up(link) if self.prober is not None else True

    def _failed_set(self) -> frozenset[str]:
        assert self.rt is not None
        probed = {k for k, s in (self.prober.links.items() if self.prober else ()) if not s.up}
        return frozenset(self.rt.admin_down | probed)

    def _link_changed(self, state: LinkState) -> None:
        """The prober saw a link die or come back: route around it / back onto it."""
        self.bus.publish("link", {"link": state.link, "up": state.up, "cause": "probe",
                                  "detected_after": state.detected_after})
        if state.up and state.link in self._admin_restoring:
            return
        # Expendable: a reroute that loses a race with the fabric stopping is no failure.
        self.tasks.spawn(self._reroute(state.link, state.up, "probe", state.detected_after),
                         f"reroute {state.link}", expendable=True)

    async def _reroute(self, link: str, up: bool, cause: str,
                       detected_after: float | None) -> dict[str, Any]:
        rt, intent, sessions = self._need()
        t0 = time.monotonic()
        async with self._op_lock:
            failed = self._failed_set()
            if failed == intent.failed:
                return {"link": link, "up": up, "changed": False}
            intent.failed = failed
            if not up:
                rt.failures[link] = _Failure(link=link, cause=cause, at=time.time(),
                                             detected_after=detected_after)
            results = await sessions.apply(f"link {'up' if up else 'down'} {link}")
        seconds = time.monotonic() - t0
        key = (link, "up" if up else "down")
        rt.transitions[key] = rt.transitions.get(key, 0) + 1
        rt.reconvergence[link] = seconds
        record: dict[str, Any] = {"link": link, "up": up, "cause": cause,
                                  "reconverged_after": round(seconds, 4),
                                  "detected_after": detected_after,
                                  "writes": {n: r.counts for n, r in results.items()
                                             if any(r.counts[k] for k in
                                                    ("insert", "modify", "delete"))}}
        if not up:
            await asyncio.sleep(0.3)  # what was queued towards the dead link has left
            balance = await self._link_balance(link)
            baseline = rt.balances.get(link, 0)
            # Never below 0: packets in flight when the two ends were read.
            record["lost_packets"] = max(0, balance - baseline) if balance is not None else None
            failure = rt.failures.get(link)
            if failure is not None:
                failure.reconverged_after = seconds
                failure.lost_packets = record["lost_packets"]
        else:
            rt.failures.pop(link, None)
            balance = await self._link_balance(link)
            if balance is not None:
                rt.balances[link] = balance  # what it lost so far is not the next failure's
        self._save_meta()
        self.bus.publish("rerouted", record)
        return record

    async def _link_balance(self, link: str) -> int | None:
        """Packets sent into `link` that did not come out of its other end, both ways.

        Each end's tx_port counter minus the other end's rx_port counter: on a
        live link the two agree (but for packets in flight), so what a dead
        link swallowed is what the balance grew by since the link was last
        restored. None when a switch at either end cannot be read.
        """
        rt, _, sessions = self._need()
        lk = next((x for x in rt.plan.links if x.id == link), None)
        if lk is None or lk.tier == "host":
            return None
        total = 0
        for (s, sp), (r, rp) in (((lk.a, lk.a_port), (lk.b, lk.b_port)),
                                 ((lk.b, lk.b_port), (lk.a, lk.a_port))):
            if not (sessions.is_ready(s) and sessions.is_ready(r)):
                return None
            tx = await sessions.read_counters(s, "FabricEgress.counters.tx_port", [sp])
            rx = await sessions.read_counters(r, "FabricIngress.counters.rx_port", [rp])
            total += (tx[sp].packets if sp in tx else 0) - (rx[rp].packets if rp in rx else 0)
        return total

    async def _supervise(self) -> None:
        """Restart a switch process that died; its session reconciles it when it is back."""
        rt = self.rt
        assert rt is not None and self.sessions is not None
        while True:
            await asyncio.sleep(0.5)
            for s in rt.plan.switches:
                if self.phase != "up" or rt.fabric is None:
                    break
                alive = await asyncio.to_thread(rt.fabric.switch_alive, s.name)
                if alive:
                    continue
                await self._restart_switch(s.name)

    async def _restart_switch(self, name: str) -> dict[str, Any]:
        rt = self.rt
        assert rt is not None and self.sessions is not None
        t0 = time.monotonic()
        self.sessions.forget(name)
        self.bus.publish("switch", {"switch": name, "phase": "died"})
        pid = await asyncio.to_thread(rt.fabric.restart_switch, name)
        t1 = time.monotonic()
        self.bus.publish("switch", {"switch": name, "phase": "restarted", "pid": pid})
        await self.sessions.wait_ready(timeout=120, names=[name])
        for lk in rt.plan.links:  # its counters started again from zero
            if name in (lk.a, lk.b) and lk.tier != "host":
                link = lk.id
                balance = await self._link_balance(link)
                if balance is not None:
                    rt.balances[link] = balance
        last = self.sessions.last.get(name)
        record = {"switch": name, "pid": pid, "restart_seconds": round(t1 - t0, 3),
                  "reconcile_seconds": round(last.seconds, 4) if last else None,
                  "total_seconds": round(time.monotonic() - t0, 3),
                  "writes": last.counts if last else None}
        rt.restarts.append(record)
        self.bus.publish("switch", {**record, "phase": "reconciled"})
        return record

    # --- operations (the API calls these) --------------------------------------------

    async def set_mode(self, mode: str) -> dict[str, Any]:
        """Switch the live fabric to routing `mode`; the previous mode, seconds and writes.

        Raises `DaemonError` for an unknown mode or a fabric that is not up.
        """
        if mode not in MODES:
            raise DaemonError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
        _, intent, sessions = self._need()
        async with self._op_lock:
            before = intent.mode
            t0 = time.monotonic()
            intent.mode = mode
            results = await sessions.apply(f"mode {mode}")
            seconds = time.monotonic() - t0
        self._save_meta()
        record = {"mode": mode, "previous": before, "seconds": round(seconds, 4),
                  "writes": {n: r.counts for n, r in results.items()}}
        self.bus.publish("mode", record)
        return record

    async def set_acl(self, switch: str, rules: Sequence[TableEntry]) -> dict[str, Any]:
        """Replace the ACL rules a person put on `switch` (drop, permit, punt) and write them."""
        rt, intent, sessions = self._need()
        if switch not in sessions.switches:
            raise DaemonError(f"no switch named {switch!r} in fabric {rt.plan.name}")
        keys = [r.key() for r in rules]
        if len(set(keys)) != len(keys):
            raise DaemonError("two ACL rules with the same match and priority")
        async with self._op_lock:
            t0 = time.monotonic()
            intent.acl[switch] = tuple(rules)
            if not rules:
                del intent.acl[switch]
            results = await sessions.apply(f"acl {switch}")
            seconds = time.monotonic() - t0
        record = {"switch": switch, "rules": len(rules), "seconds": round(seconds, 4),
                  "writes": {n: r.counts for n, r in results.items()
                             if any(r.counts[k] for k in ("insert", "modify", "delete"))}}
        self.bus.publish("acl", record)
        return record

    def acl(self) -> dict[str, Any]:
        """The ACL rules people added, per switch."""
        _, intent, _ = self._need()
        from .entities import Ternary, describe
        from .intent import ACL_ACTIONS

        short = {v: k for k, v in ACL_ACTIONS.items()}

        def rule(e: TableEntry) -> dict[str, Any]:
            """One rule as the API shows it: action, priority, ternary match and text."""
            match = {n: [m.value, m.mask] for n, m in e.match if isinstance(m, Ternary)}
            return {"action": short.get(e.action.name if e.action else "", "?"),
                    "priority": e.priority, "match": match, "text": describe(e)}

        return {sw: [rule(e) for e in rules] for sw, rules in sorted(intent.acl.items())}

    def find_link(self, a: str, b: str, index: int = 0) -> str:
        """The id of the `index`-th link between nodes `a` and `b` (either order)."""
        rt, _, _ = self._need()
        ids = [lk.id for lk in rt.plan.links if {lk.a, lk.b} == {a, b}]
        if not ids:
            names = {s.name for s in rt.plan.switches} | {h.name for h in rt.plan.hosts}
            missing = [n for n in (a, b) if n not in names]
            if missing:
                raise DaemonError(f"no node named {missing[0]!r} in fabric {rt.plan.name}")
            raise DaemonError(f"{a} and {b} are not linked")
        if not 0 <= index < len(ids):
            raise DaemonError(f"{a}-{b} has {len(ids)} link(s): index must be 0..{len(ids) - 1}")
        return ids[index]

    async def set_link(self, link: str, up: bool, *, silent: bool = False) -> dict[str, Any]:
        """Fail or restore a link; with `silent`, routing is not told (the probes must find it)."""
        rt, _, _ = self._need()
        if link not in {lk.id for lk in rt.plan.links}:
            raise DaemonError(f"no link {link!r} in fabric {rt.plan.name}")
        t0 = time.monotonic()
        await asyncio.to_thread(rt.fabric.set_link, link, up, silent=silent)
        if silent:
            self.bus.publish("link", {"link": link, "up": up, "cause": "silent"})
            return {"link": link, "up": up, "silent": True, "changed": False,
                    "seconds": round(time.monotonic() - t0, 4)}
        self.bus.publish("link", {"link": link, "up": up, "cause": "admin"})
        if up:
            self._admin_restoring.add(link)
            try:
                rt.admin_down.discard(link)
                # Back into service once probes cross it again (or at once for a host link).
                deadline = time.monotonic() + 5
                while (self.prober is not None and link in self.prober.links
                       and not self.prober.is_up(link) and time.monotonic() < deadline):
                    await asyncio.sleep(0.05)
                record = await self._reroute(link, up, "admin", None)
            finally:
                self._admin_restoring.discard(link)
        else:
            rt.admin_down.add(link)
            record = await self._reroute(link, up, "admin", None)
        record["seconds"] = round(time.monotonic() - t0, 4)
        return record

    async def exec(self, host: str, argv: Sequence[str], timeout: float = 30, *,
                   limit: int = 1 << 20) -> dict[str, Any]:
        """Run `argv` in `host`; at most `limit` bytes of each output stream are kept."""
        rt, _, _ = self._need()
        if host not in {h.name for h in rt.plan.hosts}:
            raise DaemonError(f"no host named {host!r} in fabric {rt.plan.name}")
        if not argv:
            raise DaemonError("give a command to run")
        try:
            proc = await asyncio.to_thread(rt.fabric.host_run, host, list(argv), timeout,
                                           limit=limit)
        except FileNotFoundError as exc:
            raise DaemonError(f"{host}: {exc.strerror}: {argv[0]}") from None
        except subprocess.TimeoutExpired:
            raise DaemonError(f"{host}: {argv[0]} did not finish within {timeout:g} s "
                              f"(it was stopped)") from None
        return {"host": host, "argv": list(argv), "returncode": proc.returncode,
                "stdout": proc.stdout, "stderr": proc.stderr}

    async def capture(self, target: str, *, seconds: float, count: int | None = None,
                      snaplen: int | None = None, bpf: str | None = None
                      ) -> tuple[Any, AsyncGenerator[bytes, None]]:
        """A capture point and its pcap stream (`controller.capture.start_capture`)."""
        from .capture import CaptureError, start_capture

        rt, _, _ = self._need()
        try:
            return await start_capture(rt.plan, rt.fabric, target, seconds=seconds,
                                       count=count, snaplen=snaplen, bpf=bpf)
        except CaptureError as exc:
            raise DaemonError(str(exc)) from None

    async def routes(self, switch: str | None = None) -> dict[str, Any]:
        """The entries read back from `switch` (None: every one), each compared with the intent."""
        rt, intent, sessions = self._need()
        names = [switch] if switch else [s.name for s in rt.plan.switches]
        for n in names:
            if n not in sessions.switches:
                raise DaemonError(f"no switch named {n!r} in fabric {rt.plan.name}")
        from .entities import describe
        from .intent import diff

        out: dict[str, Any] = {}
        for n in names:
            current = await sessions.read_state(n)
            d = diff(intent.for_switch(n), current)
            out[n] = {"entries": sorted(_entry_json(e, describe) for e in current),
                      "matches_intent": d.empty, "diff": d.counts()}
        return {"mode": intent.mode, "failed": sorted(intent.failed), "switches": out}

    def history(self, switch: str, limit: int | None = None) -> dict[str, Any]:
        """The P4Runtime writes the controller sent `switch`, oldest first (`controller.writelog`)."""
        rt, _, sessions = self._need()
        if switch not in sessions.switches:
            raise DaemonError(f"no switch named {switch!r} in fabric {rt.plan.name}")
        records = self.write_log.read(switch, limit) if self.write_log is not None else []
        return {"switch": switch, "writes": [r.to_json() for r in records]}

    async def counters(self, switch: str, counter: str, indexes: list[int]) -> dict[str, Any]:
        """Cells of one of a switch's indexed counters, read now."""
        rt, _, sessions = self._need()
        if switch not in sessions.switches:
            raise DaemonError(f"no switch named {switch!r} in fabric {rt.plan.name}")
        if sessions.schema(switch).counters.get(counter) is None:
            raise DaemonError(f"{switch} has no counter {counter!r}")
        cells = await sessions.read_counters(switch, counter, indexes)
        return {"switch": switch, "counter": counter,
                "cells": {str(i): {"packets": c.packets, "bytes": c.bytes}
                          for i, c in sorted(cells.items())}}

    async def status(self) -> dict[str, Any]:
        """The phase and API addresses and, once there is a fabric, its switches, hosts, links."""
        rt = self.rt
        data: dict[str, Any] = {"phase": self.phase, "error": self.error, "pid": os.getpid(),
                                "api": self.api_addresses, "started_at": self.started_at}
        if rt is None:
            return data
        sessions = self.sessions
        switches = []
        for s in rt.plan.switches:
            alive = await asyncio.to_thread(rt.fabric.switch_alive, s.name) if rt.fabric else False
            last = sessions.last.get(s.name) if sessions else None
            switches.append({"name": s.name, "role": s.role, "grpc_addr": s.grpc_addr,
                             "device_id": s.device_id, "alive": alive,
                             "ready": sessions.is_ready(s.name) if sessions else False,
                             "last_reconcile": last.to_json() if last else None})
        spec = rt.spec
        data.update({
            "name": rt.plan.name, "topology": str(rt.topology), "target": rt.target,
            "mode": self.intent.mode if self.intent else None,
            "scale": _scale(spec), "switches": switches,
            "hosts": [{"name": h.name, "zone": h.zone, "rack": h.rack,
                       "nics": [{"intf": n.intf, "ip": n.ip} for n in h.nics]}
                      for h in rt.plan.hosts],
            "links": [{"id": lk.id, "tier": lk.tier, "a": lk.a, "b": lk.b,
                       "up": self._link_usable(lk.id)}
                      for lk in rt.plan.links],
            "failed": sorted(self.intent.failed) if self.intent else [],
            "failures": [vars(f) for f in rt.failures.values()],
            "restarts": rt.restarts[-20:],
        })
        return data

    def metrics(self) -> bytes:
        """`GET /metrics`: the Prometheus exposition of the fabric (`controller.metrics`)."""
        from .metrics import MetricsSource, render

        rt, _, sessions = self._need()
        poller = self.stats
        return render(MetricsSource(
            plan=rt.plan, readings=lambda: dict(poller.previous) if poller else {},
            switch_up=sessions.is_ready, link_up=self._link_usable,
            transitions=lambda: dict(rt.transitions),
            reconvergence=lambda: dict(rt.reconvergence), jobs=lambda: dict(self.jobs)))

    def topology(self) -> dict[str, Any]:
        """Nodes and edges by tier: what the dashboard draws."""
        rt, intent, _ = self._need()
        nodes = [{"id": s.name, "kind": "switch", "role": s.role, "zone": s.zone,
                  "position": s.position} for s in rt.plan.switches]
        nodes += [{"id": h.name, "kind": "host", "role": "host", "zone": h.zone, "rack": h.rack,
                   "position": h.position, "rtsw": h.rtsw} for h in rt.plan.hosts]
        rates = _scale(rt.spec)
        edges = [{"id": lk.id, "a": lk.a, "b": lk.b, "tier": lk.tier,
                  "a_port": lk.a_port, "b_port": lk.b_port,
                  "rate_mbps": rates.get(lk.tier, {}).get("rate_mbps"),
                  "up": self._link_usable(lk.id)} for lk in rt.plan.links]
        return {"name": rt.plan.name, "mode": intent.mode, "nodes": nodes, "edges": edges}

    async def check(self, *, roce: bool = True) -> dict[str, Any]:
        """All ordered host pairs: ping NIC k to NIC k; a RoCEv2 transfer per pair with `roce`."""
        from .check import check_pairs
        from .jobs import fabric_job_ack_timeout_ms

        rt, _, sessions = self._need()
        self.bus.publish("check", {"phase": "start"})
        ack_ms = (fabric_job_ack_timeout_ms(self._job_context(rt, sessions, self.agents))
                  if self.agents is not None else None)
        result = await check_pairs(rt.plan, rt.fabric, self.agents, roce=roce, ack_timeout_ms=ack_ms,
                                   progress=lambda done, total: self.bus.publish(
                                       "check", {"phase": "running", "done": done,
                                                 "total": total}))
        self.bus.publish("check", {"phase": "done", "ok": result["ok"],
                                   "failed": len(result["failed"])})
        return result

    async def trace(self, src: str, dst: str, *, sport: int, dport: int, qp: int,
                    send: bool) -> dict[str, Any]:
        """Predict a flow's path from the entries read back, and confirm it with counters."""
        from .paths import PathError
        from .trace import trace

        rt, _, sessions = self._need()
        try:
            return await trace(sessions, rt.plan, rt.fabric, src, dst, sport=sport, dport=dport,
                               qp=qp, send=send)
        except (ValueError, PathError) as exc:
            raise DaemonError(str(exc)) from None

    def _job_context(self, rt: Any, sessions: Any, agents: HostAgents) -> Any:
        """What a collective (or the check's RoCEv2 half) needs of the running fabric."""
        from .jobs import JobContext

        rates = {tier: getattr(rt.spec.links, tier).rate_mbps
                 for tier in ("host", "rtsw_ctsw", "ctsw_atsw")}
        used: set[str] = {lk.tier for lk in rt.plan.links}
        queues: dict[str, int] = {tier: getattr(rt.spec.links, tier).queue
                                  for tier in rates if tier in used}
        return JobContext(plan=rt.plan, sessions=sessions, agents=agents,
                          publish=self.bus.publish, tm_stats=rt.fabric.tm_stats, rates=rates,
                          failed=self.intent.failed if self.intent else frozenset(),
                          program_pfc=bool(self.intent and self.intent.program_pfc),
                          queues=queues)

    async def run_job(self, req: Any) -> dict[str, Any]:
        """Run one collective on the agents (one at a time); see `controller.jobs`."""
        from traffic.agentd import AgentError

        from .jobs import RunError, run_collective

        rt, _, sessions = self._need()
        if self.agents is None:
            raise DaemonError("the traffic agents are not running")
        if self._job_lock.locked():
            raise DaemonError("a collective is already running (one at a time)")
        ctx = self._job_context(rt, sessions, self.agents)
        async with self._job_lock:
            try:
                out = await run_collective(ctx, req)
            except RunError as exc:
                raise DaemonError(str(exc)) from None
            except AgentError as exc:
                raise DaemonError(f"the collective failed: {exc}") from None
        out["mode"] = self.intent.mode if self.intent else None
        out["failed_links"] = sorted(self.intent.failed) if self.intent else []
        out["scale"] = _scale(rt.spec)
        self.jobs[out["id"]] = out
        while len(self.jobs) > 50:
            self.jobs.pop(min(self.jobs))
        return out

    async def shutdown(self) -> dict[str, Any]:
        """Ask the daemon to stop; answers at once, before the fabric is down."""
        self.request_stop()
        return {"stopping": True, "pid": os.getpid()}


def _scale(spec: FabricSpec) -> dict[str, Any]:
    line = getattr(spec, "line_rate_gbps", None)
    out: dict[str, Any] = {"line_rate_gbps": line}
    for tier in ("host", "rtsw_ctsw", "ctsw_atsw"):
        rate = getattr(getattr(spec.links, tier), "rate_mbps", None)
        out[tier] = {"rate_mbps": rate,
                     "scale": round(line * 1000 / rate, 1) if line and rate else None}
    return out


def _entry_json(e: Any, describe: Any) -> str:
    text: str = describe(e)
    action = getattr(e, "action", None)
    if action is not None:
        params = ", ".join(f"{k}={v:#x}" if k.endswith("mac") else f"{k}={v}"
                           for k, v in action.params)
        text += f" -> {action.name.rsplit('.', 1)[-1]}({params})"
    elif getattr(e, "member_id", None) is not None:
        text += f" -> member {e.member_id}"
    elif getattr(e, "group_id", None) is not None:
        text += f" -> group {e.group_id}"
    elif hasattr(e, "members"):
        text += f" members {list(e.members)}"
    return text


def _one_line(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


# --- process entry -------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The daemon's command line (`python -m controller.daemon`; `DaemonConfig` explains it)."""
    p = argparse.ArgumentParser(prog="python -m controller.daemon",
                                description="the aizone controller daemon (started by `aizone up`)")
    p.add_argument("--topology", type=Path)
    p.add_argument("--target", type=Target, choices=list(Target), default=Target.AUTO)
    p.add_argument("--mode", type=Mode, choices=list(Mode))
    p.add_argument("--build-dir", type=Path, default=Path(os.environ.get("AIZONE_BUILD_DIR",
                                                                          "build")))
    p.add_argument("--api-host", default="127.0.0.1")
    p.add_argument("--api-port", type=int, default=DEFAULT_API_PORT)
    p.add_argument("--api-allow-host", action="append", default=[], metavar="NAME",
                   help="another Host name the TCP API answers to (with --api-host)")
    p.add_argument("--attach", action="store_true")
    p.add_argument("--stats-interval", type=float, default=1.0)
    p.add_argument("--probe-interval", type=float, default=0.2)
    p.add_argument("--probe-dead-after", type=float, default=1.0)
    p.add_argument("--switch-log", action="store_true")
    p.add_argument("--pcap", type=Path, default=None, metavar="DIR")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the daemon until its fabric is down; the exit code (1 failed, 2 no topology)."""
    args = build_parser().parse_args(argv)
    if not args.attach and args.topology is None:
        print("aizone daemon: error: --topology is required (or --attach)", file=sys.stderr)
        return 2
    # Everything the daemon (and what it starts: switches, host shells, agents) creates is
    # its own: sockets, logs, run.json and the token are never readable by another user.
    os.umask(0o077)
    directory = state_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    logging.basicConfig(filename=directory / "daemon.log", filemode="a" if args.attach else "w",
                        level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("finsy").setLevel(logging.INFO)
    config = DaemonConfig(topology=args.topology, target=args.target, mode=args.mode,
                          build_dir=args.build_dir, api_host=args.api_host,
                          api_port=args.api_port, api_extra_hosts=tuple(args.api_allow_host),
                          attach=args.attach,
                          stats_interval=args.stats_interval, probe_interval=args.probe_interval,
                          probe_dead_after=args.probe_dead_after, log_console=args.switch_log,
                          pcap_dir=args.pcap.resolve() if args.pcap else None)
    try:
        return asyncio.run(Daemon(config).run())
    except (SpecError, NetworkError, ControllerError, OSError) as exc:
        print(f"aizone daemon: error: {_one_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

