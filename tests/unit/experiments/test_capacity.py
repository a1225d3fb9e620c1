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
    """A bullet per target and run, the method once, then one row per level (18)."""
    lines = capacity_lines(load_capacity())
    assert lines[0].startswith("- p4switch: lossless: **21.6 emulated Mb/s** (8,303 switch "
                               "frames/s; 16 NICs at 2 Mb/s, machine CPU 69%)")
    assert lines[2].startswith("- bmv2, measured again after BMv2's queue rates moved")
    assert ", 2026-12-01, 198 s, load 3.5 at start (p4switch then BMv2 in one run);" in lines[3]
    assert sum(line.startswith(("| p4switch |", "| bmv2 |")) for line in lines) == 18
    assert "| p4switch | 4 | 16 | 64 | 30.3 | 11,990 | 0.000% | 93 | 83% | **no** | no |" in lines


def test_the_rate_is_explained_by_p4switchs_levels() -> None:
    """1 Mb/s: all 16 NICs at rate; 8 NICs at 2 Mb/s were not."""
    text = rate_reason(load_capacity(), 1.0)
    assert "(15.0 of 16 Mb/s, 5,777 switch frames/s, machine CPU 83%)" in text
    assert "but not 8 NICs at 2 Mb/s (11.6 of 16 Mb/s" in text


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
    with pytest.raises(CapacityError, match="the new measurement: Field required"):
        add_measurement(path, {k: v for k, v in RUN.items() if k != "date"})
    assert path.read_text() == before
