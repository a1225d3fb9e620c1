"""What the browser tests share besides their fixtures: chromium, the CLI, the running fabric.

(Fixtures are in conftest.py; these are plain names a test module imports,
`from browser_support import ...`, a name no other test folder uses.)

Names defined here: `CHROMIUM_ARGS`, `VIEWPORT`, `chromium_path`, `aizone`,
`Fabric`, `ROOT`, `SMALL` (the network lock is `tests.provides.net_lock`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from controller.client import ApiClient

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "topologies" / "ai_zone_small.yaml"

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
