"""The daemon's command line (`python -m controller.daemon_main`, what `aizone up` starts):
its polling intervals when no flag is given, and flags that change them."""

from __future__ import annotations

from controller.daemon_main import build_parser


def test_without_flags_the_daemon_probes_and_polls_at_its_documented_rates() -> None:
    """Probes every 0.2 s, a link down after 1.0 s without one (controller.probes), statistics
    every second (controller.stats): what the experiments' probe allowance and the failure
    experiment's detection times assume."""
    args = build_parser().parse_args(["--topology", "t.yaml", "--target", "p4switch"])
    assert (args.probe_interval, args.probe_dead_after, args.stats_interval) == (0.2, 1.0, 1.0)


def test_the_interval_flags_reach_the_arguments() -> None:
    args = build_parser().parse_args(["--topology", "t.yaml", "--target", "p4switch",
                                      "--probe-interval", "0.5", "--probe-dead-after", "2.5",
                                      "--stats-interval", "2"])
    assert (args.probe_interval, args.probe_dead_after, args.stats_interval) == (0.5, 2.5, 2.0)
