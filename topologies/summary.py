"""What a topology is, in numbers, without starting anything: `aizone topo show TOPO [--json]`.

`summarize(spec, plan)` returns a JSON-able dict:

- `counts`: zones, switches per role, hosts, NICs and the GPUs they stand
  for (one GPU per NIC, as in the paper's hosts: 8 GPUs, 8 NICs);
- `tiers`: per link tier, the number of links, the emulated rate and what it
  represents (`rate_mbps * scale`), total emulated and represented capacity,
  the switch queue, PFC and ECN settings;
- `oversubscription`: per switch role with links below and above it, the
  capacity below (downlinks, or host ports) against the capacity above
  (uplinks), from rates x links: `ratio` = down / up (> 1 is
  oversubscribed, < 1 has spare uplinks, like the paper's RTSW at 1:1.125),
  the worst switch of the role, and a label ("1:1.125", "7.111:1");
- `latency`: with the topology's `latency:` section (None without), per
  tier the real propagation and the switch latency at each end, each
  direction's emulated delay (real x scale), the link's round trip (real
  us, emulated ms) and its bandwidth-delay product (rate x round trip: the
  same bytes real and emulated), and the round trip between the farthest
  hosts with its BDP at a NIC's rate;
- `qos`, `addressing` (per zone subnets, NIC prefix, port and device id
  ranges, the limits) and `processes` (switch processes + host agents `up`
  would run, against `MAX_PROCESSES`).

`render_summary(console, summary)` prints it as rich tables.
`check_runnable(plan)` raises `SpecError` when the fabric is too large to
emulate here, saying how many processes it would need.

Names defined here: `summarize`, `render_summary`, `check_runnable`,
`MAX_PROCESSES`, `ratio_label`.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from .addressing import AddressPlan, SwitchPlan
from .latency import TIER_ENDS, LatencySpec
from .spec import MAX_PORTS, MAX_RACKS_PER_ZONE, MAX_ZONES, TIERS, FabricSpec, SpecError

__all__ = ["MAX_PROCESSES", "check_runnable", "ratio_label", "render_summary", "summarize"]

# The most processes (switches + host agents) `up` starts on one machine. A
# p4switch process with a pipeline loaded holds ~57 MB resident and 12
# threads and takes ~0.3 s of CPU to start (measured on the 2-core build
# machine, `ps` after start); a host agent is a Python process of the same
# order. 256 processes are ~15 GB and minutes of start-up CPU on 2 cores: past
# that a fabric is for `topo show` and the flow-level model, not for `up`.
MAX_PROCESSES = 256

# (role, tier below it, tier above it) for the oversubscription table.
_STAGES = (("rtsw", "host", "rtsw_ctsw"), ("ctsw", "rtsw_ctsw", "ctsw_atsw"))


def ratio_label(ratio: float) -> str:
    """down/up as people write it: 2.0 -> "2:1", 0.8889 -> "1:1.125", 7.1111 -> "7.111:1"."""
    if ratio >= 1:
        return f"{_num(ratio)}:1"
    return f"1:{_num(1 / ratio)}"


def _num(x: float) -> str:
    """Up to 3 decimals, thousands separated: 1.125, 9,830.4, 245,760."""
    r = round(x, 3)
    return f"{r:,.0f}" if r == int(r) else f"{r:,}"


def _down_up(sw: SwitchPlan, rates: dict[str, float]) -> tuple[float, float]:
    down = sum(rates[p.tier] for p in sw.ports if p.kind in ("host", "downlink"))
    up = sum(rates[p.tier] for p in sw.ports if p.kind == "uplink")
    return down, up


def summarize(spec: FabricSpec, plan: AddressPlan) -> dict[str, Any]:
    """The numbers of a fabric (see the module docstring); JSON-able."""
    scale = spec.scale
    rates = {t: spec.links.tier(t).rate_mbps for t in TIERS}
    zones = spec.zone_list()
    roles = {r: len(plan.switches_of(r)) for r in ("rtsw", "ctsw", "atsw")}
    nics = sum(len(h.nics) for h in plan.hosts)
    counts = {"zones": len(zones), **roles, "switches": len(plan.switches),
              "hosts": len(plan.hosts), "nics": nics, "gpus": nics}

    links_per_tier = dict.fromkeys(TIERS, 0)
    for lk in plan.links:
        links_per_tier[lk.tier] += 1
    tiers = []
    for t in TIERS:
        n = links_per_tier[t]
        if not n:
            continue
        ls = spec.links.tier(t)
        tiers.append({
            "tier": t, "links": n, "rate_mbps": ls.rate_mbps,
            "represents_gbps": ls.rate_mbps * scale / 1000,
            "emulated_mbps": n * ls.rate_mbps,
            "represented_tbps": n * ls.rate_mbps * scale / 1e6,
            "queue": ls.queue, "ecn_threshold": ls.ecn_threshold,
            "pfc": {"enabled": ls.pfc.enabled, "xoff": ls.pfc.xoff, "xon": ls.pfc.xon},
            "delay_ms": ls.delay_ms, "loss_pct": ls.loss_pct,
        })

    over = []
    for role, below, above in _STAGES:
        switches = plan.switches_of(role)
        pairs = [_down_up(s, rates) for s in switches]
        if not pairs or not any(up for _, up in pairs):
            continue
        down = sum(d for d, _ in pairs)
        up = sum(u for _, u in pairs)
        worst = max(d / u for d, u in pairs if u)
        first = switches[0]
        over.append({
            "role": role, "down_tier": below, "up_tier": above, "switches": len(switches),
            "down_links": sum(1 for p in first.ports if p.kind in ("host", "downlink")),
            "up_links": len(first.ports_of("uplink")),
            "down_mbps": down, "up_mbps": up,
            "down_tbps": down * scale / 1e6, "up_tbps": up * scale / 1e6,
            "ratio": down / up, "label": ratio_label(down / up),
            "worst_ratio": worst, "worst_label": ratio_label(worst),
        })

    latency = (_latency(spec.latency, spec, [str(t["tier"]) for t in tiers], roles["atsw"] > 0)
               if spec.latency else None)

    qos = {"queues": spec.qos.queues, "default_tc": 0,
           "classes": [{"name": name, "tc": c.tc, "dscp": list(c.dscp), "lossless": c.lossless}
                       for name, c in sorted(spec.qos.classes.items(), key=lambda kv: kv[1].tc)]}

    n_sw = len(plan.switches)
    sw = spec.switches
    addressing = {
        "zones": [{"zone": z, "name": zone.name, "subnet": f"10.{z}.0.0/16",
                   "racks": zone.rack_count,
                   "rack_subnets": f"10.{z}.0.0/24 .. 10.{z}.{zone.rack_count - 1}.0/24"}
                  for z, zone in enumerate(zones)],
        "nic_prefix_len": 31,
        "device_ids": _span(sw.device_id_base, n_sw),
        "grpc_ports": _span(sw.grpc_port_base, n_sw),
        "thrift_ports": _span(sw.thrift_port_base, n_sw),
        "ctl_ports": _span(sw.ctl_port_base, n_sw),
        "limits": {"zones": MAX_ZONES, "racks_per_zone": MAX_RACKS_PER_ZONE,
                   "nics_per_rack": 128, "ports_per_switch": MAX_PORTS},
    }
    processes = {"switches": n_sw, "host_agents": len(plan.hosts),
                 "total": n_sw + len(plan.hosts), "limit": MAX_PROCESSES,
                 "runnable": n_sw + len(plan.hosts) <= MAX_PROCESSES}
    return {"name": spec.name, "description": spec.description,
            "line_rate_gbps": spec.line_rate_gbps, "scale": scale, "counts": counts,
            "tiers": tiers, "oversubscription": over, "latency": latency, "qos": qos,
            "addressing": addressing,
            "processes": processes}


def _latency(lat: LatencySpec, spec: FabricSpec, tiers: list[str], atsw: bool
             ) -> dict[str, Any]:
    scale = spec.scale
    rows = []
    for t in tiers:
        lower, upper = TIER_ENDS[t]
        rtt_us = lat.link_rtt_us(t, lower, upper)
        rate = spec.links.tier(t).rate_mbps
        rows.append({
            "tier": t, "propagation_us": getattr(lat.propagation_us, t),
            "lower_switch_us": getattr(lat.switch_us, lower) if lower else 0.0,
            "upper_switch_us": getattr(lat.switch_us, upper),
            "up_ms": lat.egress_us(t, lower) * scale / 1e3,
            "down_ms": lat.egress_us(t, upper) * scale / 1e3,
            "rtt_us": rtt_us, "rtt_ms": rtt_us * scale / 1e3,
            "bdp_bytes": rate * 1e6 / 8 * rtt_us * 1e-6 * scale,
        })
    path_us = lat.path_rtt_us(atsw)
    host_rate = spec.links.host.rate_mbps
    return {"tiers": rows, "path_rtt_us": path_us, "path_rtt_ms": path_us * scale / 1e3,
            "path_bdp_bytes": host_rate * 1e6 / 8 * path_us * 1e-6 * scale}


def _span(base: int, n: int) -> str:
    return str(base) if n == 1 else f"{base}-{base + n - 1}"


def check_runnable(plan: AddressPlan) -> None:
    """Raise `SpecError` when `up` would need more than `MAX_PROCESSES` processes."""
    n_sw, n_h = len(plan.switches), len(plan.hosts)
    if n_sw + n_h > MAX_PROCESSES:
        raise SpecError(
            f"{plan.name}: too large to emulate here: `up` would run {n_sw:,} switch processes "
            f"and {n_h:,} host agents ({n_sw + n_h:,} processes, at most {MAX_PROCESSES}); "
            f"look at it with `aizone topo show` or the flow-level model"
        )


def render_summary(console: Console, summary: dict[str, Any]) -> None:
    """Print a `summarize` result as rich tables."""
    s = summary
    c = s["counts"]
    console.print(f"[bold]{s['name']}[/]: {s['description']}")
    console.print(
        f"{c['zones']} zone(s), {c['rtsw']:,} RTSW, {c['ctsw']:,} CTSW, {c['atsw']:,} ATSW, "
        f"{c['hosts']:,} hosts, {c['nics']:,} NICs ({c['gpus']:,} GPUs represented); "
        f"host links stand for {_num(s['line_rate_gbps'])} G NICs, scale {s['scale']:,.0f}")

    t = Table(title="link tiers")
    for col in ("tier", "links", "rate", "represents", "emulated total", "represented total",
                "queue", "PFC xoff/xon", "ECN >"):
        t.add_column(col, justify="left" if col == "tier" else "right")
    for tier in s["tiers"]:
        pfc = tier["pfc"]
        t.add_row(tier["tier"], f"{tier['links']:,}", f"{_num(tier['rate_mbps'])} Mb/s",
                  f"{_num(tier['represents_gbps'])} Gb/s", f"{_num(tier['emulated_mbps'])} Mb/s",
                  f"{_num(tier['represented_tbps'])} Tb/s", str(tier["queue"]),
                  f"{pfc['xoff']}/{pfc['xon']}" if pfc["enabled"] else "off",
                  str(tier["ecn_threshold"]))
    console.print(t)

    if s["oversubscription"]:
        o = Table(title="oversubscription (capacity below : capacity above, from rates x links)")
        for col in ("role", "per switch", "below", "above", "down:up", "worst switch"):
            o.add_column(col, justify="left" if col == "role" else "right")
        for row in s["oversubscription"]:
            o.add_row(row["role"].upper(), f"{row['down_links']} down, {row['up_links']} up",
                      f"{_num(row['down_tbps'])} Tb/s", f"{_num(row['up_tbps'])} Tb/s",
                      row["label"], row["worst_label"])
        console.print(o)

    _render_latency(console, s["latency"])

    q = Table(title=f"traffic classes ({s['qos']['queues']} queues, class c in queue c)")
    for col in ("class", "tc", "DSCP", "lossless (PFC)"):
        q.add_column(col)
    for cl in s["qos"]["classes"]:
        q.add_row(cl["name"], str(cl["tc"]), ", ".join(map(str, cl["dscp"])) or "-",
                  "yes" if cl["lossless"] else "no")
    q.add_row("(everything else)", str(s["qos"]["default_tc"]), "-", "no")
    console.print(q)

    a = s["addressing"]
    z = Table(title="addressing (every NIC a /31 with its RTSW port as gateway)")
    for col in ("zone", "subnet", "racks", "rack subnets"):
        z.add_column(col)
    for row in a["zones"]:
        z.add_row(row["name"] or str(row["zone"]), row["subnet"], str(row["racks"]),
                  row["rack_subnets"])
    console.print(z)
    # `up` gives p4switch's control API a Unix socket per switch, so a fabric listens on
    # no ctl port; ctl_port_base is for a switch node started without a control folder.
    console.print(f"device ids {a['device_ids']}; on 127.0.0.1: gRPC {a['grpc_ports']}, "
                  f"BMv2 Thrift {a['thrift_ports']}; p4switch's control API: a Unix socket "
                  f"per switch in the state folder's switches/ (TCP {a['ctl_ports']} only "
                  f"for a switch started outside `up`)")
    p = s["processes"]
    verdict = ("[green]runnable here[/]" if p["runnable"]
               else f"[red]too large for `up`[/] (at most {p['limit']})")
    console.print(f"`up` would run {p['switches']:,} switch processes + {p['host_agents']:,} "
                  f"host agents = {p['total']:,}: {verdict}")


def _render_latency(console: Console, lat: dict[str, Any] | None) -> None:
    if lat is None:
        console.print("latency: none configured (no `latency:` section): a hop takes the "
                      "emulator's own time, not the real fabric's x scale")
        return
    t = Table(title="latency (real us x scale; BDP = rate x round trip, the same bytes real "
                    "and emulated)")
    for col in ("tier", "propagation", "switch below/above", "delay up", "delay down",
                "round trip", "emulated", "BDP"):
        t.add_column(col, justify="left" if col == "tier" else "right")
    for row in lat["tiers"]:
        t.add_row(row["tier"], f"{_num(row['propagation_us'])} us",
                  f"{_num(row['lower_switch_us'])}/{_num(row['upper_switch_us'])} us",
                  f"{_num(row['up_ms'])} ms", f"{_num(row['down_ms'])} ms",
                  f"{_num(row['rtt_us'])} us", f"{_num(row['rtt_ms'])} ms",
                  f"{_num(row['bdp_bytes'] / 1000)} KB")
    console.print(t)
    console.print(f"farthest hosts: round trip {_num(lat['path_rtt_us'])} us real, "
                  f"{_num(lat['path_rtt_ms'])} ms emulated; BDP at a NIC's rate "
                  f"{_num(lat['path_bdp_bytes'] / 1000)} KB")
