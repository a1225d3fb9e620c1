"""What this machine provides the tests, and the skips that then become failures.

A test that cannot run here for a reason of the machine (no root, no BMv2,
no chromium, the shared network lock held by another run) calls
`unavailable(capability, reason)`: a skip with the reason on a developer's
machine, a failure where the machine declares it provides that capability.
CI declares what it provides in `AIZONE_REQUIRE` (`.ci/run` sets
`root,bmv2,chromium,netlock,prometheus,tshark`), so a suite that silently turned into skips
there fails instead.

`chosen_target(config, default)` is the switch target a suite runs on
(`--target`, else `$AIZONE_TARGET`, else the suite's default), or an
`unavailable("bmv2", ...)` when its tools are missing.

Names defined here: `CAPABILITIES`, `required`, `unavailable`, `chosen_target`.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["CAPABILITIES", "chosen_target", "required", "unavailable"]

CAPABILITIES = {
    "root": "root (network namespaces, veths, raw sockets, Mininet)",
    "bmv2": "BMv2 and p4c on PATH (simple_switch_grpc, p4c-bm2-ss)",
    "chromium": "a chromium and Playwright for the browser tests",
    "netlock": "the shared network lock free (no other fabric running)",
    "prometheus": "a Prometheus server and promtool on PATH (Debian's `prometheus`)",
    "tshark": "tshark on PATH (Debian's `tshark`: decodes the captures)",
}


def required() -> frozenset[str]:
    """The capabilities `$AIZONE_REQUIRE` declares (comma-separated names)."""
    names = {n.strip() for n in os.environ.get("AIZONE_REQUIRE", "").split(",") if n.strip()}
    unknown = names - set(CAPABILITIES)
    if unknown:
        raise pytest.UsageError(f"AIZONE_REQUIRE: unknown capability {sorted(unknown)} "
                                f"(known: {', '.join(CAPABILITIES)})")
    return frozenset(names)


def unavailable(capability: str, reason: str) -> NoReturn:
    """Skip for `reason`, or fail when this machine declares it provides `capability`."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}")
    if capability in required():
        pytest.fail(f"{reason}: but AIZONE_REQUIRE says this machine provides "
                    f"{CAPABILITIES[capability]}", pytrace=False)
    pytest.skip(reason)


def chosen_target(config: pytest.Config, default: str) -> str:
    """The target for this run: --target, else $AIZONE_TARGET, else `default`, resolved."""
    from topologies.nodes import resolve_target, target_missing

    wanted = config.getoption("--target", default=None) or os.environ.get("AIZONE_TARGET",
                                                                          default)
    chosen = resolve_target(str(wanted))
    missing = target_missing(chosen)
    if missing:
        unavailable("bmv2", f"target {chosen} needs {', '.join(missing)} on PATH")
    return chosen
