"""What this machine provides the tests, and the skips that then become failures.

A test that cannot run here for a reason of the machine (no root, no BMv2,
no chromium, the shared network lock held by another run) calls
`unavailable(capability, reason)`: a skip with the reason on a developer's
machine, a failure where the machine declares it provides that capability.
CI declares what it provides in `AIZONE_REQUIRE` (`.ci/run` sets
`root,bmv2,chromium,netlock,prometheus,tshark,sshd`), so a suite that silently turned into skips
there fails instead.

The declaration is checked when the run starts (`declared_but_missing`,
called by tests/conftest.py): a machine that declares root, BMv2,
Prometheus, tshark or sshd and lacks it stops there with what is missing, so
also a skip written as a plain `skipif` on those conditions cannot happen
in CI. (chromium and the network lock are found only when a suite asks:
their checks go through `unavailable`.)

`with net_lock(wait_s):` holds the shared network lock (/tmp/aizone-net.lock) that
every test building a network takes, so two runs never build networks at the
same time; a process that already holds it (run under `flock`) holds it on.

`chosen_target(config, default)` is the switch target a suite runs on
(`--target`, else `$AIZONE_TARGET`, else the suite's default), or an
`unavailable("bmv2", ...)` when its tools are missing; the run's summary
counts the tests that ran per target (`TARGETS` holds what was chosen).

Names defined here: `CAPABILITIES`, `TARGETS`, `NET_LOCK`, `required`, `unavailable`,
`declared_but_missing`, `chosen_target`, `net_lock`.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import pytest

__all__ = ["CAPABILITIES", "NET_LOCK", "TARGETS", "chosen_target", "declared_but_missing",
           "net_lock", "required", "unavailable"]

NET_LOCK = "/tmp/aizone-net.lock"

CAPABILITIES = {
    "root": "root (network namespaces, veths, raw sockets, Mininet)",
    "bmv2": "BMv2 and p4c on PATH (simple_switch_grpc, p4c-bm2-ss)",
    "chromium": "a chromium and Playwright for the browser tests",
    "netlock": "the shared network lock free (no other fabric running)",
    "prometheus": "a Prometheus server and promtool on PATH (Debian's `prometheus`)",
    "tshark": "tshark on PATH (Debian's `tshark`: decodes the captures)",
    "sshd": "openssh-server's sshd, ssh and ssh-keygen (the cluster tests' second server: "
            "a namespace running sshd)",
}


def required() -> frozenset[str]:
    """The capabilities `$AIZONE_REQUIRE` declares (comma-separated names)."""
    names = {n.strip() for n in os.environ.get("AIZONE_REQUIRE", "").split(",") if n.strip()}
    unknown = names - set(CAPABILITIES)
    if unknown:
        raise pytest.UsageError(f"AIZONE_REQUIRE: unknown capability {sorted(unknown)} "
                                f"(known: {', '.join(CAPABILITIES)})")
    return frozenset(names)


def declared_but_missing() -> list[str]:
    """For each capability `$AIZONE_REQUIRE` declares and this machine lacks, what is missing."""
    wanted = required()
    out = []
    if "root" in wanted and os.geteuid() != 0:
        out.append(f"root: running as uid {os.geteuid()}")
    if "bmv2" in wanted:
        from topologies.targets import target_missing

        if tools := target_missing("bmv2"):
            out.append(f"bmv2: {', '.join(tools)} not on PATH")
    for capability, tools in (("prometheus", ("prometheus", "promtool")), ("tshark", ("tshark",))):
        gone = [t for t in tools if shutil.which(t) is None]
        if capability in wanted and gone:
            out.append(f"{capability}: {', '.join(gone)} not on PATH")
    if "sshd" in wanted:
        from tests.fabric.servers_support import sshd_missing

        if why := sshd_missing():
            out.append(f"sshd: {why}")
    return out


def unavailable(capability: str, reason: str) -> NoReturn:
    """Skip for `reason`, or fail when this machine declares it provides `capability`."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}")
    if capability in required():
        pytest.fail(f"{reason}: but AIZONE_REQUIRE says this machine provides "
                    f"{CAPABILITIES[capability]}", pytrace=False)
    pytest.skip(reason)


# default -> the target chosen for it in this run (what the summary counts fabrics under)
TARGETS = pytest.StashKey[dict[str, str]]()


def chosen_target(config: pytest.Config, default: str) -> str:
    """The target for this run: --target, else $AIZONE_TARGET, else `default`, resolved."""
    from topologies.targets import resolve_target, target_missing

    wanted = config.getoption("--target", default=None) or os.environ.get("AIZONE_TARGET",
                                                                          default)
    chosen = resolve_target(str(wanted))
    missing = target_missing(chosen)
    if missing:
        unavailable("bmv2", f"target {chosen} needs {', '.join(missing)} on PATH")
    config.stash.setdefault(TARGETS, {})[default] = chosen
    return chosen


def _holds(path: str) -> bool:
    """This process has `path` open."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == path:
                return True
        except OSError:
            continue
    return False


@contextmanager
def net_lock(wait_s: float = 300) -> Iterator[None]:
    """`with net_lock():` holds the shared network lock `NET_LOCK` for the block; a process
    that holds it already (inherited from `flock NET_LOCK pytest ...`, or taken by an
    earlier fixture) holds it on. Another run holding it for `wait_s` seconds:
    `unavailable("netlock", ...)`."""
    if _holds(NET_LOCK):
        yield
        return
    with open(NET_LOCK, "a") as lock:  # closing it lets go
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    unavailable("netlock",
                                f"the network lock {NET_LOCK} stayed busy for {wait_s:g} s")
                time.sleep(0.5)
        yield
