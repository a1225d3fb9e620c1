"""Options shared by every test folder: `--target` (the switch target the tests run on).

Defined here because pytest reads `pytest_addoption` only from conftests it
loads at start-up (this one, for any path under tests/). The run's summary
ends with how many tests ran on which target, and what `$AIZONE_REQUIRE`
declared (`tests/provides.py`: a skip for a capability the machine
declares is a failure).

Names defined here: `pytest_addoption`, `pytest_terminal_summary`.
"""

from __future__ import annotations

import os
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--target", choices=("auto", "p4switch", "bmv2"), default=None,
        help="switch target for dataplane and fabric tests: p4switch (built in), bmv2 "
             "(p4c-bm2-ss + simple_switch_grpc from PATH) or auto (bmv2 when installed); "
             "default: $AIZONE_TARGET, else p4switch for dataplane tests and auto for fabric tests")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """One line: tests that ran (passed or failed) and were skipped, on which target."""
    from tests.provides import required

    stats = terminalreporter.stats
    ran = sum(1 for kind in ("passed", "failed") for r in stats.get(kind, [])
              if getattr(r, "when", "call") == "call")
    skipped = len(stats.get("skipped", []))
    target = config.getoption("--target", default=None) or os.environ.get("AIZONE_TARGET")
    declared = ",".join(sorted(required())) or "nothing"
    terminalreporter.write_line(f"aizone: {ran} tests ran on target {target or 'default'}, "
                                f"{skipped} skipped; AIZONE_REQUIRE: {declared}")
