"""Options shared by every test folder: `--target` (the switch target the tests run on).

Defined here because pytest reads `pytest_addoption` only from conftests it
loads at start-up (this one, for any path under tests/).

Names defined here: `pytest_addoption`.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--target", choices=("auto", "p4switch", "bmv2"), default=None,
        help="switch target for dataplane and fabric tests: p4switch (built in), bmv2 "
             "(p4c-bm2-ss + simple_switch_grpc from PATH) or auto (bmv2 when installed); "
             "default: $AIZONE_TARGET, else p4switch for dataplane tests and auto for fabric tests")
