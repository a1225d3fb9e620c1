"""Options and checks shared by every test folder; the run's summary per target.

`--target` is the switch target the dataplane and fabric tests run on.
Defined here because pytest reads `pytest_addoption` only from conftests it
loads at start-up (this one, for any path under tests/).

When the run starts, what `$AIZONE_REQUIRE` declares is checked against the
machine (`tests/provides.py`): a declared capability that is missing stops
the run with what is missing, and a skip for a declared capability is a
failure. A run started with SIGINT ignored (a `&` job of a shell without
job control, e.g. `nohup make test &` from a script) takes its default back,
so the commands the tests interrupt with Ctrl-C (`up --foreground`, `demo`,
`capture`) do not inherit the ignore and run on. The run's summary ends with how many tests ran (passed, failed or xfail)
per switch target, by folder, and the reasons of the skips.

A test's target is its `target` fixture's value; a test that brings a
fabric up through a `fabric` fixture without it (the browser's) counts
under the target `chosen_target` chose for its suite; a test on the
differential rig under both; any other under "no switch".

Names defined here: `pytest_addoption`, `pytest_sessionstart`,
`pytest_runtest_makereport`, `pytest_terminal_summary`.
"""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

BOTH = "bmv2 vs p4switch"
NONE = "no switch"
SWITCH_TARGETS = ("p4switch", "bmv2")
# nodeid -> the target it ran on (see the module docstring)
_RAN_ON = pytest.StashKey[dict[str, str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--target", choices=("auto", "p4switch", "bmv2"), default=None,
        help="switch target for dataplane and fabric tests: p4switch (built in), bmv2 "
             "(p4c-bm2-ss + simple_switch_grpc from PATH) or auto (bmv2 when installed); "
             "default: $AIZONE_TARGET, else p4switch for dataplane tests and auto for fabric tests")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop at once when the machine lacks what `$AIZONE_REQUIRE` says it provides; take
    SIGINT's default back if the run was started with it ignored (module docstring)."""
    from tests.provides import declared_but_missing

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # A handled signal is reset to its default across exec, an ignored one is not.
        signal.signal(signal.SIGINT, signal.default_int_handler)

    missing = declared_but_missing()
    if missing:
        raise pytest.UsageError("AIZONE_REQUIRE declares what this machine does not have: "
                                + "; ".join(missing))


def _target_of(item: pytest.Item) -> str:
    from tests.provides import TARGETS

    funcargs = getattr(item, "funcargs", {})
    names = set(getattr(item, "fixturenames", ()))
    # Only a switch target counts: some unit tests name a parameter `target` for a
    # capture point or a link ("h1-eth0", "rtsw1:6").
    if funcargs.get("target") in SWITCH_TARGETS:
        return str(funcargs["target"])
    if names & {"rig", "compiled"}:
        return BOTH
    chosen = item.config.stash.get(TARGETS, {})
    if "fabric" in names and "auto" in chosen:
        return chosen["auto"]
    return NONE


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    if outcome.get_result().when == "call":
        item.config.stash.setdefault(_RAN_ON, {})[item.nodeid] = _target_of(item)


def _folder(nodeid: str) -> str:
    parts = Path(nodeid.split("::", 1)[0]).parts
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else parts[0]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Tests that ran per target (by folder), what was skipped and why, what CI declared."""
    from tests.provides import required

    stats = terminalreporter.stats
    ran_on = config.stash.get(_RAN_ON, {})
    per: dict[str, Counter[str]] = {}
    for kind in ("passed", "failed", "xfailed", "xpassed"):
        for r in stats.get(kind, []):
            if getattr(r, "when", "") == "call":
                target = ran_on.get(r.nodeid, NONE)
                per.setdefault(target, Counter())[_folder(r.nodeid)] += 1
    write = terminalreporter.write_line
    declared = ",".join(sorted(required())) or "nothing"
    total = sum(sum(c.values()) for c in per.values())
    write(f"aizone: {total} tests ran; AIZONE_REQUIRE: {declared}")
    for target in sorted(per, key=lambda t: (t == NONE, t)):
        folders = ", ".join(f"{f} {n}" for f, n in sorted(per[target].items()))
        write(f"aizone:   on {target}: {sum(per[target].values())} ({folders})")
    reasons: Counter[str] = Counter()
    for r in stats.get("skipped", []):
        longrepr = getattr(r, "longrepr", None)
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    if reasons:
        write(f"aizone: {sum(reasons.values())} skipped:")
        for reason, n in reasons.most_common():
            write(f"aizone:   {n} x {reason[:160]}")
    errors = len([r for r in stats.get("error", []) if getattr(r, "when", "") != "call"])
    if errors:
        write(f"aizone: {errors} errors in a fixture's setup or teardown")
