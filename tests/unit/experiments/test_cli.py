"""Tests for experiments.cli without a fabric: the parser, bad input, the command quoted."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from experiments import EXPERIMENTS
from experiments.cli import _command, add_parser, experiment_module, main


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="aizone")
    add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["experiment", *argv])


def test_every_experiment_is_a_choice() -> None:
    """The five experiments, in the order `all` runs them."""
    assert list(EXPERIMENTS) == ["qp-scaling", "pinning", "incast", "failure", "placement"]
    assert _parse("all").name == "all"


def test_each_name_is_its_modules_own() -> None:
    """The table the parser is built from, without loading the experiments, names each one
    as its module does, and each module runs, explains and plots it."""
    for name in EXPERIMENTS:
        module = experiment_module(name)
        assert module.NAME == name, (name, module.__name__)
        assert callable(module.run) and callable(module.findings) and callable(module.plot)


def test_building_the_parser_loads_no_experiment_or_fabric() -> None:
    """`aizone`'s parser (every command builds it) loads no experiment module, no session and
    no traffic agent client: a fresh interpreter's `sys.modules` after `build_parser()`."""
    import json
    import subprocess
    import sys

    code = ("import json, sys\n"
            "from aizone.parser import build_parser\n"
            "build_parser()\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True, cwd=Path(__file__).resolve().parents[3])
    loaded = set(json.loads(out.stdout))
    heavy = {f"experiments.{m}" for m in EXPERIMENTS.values()} | {
        "experiments.session", "experiments.collective", "controller.daemon", "finsy"}
    assert sorted(loaded & heavy) == []
    assert "experiments.cli" in loaded  # the probe sees what the parser did load


def test_unknown_experiment_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse refuses it (exit 2) and names the choices."""
    with pytest.raises(SystemExit) as exc:
        _parse("nope")
    assert exc.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_bad_repeat_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """--repeat 0 is bad input: exit 2, one line."""
    assert main(["qp-scaling", "--repeat", "0"]) == 2
    assert capsys.readouterr().err == "aizone experiment: error: --repeat must be 1..50\n"


def test_the_command_quoted_in_results() -> None:
    """What the tables say made them: the flags given, defaults left out."""
    assert _command(_parse("qp-scaling")) == "aizone experiment qp-scaling"
    assert _command(_parse("incast", "--repeat", "5", "--quick")) == \
        "aizone experiment incast --repeat 5 --quick"
    # Inside `all`, each experiment's own command writes where `all` wrote.
    assert _command(_parse("all"), "failure") == \
        "aizone experiment failure --out docs/results"


def test_buffer_in_bytes_is_quoted_and_refused_on_bmv2(capsys: pytest.CaptureFixture[str]) -> None:
    """--buffer bytes goes into the quoted command; on BMv2, whose queues count packets, it
    is bad input (exit 2) saying why, before anything runs."""
    assert _command(_parse("qp-scaling", "--buffer", "bytes")) == \
        "aizone experiment qp-scaling --buffer bytes"
    assert main(["qp-scaling", "--buffer", "bytes", "--target", "bmv2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("aizone experiment: error: --buffer bytes: only p4switch") and \
        "bmv2's queues count packets" in err


def test_latency_is_quoted_on_either_target() -> None:
    """--latency goes into the quoted command, after --buffer, on p4switch and BMv2 alike."""
    assert _command(_parse("incast", "--buffer", "bytes", "--latency")) == \
        "aizone experiment incast --buffer bytes --latency"
    assert _command(_parse("qp-scaling", "--target", "bmv2", "--latency")) == \
        "aizone experiment qp-scaling --target bmv2 --latency"


def test_servers_are_quoted_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    """--servers goes into the quoted command; a bad list is a usage error naming it; with
    --latency (a delay line on this machine only) it is bad input before anything runs."""
    assert _command(_parse("pinning", "--servers", "localhost,10.0.0.2")) == \
        "aizone experiment pinning --servers localhost,10.0.0.2"
    with pytest.raises(SystemExit) as exc:
        _parse("pinning", "--servers", "a,,b")
    assert exc.value.code == 2
    assert "--servers 'a,,b': give server names separated by commas" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _parse("pinning", "--servers", "a,b,a")
    assert "server a is named twice" in capsys.readouterr().err
    assert main(["incast", "--latency", "--servers", "localhost,10.0.0.2"]) == 2
    assert capsys.readouterr().err.startswith(
        "aizone experiment: error: --latency with --servers: scaled latency runs on one "
        "machine only")


def test_func_is_the_handler() -> None:
    """The parser's func returns the exit code (the lead wires it into `aizone`)."""
    ns = _parse("placement", "--json")
    assert ns.func.__name__ == "run" and ns.json


def test_rewrite_writes_the_files_again_from_the_json(tmp_path: Path) -> None:
    """--rewrite: no fabric; the table, findings and plots come back from the JSON alone."""
    from experiments.schema import Column, ExperimentResult, Point, Run, summarize_runs

    def point(mode: str, t: float, imb: float) -> Point:
        return summarize_runs(Point(params={"mode": mode, "qps": 1, "strategy": "rr"}, runs=[
            Run(repeat=i, metrics={"time_s": t + i / 10, "up_imbalance": imb,
                                   "predicted_up": imb}) for i in range(2)]))

    result = ExperimentResult(
        experiment="qp-scaling", title="QPs", command="aizone experiment qp-scaling",
        started="2026-12-01T00:00:00+00:00", target="p4switch", topology="t.yaml",
        topology_name="ai_zone_small", repeat=2,
        params=[Column(key=k, label=k) for k in ("mode", "qps", "strategy")],
        metrics=[Column(key="time_s", label="AllReduce time", unit="s"),
                 Column(key="up_imbalance", label="uplink max/mean")],
        points=[point("ecmp", 17.0, 2.0), point("eecmp", 11.0, 1.25)])
    result.tally()
    (tmp_path / "qp-scaling.json").write_text(result.model_dump_json())
    assert main(["qp-scaling", "--rewrite", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "qp-scaling.md").read_text()
    assert "| ecmp | 1 | rr | 17.05 ± 0.07 | 2.00 ± 0.00 | 2/2 |" in text
    assert "**holds**: with 1 QP, ECMP loads the uplinks unevenly" in text
    assert "predict uplink max/mean 2.00 for this job, measured 2.00" in text
    assert (tmp_path / "qp-scaling.png").read_bytes()[:4] == b"\x89PNG"


def test_rewrite_without_results_is_bad_input(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """No JSON in --out: exit 2, the file named."""
    assert main(["pinning", "--rewrite", "--out", str(tmp_path)]) == 2
    assert "pinning.json" in capsys.readouterr().err


def test_rewrite_all_puts_every_targets_saved_results_on_the_page(tmp_path: Path) -> None:
    """all --rewrite: p4switch's five results (the committed ones) and BMv2's qp-scaling alone
    (an `all --target bmv2` cut short) on one page, BMv2's from its own folder."""
    import json
    import shutil

    from experiments.schema import load_result

    src = Path(__file__).resolve().parents[3] / "docs" / "results"
    for name in EXPERIMENTS:
        shutil.copy(src / f"{name}.json", tmp_path / f"{name}.json")
    (tmp_path / "bmv2").mkdir()
    data = json.loads((src / "qp-scaling.json").read_text())
    data["target"] = "bmv2"
    (tmp_path / "bmv2" / "qp-scaling.json").write_text(json.dumps(data))
    doc = tmp_path / "results.md"
    assert main(["all", "--rewrite", "--out", str(tmp_path), "--doc", str(doc)]) == 0
    text = doc.read_text()
    assert "| measured (p4switch) | holds (p4switch) | measured (BMv2) | holds (BMv2) |" in text
    assert "## qp-scaling: ECMP vs E-ECMP with QP scaling on ai_zone_small (BMv2)" in text
    assert "## placement: " in text and "(BMv2)\n" not in text.split("## placement: ")[1][:200]
    assert "| not run | – |" in text  # BMv2's placement
    assert "![qp-scaling](bmv2/qp-scaling.png)" in text
    assert (tmp_path / "bmv2" / "qp-scaling.md").is_file()
    assert load_result(tmp_path / "placement.json").target == "p4switch"
    # The same runs on both: no finding differs.
    assert "No finding evaluated on both targets holds on one and not on the other." in text
