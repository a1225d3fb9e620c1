"""Tests for experiments.capacity: the committed capacity file, its errors, a bench run appended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.capacity import (
    CAPACITY_FILE,
    CapacityError,
    add_measurement,
    capacity_lines,
    host_rate,
    load_capacity,
    rate_reason,
)

ROOT = Path(__file__).resolve().parents[3]

LEVEL = {"rate_mbps": 1.0, "nics": 4, "carried_mbps": 3.9, "switch_pps": 1600, "loss": 0.0,
         "tm_dropped": 0, "machine_cpu": 0.25, "lossless": True, "at_rate": True,
         "host_pps": 470, "retransmitted": 0, "target": "p4switch"}  # as the bench writes it
RUN = {"command": "bench/fabric_capacity.py --targets p4switch --rates 1", "date": "2026-12-02",
       "seconds_total": 61.0, "machine": {"cores": 2, "load_start": 1.5, "load_end": 2.0},
       "targets": {"p4switch": {"capacity": {"carried_mbps": 3.9, "switch_pps": 1600, "nics": 4,
                                             "rate_mbps": 1.0, "machine_cpu": 0.25},
                                "capacity_at_rate": None, "levels": [LEVEL]}}}


def test_the_committed_file_is_the_one_read() -> None:
    """docs/results/capacity.json: p4switch and BMv2 in the first run, 9 levels each."""
    assert CAPACITY_FILE == ROOT / "docs" / "results" / "capacity.json"
    data = load_capacity()
    first = data.measurements[0]
    assert first.date == "2026-12-01" and set(first.targets) == {"p4switch", "bmv2"}
    assert [len(t.levels) for t in first.targets.values()] == [9, 9]
    at_rate = first.targets["p4switch"].capacity_at_rate
    assert at_rate is not None and (at_rate.carried_mbps, at_rate.nics) == (15.03, 16)
    assert "bench/fabric_capacity.py" in data.provenance


def test_page_lines_show_each_run_and_every_level() -> None:
    """A bullet per target and run, the method once, then one row per level (66)."""
    lines = capacity_lines(load_capacity())
    assert lines[0].startswith("- p4switch: lossless: **21.6 emulated Mb/s** (8,303 switch "
                               "frames/s; 16 NICs at 2 Mb/s, machine CPU 69%)")
    assert lines[2].startswith("- bmv2, measured again after BMv2's queue rates moved")
    assert lines[3].startswith("- bmv2, measured again after the programs' PFC moved to "
                               "priority groups counted in bytes")
    assert lines[4].startswith("- bmv2, run again 20 minutes later")
    assert lines[5].startswith("- bmv2, after the ACK lane, the queue rates rounded up and BMv2 "
                               "at --log-level warn")
    assert ("lossless and at rate: **7.9 emulated Mb/s** (3,044 switch frames/s; 4 NICs at "
            "2 Mb/s, machine CPU 49%)") in lines[5]
    assert lines[6].startswith("- bmv2, at half the rate, since all 16 NICs stayed below rate")
    assert lines[9].startswith("- bmv2, with the drain lane paced at twice the port")
    assert ("16 NICs 4.3 of 8 at 0.5 Mb/s, 4.6 of 16 at 1 Mb/s: one run of the 16-NIC level "
            "says little") in lines[9]
    assert lines[10].startswith("- bmv2, with XOFF/XON scaled to each tier's rate")
    assert ("lossless and at rate: **7.8 emulated Mb/s** (3,006 switch frames/s; 16 NICs at "
            "0.5 Mb/s, machine CPU 69%)") in lines[10]
    assert lines[11].startswith("- p4switch, with the same per-tier sizes")
    assert "links at MTU 1,500" in lines[11]
    assert lines[12].startswith("- p4switch, on the presets' jumbo links")
    assert "`bench/fabric_capacity.py --rates 2,4,8 --no-standalone --write`, links at MTU " \
           "9,000, 177 s): lossless: **111.7 emulated Mb/s**" in lines[12]
    assert lines[13].startswith("- bmv2, on the presets' jumbo links")
    assert lines[14].startswith("- p4switch, after its ports moved frames 64 a system call")
    assert "`bench/fabric_capacity.py --targets p4switch --rates 4,8 --write`, links at MTU " \
           "9,000, 80 s): lossless: **114.7 emulated Mb/s**" in lines[14]
    assert ", 2026-12-01, 198 s, load 3.5 at start (p4switch then BMv2 in one run);" in lines[15]
    assert sum(line.startswith(("| p4switch |", "| bmv2 |")) for line in lines) == 90
    assert "| bmv2 | 1500 | 0.5 | 16 | 8 | 7.8 | 3,006 | 0.000% | 0 | 69% | yes | yes |" in lines
    assert "| p4switch | 1500 | 2 | 8 | 16 | 15.0 | 5,791 | 0.000% | 0 | 67% | yes | yes |" \
        in lines
    assert "| bmv2 | 1500 | 1 | 16 | 16 | 4.6 | 1,880 | 0.000% | 0 | 67% | yes | no |" in lines
    assert "| bmv2 | 1500 | 1 | 8 | 8 | 7.8 | 3,029 | 0.000% | 0 | 62% | yes | yes |" in lines
    assert "| p4switch | 1500 | 4 | 16 | 64 | 30.3 | 11,990 | 0.000% | 93 | 83% | **no** | no |" \
        in lines
    assert "| p4switch | 9000 | 4 | 16 | 64 | 62.5 | 6,164 | 0.000% | 0 | 62% | yes | yes |" \
        in lines
    assert "| p4switch | 9000 | 8 | 16 | 128 | 111.7 | 11,216 | 0.000% | 0 | 80% | yes | no |" \
        in lines
    assert "| bmv2 | 9000 | 2 | 16 | 32 | 31.3 | 3,143 | 0.000% | 0 | 54% | yes | yes |" in lines
    assert "| p4switch | 9000 | 8 | 16 | 128 | 114.7 | 11,466 | 0.000% | 0 | 83% | yes | no |" \
        in lines


def test_the_rate_is_explained_by_p4switchs_levels() -> None:
    """The latest run (jumbo links, batched port I/O): 4 Mb/s, all 16 NICs at rate; at
    8 Mb/s they were not (114.7 of 128 is 89.6 %, under the 90 % that counts)."""
    data = load_capacity()
    text = rate_reason(data, host_rate(data, "p4switch"))
    assert "(62.4 of 64 Mb/s, 6,153 switch frames/s, machine CPU 59%)" in text
    assert "but not 16 NICs at 8 Mb/s (114.7 of 128 Mb/s, machine CPU 83%)" in text


def test_the_rate_comes_from_the_newest_run_at_the_links_mtu() -> None:
    """At MTU 1,500 the newest p4switch run (2026-12-03) gave 1 Mb/s; at 9,000 the jumbo run
    4 Mb/s; no run at 4,000: an error naming the MTU and the bench to run."""
    data = load_capacity()
    assert host_rate(data, "p4switch", 1500).rate_mbps == 1.0
    assert host_rate(data, "bmv2", 1500).rate_mbps == 0.5
    assert host_rate(data, "p4switch", 9000).rate_mbps == 4.0
    assert host_rate(data, "bmv2", 9000).rate_mbps == 2.0
    with pytest.raises(CapacityError, match=r"p4switch: no level with all 16 NICs measured at "
                                            r"MTU 4000; run bench/fabric_capacity.py"):
        host_rate(data, "p4switch", 4000)


def test_a_missing_file_says_how_to_make_it(tmp_path: Path) -> None:
    """No file: the path and the bench to run."""
    with pytest.raises(CapacityError, match=r"capacity.json: cannot read .* run "
                                            r"bench/fabric_capacity.py --write"):
        load_capacity(tmp_path / "capacity.json")


@pytest.mark.parametrize(("text", "where"), [
    ("{", "Invalid JSON"),
    ('{"measurements": []}', "measurements: List should have at least 1 item"),
    (json.dumps({"measurements": [{**RUN, "targets": {"p4switch": {
        "levels": [{k: v for k, v in LEVEL.items() if k != "nics"}]}}}]}),
     "measurements.0.targets.p4switch.levels.0.nics: Field required"),
    (json.dumps({"measurements": [RUN], "comment": "x"}), "comment: Extra inputs"),
], ids=["not-json", "no-run", "level-without-nics", "unknown-key"])
def test_a_malformed_file_names_the_key(tmp_path: Path, text: str, where: str) -> None:
    """One line: the file, where in it, what is wrong."""
    path = tmp_path / "capacity.json"
    path.write_text(text)
    with pytest.raises(CapacityError) as exc:
        load_capacity(path)
    assert str(exc.value).startswith(f"{path}: ")
    assert where in str(exc.value)


def test_a_run_is_appended_with_every_figure_the_bench_keeps(tmp_path: Path) -> None:
    """--write: a new file, then a second run after the first; extra figures stay in the file."""
    path = tmp_path / "capacity.json"
    add_measurement(path, RUN)
    data = add_measurement(path, {**RUN, "date": "2026-12-03"})
    assert [m.date for m in data.measurements] == ["2026-12-02", "2026-12-03"]
    raw = json.loads(path.read_text())
    assert raw["measurements"][1]["targets"]["p4switch"]["levels"][0]["host_pps"] == 470


def test_a_bad_run_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    """A run without its date is refused and nothing is written."""
    path = tmp_path / "capacity.json"
    add_measurement(path, RUN)
    before = path.read_text()
    with pytest.raises(CapacityError, match="the new measurement: date: Field required"):
        add_measurement(path, {k: v for k, v in RUN.items() if k != "date"})
    assert path.read_text() == before


def test_a_level_that_failed_is_kept_with_its_error(tmp_path: Path) -> None:
    """A level whose collective failed is kept, its rate and error with it; one without
    its rate is refused, naming where."""
    path = tmp_path / "capacity.json"
    failed = {"nics": 16, "rate_mbps": 1.0, "error": "h1: job stopped", "lossless": False,
              "at_rate": False}
    run = {**RUN, "targets": {"bmv2": {"levels": [failed]}}}
    add_measurement(path, run)
    kept = json.loads(path.read_text())["measurements"][-1]["targets"]["bmv2"]["levels"][0]
    assert kept["error"] == "h1: job stopped" and kept["rate_mbps"] == 1.0
    no_rate = {k: v for k, v in failed.items() if k != "rate_mbps"}
    with pytest.raises(CapacityError,
                       match=r"the new measurement: targets\.bmv2\.levels\.0\.rate_mbps: "):
        add_measurement(path, {**RUN, "targets": {"bmv2": {"levels": [no_rate]}}})


def _levels_file(tmp_path: Path, levels: list[dict[str, object]]) -> Path:
    """A capacity file with one run of BMv2 at the given levels (the others' figures made up)."""
    path = tmp_path / "capacity.json"
    full = [{**LEVEL, "carried_mbps": 1.0, "target": "bmv2", **lv} for lv in levels]
    add_measurement(path, {**RUN, "targets": {"bmv2": {"levels": full}}})
    return path


def test_the_host_rate_is_the_fastest_with_every_nic_at_rate(tmp_path: Path) -> None:
    """16 NICs at rate at 1 and 2 Mb/s, not at 4; 8 NICs at 4 Mb/s does not count: 2 Mb/s."""
    path = _levels_file(tmp_path, [
        {"rate_mbps": 1.0, "nics": 16, "at_rate": True},
        {"rate_mbps": 2.0, "nics": 16, "at_rate": True, "carried_mbps": 30.1},
        {"rate_mbps": 4.0, "nics": 16, "at_rate": False},
        {"rate_mbps": 4.0, "nics": 8, "at_rate": True}])
    got = host_rate(load_capacity(path), "bmv2")
    assert (got.rate_mbps, got.at_rate, got.level.carried_mbps) == (2.0, True, 30.1)
    assert "found BMv2 carrying all 16 NICs of ai_zone_small at 2 Mb/s at rate (30.1 of " \
           "32 Mb/s" in rate_reason(load_capacity(path), got)


def test_a_rate_that_kept_the_machine_too_busy_is_not_taken(tmp_path: Path) -> None:
    """16 NICs at rate at 4 Mb/s with the machine 57% busy and at 8 Mb/s with it 85% busy (over
    the 80% limit): 4 Mb/s, and the page says why not 8."""
    path = _levels_file(tmp_path, [
        {"rate_mbps": 4.0, "nics": 16, "carried_mbps": 62.3, "machine_cpu": 0.57},
        {"rate_mbps": 8.0, "nics": 16, "carried_mbps": 115.5, "machine_cpu": 0.85}])
    got = host_rate(load_capacity(path), "bmv2")
    assert (got.rate_mbps, got.at_rate) == (4.0, True)
    text = rate_reason(load_capacity(path), got)
    assert "at 8 Mb/s too (115.5 of 128 Mb/s), but with the machine 85% busy, over the 80%" \
        in text
    assert "4 Mb/s is the fastest host rate tried at which the whole fabric runs at line rate " \
           "on BMv2 with the machine at most 80% busy" in text


def test_no_rate_at_rate_takes_the_slowest_and_says_so(tmp_path: Path) -> None:
    """No 16-NIC level at rate (one lossy, one slow): the slowest tried, 1 Mb/s, said below rate."""
    path = _levels_file(tmp_path, [
        {"rate_mbps": 2.0, "nics": 16, "at_rate": False},
        {"rate_mbps": 1.0, "nics": 16, "at_rate": True, "lossless": False, "carried_mbps": 9.5}])
    got = host_rate(load_capacity(path), "bmv2")
    assert (got.rate_mbps, got.at_rate) == (1.0, False)
    text = rate_reason(load_capacity(path), got)
    assert "at 1 Mb/s **below rate** (9.5 of 16 Mb/s" in text
    assert "no rate tried runs the whole fabric at line rate on BMv2" in text


def test_a_target_without_a_full_fabric_level_is_an_error(tmp_path: Path) -> None:
    """Only 4-NIC levels for BMv2, none for p4switch: the target and the bench to run, named."""
    path = _levels_file(tmp_path, [{"rate_mbps": 1.0, "nics": 4}])
    with pytest.raises(CapacityError, match=r"bmv2: no level with all 16 NICs measured; run "
                                            r"bench/fabric_capacity.py --targets bmv2 --write"):
        host_rate(load_capacity(path), "bmv2")
    with pytest.raises(CapacityError, match="p4switch: no level"):
        host_rate(load_capacity(path), "p4switch")
