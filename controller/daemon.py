"""The controller daemon: owns a running fabric and serves its local API.

`python -m controller.daemon_main --topology T [--target --mode ...]`
(started by `aizone up`, which then follows its progress over the API) runs
one `Daemon`, which brings the fabric up and keeps it as the topology and
the chosen mode say:

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

This module holds the daemon's state and its life (bring-up, attach,
teardown). What it does when a link or a switch fails is
`controller.failures`; the operations the API calls are
`controller.operations` (and `find_link`, `set_link` in failures), each a
function taking the `Daemon`; the command line is `controller.daemon_main`.
Each failure or change is an event on the bus (`controller.events`).

Names defined here: `Daemon`, `DaemonConfig`, `Runtime`, `one_line`, `DEFAULT_API_PORT`,
`program_pfc`, `check_program_pfc`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from topologies.addressing import AddressPlan, plan_addresses
from topologies.nodes import SWITCH_CLASSES, uses_native_pfc
from topologies.pki import FabricPki
from topologies.ports import switch_settings
from topologies.runstate import PKI_DIR, proc_start, read_state, state_dir, update_state
from topologies.spec import FabricSpec, Mode, Target, load_spec
from topologies.targets import Pfc

from .build import CompiledProgram, compile_roles
from .clocks import CLOCK_INTERVAL_S, ClockWatch
from .errors import DaemonError
from .events import EventBus
from .failures import Failure, link_changed, supervise
from .hostagents import HostAgents
from .intent import PROBE_ETHERTYPE, FabricIntent
from .probes import LinkProber
from .qos import PFC_NAMES
from .sessions import FabricSessions
from .stats import StatsPoller
from .tasks import DaemonTasks
from .writelog import WriteLog

__all__ = ["DEFAULT_API_PORT", "Daemon", "DaemonConfig", "Runtime", "check_program_pfc",
           "one_line", "program_pfc"]

LOG = logging.getLogger("aizone.daemon")
API_SOCKET = "api.sock"
WRITE_LOG_DIR = "p4rt"  # per-switch logs of every P4Runtime write (controller.writelog)
THREADS = 256
DEFAULT_API_PORT = 8400


def program_pfc(target: str, pfc: Pfc | str | None = None) -> bool:
    """Whether a fabric on `target` runs the programs' own PFC (p4/include/control/pfc.p4)
    for the choice `pfc` (`DaemonConfig.pfc`). None: the target's default, the programs'
    on BMv2, which has none of its own, p4switch's native 802.1Qbb on p4switch (the
    programs' hold loop costs p4switch most of a core per held port; docs/bmv2.md compares
    the two). `NetworkError` for native PFC on BMv2 (`topologies.nodes.uses_native_pfc`)."""
    return not uses_native_pfc(target, pfc)


def check_program_pfc(programs: dict[str, CompiledProgram], plan: AddressPlan) -> None:
    """`DaemonError` when the programs' PFC is to run but a role's program has none (its
    P4Info lacks a PFC table the controller writes) while its switches have PFC ports."""
    tables = [v for k, v in PFC_NAMES.items() if k.startswith("pfc_")]
    for role, prog in sorted(programs.items()):
        if not any(p.pfc for s in plan.switches if s.role == role
                   for p in switch_settings(plan, s.name).ports):
            continue
        p4info = prog.p4info.read_text(errors="replace")
        missing = [t for t in tables if f'"{t}"' not in p4info]
        if missing:
            raise DaemonError(
                f"{prog.source}: the {role} program has no PFC of its own (no table "
                f"{missing[0]} in its P4Info) but its switches have PFC ports: include "
                f"p4/include/control/pfc.p4 as p4/{role}.p4 does, use --pfc native on "
                f"p4switch, or turn PFC off in the topology (links.<tier>.pfc.enabled)")


@dataclass(frozen=True, kw_only=True)
class DaemonConfig:
    """What a daemon runs and how (its command line, `python -m controller.daemon_main`)."""

    topology: Path | None
    """The topology file to bring up (None with `attach`)."""
    target: Target = Target.AUTO
    """The switch target."""
    mode: Mode | None = None
    """The routing mode to start in (None: the topology's `routing.mode`)."""
    pfc: Pfc | None = None
    """Where PFC runs: the target's traffic manager (`native`, p4switch only) or the role
    programs' own (`program`); None: the target's default (`program_pfc`). Ignored with
    `attach`, which keeps the fabric's."""
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
    servers: tuple[str, ...] = ()
    """The machines to spread the fabric over, this one first (empty: the topology's
    `servers`, else this machine alone; `topologies.cluster`)."""
    clock_interval: float = CLOCK_INTERVAL_S
    """Seconds between readings of the other servers' clocks (`controller.clocks`)."""


@dataclass
class Runtime:
    """The fabric a daemon runs, and what happened to it (failures, restarts, reroutes)."""

    spec: FabricSpec
    plan: AddressPlan
    target: str
    programs: dict[str, CompiledProgram]
    topology: Path
    net: Any = None  # FabricNet when this daemon built the network
    fabric: Any = None  # topologies.attach.FabricRuntime
    failures: dict[str, Failure] = field(default_factory=dict)
    admin_down: set[str] = field(default_factory=set)
    restarts: list[dict[str, Any]] = field(default_factory=list)
    balances: dict[str, int] = field(default_factory=dict)  # see failures.link_balance
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
        self.rt: Runtime | None = None
        self.intent: FabricIntent | None = None
        self.sessions: FabricSessions | None = None
        self.stats: StatsPoller | None = None
        self.write_log: WriteLog | None = None
        self.pcaps: Any = None  # controller.capture.PortCaptures with --pcap
        self.prober: LinkProber | None = None
        self.clocks: ClockWatch | None = None
        self.agents: HostAgents | None = None
        self.jobs: dict[int, dict[str, Any]] = {}
        self.job_lock = asyncio.Lock()  # one collective at a time (operations.run_job)
        self.started_at = time.time()
        self.api_addresses: dict[str, str] = {}
        self._stop = asyncio.Event()
        # Every background task of the daemon (stats, probes, supervisor, reroutes).
        self.tasks = DaemonTasks(on_failure=self._task_failed)
        # Held by every change of the intent: mode, ACL, reroute (operations, failures).
        self.op_lock = asyncio.Lock()
        # Links an `aizone link up` is bringing back: it reroutes them itself (and reports
        # the reconvergence), so the probes seeing them again must not do it first.
        self.admin_restoring: set[str] = set()

    # --- helpers -------------------------------------------------------------

    def progress(self, step: str, **data: Any) -> None:
        """Log a step of the bring-up and publish it, with `data`, as a `progress` event."""
        LOG.info("%s %s", step, data or "")
        self.bus.publish("progress", {"step": step, **data})

    def need(self) -> tuple[Runtime, FabricIntent, FabricSessions]:
        """The fabric, its intent and sessions; `DaemonError` when it is not up."""
        if self.rt is None or self.intent is None or self.sessions is None or self.phase != "up":
            raise DaemonError(f"the fabric is not up (it is {self.phase})")
        return self.rt, self.intent, self.sessions

    def request_stop(self) -> None:
        """Ask `run` to tear the fabric down and return (what SIGTERM and shutdown do)."""
        self._stop.set()

    def _task_failed(self, name: str, exc: BaseException) -> None:
        """Fail fast: a background loop that died takes the daemon down, saying why."""
        self.error = f"{name} failed: {one_line(exc)}"
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
                self.error = one_line(exc)
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
                      if self.rt else "", mode=self.intent.mode if self.intent else "",
                      pfc=self.pfc())

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
        self.rt = Runtime(spec=spec, plan=plan, target=target, programs=programs,
                          topology=cfg.topology)
        in_programs = program_pfc(target, cfg.pfc)
        if in_programs:
            check_program_pfc(programs, plan)
        self.intent = FabricIntent(spec=spec, plan=plan, mode=cfg.mode or spec.routing.mode,
                                   program_pfc=in_programs,
                                   packet_queues=SWITCH_CLASSES[target].packet_queues)
        meta = self._meta()
        servers = cfg.servers or (tuple(spec.servers.names) if spec.servers else ())
        net: FabricNet
        if len(servers) > 1:
            from topologies.cluster import ClusterNet
            from topologies.serverplacement import place_on_servers

            from .expectedload import expected_link_mbps

            placement = place_on_servers(plan, servers,
                                         spec.servers.placement if spec.servers else None,
                                         loads=expected_link_mbps(plan, self.intent.mode))
            net = ClusterNet(plan, placement, switch=SWITCH_CLASSES[target],
                             log_dir=out / "logs", log_console=cfg.log_console, meta=meta,
                             native_pfc=not in_programs)
        else:
            net = FabricNet(plan, switch=SWITCH_CLASSES[target], log_dir=out / "logs",
                            log_console=cfg.log_console, meta=meta, native_pfc=not in_programs)
        self.rt.net = net
        self.progress("network", switches=len(plan.switches), hosts=len(plan.hosts))
        await asyncio.to_thread(net.start)
        from topologies.attach import FabricRuntime

        self.rt.fabric = FabricRuntime.from_net(net)
        if cfg.pcap_dir is not None:
            from .capture import PortCaptures

            self.pcaps = PortCaptures(plan, cfg.pcap_dir, self.rt.fabric.port_popen)
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
        self.rt = Runtime(spec=spec, plan=plan, target=target, programs=programs,
                          topology=topology)
        mode = self.config.mode or state.meta.get("mode") or spec.routing.mode
        # The fabric's own choice (its switches run with it), the target's default for a
        # fabric recorded before the choice was.
        self.intent = FabricIntent(spec=spec, plan=plan, mode=mode,
                                   program_pfc=program_pfc(target, state.meta.get("pfc")),
                                   packet_queues=SWITCH_CLASSES[target].packet_queues)
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
                "pfc": self.pfc(),
                "p4info": {r: str(p.p4info.resolve()) for r, p in self.rt.programs.items()},
                "device_configs": {r: str(p.device_config.resolve())
                                   for r, p in self.rt.programs.items()},
                "sources": {r: str(p.source.resolve()) for r, p in self.rt.programs.items()},
                "roles": {s.name: s.role for s in self.rt.plan.switches},
                "admin_down": sorted(self.rt.admin_down)}

    def save_meta(self) -> None:
        """Record the daemon's metadata (mode, links down by hand ...) in `run.json`."""
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
        self.prober = LinkProber(rt.plan, self.sessions, functools.partial(link_changed, self),
                                 interval=self.config.probe_interval,
                                 dead_after=self.config.probe_dead_after)
        self.prober.start(self.tasks)
        self.stats = StatsPoller(rt.plan, self.sessions, interval=self.config.stats_interval,
                                 rates={k: v for k, v in rates.items() if v},
                                 tm_source=rt.fabric.tm_stats if rt.fabric is not None else None,
                                 on_snapshot=lambda snap: self.bus.publish("stats", snap),
                                 program_pfc=intent.program_pfc,
                                 link_up=self.link_usable)
        self.stats.start(self.tasks)
        self.tasks.spawn(supervise(self), "supervise")
        self.clocks = ClockWatch(rt.fabric, self.bus.publish, interval=self.config.clock_interval)
        self.clocks.start(self.tasks)
        self.progress("agents", hosts=len(rt.plan.hosts))
        self.agents = HostAgents(rt.plan, rt.spec, rt.fabric)
        await self.agents.start()
        self.save_meta()

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
            # An attached daemon also owns the network now: stop it like the original would,
            # on every server the run placed something on too (from its record).
            from topologies.runstate import cleanup

            state = read_state()
            if state is not None and len(state.meta.get("servers") or []) > 1:
                from topologies.cluster import cleanup_servers

                for server, why in (await asyncio.to_thread(cleanup_servers, state)).items():
                    if why:
                        LOG.warning("server %s: %s (`aizone down` tries again)", server, why)
            await asyncio.to_thread(cleanup, stop_running=False)

    # --- reacting ----------------------------------------------------------------

    def _packet_in(self, switch: str, port: int, payload: bytes) -> None:
        if self.prober is not None:
            self.prober.on_packet_in(switch, port, payload)

    def pfc(self) -> str:
        """Where the fabric's PFC runs, a `Pfc` value ("" before the bring-up chose)."""
        if self.intent is None:
            return ""
        return (Pfc.PROGRAM if self.intent.program_pfc else Pfc.NATIVE).value

    def link_usable(self, link: str) -> bool:
        """Whether `link` carries traffic: not set down by hand, and its probes arrive."""
        rt = self.rt
        if rt is None or link in rt.admin_down:
            return False
        return self.prober.is_up(link) if self.prober is not None else True


def one_line(exc: BaseException | None) -> str:
    """The first non-blank line of `exc`'s message (its class name when there is none)."""
    if exc is None:
        return "unknown error"
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__

