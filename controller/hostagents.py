"""The launcher of a running fabric's traffic agents: one per host, started and driven by the daemon.

`HostAgents(plan, spec, fabric)` starts `python -m traffic.hostagent` inside
every host's network namespace (`FabricRuntime.host_popen`), listening on
`<state dir>/agents/<host>.sock`, with the host's NICs, the host tier's
emulated rate, the line rate it stands for and the topology's traffic
classes (DSCP and PFC priority of `data` and `control`). An agent that
already answers at its socket (a daemon that re-attached to a running
fabric) is kept.

A host on another server of a cluster fabric (`FabricRuntime.remote_server`)
has its agent there, listening on `<state dir>/agents/<host>.remote.sock`
of that server, and the ssh session that runs it forwards
`<state dir>/agents/<host>.sock` here to it: every client of an agent (the
daemon, the experiments, `aizone stats`) connects to the same path here
whichever server the host runs on, and the agent's socket on its server
is root's alone (its directory 0700, the socket 0600) as it is here.

`client(host)` is the `traffic.agentclient.AgentClient` of one host;
`run_all(jobs, timeout)` runs one job per host at once (threads: the
client is blocking) and returns every host's report or raises the first
`JobFailed`/`AgentError` with the others stopped.

Names defined here: `HostAgents`, `agents_dir`.
"""

from __future__ import annotations

import asyncio
import functools
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from topologies.addressing import AddressPlan
from topologies.runstate import state_dir
from topologies.spec import FabricSpec
from traffic.agentclient import AgentClient, AgentError, AgentUnreachable
from traffic.schema import Job

__all__ = ["HostAgents", "agents_dir"]


def agents_dir() -> Path:
    """The directory of the agents' sockets and logs: `<state dir>/agents`."""
    return state_dir() / "agents"


class HostAgents:
    """One traffic agent per host (see the module docstring)."""

    def __init__(self, plan: AddressPlan, spec: FabricSpec, fabric: Any) -> None:
        self.plan = plan
        self.spec = spec
        self.fabric = fabric
        self._procs: dict[str, Any] = {}

    def path(self, host: str) -> Path:
        """The Unix socket here that reaches `host`'s agent."""
        return agents_dir() / f"{host}.sock"

    def listen_path(self, host: str) -> Path:
        """The Unix socket `host`'s agent listens on, on the host's own server."""
        if self.fabric.remote_server(host) is None:
            return self.path(host)
        return agents_dir() / f"{host}.remote.sock"

    def client(self, host: str) -> AgentClient:
        """A client of `host`'s agent (blocking; nothing is sent until it is used)."""
        return AgentClient(self.path(host))

    def _argv(self, host: str) -> list[str]:
        h = self.plan.host(host)
        qos = self.spec.qos.classes
        data, control = qos["data"], qos["control"]
        return [sys.executable, "-m", "traffic.hostagent", "--host", host,
                "--socket", str(self.listen_path(host)),
                "--nic", ",".join(n.intf for n in h.nics),
                "--rate-mbps", str(self.spec.links.host.rate_mbps),
                "--line-rate-gbps", str(self.spec.line_rate_gbps),
                "--data-dscp", str(data.dscp[0]), "--data-prio", str(data.tc),
                "--control-dscp", str(control.dscp[0]), "--control-prio", str(control.tc)]

    def _alive(self, host: str) -> bool:
        try:
            self.client(host).ping()
            return True
        except AgentError:
            return False

    async def start(self, timeout: float = 60.0) -> dict[str, str]:
        """Start (or find) every host's agent; wait until all answer. Returns host -> how."""
        agents_dir().mkdir(parents=True, exist_ok=True)
        how: dict[str, str] = {}
        for h in self.plan.hosts:
            if await asyncio.to_thread(self._alive, h.name):
                how[h.name] = "running"
                continue
            here, there = self.path(h.name), self.listen_path(h.name)
            forwards = [(str(here), str(there))] if here != there else []
            log = open(agents_dir() / f"{h.name}.log", "wb")  # noqa: SIM115 - the child's
            try:
                self._procs[h.name] = await asyncio.to_thread(
                    functools.partial(self.fabric.host_popen, h.name, self._argv(h.name),
                                      unix_forwards=forwards, stdin=None, stdout=log,
                                      stderr=log))
            finally:
                log.close()
            how[h.name] = "started"
        deadline = time.monotonic() + timeout
        waiting = [h for h, w in how.items() if w == "started"]
        while waiting:
            waiting = [name for name in waiting if not await asyncio.to_thread(self._alive, name)]
            for name in waiting:
                proc = self._procs.get(name)
                if proc is not None and proc.poll() is not None:
                    raise AgentUnreachable(f"{name}: the traffic agent exited at start: "
                                           f"{_last_line(agents_dir() / f'{name}.log')}")
            if waiting and time.monotonic() > deadline:
                raise AgentUnreachable(f"traffic agents of {', '.join(waiting)} did not answer "
                                       f"within {timeout:.0f} s")
            if waiting:
                await asyncio.sleep(0.1)
        return how

    def stop(self) -> None:
        """Stop the agents this daemon started (the others end with the fabric)."""
        for proc in self._procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self._procs.values():
            try:
                proc.wait(5)
            except Exception:  # noqa: BLE001 - cleanup() ends what is left
                proc.kill()
        self._procs.clear()

    async def run_all(self, jobs: Mapping[str, Job], timeout: float) -> dict[str, dict[str, Any]]:
        """Run every host's job at once; the reports by host (first failure raised)."""
        hosts = list(jobs)
        tasks = [asyncio.create_task(asyncio.to_thread(self.client(h).run, jobs[h], timeout))
                 for h in hosts]
        try:
            reports = await asyncio.gather(*tasks)
        except BaseException:
            for h in hosts:
                try:
                    await asyncio.to_thread(self.client(h).stop)
                except AgentError:
                    pass
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return dict(zip(hosts, reports, strict=True))

    async def status(self, hosts: list[str]) -> dict[str, Any]:
        """Each host's agent status, by host (`{"error": ...}` for one that cannot answer)."""
        out: dict[str, Any] = {}
        for h in hosts:
            try:
                out[h] = await asyncio.to_thread(self.client(h).status)
            except AgentError as exc:
                out[h] = {"error": str(exc)}
        return out


def _last_line(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return f"see {path}"
    return lines[-1] if lines else f"see {path}"
