"""Smoke test of `aizone experiment` (root): qp-scaling at its smallest size writes what it says.

The experiment brings `ai_zone_small` up and down itself, so this test
runs `python -m experiments qp-scaling --quick --target T` (what `aizone
experiment qp-scaling --quick` runs) once for the module, on the target
the suite runs on (BMv2's results in their own `bmv2/` folder), and checks
the files: the
JSON validates against the results schema and holds every grid point with
its run; the markdown table has a row per point; the PNG and SVG plots
exist and are what their names say; nothing of the fabric is left behind.
Experiments are not tests: the findings themselves are not asserted (they
are results, in docs/results.md), only that they were evaluated.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fabric_support import assert_clean, leftovers

from experiments.schema import load_result
from tests.provides import unavailable
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory, target: str) -> tuple[Path, str]:
    if os.geteuid() != 0:
        unavailable("root", "experiments bring fabrics up: needs root (network namespaces)")
    before = leftovers()
    base = tmp_path_factory.mktemp("qp-scaling")
    proc = subprocess.run([sys.executable, "-m", "experiments", "qp-scaling", "--quick",
                           "--target", target, "--out", str(base)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    assert_clean(before)
    out = base if target == "p4switch" else base / target
    assert sorted(p.name for p in base.glob("*.json")) == (
        ["qp-scaling.json"] if target == "p4switch" else []), "another target's folder written"
    return out, proc.stdout


def test_json_validates_and_holds_the_grid(quick: tuple[Path, str], target: str) -> None:
    """Every point of the quick grid (2 modes x 2 QP counts x 2 strategies), one run each."""
    out, _ = quick
    result = load_result(out / "qp-scaling.json")
    assert result.experiment == "qp-scaling" and result.quick and result.repeat == 1
    assert result.target == target and result.topology_name == "ai_zone_small"
    # The scale is the line rate a host link stands for over its emulated rate, in the file
    # that ran (the experiment's variant of the preset: 400 G NICs, slower host links).
    # Worked out by hand for p4switch: docs/results/capacity.json has it carry all 16 NICs at
    # rate at 4 Mb/s on jumbo links and not at 8, so host links run at 4 Mb/s, each standing
    # for a 400 Gb/s NIC: 400e9 / 4e6 = 100,000. BMv2's rate moves with its measured
    # capacity: the scale is 400 G over whatever rate ran.
    ran = load_spec(Path(result.topology))
    assert ran.line_rate_gbps == 400
    rate = ran.links.host.rate_mbps
    if target == "p4switch":
        assert rate == 4.0
    assert ran.mtu == 9000 and result.scale["mtu"] == 9000
    assert result.scale["host"] == {"rate_mbps": rate, "scale": pytest.approx(400e3 / rate)}
    assert sorted((p.params["mode"], p.params["qps"], p.params["strategy"])
                  for p in result.points) == sorted(
        (m, q, s) for m in ("ecmp", "eecmp") for q in (1, 8) for s in ("rr", "split"))
    assert all(len(p.runs) == 1 for p in result.points)
    assert result.runs == 8
    assert result.machine["cores"] and result.versions["aizone"]
    failed = [(p.params, r.error) for p in result.points for r in p.runs if r.error is not None]
    assert failed == [], f"runs failed: {failed}"
    # Each run on its own, against values worked out by hand. The quick grid's AllReduce:
    # 16 ranks (every NIC of ai_zone_small: 4 racks x 2 hosts x 2 NICs), 256 KiB each.
    # nccl-tests: algbw = 262,144 B x 8 / time; busbw = algbw x 2 (16 - 1) / 16 = 1.875 algbw.
    # The ring takes the racks in turn, so every rank's 2 x 15 chunks of 16 KiB (491,520 B)
    # cross the spine: 16 x 491,520 = 7,864,320 B of payload up the RTSW uplinks, at least
    # 1,920 frames of at most 4,096 B payload (jumbo links' path MTU), 4,154 B each:
    # 7,975,680 B.
    assert result.sizes["bytes per rank"] == 256 * 1024
    for p in result.points:
        (run,) = p.runs
        m, where = run.metrics, p.params
        assert m["bytes_ok"] == 1.0, where
        assert m["time_s"] > 0 and m["algbw_gbps"] == pytest.approx(
            262_144 * 8 / m["time_s"] / 1e9, rel=1e-6), (where, m)
        assert m["busbw_gbps"] == pytest.approx(1.875 * m["algbw_gbps"], rel=1e-6), (where, m)
        links = run.details["links"]
        assert len(links) == 8 and all(k.startswith("rtsw") for k in links), links
        assert sum(up for up, _ in links.values()) >= 7_975_680, (where, links)
        assert m["up_imbalance"] >= 1.0 and isinstance(run.cpu_bound, bool)
    assert result.findings, "no finding was evaluated"
    assert result.calibration and result.calibration[0].get("efficiency")


def test_markdown_has_a_row_per_point(quick: tuple[Path, str]) -> None:
    """The table's header, its alignment row and 8 rows, each with the point's parameters."""
    out, _ = quick
    lines = [ln for ln in (out / "qp-scaling.md").read_text().splitlines()
             if ln.startswith("|")]
    assert lines[0].startswith("| mode | QPs | strategy | AllReduce time (s) |")
    assert set(lines[1]) <= set("|-:")
    rows = [ln.split("|")[1:4] for ln in lines[2:]]
    assert len(rows) == 8
    assert {tuple(c.strip() for c in r) for r in rows} == {
        (m, q, s) for m in ("ecmp", "eecmp") for q in ("1", "8") for s in ("rr", "split")}


def test_plots_are_png_and_svg(quick: tuple[Path, str]) -> None:
    """qp-scaling.png is a PNG, qp-scaling.svg an SVG document, both linked from the JSON."""
    out, _ = quick
    data = json.loads((out / "qp-scaling.json").read_text())
    assert data["plots"] == ["qp-scaling.png", "qp-scaling.svg"]
    assert (out / "qp-scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (out / "qp-scaling.svg").read_bytes()[:2000]


def test_the_fabric_variant_or_preset_is_named(quick: tuple[Path, str]) -> None:
    """The result names the topology file that ran, and that file exists."""
    out, stdout = quick
    result = load_result(out / "qp-scaling.json")
    assert Path(result.topology).is_file()
    assert "wrote" in stdout
