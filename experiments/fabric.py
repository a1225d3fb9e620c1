"""A fabric for one experiment: brought up, driven through the daemon's API, brought down.

`variant(base, out_dir, name, changes)` writes a topology file that is
`base` with some keys changed (PFC off, other rates, parallel uplinks),
its program paths made absolute, into the experiment's output folder, so
that the file a result names is the file that ran. `Fabric(topology, ...)`
is a context manager: it starts the fabric (over `servers` when given,
as `aizone up --servers` does) and its controller daemon
with `aizone up`'s own code (`controller.launch.bring_up`: the same
refusals, in the same words, when not root, when a fabric is already up
or one runs without its daemon, and for bad input), and on exit stops it
and removes what is left as `aizone down` does (also after an error or
Ctrl-C). While it is up:

- `run(body)` posts one collective (`controller.jobs.RunRequest`) and
  returns the daemon's answer; `run_async(body)` does it in a thread, so a
  link can fail while the collective runs;
- `mode(m)`, `link(a, b, up=..., index=..., silent=...)`, `status()`;
- `events`: an `EventLog`, a thread that follows the daemon's event
  stream and keeps every event with its time (reconvergence, job
  progress);
- `sample()`: a `Sample` of every switch's `rx_port`/`tx_port` counters
  (read over the API), every agent's NIC counters (its Unix socket), the
  CPU time of every switch process on this machine, of the machine, and
  of every other server it is spread over (`/proc/stat` over ssh). Two samples give
  the emulator's own figures (`experiments.usage.Usage`).

`changed(base, changes)` is that file's data and `variant_spec(base,
changes)` its `FabricSpec`, without writing it (what the experiments'
queue sizing reads, `experiments.sizes.lossless`).

Names defined here: `Fabric`, `FabricError`, `EventLog`, `Sample`,
`changed`, `variant`, `variant_spec`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from controller.client import ApiClient, ApiError, NotRunning
from controller.errors import ControllerError
from controller.jobs import machine_cpu, proc_stat_cpu
from topologies.addressing import AddressPlan, plan_addresses
from topologies.attach import FabricRuntime
from topologies.spec import FabricSpec, load_spec, parse_spec
from topologies.sshcmd import ClusterError, remote_nodes, ssh_run

__all__ = ["EventLog", "Fabric", "FabricError", "Sample", "changed", "variant", "variant_spec"]

RX = "FabricIngress.counters.rx_port"
TX = "FabricEgress.counters.tx_port"


class FabricError(ControllerError):
    """The experiment's fabric could not be brought up, driven or brought down."""


def variant(base: Path, out_dir: Path, name: str, changes: Mapping[str, Any]) -> Path:
    """Write `base` with `changes` (dotted keys, e.g. "links.host.pfc.enabled") as out_dir/name.yaml.

    The program paths are made relative to out_dir (they are relative to
    the file in the presets too, so a variant committed with its results
    works from any clone) and the fabric keeps the base's name, so the
    compiled programs of the base are reused.
    """
    data = changed(base, changes)
    programs = data.get("programs") or {}
    for role, rel in programs.items():
        programs[role] = os.path.relpath((base.parent / rel).resolve(), out_dir.resolve())
    data.setdefault("description", "")
    data["description"] = f"{data['description']} (variant: " + ", ".join(
        f"{k}={v}" for k, v in changes.items()) + ")"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.yaml"
    path.write_text(f"# Written by `aizone experiment`: {base.name} with "
                    + ", ".join(f"{k}={v}" for k, v in changes.items()) + "\n"
                    + yaml.safe_dump(data, sort_keys=False))
    load_spec(path)  # a bad change is an error here, naming the key
    return path


def changed(base: Path, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The YAML data of topology file `base` with `changes` (dotted keys) made."""
    data = yaml.safe_load(base.read_text())
    for dotted, value in changes.items():
        node = data
        *keys, last = dotted.split(".")
        for key in keys:
            node = node.setdefault(key, {})
        node[last] = value
    return data


def variant_spec(base: Path, changes: Mapping[str, Any]) -> FabricSpec:
    """The fabric `variant(base, ..., changes)` writes, without writing it (`SpecError` for a
    bad change, naming the key)."""
    return parse_spec(changed(base, changes), source=str(base), base_dir=base.parent)


class EventLog:
    """Every event the daemon publishes while the fabric is up, with its time (a thread)."""

    def __init__(self, on_event: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self.on_event = on_event
        self.events: list[tuple[str, float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="events", daemon=True)
        self._client: ApiClient | None = None

    def start(self) -> None:
        """Start following the daemon's events."""
        self._thread.start()

    def stop(self) -> None:
        """Stop following (the event stream is closed)."""
        self._stop.set()
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()

    def _follow(self) -> None:
        while not self._stop.is_set():
            try:
                self._client = ApiClient()
                for kind, event in self._client.events(timeout=3600):
                    if kind == "stats":
                        continue
                    with self._lock:
                        self.events.append((kind, float(event.get("at", time.time())),
                                            event.get("data", {})))
                    if self.on_event is not None:
                        with contextlib.suppress(Exception):
                            self.on_event(kind, event.get("data", {}))
                    if self._stop.is_set():
                        return
            except Exception:  # noqa: BLE001 - the stream ends when the daemon goes
                if self._stop.wait(0.5):
                    return

    def since(self, t0: float, kinds: set[str] | None = None) -> list[tuple[str, float, dict[str,
                                                                                          Any]]]:
        """Events at or after UNIX time t0 (of the given kinds)."""
        with self._lock:
            return [e for e in self.events if e[1] >= t0 and (kinds is None or e[0] in kinds)]

    def wait_for(self, kind: str, t0: float, match: Mapping[str, Any], timeout: float
                 ) -> dict[str, Any] | None:
        """The first event of `kind` since t0 whose data has `match`'s items; None after timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for k, _at, data in self.since(t0, {kind}):
                if k == kind and all(data.get(a) == b for a, b in match.items()):
                    return data
            time.sleep(0.05)
        return None


@dataclass(frozen=True, kw_only=True)
class Sample:
    """Counters and CPU times of the whole fabric at one moment."""

    at: float  # time.monotonic()
    ports: dict[str, dict[str, dict[int, tuple[int, int]]]]  # switch -> rx|tx -> port -> (pk, B)
    nics: dict[str, dict[str, Any]]  # NIC interface -> the agent's counters
    agent_cpu: dict[str, float]  # host -> CPU seconds since the agent started
    switch_cpu: dict[str, float]  # switch -> CPU seconds of its process
    machine: tuple[float, float]  # (busy, total) jiffies of all CPUs
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)
    # The same for every other server of a fabric spread over several (read over ssh); a
    # server that did not answer is left out.
    servers: dict[str, tuple[float, float]] = field(default_factory=dict)
    # switch -> when (time.monotonic()) its rx_port and its tx_port counters were read: the
    # switches are read one after the other, so the two ends of a cable are read apart
    read_at: dict[str, tuple[float, float]] = field(default_factory=dict)


def _proc_cpu(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_cpu(server: str) -> tuple[float, float] | None:
    """(busy, total) jiffies of all of `server`'s CPUs, read over ssh; None if it did not
    answer within 10 s."""
    try:
        out = ssh_run(server, "head -n 1 /proc/stat", timeout=10)
        return proc_stat_cpu(out.stdout.decode()) if out.returncode == 0 else None
    except (ClusterError, ValueError, IndexError):
        return None


class Fabric:
    """One fabric for an experiment (see the module docstring)."""

    def __init__(self, topology: Path, *, target: str = "auto", mode: str | None = None,
                 build_dir: Path | None = None, servers: tuple[str, ...] = (),
                 on_event: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self.topology = topology
        self.servers = servers
        self.target = target
        self.initial_mode = mode
        self.build_dir = build_dir
        self.on_event = on_event
        self.spec: FabricSpec = load_spec(topology)
        self.plan: AddressPlan = plan_addresses(self.spec)
        self._runtime: FabricRuntime | None = None
        self.events = EventLog(on_event)
        self.info: dict[str, Any] = {}
        self._child: Any = None
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="experiment")
        self.up_seconds = 0.0
        self.down_seconds = 0.0

    # -- life

    def __enter__(self) -> Fabric:
        from controller.launch import DaemonOptions, bring_up

        t0 = time.monotonic()
        # A refusal (or a bring-up that fails, which bring_up stops) raises before anything
        # of this fabric runs: nothing to tear down, and another fabric is left alone.
        self._child, self.info = bring_up(
            DaemonOptions(topology=self.topology, target=self.target, mode=self.initial_mode,
                          build_dir=self.build_dir, servers=self.servers), self.on_event)
        self.events.start()
        self.up_seconds = time.monotonic() - t0
        return self

    def __exit__(self, *exc: object) -> None:
        self._down()

    def _down(self) -> None:
        from controller.launch import stop_daemon
        from topologies.runstate import cleanup

        t0 = time.monotonic()
        self.events.stop()
        if self._child is not None:
            with contextlib.suppress(ControllerError), ApiClient(timeout=10) as c:
                c.post("/shutdown")
            if not stop_daemon(self._child.pid, 60):
                self._child.kill()
            with contextlib.suppress(Exception):
                self._child.wait(5)
            self._child = None
        cleanup(stop_running=True)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.down_seconds = time.monotonic() - t0

    # -- the API

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None,
              timeout: float = 120) -> Any:
        try:
            with ApiClient(timeout=timeout) as c:
                return c.post(path, body) if method == "POST" else c.get(path, **(body or {}))
        except NotRunning as exc:
            raise FabricError(f"the daemon went away: {exc}") from None

    def status(self) -> dict[str, Any]:
        """The daemon's GET /status answer."""
        result: dict[str, Any] = self._call("GET", "/status")
        return result

    def mode(self, mode: str) -> dict[str, Any]:
        """Switch the fabric to routing mode `mode`; the daemon's answer."""
        result: dict[str, Any] = self._call("POST", "/mode", {"mode": mode})
        return result

    def link(self, a: str, b: str, *, up: bool, index: int = 0,
             silent: bool = False) -> dict[str, Any]:
        """Fail (`up` False) or restore link `index` between `a` and `b`; `silent`: unannounced."""
        result: dict[str, Any] = self._call("POST", "/link", {"a": a, "b": b, "index": index,
                                                              "up": up, "silent": silent})
        return result

    def run(self, body: dict[str, Any]) -> dict[str, Any]:
        """One collective; `ApiError` (the daemon's one line) when it fails."""
        timeout = float(body.get("timeout", 600)) + 60
        result: dict[str, Any] = self._call("POST", "/run", body, timeout=timeout)
        return result

    def run_async(self, body: dict[str, Any]) -> Future[dict[str, Any]]:
        """`run(body)` on a thread of the fabric's pool; a Future of its answer."""
        return self._pool.submit(self.run, body)

    def counters(self, switch: str, counter: str, ports: list[int]) -> dict[int, tuple[int, int]]:
        """(packets, bytes) of `ports` of a counter of `switch`, by index."""
        with ApiClient() as c:
            got = c.get(f"/counters/{switch}/{counter}", index=ports)
        return {int(i): (int(v["packets"]), int(v["bytes"])) for i, v in got["cells"].items()}

    def runtime(self) -> FabricRuntime:
        """Access to the running fabric's switches and hosts (traffic-manager counters)."""
        from topologies.runstate import read_state

        if self._runtime is None:
            state = read_state()
            if state is None:
                raise FabricError("the fabric's run.json is gone")
            self._runtime = FabricRuntime.from_state(state, self.plan)
        return self._runtime

    # -- samples

    def sample(self) -> Sample:
        """Counters and CPU times now (see `Sample`)."""
        from controller.hostagents import agents_dir
        from topologies.runstate import read_state
        from traffic.agentclient import AgentClient, AgentError

        ports: dict[str, dict[str, dict[int, tuple[int, int]]]] = {}
        read_at: dict[str, tuple[float, float]] = {}
        for s in self.plan.switches:
            indexes = [p.port for p in s.ports]
            try:
                t0 = time.monotonic()
                rx = self.counters(s.name, RX, indexes)
                t1 = time.monotonic()
                tx = self.counters(s.name, TX, indexes)
                t2 = time.monotonic()
            except (ApiError, NotRunning):
                ports[s.name] = {"rx": {}, "tx": {}}
                continue
            ports[s.name] = {"rx": rx, "tx": tx}
            read_at[s.name] = ((t0 + t1) / 2, (t1 + t2) / 2)
        nics: dict[str, dict[str, Any]] = {}
        agent_cpu: dict[str, float] = {}
        for h in self.plan.hosts:
            try:
                got = AgentClient(agents_dir() / f"{h.name}.sock").counters()
            except AgentError:
                continue
            nics.update(got.get("counters", {}))
            agent_cpu[h.name] = float(got.get("cpu_seconds", 0.0))
        switch_cpu: dict[str, float] = {}
        state = read_state()
        # A switch on another server runs under an ssh session here: its CPU is not seen.
        elsewhere = remote_nodes(state.meta) if state else {}
        for rec in state.switches if state else []:
            if rec["name"] in elsewhere:
                continue
            cpu = _proc_cpu(int(rec.get("pid") or 0)) if rec.get("pid") else None
            if cpu is not None:
                switch_cpu[rec["name"]] = cpu
        servers: dict[str, tuple[float, float]] = {}
        for server in sorted(set(elsewhere.values())):
            busy = _server_cpu(server)
            if busy is not None:
                servers[server] = busy
        return Sample(at=time.monotonic(), ports=ports, nics=nics, agent_cpu=agent_cpu,
                      switch_cpu=switch_cpu, machine=machine_cpu(), read_at=read_at,
                      servers=servers)


@contextlib.contextmanager
def quiet_errors() -> Iterator[None]:
    """Swallow the API's and the daemon's errors (for best-effort restores)."""
    with contextlib.suppress(ControllerError):
        yield
