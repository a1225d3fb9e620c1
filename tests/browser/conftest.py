"""Fixtures for browser tests: Debian's chromium, headless, driven by Playwright.

No browser is downloaded: Playwright drives the distribution's chromium
(`/usr/bin/chromium` on Debian, `chromium-browser` on Ubuntu; `make test`
installs it, `$AIZONE_CHROMIUM` names another). Chromium starts with a
fresh profile and with everything that would reach the network switched
off, so a machine without Internet access runs it as well. Missing
chromium or Playwright skips the tests with the reason.

Names defined here: `chromium_path`, `browser` (a module's browser context,
1600x900), `CHROMIUM_ARGS`, `fabric` (ai_zone_small up for the session, as
`aizone up` brings it up, shared by the modules that need a running fabric),
`Fabric`, `aizone`.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from controller.client import ApiClient
from tests.provides import unavailable
from topologies.nodes import resolve_target, target_missing

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "topologies" / "ai_zone_small.yaml"
NET_LOCK = "/tmp/aizone-net.lock"

CHROMIUM_ARGS = [
    "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps",
    "--no-default-browser-check", "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1600, "height": 900}


def chromium_path() -> Path | None:
    """The chromium to drive: $AIZONE_CHROMIUM, else Debian's, else Ubuntu's."""
    wanted = os.environ.get("AIZONE_CHROMIUM")
    candidates = [wanted] if wanted else ["/usr/bin/chromium", "/usr/bin/chromium-browser",
                                          shutil.which("chromium") or ""]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless chromium context with a fresh profile (one per test module).

    Module-scoped, not session-scoped: Playwright's sync API keeps an event
    loop of its own while it runs, which other folders' asyncio tests must
    not meet.
    """
    exe = chromium_path()
    if exe is None:
        wanted = os.environ.get("AIZONE_CHROMIUM")
        unavailable("chromium", f"no chromium at {wanted} ($AIZONE_CHROMIUM)" if wanted else
                    "chromium is not installed (make test installs Debian's `chromium`; "
                    "or set AIZONE_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("chromium", "playwright is not installed (pip install -e '.[test]')")
    args = list(CHROMIUM_ARGS)
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # chromium refuses to run as root with its sandbox
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        # A persistent context is how Playwright takes a --user-data-dir: a fresh one here.
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(exe), headless=True, args=args,
            viewport=VIEWPORT, chromium_sandbox=False)
        try:
            yield context
        finally:
            context.close()


# --- a running fabric, shared by the modules that need one ---------------------------


def aizone(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the aizone CLI as a user does."""
    return subprocess.run([sys.executable, "-m", "aizone.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _net_lock() -> IO[str] | None:
    """Hold the shared network lock for the session (None: already held, run under `flock`)."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == NET_LOCK:
                return None  # inherited from `flock /tmp/aizone-net.lock pytest ...`
        except OSError:
            continue
    lock = open(NET_LOCK, "a")  # noqa: SIM115 - held until the fabric is down
    deadline = time.monotonic() + 300
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return lock
        except BlockingIOError:
            if time.monotonic() > deadline:
                lock.close()
                unavailable("netlock", f"the network lock {NET_LOCK} stayed busy for 300 s")
            time.sleep(1)


class Fabric:
    """The running fabric: API client, what `up` printed, the page's URL."""

    def __init__(self, api: ApiClient, up: dict[str, Any]) -> None:
        self.api = api
        self.up = up
        # The URL `aizone up` prints: it carries the token once; the page then keeps it in
        # an HttpOnly cookie (controller.access).
        self.url: str = up["dashboard"]
        self.base: str = up["api"]["url"]

    def link_up(self, link: str) -> bool:
        st = self.api.get("/status")
        return bool(next(lk["up"] for lk in st["links"] if lk["id"] == link))


@pytest.fixture(scope="session")
def fabric(request: pytest.FixtureRequest) -> Iterator[Fabric]:
    """ai_zone_small up on --target (else $AIZONE_TARGET, else auto), down at the end."""
    if os.geteuid() != 0:
        unavailable("root", "the dashboard's browser test brings a fabric up: it needs root")
    wanted = request.config.getoption("--target", default=None) or os.environ.get(
        "AIZONE_TARGET", "auto")
    target = resolve_target(str(wanted))
    missing = target_missing(target)
    if missing:
        unavailable("bmv2", f"target {target} needs {', '.join(missing)} on PATH")
    lock = _net_lock()
    try:
        t0 = time.monotonic()
        up = aizone("up", str(SMALL), "--target", target, "--json")
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
        print(f"\naizone up: {time.monotonic() - t0:.1f} s")
        api = ApiClient()
        try:
            yield Fabric(api, json.loads(up.stdout))
        finally:
            try:
                st = api.get("/status")
                for lk in st["links"]:
                    if not lk["up"]:  # restore what a failed test left down
                        same = [x["id"] for x in st["links"] if {x["a"], x["b"]} == {lk["a"],
                                                                                   lk["b"]}]
                        aizone("link", "up", lk["a"], lk["b"], "--index",
                               str(same.index(lk["id"])))
                if st.get("mode") != "eecmp":
                    aizone("mode", "eecmp")
            finally:
                api.close()
                down = aizone("down")
                assert down.returncode == 0, down.stderr
    finally:
        if lock is not None:
            lock.close()
