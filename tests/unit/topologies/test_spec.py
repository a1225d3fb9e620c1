"""Tests for topologies.spec: presets load, bad specs name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from topologies.spec import FabricSpec, SpecError, check_programs, load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[3]
PRESETS = sorted((ROOT / "topologies").glob("*.yaml"))


def write(tmp_path: Path, text: str, name: str = "bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("path", PRESETS, ids=[p.name for p in PRESETS])
def test_every_preset_is_valid(path: Path) -> None:
    """Each shipped preset validates."""
    spec = load_spec(path)
    assert isinstance(spec, FabricSpec)
    assert spec.zone_list()


def test_rack_preset_has_one_rtsw_two_hosts_one_nic() -> None:
    """rack.yaml: one zone, one rack of two one-NIC hosts, no CTSW."""
    spec = load_spec(ROOT / "topologies" / "rack.yaml")
    (zone,) = spec.zone_list()
    (rack,) = zone.rack_list()
    assert (rack.hosts, rack.nics, zone.ctsws, spec.atsws) == (2, 1, 0, 0)
    assert spec.programs.rtsw == (ROOT / "p4" / "rtsw.p4").resolve()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("racks:\n  - hosts: 0\n", "bad.yaml: racks.0.hosts: value must be >= 1"),
        ("racks:\n  - hosts: 2\n    nic: 1\n", "bad.yaml: racks.0.nic: unknown key"),
        ("racks: [{hosts: 2}]\ntarget: tofino\n", "bad.yaml: target: value must be one of"),
        ("racks: [{hosts: 2}]\nlinks: {host: {bw_mbps: -1}}\n",
         "bad.yaml: links.host.bw_mbps: value must be > 0"),
        ("racks: [{hosts: 2}]\nswitches: {grpc_port_base: 80}\n",
         "bad.yaml: switches.grpc_port_base: value must be >= 1024"),
        ("racks: [{hosts: 2}]\nrouting: {mode: random}\n", "bad.yaml: routing.mode:"),
        ("description: nothing\n", "a fabric needs `racks`"),
        ("racks: [{hosts: 2, count: 2}]\n", "has 2 racks but no CTSW"),
        ("zones:\n  - racks: [{hosts: 1}]\n    ctsws: 1\n  - racks: [{hosts: 1}]\n    ctsws: 1\n",
         "2 zones but no ATSW"),
        ("racks: [{hosts: 2}]\nzones: [{racks: [{hosts: 1}]}]\n", "not both"),
        ("racks: [{hosts: 64, nics: 4}]\n", "at most 128 NICs"),
        ("zones:\n  - racks: [{hosts: 1}]\n    ctsws: 0\n    bogus: 1\n",
         "bad.yaml: zones.0.bogus: unknown key"),
    ],
    ids=["hosts-zero", "unknown-key", "bad-target", "negative-bw", "low-port", "bad-mode",
         "no-racks", "racks-without-ctsw", "zones-without-atsw", "both-forms", "too-many-nics",
         "zone-unknown-key"],
)
def test_invalid_spec_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    """A bad value or key gives a SpecError naming the file and the key path."""
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as exc:
        load_spec(path)
    assert str(path) in str(exc.value)
    assert message in str(exc.value)


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    """Broken YAML gives file:line:col and says it is a syntax error."""
    path = write(tmp_path, "racks:\n  - hosts: 2\n   nics: [1\n")
    with pytest.raises(SpecError, match=rf"^{path}:\d+:\d+: YAML syntax error"):
        load_spec(path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    """A missing topology file is a SpecError naming it."""
    path = tmp_path / "nope.yaml"
    with pytest.raises(SpecError, match=rf"{path}: no such topology file"):
        load_spec(path)


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just a string\n"],
                         ids=["empty", "list", "scalar"])
def test_top_level_must_be_a_mapping(tmp_path: Path, text: str) -> None:
    """An empty file or a non-mapping top level is rejected with the file name."""
    path = write(tmp_path, text)
    with pytest.raises(SpecError, match=str(path)):
        load_spec(path)


def test_name_defaults_to_file_stem(tmp_path: Path) -> None:
    """Without `name`, the preset is named after its file."""
    spec = load_spec(write(tmp_path, "racks: [{hosts: 1}]\n", name="my rack.yaml"))
    assert spec.name == "my-rack"


def test_relative_programs_resolve_against_the_spec_folder(tmp_path: Path) -> None:
    """programs.rtsw is relative to the YAML file, not to the working directory."""
    spec = load_spec(write(tmp_path, "racks: [{hosts: 1}]\nprograms: {rtsw: p/x.p4}\n"))
    assert spec.programs.rtsw == (tmp_path / "p" / "x.p4").resolve()


def test_check_programs_names_missing_p4_file(tmp_path: Path) -> None:
    """A missing P4 source is a SpecError naming the key and the path."""
    spec = load_spec(write(tmp_path, "racks: [{hosts: 1}]\nprograms: {rtsw: nope.p4}\n"))
    with pytest.raises(SpecError, match=r"x.yaml: programs.rtsw: P4 file .*nope.p4 not found"):
        check_programs(spec, ["rtsw"], source="x.yaml")


def test_spec_is_frozen() -> None:
    """A validated spec cannot be changed in place."""
    spec = parse_spec({"racks": [{"hosts": 1}]}, source="t.yaml")
    with pytest.raises(ValidationError):
        spec.ctsws = 3  # type: ignore[misc]
