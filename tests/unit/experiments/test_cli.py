"""Tests for experiments.cli without a fabric: the parser, bad input, the command quoted."""

from __future__ import annotations

import argparse

import pytest

from experiments import EXPERIMENTS
from experiments.cli import _command, add_parser, main


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="aizone")
    add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["experiment", *argv])


def test_every_experiment_is_a_choice() -> None:
    """The five experiments, in the order `all` runs them."""
    assert list(EXPERIMENTS) == ["qp-scaling", "pinning", "incast", "failure", "placement"]
    assert _parse("all").name == "all"


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


def test_func_is_the_handler() -> None:
    """The parser's func returns the exit code (the lead wires it into `aizone`)."""
    ns = _parse("placement", "--json")
    assert ns.func.__name__ == "run" and ns.json
