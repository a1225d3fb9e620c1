"""Tests for aizone.views: what the CLI prints of the daemon's answers."""

from __future__ import annotations

import io

from rich.console import Console

from aizone.views import show_link

# `aizone link down rtsw1 ctsw1 --json` on ai_zone_small (p4switch, 2026-12-05), as the API
# answered it: "changed" is null in a record that rerouted (the response model's default).
REROUTED = {"link": "rtsw1-eth5--ctsw1-eth1", "up": False, "seconds": 0.3346, "changed": None,
            "silent": False, "cause": "admin", "reconverged_after": 0.0228,
            "detected_after": None, "lost_packets": 2,
            "writes": {"rtsw1": {"insert": 1, "modify": 3, "delete": 2, "unchanged": 37},
                       "ctsw1": {"insert": 2, "modify": 1, "delete": 1, "unchanged": 27}}}


def _printed(data: dict[str, object]) -> str:
    out = io.StringIO()
    show_link(Console(file=out, width=200, highlight=False), data)
    return out.getvalue()


def test_a_reroute_is_reported_with_its_time() -> None:
    text = _printed(REROUTED)
    assert text.startswith("link rtsw1-eth5--ctsw1-eth1 down: reconverged in 0.023 s"), text
    assert "unchanged" not in text.split("(")[0]


def test_only_a_record_that_says_so_is_unchanged() -> None:
    text = _printed({"link": "rtsw1-eth5--ctsw1-eth1", "up": True, "changed": False})
    assert text == "link rtsw1-eth5--ctsw1-eth1 up: routes unchanged\n"
