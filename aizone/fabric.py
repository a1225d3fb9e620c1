"""The Python API: drive a fabric from a script or a notebook, as the CLI does.

    from aizone import Fabric

    with Fabric.up("topologies/ai_zone_small.yaml", target="p4switch") as fabric:
        fabric.set_mode("ecmp")
        job = fabric.run("allreduce", ranks=16, size=1 << 20, qps=4)
        print(job.result.busbw_gbps, job.result.retransmitted, job.tiers)
        change = fabric.link_down("rtsw1", "ctsw1")
        print(change.seconds)
        fabric.link_up("rtsw1", "ctsw1")
    # the fabric is down here, also when the block raised

Every call goes through the daemon's local API (its Unix socket, root's),
the one the CLI uses: the same routes, the same answers, the same checks;
there is no second way into the daemon. Answers come back as the API's own
typed models (`controller.responses`: pydantic models with every field
documented), so a script and `aizone ... --json` see the same values.

`Fabric.up(...)` starts a fabric and owns it (leaving the `with` block
tears it down); `Fabric.attach()` talks to one already up and leaves it up.
Bad input raises what the CLI reports: `ApiError` (the daemon's answer:
unknown switch, mode, link), `NetworkError` (the fabric could not start),
`SpecError` (the topology file).

Names defined here: `Fabric`.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

from controller.client import ApiClient
from controller.launch import DaemonOptions, bring_up, tear_down
from controller.responses import (
    CheckAnswer,
    LinkAnswer,
    ModeAnswer,
    RoutesAnswer,
    RunAnswer,
    StatsAnswer,
    StatusAnswer,
)

__all__ = ["Fabric"]


class Fabric:
    """A running fabric, through its daemon's local API (see the module docstring)."""

    def __init__(self, *, owned: bool, client: ApiClient | None = None) -> None:
        self.owned = owned
        self._client = client or ApiClient()

    # --- lifecycle ---------------------------------------------------------------

    @classmethod
    def up(cls, topology: str | Path | None = None, *, target: str = "auto",
           mode: str | None = None, pfc: str | None = None,
           build_dir: str | Path | None = None, api_port: int = 8400) -> Fabric:
        """Bring a fabric up (as `aizone up`) and own it: `down()` or leaving `with` ends it.

        `pfc` is `up --pfc`: "native" (p4switch's traffic manager) or "program" (the P4
        programs' own); None, the target's default (native on p4switch, program on BMv2).
        """
        options = DaemonOptions(topology=Path(topology) if topology else None, target=target,
                                mode=mode, pfc=pfc,
                                build_dir=Path(build_dir) if build_dir else None,
                                api_port=api_port)
        bring_up(options)
        return cls(owned=True)

    @classmethod
    def attach(cls) -> Fabric:
        """The fabric already up (its daemon answers); not torn down by this object."""
        fabric = cls(owned=False)
        fabric.status()  # raises NotRunning when there is none
        return fabric

    def down(self) -> dict[str, Any]:
        """Stop the fabric and remove what it left (as `aizone down`)."""
        self._client.close()
        return tear_down()

    def close(self) -> None:
        """Let go of the API (the fabric stays up)."""
        self._client.close()

    def __enter__(self) -> Fabric:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.owned:
            self.down()
        else:
            self.close()

    # --- what the CLI shows ------------------------------------------------------

    def status(self) -> StatusAnswer:
        """The fabric, its switches (sessions, last reconcile), hosts, links, failures."""
        return StatusAnswer.model_validate(self._client.get("/status"))

    @property
    def mode(self) -> str:
        """The routing mode now: pin, ecmp or eecmp."""
        return str(self.status().mode)

    def stats(self) -> StatsAnswer:
        """The latest statistics snapshot: link loads, queues, PFC, ECN, drops, imbalance."""
        return StatsAnswer.model_validate(self._client.get("/stats"))

    def routes(self, switch: str | None = None) -> RoutesAnswer:
        """Entries read back over P4Runtime, and whether they equal the intent."""
        return RoutesAnswer.model_validate(self._client.get("/routes", switch=switch))

    def check(self, *, roce: bool = True) -> CheckAnswer:
        """Every host pair: ping (each NIC) and, with `roce`, one RoCEv2 RDMA WRITE."""
        return CheckAnswer.model_validate(self._client.post("/check", {"roce": roce}))

    # --- what the CLI changes ----------------------------------------------------

    def set_mode(self, mode: str) -> ModeAnswer:
        """Switch the routing mode on the live fabric, make-before-break."""
        return ModeAnswer.model_validate(self._client.post("/mode", {"mode": mode}))

    def link_down(self, a: str, b: str, index: int = 0, *, silent: bool = False) -> LinkAnswer:
        """Fail the `index`-th link between `a` and `b`; the reroute's time and writes."""
        return self._link(a, b, index, up=False, silent=silent)

    def link_up(self, a: str, b: str, index: int = 0) -> LinkAnswer:
        """Restore the link between `a` and `b`."""
        return self._link(a, b, index, up=True, silent=False)

    def _link(self, a: str, b: str, index: int, *, up: bool, silent: bool) -> LinkAnswer:
        body = {"a": a, "b": b, "index": index, "up": up, "silent": silent}
        return LinkAnswer.model_validate(self._client.post("/link", body))

    def run(self, pattern: str, **request: Any) -> RunAnswer:
        """Run a collective (`controller.jobs.RunRequest`: ranks, size, qps, strategy, ...)."""
        return RunAnswer.model_validate(self._client.post("/run", {"pattern": pattern,
                                                                   **request}))
