"""Fixtures for browser tests: Debian's chromium, headless, driven by Playwright.

No browser is downloaded: Playwright drives the distribution's chromium
(`/usr/bin/chromium` on Debian, `chromium-browser` on Ubuntu; `make test`
installs it, `$AIZONE_CHROMIUM` names another). Chromium starts with a
fresh profile and with everything that would reach the network switched
off, so a machine without Internet access runs it as well. Missing
chromium or Playwright skips the tests with the reason.

Names defined here: `chromium_path`, `browser` (a module's browser context,
1600x900), `CHROMIUM_ARGS`, `fabric` (ai_zone_small up for a module, as
`aizone up` brings it up),
`Fabric`, `aizone`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    CHROMIUM_ARGS,
    SMALL,
    VIEWPORT,
    Fabric,
    aizone,
    chromium_path,
)

from controller.client import ApiClient
from tests.provides import chosen_target, net_lock, unavailable


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


# Module-scoped: a fabric left up for the whole session would stand in the way of the
# other folders' own `aizone up` (one fabric per machine).
@pytest.fixture(scope="module")
def fabric(request: pytest.FixtureRequest) -> Iterator[Fabric]:
    """ai_zone_small up on --target (else $AIZONE_TARGET, else auto), down at the end."""
    if os.geteuid() != 0:
        unavailable("root", "the dashboard's browser test brings a fabric up: it needs root")
    target = chosen_target(request.config, "auto")
    with net_lock():
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
