"""Tests for experiments.session: the metrics of a run and when it was CPU-bound (by hand)."""

from __future__ import annotations

from typing import Any

import pytest

from experiments.session import cpu_bound_reasons, run_metrics
from experiments.usage import Usage


def _usage(**kw: Any) -> Usage:
    base: dict[str, Any] = dict(seconds=2.0, sent=10_000, lost=0, lost_on={}, host_frames=5000,
                                host_bytes=5_000_000, host_pps=2500.0, host_gbps=0.02,
                                switch_pps=7500.0, switch_cpu={"rtsw1": 0.3},
                                agent_cpu={"h1": 0.1}, machine_cpu=0.6, complete=True)
    base.update(kw)
    return Usage(**base)


def _answer() -> dict[str, Any]:
    """A run's answer as the daemon gives it (the fields run_metrics reads)."""
    return {
        "result": {"time_s": 2.0, "span_s": 2.1, "algbw_gbps": 0.004, "busbw_gbps": 0.0075,
                   "retransmitted": 12, "timeouts": 1, "naks_received": 2, "pause_frames": 30,
                   "paused_seconds": 0.5, "kernel_drops": 0, "max_cpu_share": 0.2,
                   "bytes_ok": True},
        "links": [
            {"id": "u1", "tier": "rtsw_ctsw", "a": "rtsw1", "b": "ctsw1", "up_bytes": 300,
             "down_bytes": 200},
            {"id": "u2", "tier": "rtsw_ctsw", "a": "rtsw1", "b": "ctsw2", "up_bytes": 100,
             "down_bytes": 200},
            {"id": "x1", "tier": "ctsw_atsw", "a": "ctsw1", "b": "atsw1", "up_bytes": 40,
             "down_bytes": 5},
            {"id": "x2", "tier": "ctsw_atsw", "a": "ctsw2", "b": "atsw1", "up_bytes": 60,
             "down_bytes": 5}],
        "tm": {"pauses_sent": 7, "pauses_received": 9, "tm_dropped": 3},
        "switch_drops": {"rtsw1": {"no_route": 2, "acl": 1}},
        "cpu_bound_reasons": [],
    }


def test_run_metrics_from_the_answer_and_the_samples() -> None:
    """Uplinks [300, 100] -> 1.5, downlinks even -> 1.0; 100 bytes into the ATSW layer."""
    m = run_metrics(_answer(), _usage(lost=20), ["rtsw1"])
    assert m["time_s"] == 2.0 and m["retransmitted"] == 12 and m["naks"] == 2
    assert m["up_imbalance"] == 1.5 and m["down_imbalance"] == 1.0
    assert m["atsw_bytes"] == 100.0
    assert (m["switch_pauses"], m["tm_dropped"], m["switch_drops"]) == (7, 3, 3)
    assert m["loss"] == pytest.approx(0.002) and m["max_switch_cpu"] == 0.3
    assert m["bytes_ok"] == 1.0


def test_run_metrics_without_atsw_links() -> None:
    """A one-zone fabric has no ATSW bytes (None, not 0)."""
    a = _answer()
    a["links"] = a["links"][:2]
    assert run_metrics(a, None)["atsw_bytes"] is None


def test_a_clean_run_is_not_cpu_bound() -> None:
    """No loss on cables, switches below a core, the machine 60% busy: no reasons."""
    assert cpu_bound_reasons(_answer(), _usage(), "p4switch") == []


@pytest.mark.parametrize(("usage", "reason"), [
    (_usage(lost=10), "10 of 10000 frames lost on cables, not at a switch queue (0.10%)"),
    (_usage(switch_cpu={"ctsw1": 0.95, "rtsw1": 0.2}),
     "switch process(es) at a full core: ctsw1 0.95"),
    (_usage(machine_cpu=0.97), "the machine's cores were 97% busy"),
    (_usage(server_cpu={"10.0.0.2": 0.97, "10.0.0.3": 0.5}),
     "server 10.0.0.2's cores were 97% busy"),
], ids=["loss", "switch-core", "machine", "other-server"])
def test_cpu_bound_reasons(usage: Usage, reason: str) -> None:
    """Each way the emulator can be the limit gives its reason."""
    assert cpu_bound_reasons(_answer(), usage, "p4switch") == [reason]


def test_loss_just_below_the_limit_is_fine() -> None:
    """9 of 10,000 frames (0.09%) is below the 0.1% limit."""
    assert cpu_bound_reasons(_answer(), _usage(lost=9), "p4switch") == []


def test_the_daemons_reasons_come_first_and_bmv2_cores_are_not_judged() -> None:
    """The daemon's own reasons are kept; BMv2 runs threads, so a busy process is not a verdict."""
    a = _answer()
    a["cpu_bound_reasons"] = ["agent(s) at a full core: h3"]
    assert cpu_bound_reasons(a, _usage(switch_cpu={"s": 1.5}), "bmv2") == [
        "agent(s) at a full core: h3"]


def test_options_give_every_experiment_the_same_fabric_settings(tmp_path: Any) -> None:
    """--buffer bytes and --latency reach the fabric through the options, at the run's rate
    (or the one asked for), PFC on unless asked off; the presets' own settings add nothing."""
    from pathlib import Path

    from experiments.session import Options

    preset = Path(__file__).resolve().parents[3] / "topologies" / "ai_zone_small.yaml"
    opts = Options(out=tmp_path, host_mbps=2.0, buffer="bytes", latency=True)
    assert opts.settings() == {"buffer.accounting": "bytes", "latency": {}}
    got = opts.fabric(preset)
    assert got["links.host.rate_mbps"] == 2.0
    assert got["buffer.accounting"] == "bytes" and got["latency"] == {}
    assert got["links.host.pfc"]["enabled"] is True
    off = opts.fabric(preset, pfc=False, host_mbps=1.0)
    assert off["links.host.rate_mbps"] == 1.0 and off["links.host.pfc"]["enabled"] is False
    plain = Options(out=tmp_path)
    assert plain.settings() == {}
    assert "latency" not in plain.fabric(preset) and "buffer.accounting" not in plain.fabric(preset)
