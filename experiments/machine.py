"""Where a result was measured: the machine and the versions of everything that ran.

`machine()`: host name, CPU model, cores, memory, kernel, Python, load
average (the machine is shared: the load at the start says how busy it
was). `versions(target)`: aizone's version and git commit (and whether the
checkout had uncommitted changes), the libraries that shape the traffic
and the plots, and for BMv2 the `simple_switch_grpc` and `p4c-bm2-ss`
versions.

Names defined here: `machine`, `versions`.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["machine", "versions"]

REPO = Path(__file__).resolve().parents[1]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    """The machine the experiment ran on: host, CPU, cores, memory, kernel, Python, load."""
    load = os.getloadavg()
    return {"hostname": platform.node(), "cpu": _cpu_model(), "cores": os.cpu_count(),
            "memory_gb": _memory_gb(), "kernel": platform.release(),
            "python": platform.python_version(),
            "load_start": " ".join(f"{x:.2f}" for x in load)}


def _run(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20, cwd=REPO)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[-1].strip() if out.returncode == 0 and text else None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def versions(target: str) -> dict[str, Any]:
    """Versions of aizone (git commit, dirty or not), its libraries and the target's tools."""
    out: dict[str, Any] = {"aizone": _version("aizone"),
                           "commit": _run(["git", "rev-parse", "--short", "HEAD"]),
                           "dirty": bool(_run(["git", "status", "--porcelain",
                                               "--untracked-files=no"]))}
    for dist in ("scapy", "finsy", "numpy", "matplotlib", "networkx"):
        out[dist] = _version(dist)
    if target == "bmv2":
        for tool in ("simple_switch_grpc", "p4c-bm2-ss"):
            out[tool] = _run([tool, "--version"]) if shutil.which(tool) else None
    return out
