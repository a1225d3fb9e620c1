"""Tests for experiments.page: the results page's header, summary, derivation and sections."""

from __future__ import annotations

from pathlib import Path

from experiments.page import write_page
from experiments.schema import Column, ExperimentResult, Finding, Point, Run, summarize_runs


def _result() -> ExperimentResult:
    point = summarize_runs(Point(params={"mode": "ecmp"}, runs=[
        Run(repeat=0, metrics={"time_s": 2.0}),
        Run(repeat=1, metrics={"time_s": 9.0}, cpu_bound=True,
            cpu_bound_reasons=["switch process(es) at a full core: rtsw1 0.97"])]))
    r = ExperimentResult(
        experiment="qp-scaling", title="QPs", command="aizone experiment all",
        started="2026-12-01T00:00:00+00:00", target="p4switch", topology="t.yaml",
        topology_name="ai_zone_small", repeat=2, machine={"cores": 2, "cpu": "Xeon"},
        versions={"aizone": "0.1.0", "commit": "abc1234"}, seconds=120.0,
        params=[Column(key="mode", label="mode")],
        metrics=[Column(key="time_s", label="time", unit="s")], points=[point],
        plots=["qp-scaling.png", "qp-scaling.svg"],
        findings=[Finding(claim="ECMP is uneven", paper="well above 1", measured="2.0",
                          holds=False, why="the hash says 2.0")])
    r.tally()
    return r


def _page(tmp_path: Path, by_target: dict[str, list[ExperimentResult]],
          rewritten: bool = False) -> str:
    outs = {"p4switch": tmp_path / "results", "bmv2": tmp_path / "results" / "bmv2"}
    return write_page(by_target, tmp_path / "results.md", outs,
                      command="aizone experiment all", rewritten=rewritten).read_text()


def _bmv2(holds: bool | None, *, failed: bool = False) -> ExperimentResult:
    """The same experiment on BMv2: one run (failed, or 4.0 s after 120 resends), one flow
    alone at 55% of line rate, the finding with `holds`."""
    run = (Run(repeat=0, error="ran out of ACK retries") if failed else
           Run(repeat=0, metrics={"time_s": 4.0, "retransmitted": 120.0, "timeouts": 3.0},
               details={"ack_timeout_ms": 8589.93}))
    r = _result().model_copy(deep=True)
    r.target, r.seconds = "bmv2", 300.0
    r.points = [summarize_runs(Point(params={"mode": "ecmp"}, runs=[run]))]
    r.calibration = [{"efficiency": 0.55}]
    r.findings = [Finding(claim="ECMP is uneven", paper="well above 1", measured="1.2",
                          holds=holds)]
    r.tally()
    return r


def test_page_header_says_command_machine_and_cpu_bound_runs(tmp_path: Path) -> None:
    """How it was made: the command, target, cores, commit, runs with 1 CPU-bound, minutes."""
    text = _page(tmp_path, {"p4switch": [_result()]})
    assert text.startswith("# Results\n")
    assert ("- **p4switch**: `aizone experiment all`, 2 cores (Xeon), aizone 0.1.0 (abc1234), "
            "started 2026-12-01T00:00:00+00:00; 2 runs (1 CPU-bound, 0 failed) in 2.0 minutes "
            "(qp-scaling 2.0 min).") in text
    assert "![headline](results/qp-scaling.png)" in text


def test_page_summary_sections_and_derivation(tmp_path: Path) -> None:
    """A summary row per finding, the sizes' derivation, the section with its flagged run."""
    text = _page(tmp_path, {"p4switch": [_result()]})
    assert "| qp-scaling | ECMP is uneven | 2.0 | **no** |" in text
    assert "## Fabric capacity and the sizes derived from it" in text
    assert "(scale 100,000)" in text  # 4 Mb/s for 400 Gb/s, the capacity's rate
    assert "## qp-scaling: QPs\n" in text
    assert "- mode=ecmp #2: CPU-bound: switch process(es) at a full core: rtsw1 0.97" in text
    assert "**does not hold**: ECMP is uneven. Paper: well above 1. Measured: 2.0. " \
           "the hash says 2.0" in text
    assert "Where the targets disagree" not in text


def test_a_rewritten_page_says_so(tmp_path: Path) -> None:
    """--rewrite: the header says nothing was re-measured."""
    text = _page(tmp_path, {"p4switch": [_result()]}, rewritten=True)
    assert ("written again from these runs' JSON by `aizone experiment all --rewrite` (nothing "
            "re-measured).") in text


def test_runs_made_with_the_former_ack_rule_are_said_so(tmp_path: Path) -> None:
    """Runs that recorded no ACK timeout: the header says they used the former 4.29 s, and
    names the target whose runs did (BMv2's recorded theirs)."""
    text = _page(tmp_path, {"p4switch": [_result()], "bmv2": [_bmv2(True)]})
    head = text.split("## What the experiments show")[0]
    assert "**The ACK timeout (p4switch).** These results were measured with the " \
           "experiments' former RC ACK timeout: 4.29 s for every run" in head


def test_runs_that_recorded_their_ack_timeout_need_no_note(tmp_path: Path) -> None:
    """Every run says which timeout it had: no note about the former rule."""
    r = _result()
    for p in r.points:
        for run in p.runs:
            run.details["ack_timeout_ms"] = 4294.97
    assert "former RC ACK timeout" not in _page(tmp_path, {"p4switch": [r]})


def test_two_targets_side_by_side(tmp_path: Path) -> None:
    """A column pair per target in the summary, both provenances, a section per target with
    its plots from its own folder."""
    text = _page(tmp_path, {"p4switch": [_result()], "bmv2": [_bmv2(False)]})
    assert ("| experiment | the paper's claim | measured (p4switch) | holds (p4switch) | "
            "measured (BMv2) | holds (BMv2) |") in text
    assert "| qp-scaling | ECMP is uneven | 2.0 | **no** | 1.2 | **no** |" in text
    assert "- **BMv2**: `aizone experiment all --target bmv2`, " in text
    assert "1 runs (0 CPU-bound, 0 failed) in 5.0 minutes" in text
    assert "## qp-scaling: QPs (p4switch)\n" in text and "## qp-scaling: QPs (BMv2)\n" in text
    assert "![qp-scaling](results/bmv2/qp-scaling.png)" in text
    assert "Files: [qp-scaling.json](results/bmv2/qp-scaling.json)" in text
    assert "No finding evaluated on both targets holds on one and not on the other." in text


def test_a_disagreement_is_said_with_the_runs_numbers(tmp_path: Path) -> None:
    """Holds on BMv2 but not on p4switch: both measured values, and why from the runs: BMv2
    resent 120 packets with 3 timeouts (p4switch 0 and 0), one flow alone at 55%."""
    text = _page(tmp_path, {"p4switch": [_result()], "bmv2": [_bmv2(True)]})
    section = text.split("## Where the targets disagree, and why")[1].split("\n## ")[0]
    assert "| qp-scaling | BMv2 | 1 (0 failed, 0 CPU-bound) | 120 | 3 | – | – | 55% |" in section
    assert "| qp-scaling | p4switch | 2 (0 failed, 1 CPU-bound) | 0 | 0 | – | – | – |" in section
    assert ("- **qp-scaling**, ECMP is uneven (holds: p4switch no; BMv2 yes). Measured: "
            "p4switch: 2.0; BMv2: 1.2. Why, from the runs: BMv2 resent 120 packets and had 3 "
            "ACK timeouts in this experiment (against 0 and 0)") in section


def test_an_undecided_finding_names_the_failed_runs(tmp_path: Path) -> None:
    """Every BMv2 run failed: undecided there, with the count of failed runs."""
    text = _page(tmp_path, {"p4switch": [_result()], "bmv2": [_bmv2(None, failed=True)]})
    assert "undecided on BMv2: 1 of 1 runs failed, 0 were CPU-bound" in text
    assert "(holds: p4switch no; BMv2 –)" in text


def test_different_host_rates_are_a_reason(tmp_path: Path) -> None:
    """p4switch ran at 1 Mb/s and BMv2 at 0.5: the disagreement says so."""
    p4, bm = _result(), _bmv2(True)
    p4.scale = {"host": {"rate_mbps": 1.0, "scale": 400000.0}}
    bm.scale = {"host": {"rate_mbps": 0.5, "scale": 800000.0}}
    text = _page(tmp_path, {"p4switch": [p4], "bmv2": [bm]})
    assert ("Why, from the runs: the host links ran at 1 Mb/s on p4switch, 0.5 Mb/s on BMv2 "
            "(each target's rate from its capacity); BMv2 resent 120 packets") in text


def test_runs_at_another_rate_than_the_capacity_gives_are_said_so(tmp_path: Path) -> None:
    """p4switch's capacity gives 4 Mb/s on jumbo links; runs made at 2 Mb/s with no MTU
    recorded (1,500) and a quarter of today's bytes say all three under the derivation."""
    r = _result()
    r.scale = {"host": {"rate_mbps": 2.0, "scale": 200000.0}}
    r.sizes = {"bytes per rank": 512 * 1024}  # as the experiments record it
    text = _page(tmp_path, {"p4switch": [r]})
    assert ("**p4switch's runs** had host links at 2 Mb/s (the capacity above gives 4 Mb/s now, "
            "measured again after them); links of IP MTU 1,500 (the experiments run at 9,000 "
            "now); other bytes than the sizes below (qp-scaling): their tables say what ran."
            ) in text
    r.scale = {"host": {"rate_mbps": 4.0, "scale": 100000.0}, "mtu": 9000}
    r.sizes = {"bytes per rank": 2048 * 1024}
    assert "**p4switch's runs**" not in _page(tmp_path, {"p4switch": [r]})


def test_experiments_run_one_by_one_quote_their_own_commands(tmp_path: Path) -> None:
    """BMv2's one experiment run on its own: its command, not `all`'s."""
    bm = _bmv2(True)
    bm.command = "aizone experiment qp-scaling --target bmv2 --out docs/results"
    text = _page(tmp_path, {"p4switch": [_result()], "bmv2": [bm]})
    assert "- **BMv2**: `aizone experiment qp-scaling --target bmv2 --out docs/results`, " in text


def test_points_whose_ack_timeouts_differ_are_named(tmp_path: Path) -> None:
    """p4switch's ecmp point timed out once per run (2 s), BMv2's never (4 s): that point, both
    means, first among the reasons the disagreement gives."""
    p4 = _result()
    p4.points = [summarize_runs(Point(params={"mode": "ecmp"}, runs=[
        Run(repeat=i, metrics={"time_s": 2.0, "timeouts": 1.0}) for i in range(2)]))]
    bm = _bmv2(True)
    bm.points = [summarize_runs(Point(params={"mode": "ecmp"}, runs=[
        Run(repeat=0, metrics={"time_s": 4.0, "timeouts": 0.0})]))]
    text = _page(tmp_path, {"p4switch": [p4], "bmv2": [bm]})
    assert "at mode=ecmp, ACK timeouts per run p4switch 1.0 vs BMv2 0.0; time 2.00 s vs 4.00 s" \
        in text


def test_runs_with_scaled_latency_get_their_findings_beside_the_pages(tmp_path: Path) -> None:
    """A latency/ folder under the first target's results: a section with its round trip at
    the runs' rate (1 Mb/s for 400 Gb/s: 8.04 us x 400,000 = 3.22 s, 372 frames of 1,082 B)
    and each finding without and with the delay."""
    delayed = _result().model_copy(deep=True)
    delayed.command = "aizone experiment qp-scaling --latency"
    delayed.scale = {"host": {"rate_mbps": 1.0, "scale": 400000.0}}
    delayed.findings = [Finding(claim="ECMP is uneven", paper="well above 1", measured="1.5",
                                holds=True)]
    folder = tmp_path / "results" / "latency"
    folder.mkdir(parents=True)
    (folder / "qp-scaling.json").write_text(delayed.model_dump_json())
    page = _result()
    page.scale = {"host": {"rate_mbps": 4.0, "scale": 100000.0}, "mtu": 9000}
    text = _page(tmp_path, {"p4switch": [page]})
    assert "## With the real fabric's bytes in flight (scaled latency)" in text
    assert ("at 1 Mb/s for 400 Gb/s (scale 400,000) the farthest hosts of ai_zone_small are "
            "3.22 s apart there and back, 372 full frames in flight at a NIC's rate, against "
            "an RC window of 128 packets") in text
    assert "`aizone experiment qp-scaling --latency`" in text
    assert "[qp-scaling](results/latency/qp-scaling.md) (2 runs, 1 CPU-bound, 0 failed)" in text
    assert "| qp-scaling | ECMP is uneven | 2.0 | **no** | 1.5 | yes |" in text
    # The page's runs had another rate and MTU than the delayed ones: the section says so.
    assert ("These runs had host links at 1 Mb/s on links of IP MTU 1,500, the page's runs "
            "4 Mb/s at 9,000 (each run's sizes are in its table)") in text
    # Delayed runs at 4 Mb/s on jumbo links: 8.04 us x 100,000 = 0.80 s, 97 frames of 4,154 B.
    delayed.scale = {"host": {"rate_mbps": 4.0, "scale": 100000.0}, "mtu": 9000}
    (folder / "qp-scaling.json").write_text(delayed.model_dump_json())
    text = _page(tmp_path, {"p4switch": [page]})
    assert ("at 4 Mb/s for 400 Gb/s (scale 100,000) the farthest hosts of ai_zone_small are "
            "0.80 s apart there and back, 97 full frames in flight") in text
    assert "These runs had host links" not in text


def test_without_a_latency_folder_there_is_no_such_section(tmp_path: Path) -> None:
    assert "scaled latency" not in _page(tmp_path, {"p4switch": [_result()]})
