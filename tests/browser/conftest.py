"""Fixtures for browser tests: Debian's chromium, headless, driven by Playwright.

No browser is downloaded: Playwright drives the distribution's chromium
(`/usr/bin/chromium` on Debian, `chromium-browser` on Ubuntu; `make test`
installs it, `$AIZONE_CHROMIUM` names another). Chromium starts with a
fresh profile and with everything that would reach the network switched
off, so a machine without Internet access runs it as well. Missing
chromium or Playwright skips the tests with the reason.

Names defined here: `chromium_path`, `browser` (a module's browser context,
1600x900), `CHROMIUM_ARGS`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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
        pytest.skip(f"no chromium at {wanted} ($AIZONE_CHROMIUM)" if wanted else
                    "chromium is not installed (make test installs Debian's `chromium`; "
                    "or set AIZONE_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
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
