"""The model's prediction against what the switches counted for one `aizone run`.

`assert_counters_match_model(job, spec, plan, ...)` holds every directed
fabric link of a finished `aizone run allreduce --json` to the flow
model's bytes for the same job (`model.run`, run here on the same
topology, placement, seed, mode, QPs and strategy):

    predicted <= counted <= predicted + ACKs + probes + resent

- predicted: the model's frame bytes of the job's data on that link
  (`ModelResult.link_totals`); `aizone run` reports the same numbers
  beside its counters (`*_predicted_bytes`), which is checked too.
- counted: the link's `tx_port` bytes between the run's two readings
  (`up_bytes`/`down_bytes`): everything that left by that port.
- ACKs: an RC ACK is 62 B (Ethernet 14, IPv4 20, UDP 8, BTH 12, AETH 4,
  ICRC 4; `traffic.connections.ACK_FRAME_BYTES`) and a responder sends at
  most one per data packet it receives (in practice one per 16, and one
  per WRITE). An ACK leaving rack X upwards acknowledges a data packet
  that came into rack X from the spine, and one coming down into rack X
  one that left it: so the ACK bytes on X's uplink in one direction are
  at most 62 B x the packets counted on X's uplinks in the other
  direction (the counted packets include ACKs and probes: an over-count,
  so still a bound).
- probes: the controller's link probes, one 60 B frame out of every
  fabric port every `probe_interval` (0.2 s): at most 60 B x
  (counted_seconds / 0.2 + 2) per link and direction.
- resent: frames sent again (go-back-N), NAKs and the switches' PFC
  frames, which may cross any link: retransmitted x 1,102 B + NAKs x 62 B
  + PAUSEs x 64 B everywhere (1,102 B: the largest data frame, 1,024 B of
  payload with RETH and ImmDt; a PFC frame is a minimum frame).

The lower bound catches any flow the model places on another link than
the switches do: that link then counts less than predicted (one QP of
four is a quarter of a flow's bytes, far beyond any rounding).
"""

from __future__ import annotations

from typing import Any

from model.run import ModelConfig, run_model
from topologies.addressing import AddressPlan
from topologies.spec import FabricSpec
from traffic.connections import ACK_FRAME_BYTES

PROBE_FRAME, PROBE_INTERVAL_S = 60, 0.2  # controller.probes, DaemonConfig.probe_interval
PFC_FRAME = 64


def largest_data_frame(path_mtu: int) -> int:
    """A WRITE Only with Immediate's frame at `path_mtu`: Ethernet 14 + IPv4 20 + UDP 8 +
    BTH 12 + RETH 16 + ImmDt 4 + payload + ICRC 4."""
    return 14 + 20 + 8 + 12 + 16 + 4 + path_mtu + 4


def check_run_ok(job: dict[str, Any]) -> None:
    """The run of `aizone run ... --json` ended well: every host ok, every byte delivered."""
    result = job["result"]
    assert result["status"] == "ok", result["errors"]
    assert {h: r["status"] for h, r in result["hosts"].items()} == \
        {h: "ok" for h in result["hosts"]}
    assert result["bytes_ok"] is True


def uplink_packets(job: dict[str, Any], plan: AddressPlan) -> dict[tuple[str, str], int]:
    """Packets counted per (RTSW, direction) over all its uplinks."""
    rack = {lk.id: lk.a for lk in plan.links if lk.tier == "rtsw_ctsw"}
    out: dict[tuple[str, str], int] = {}
    for row in job["links"]:
        if row["id"] in rack:
            for way in ("up", "down"):
                key = (rack[row["id"]], way)
                out[key] = out.get(key, 0) + row[f"{way}_packets"]
    return out


def assert_counters_match_model(job: dict[str, Any], spec: FabricSpec, plan: AddressPlan, *,
                                ranks: int, size: int, qps: int, placement: str = "packed",
                                seed: int = 0, strategy: str = "rr", pattern: str = "ring") -> int:
    """Every fabric link of `job` counts the model's bytes, plus at most its ACKs, probes and
    resends (see the module docstring); returns how many directed links carried data.
    `pattern` is the model's name of the job's collective (`ring` for an AllReduce)."""
    model = run_model(spec, plan, ModelConfig(
        pattern=pattern, ranks=ranks, placement=placement, seed=seed, mode=job["mode"], qps=qps,
        strategy=strategy, size=size, message_size=None, timing=False)).link_totals()
    rtsw_of = {lk.id: lk.a for lk in plan.links if lk.tier == "rtsw_ctsw"}
    packets = uplink_packets(job, plan)
    result = job["result"]
    resent = result["retransmitted"] * largest_data_frame(plan.path_mtu) + \
        (result["naks_sent"] + result["naks_received"]) * ACK_FRAME_BYTES + \
        (job["tm"].get("pauses_sent", 0)) * PFC_FRAME
    probes = PROBE_FRAME * (job["counted_seconds"] / PROBE_INTERVAL_S + 2)
    assert job["links"], "the run reports no fabric links"
    checked = 0
    for row in job["links"]:
        for way, back in (("up", "down"), ("down", "up")):
            want = round(model.get((row["id"], way), 0))
            got = row[f"{way}_bytes"]
            acks = ACK_FRAME_BYTES * packets[(rtsw_of[row["id"]], back)] \
                if row["id"] in rtsw_of else 0
            assert want <= got <= want + acks + probes + resent, (
                f"{row['id']} {way}: counted {got} B, the model {want} B "
                f"(+ ACKs <= {acks} B, probes <= {probes:.0f} B, resent {resent} B)")
            assert row[f"{way}_predicted_bytes"] == want, (row["id"], way)
            checked += want > 0
    return checked
