"""The controller of a whole fabric: one P4Runtime session per switch, used concurrently.

`FabricController(plan, programs)` connects to every switch of the plan
(in parallel threads), pushes each switch's pipeline (P4Info + device
config of its role), installs the entities `controller.routes` computes,
reads them back, and reads per-port counters. It holds the sessions as the
primary controller until `close()`.

Names defined here: `FabricController`, `PortCounters`, `ROUTE_TABLES`.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from topologies.addressing import AddressPlan

from .build import CompiledProgram
from .entities import Entity
from .p4info import load_p4info
from .p4rt import SwitchSession
from .routes import NAMES, SwitchEntries, compute_routes

__all__ = ["ROUTE_TABLES", "FabricController", "PortCounters"]

T = TypeVar("T")

# Tables whose entries the controller owns (read back, counted, diffed).
ROUTE_TABLES = (NAMES["arp_table"], NAMES["next_table"], NAMES["route_table"])


@dataclass(frozen=True, kw_only=True)
class PortCounters:
    """Packets and bytes received and sent on one switch port."""

    switch: str
    port: int
    rx_packets: int
    rx_bytes: int
    tx_packets: int
    tx_bytes: int


class FabricController:
    """Sessions to every switch of a plan (see the module docstring)."""

    def __init__(self, plan: AddressPlan, programs: dict[str, CompiledProgram] | None = None,
                 *, election_id: int = 1, timeout: float = 10.0) -> None:
        self.plan = plan
        self.programs = programs or {}
        self.sessions: dict[str, SwitchSession] = {
            s.name: SwitchSession(s.name, s.grpc_addr, s.device_id, election_id=election_id,
                                  timeout=timeout)
            for s in plan.switches
        }
        self.installed: dict[str, SwitchEntries] = {}

    def _each(self, fn: Callable[[SwitchSession], T]) -> dict[str, T]:
        """Run `fn` on every session in parallel; the first error is raised."""
        with ThreadPoolExecutor(max_workers=min(16, max(1, len(self.sessions)))) as pool:
            futures = {name: pool.submit(fn, s) for name, s in self.sessions.items()}
            return {name: f.result() for name, f in futures.items()}

    def connect(self, *, primary: bool = True) -> FabricController:
        self._each(lambda s: s.open(primary=primary))
        return self

    def push_pipelines(self) -> None:
        """SetForwardingPipelineConfig on every switch with its role's program."""
        infos = {role: load_p4info(p.p4info) for role, p in self.programs.items()}
        configs = {role: p.device_config.read_bytes() for role, p in self.programs.items()}

        def push(s: SwitchSession) -> None:
            role = self.plan.switch(s.name).role
            s.set_pipeline(infos[role], configs[role])

        self._each(push)

    def install_routes(self, mode: str | None = None) -> dict[str, SwitchEntries]:
        """Compute and insert every switch's entities; returns what was installed."""
        computed = {s.name: compute_routes(self.plan, s.name, mode) for s in self.plan.switches}

        def install(s: SwitchSession) -> None:
            s.insert(computed[s.name].install_order())

        self._each(install)
        self.installed = computed
        return computed

    def read_entities(self, switch: str) -> list[Entity]:
        """Members, groups and entries of the controller's tables, as the switch holds them."""
        s = self.sessions[switch]
        assert s.schema is not None
        present = set(s.schema.tables.names())
        out: list[Entity] = []
        out += s.read_members(NAMES["selector"])
        out += s.read_groups(NAMES["selector"])
        # Not every role has every table (only the RTSW answers ARP).
        for table in ROUTE_TABLES:
            if table in present:
                out += s.read_table(table)
        config = s.read_default(NAMES["config_table"])
        if config is not None:
            out.append(config)
        return out

    def table_counts(self, switch: str) -> dict[str, int]:
        s = self.sessions[switch]
        if s.schema is None:  # not in an assert: fetching the P4Info must survive -O
            s.get_p4info()
        assert s.schema is not None
        return {name: len(s.read_table(name)) for name in s.schema.tables.names()}

    def port_counters(self, switch: str) -> dict[int, PortCounters]:
        """rx_port / tx_port counters of the switch's data ports, by port."""
        s = self.sessions[switch]
        rx = s.read_counters(NAMES["rx_counter"])
        tx = s.read_counters(NAMES["tx_counter"])
        out = {}
        for p in self.plan.switch(switch).ports:
            r, t = rx.get(p.port), tx.get(p.port)
            out[p.port] = PortCounters(
                switch=switch, port=p.port,
                rx_packets=r.packets if r else 0, rx_bytes=r.bytes if r else 0,
                tx_packets=t.packets if t else 0, tx_bytes=t.bytes if t else 0)
        return out

    def all_port_counters(self) -> dict[str, dict[int, PortCounters]]:
        return self._each(lambda s: self.port_counters(s.name))

    def close(self) -> None:
        for s in self.sessions.values():
            s.close()

    def __enter__(self) -> FabricController:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
