"""Tests for experiments.fabric without a fabric: topology variants written and checked; the
preconditions of a bring-up are `aizone up`'s."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from controller.errors import ControllerError
from controller.launch import DaemonOptions, bring_up
from experiments.fabric import Fabric, FabricError, variant
from topologies.errors import NetworkError
from topologies.runstate import RunState, write_state
from topologies.spec import SpecError, load_spec

ROOT = Path(__file__).resolve().parents[3]
BASE = ROOT / "topologies" / "ai_zone_small.yaml"


def test_variant_changes_keys_and_keeps_the_rest(tmp_path: Path) -> None:
    """PFC off on the host tier: that key changes, the rates and racks stay as in the preset."""
    path = variant(BASE, tmp_path, "pfc-off", {"links.host.pfc.enabled": False})
    assert path == tmp_path / "pfc-off.yaml"
    spec = load_spec(path)
    assert spec.links.host.pfc.enabled is False
    assert spec.links.rtsw_ctsw.pfc.enabled is True
    assert (spec.links.host.rate_mbps, spec.links.rtsw_ctsw.rate_mbps) == (10, 20)
    assert spec.name == "ai_zone_small"
    data = yaml.safe_load(path.read_text())
    assert not Path(data["programs"]["rtsw"]).is_absolute()  # relative to the variant
    assert spec.programs.rtsw == ROOT / "p4" / "rtsw.p4"
    assert path.read_text().startswith("# Written by `aizone experiment`: ai_zone_small.yaml "
                                       "with links.host.pfc.enabled=False\n")


def test_variant_replaces_whole_values(tmp_path: Path) -> None:
    """A list value (the racks) replaces the preset's."""
    path = variant(BASE, tmp_path, "v", {"name": "pinz", "ctsws": 4,
                                         "racks": [{"count": 4, "hosts": 4, "nics": 1}]})
    spec = load_spec(path)
    assert spec.name == "pinz" and spec.ctsws == 4 and spec.racks[0].hosts == 4


def test_variant_with_a_bad_key_names_it(tmp_path: Path) -> None:
    """A misspelt key is the spec's error, naming the file and the key."""
    with pytest.raises(SpecError, match=r"bad\.yaml: links\.host\.rate"):
        variant(BASE, tmp_path, "bad", {"links.host.rate": 5})


def test_fabric_error_is_a_controller_error() -> None:
    """The CLI maps it like the controller's own errors."""
    assert issubclass(FabricError, ControllerError)


def test_fabric_reads_its_plan_without_starting() -> None:
    """Constructing a Fabric starts nothing; it knows its plan."""
    f = Fabric(BASE)
    assert f.plan.name == "ai_zone_small" and len(f.plan.nics()) == 16


def test_a_fabric_left_without_its_daemon_is_refused_as_aizone_up_refuses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another fabric's state, its daemon gone: the experiment's Fabric says what `aizone up`
    says (controller.launch.bring_up), in the same words, and starts nothing."""
    state_dir = tmp_path / "state"
    monkeypatch.setenv("AIZONE_STATE_DIR", str(state_dir))
    write_state(RunState(owner_pid=2**22 + 1, owner_start="0", token="t", name="rack",
                         target="p4switch", ready=True,
                         meta={"daemon": True, "topology": str(ROOT / "topologies/rack.yaml")}))
    with pytest.raises(NetworkError) as up:
        bring_up(DaemonOptions(topology=BASE))
    with pytest.raises(NetworkError) as experiment:
        Fabric(BASE).__enter__()
    assert str(experiment.value) == str(up.value)
    if os.geteuid() == 0:
        assert "fabric 'rack' is still running without its daemon" in str(up.value)
    assert sorted(p.name for p in state_dir.iterdir()) == ["run.json"]
