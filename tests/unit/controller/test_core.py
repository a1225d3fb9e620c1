"""The fabric core is pure: routes, hash, paths, placement, QoS and intent need only the topology.

Each check runs in a fresh interpreter (this one has imported everything
already), imports the core the way the flow model and its Ray workers do,
and reads `sys.modules`: no finsy, no gRPC, no HTTP client or server.
A control imports the daemon's client in the same way and sees httpx
arrive, so the probe itself is shown to see an import.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CORE = ["controller", "controller.entities", "controller.errors", "controller.hashing",
        "controller.routegraph", "controller.routes", "controller.paths", "controller.placement",
        "controller.choices", "controller.qos", "controller.intent", "model"]
FORBIDDEN = ["finsy", "grpc", "httpx", "fastapi", "uvicorn", "starlette", "google.protobuf"]


def _loaded_after(module: str) -> set[str]:
    code = ("import importlib, json, sys\n"
            f"importlib.import_module({module!r})\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("module", CORE)
def test_importing_the_core_loads_no_grpc_finsy_or_http(module: str) -> None:
    """`import <core module>` in a fresh interpreter: none of the forbidden packages arrive."""
    loaded = _loaded_after(module)
    bad = sorted(m for m in loaded for f in FORBIDDEN if m == f or m.startswith(f + "."))
    assert bad == [], f"{module} pulls in {bad[:8]}"


def test_the_probe_sees_an_http_client_arrive() -> None:
    """The control: the daemon's client does load httpx, and the probe says so."""
    assert "httpx" in _loaded_after("controller.client")
