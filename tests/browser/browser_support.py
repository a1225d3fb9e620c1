"""What the browser tests share besides their fixtures: chromium, the CLI, the running fabric.

(Fixtures are in conftest.py; these are plain names a test module imports,
`from browser_support import ...`, a name no other test folder uses.)

Names defined here: `CHROMIUM_ARGS`, `VIEWPORT`, `chromium_path`, `aizone`,
`net_lock`, `Fabric`, `ROOT`, `SMALL`, `NET_LOCK`.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from controller.client import ApiClient
from tests.provides import unavailable

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


def aizone(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the aizone CLI as a user does."""
    return subprocess.run([sys.executable, "-m", "aizone.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def net_lock() -> IO[str] | None:
    """Hold the shared network lock while a fabric is up (None: already held, run under `flock`)."""
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
