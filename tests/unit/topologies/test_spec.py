"""Tests for topologies.spec: presets load, bad specs name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from topologies.addressing import plan_addresses
from topologies.spec import FabricSpec, SpecError, check_programs, load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[3]
PRESETS = sorted((ROOT / "topologies").glob("*.yaml"))
ONE_RACK = "racks: [{hosts: 2}]\n"


def write(tmp_path: Path, text: str, name: str = "bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_presets_are_those_of_the_paper_and_the_skeleton() -> None:
    """rack, ai_zone_small, ai_zone, ai_zone_large, two_zones, meta_24k; the old
    zone/two-zones are gone."""
    assert [p.stem for p in PRESETS] == ["ai_zone", "ai_zone_large", "ai_zone_small", "meta_24k",
                                         "rack", "two_zones"]


@pytest.mark.parametrize("path", PRESETS, ids=[p.name for p in PRESETS])
def test_every_preset_is_valid_and_opens_with_its_shape(path: Path) -> None:
    """Each shipped preset validates, is named after its file and says its shape first."""
    spec = load_spec(path)
    assert isinstance(spec, FabricSpec)
    assert spec.name == path.stem
    assert path.read_text().startswith(f"# {path.stem}: ")


@pytest.mark.parametrize("path", PRESETS, ids=[p.name for p in PRESETS])
def test_every_presets_switch_ports_lie_below_the_kernels_ephemeral_range(path: Path) -> None:
    """No outgoing connection on this machine can be holding a preset switch's P4Runtime or
    Thrift port as its own local port (the kernel hands those out from ip_local_port_range)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    plan = plan_addresses(load_spec(path))
    ports = [p for sw in plan.switches for p in (sw.grpc_port, sw.thrift_port)]
    assert max(ports) < low, (path.name, max(ports), low)


def test_rack_preset_has_one_rtsw_two_hosts_one_nic() -> None:
    """rack.yaml: one zone, one rack of two one-NIC hosts, no CTSW."""
    spec = load_spec(ROOT / "topologies" / "rack.yaml")
    (zone,) = spec.zone_list()
    (rack,) = zone.rack_list()
    assert (rack.hosts, rack.nics, zone.ctsws, spec.atsws) == (2, 1, 0, 0)
    assert spec.programs.rtsw == (ROOT / "p4" / "rtsw.p4").resolve()


def test_ai_zone_small_is_four_racks_of_two_hosts_with_two_nics_under_two_ctsws() -> None:
    """The experiments' default shape."""
    spec = load_spec(ROOT / "topologies" / "ai_zone_small.yaml")
    (zone,) = spec.zone_list()
    racks = zone.rack_list()
    assert (len(racks), racks[0].hosts, racks[0].nics, zone.ctsws) == (4, 2, 2, 2)


def test_meta_24k_has_the_papers_shape() -> None:
    """8 zones x 192 racks x 2 hosts x 8 NICs, 18 CTSWs per zone, 9 ATSWs x 3 uplinks."""
    spec = load_spec(ROOT / "topologies" / "meta_24k.yaml")
    zones = spec.zone_list()
    assert len(zones) == 8
    for zone in zones:
        racks = zone.rack_list()
        assert (len(racks), racks[0].hosts, racks[0].nics, racks[0].uplinks) == (192, 2, 8, 1)
        assert (zone.ctsws, zone.atsw_uplinks) == (18, 3)
    assert spec.atsws == 9 and spec.line_rate_gbps == 400


def test_link_and_qos_defaults() -> None:
    """Unset tiers: 10 Mb/s, queue 64, PFC on at 24/12, ECN above 16; data 3/26, control 7/48."""
    spec = parse_spec({"racks": [{"hosts": 1}]})
    host = spec.links.host
    assert (host.rate_mbps, host.queue, host.ecn_threshold) == (10, 64, 16)
    assert (host.pfc.enabled, host.pfc.xoff, host.pfc.xon) == (True, 24, 12)
    classes = {n: (c.tc, c.dscp, c.lossless) for n, c in spec.qos.classes.items()}
    assert classes == {"data": (3, [26], True), "control": (7, [48], False)}
    assert spec.qos.queues == 8 and spec.qos.lossless_tcs == (3,)


def test_scale_is_line_rate_over_the_host_tier_rate() -> None:
    """400 G stood for by 20 Mb/s: every result is scaled by 20,000."""
    spec = parse_spec({"racks": [{"hosts": 1}], "links": {"host": {"rate_mbps": 20}}})
    assert spec.scale == 20_000
    assert parse_spec({"racks": [{"hosts": 1}], "line_rate_gbps": 100}).scale == 10_000


def test_a_class_given_in_part_keeps_its_other_defaults() -> None:
    """data: {dscp: [26, 24]} stays class 3 and lossless; control stays; a new class is added."""
    spec = parse_spec({"racks": [{"hosts": 1}], "qos": {"classes": {
        "data": {"dscp": [26, 24]}, "bulk": {"tc": 1, "dscp": [8]}}}})
    classes = {n: (c.tc, c.dscp, c.lossless) for n, c in spec.qos.classes.items()}
    assert classes == {"data": (3, [26, 24], True), "control": (7, [48], False),
                       "bulk": (1, [8], False)}


def test_pfc_off_skips_the_threshold_checks() -> None:
    """With pfc.enabled false, xoff/xon beyond the queue are not an error."""
    spec = parse_spec({"racks": [{"hosts": 1}],
                       "links": {"host": {"queue": 8, "ecn_threshold": 4,
                                                  "pfc": {"enabled": False, "xoff": 40}}}})
    assert not spec.links.host.pfc.enabled


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("racks:\n  - hosts: 0\n", "bad.yaml: racks.0.hosts: value must be >= 1"),
        ("racks:\n  - hosts: 2\n    nic: 1\n", "bad.yaml: racks.0.nic: unknown key"),
        (ONE_RACK + "target: tofino\n", "bad.yaml: target: value must be one of"),
        (ONE_RACK + "links: {host: {rate_mbps: -1}}\n",
         "bad.yaml: links.host.rate_mbps: value must be > 0"),
        (ONE_RACK + "links: {host: {rate_mbps: 2000}}\n",
         "bad.yaml: links.host.rate_mbps: value must be <= 1000"),
        (ONE_RACK + "links: {host: {bw_mbps: 100}}\n",
         "bad.yaml: links.host.bw_mbps: no longer read, use rate_mbps"),
        (ONE_RACK + "links: {rtsw_ctsw: {max_queue: 10}}\n",
         "bad.yaml: links.rtsw_ctsw.max_queue: no longer read, use queue"),
        (ONE_RACK + "links: {rtsw_ctsw: {pfc: {xoff: 24, xon: 24}}}\n",
         "bad.yaml: links.rtsw_ctsw.pfc: xon 24 must be below xoff 24"),
        (ONE_RACK + "links: {host: {queue: 16}}\n",
         "bad.yaml: links.host: pfc.xoff 24 is above queue 16"),
        (ONE_RACK + "links: {host: {ecn_threshold: 100}}\n",
         "bad.yaml: links.host: ecn_threshold 100 is above queue 64"),
        (ONE_RACK + "links: {atsw: {}}\n", "bad.yaml: links.atsw: unknown key"),
        (ONE_RACK + "line_rate_gbps: 0\n", "bad.yaml: line_rate_gbps: value must be > 0"),
        (ONE_RACK + "qos: {classes: {data: {dscp: [64]}}}\n",
         "bad.yaml: qos.classes.data.dscp.0: value must be <= 63"),
        (ONE_RACK + "qos: {classes: {data: {dscp: [26, 48]}}}\n",
         "bad.yaml: qos.classes.control.dscp: DSCP 48 is listed also in data"),
        (ONE_RACK + "qos: {classes: {data: {dscp: [26, 26]}}}\n",
         "bad.yaml: qos.classes.data.dscp: DSCP 26 is listed twice"),
        (ONE_RACK + "qos: {queues: 4}\n",
         "bad.yaml: qos.classes.control.tc: class 7 waits in queue 7, but there are 4 queues"),
        (ONE_RACK + "qos: {classes: {bulk: {tc: 3}}}\n",
         "bad.yaml: qos.classes.bulk.tc: tc 3 is also class data's"),
        (ONE_RACK + "qos: {classes: {bulk: {dscp: [8]}}}\n",
         "bad.yaml: qos.classes.bulk.tc: required key is missing"),
        (ONE_RACK + "qos: {classes: {Bulk: {tc: 1}}}\n", "bad.yaml: qos.classes.Bulk.[key]: must match"),
        (ONE_RACK + "qos: {queues: 9}\n", "bad.yaml: qos.queues: value must be <= 8"),
        (ONE_RACK + "switches: {grpc_port_base: 80}\n",
         "bad.yaml: switches.grpc_port_base: value must be >= 1024"),
        (ONE_RACK + "switches: {ctl_port_base: 20001}\n",
         "bad.yaml: switches.ctl_port_base: 1 switch(es) need ports 20001..20001, which overlap "
         "grpc_port_base's 20001..20001"),
        ("racks: [{hosts: 1, count: 3}]\nctsws: 1\nswitches: {grpc_port_base: 65534}\n",
         "bad.yaml: switches.grpc_port_base: 4 switch(es) need ports 65534..65537, past 65535"),
        (ONE_RACK + "routing: {mode: random}\n", "bad.yaml: routing.mode:"),
        ("description: nothing\n", "a fabric needs `racks`"),
        ("racks: [{hosts: 2, count: 2}]\n", "has 2 racks but no CTSW"),
        ("racks: [{hosts: 1, count: 200}, {hosts: 1, count: 57}]\nctsws: 1\n",
         "zone 0 has 257 racks, at most 256 (rack r is 10.z.r.0/24)"),
        ("racks: [{hosts: 1, count: 200, uplinks: 3}]\nctsws: 1\n",
         "zone 0: a CTSW would need 600 ports, at most 509"),
        ("zones:\n  - racks: [{hosts: 1}]\n    ctsws: 1\n  - racks: [{hosts: 1}]\n    ctsws: 1\n",
         "2 zones but no ATSW"),
        (ONE_RACK + "zones: [{racks: [{hosts: 1}]}]\n", "not both"),
        ("racks: [{hosts: 64, nics: 4}]\n", "at most 128 NICs"),
        ("zones:\n  - racks: [{hosts: 1}]\n    ctsws: 0\n    bogus: 1\n",
         "bad.yaml: zones.0.bogus: unknown key"),
        (ONE_RACK + "mtu: 319\n", "bad.yaml: mtu: value must be >= 320"),
        (ONE_RACK + "mtu: 9217\n", "bad.yaml: mtu: value must be <= 9216"),
    ],
    ids=["hosts-zero", "unknown-key", "bad-target", "negative-rate", "rate-too-high",
         "bw-mbps-renamed", "max-queue-renamed", "xon-not-below-xoff", "xoff-above-queue",
         "ecn-above-queue", "unknown-tier", "zero-line-rate", "dscp-too-big", "dscp-in-two-classes",
         "dscp-twice", "tc-past-queues", "tc-in-two-classes", "new-class-without-tc",
         "bad-class-name", "too-many-queues", "low-port", "port-ranges-overlap",
         "ports-past-65535", "bad-mode", "no-racks", "racks-without-ctsw", "too-many-racks",
         "ctsw-too-many-ports", "zones-without-atsw", "both-forms", "too-many-nics",
         "zone-unknown-key", "mtu-too-small", "mtu-too-large"],
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
