"""How the CLI shows the daemon's answers to people: rich tables, one function per answer.

Each `show_*` takes a console and the JSON the API returned (the same JSON
`--json` prints), so what a person reads and what a program parses never
disagree; `show_plan` alone takes an `AddressPlan` (`aizone plan` needs no
daemon).

Names defined here: `show_status`, `show_stats`, `stats_table`, `show_history`,
`show_routes`, `show_check`, `show_acl`, `show_mode`, `show_link`, `show_trace`,
`show_run`, `show_plan`, `mbps`.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table

__all__ = ["mbps", "show_acl", "show_check", "show_history", "show_link", "show_mode", "show_plan",
           "show_routes",
           "show_run", "show_stats", "show_status", "show_trace", "stats_table"]


def mbps(bps: float | None) -> str:
    """Bits per second as Mb/s with two decimals; "-" for None."""
    return "-" if bps is None else f"{bps / 1e6:.2f}"


def _pct(util: float | None) -> str:
    return "" if util is None else f" ({util * 100:.0f}%)"


def show_status(console: Console, st: dict[str, Any]) -> None:
    """`aizone status`: the fabric, its switches, hosts, links down and failures (or its phase)."""
    if st.get("phase") != "up":
        console.print(f"daemon pid {st.get('pid')}: fabric is {st.get('phase')}"
                      + (f": {st['error']}" if st.get("error") else ""))
        return
    scale = st.get("scale") or {}
    host = (scale.get("host") or {})
    console.print(
        f"fabric [bold]{st['name']}[/] on {st['target']}, mode [bold]{st['mode']}[/], "
        f"daemon pid {st['pid']}, API {st['api'].get('url')}  "
        f"(emulated {host.get('rate_mbps')} Mb/s stands for {scale.get('line_rate_gbps')} Gb/s:"
        f" scale {host.get('scale')})")
    spread = bool(st.get("servers"))
    if spread:
        clocks = st.get("clock_offsets") or {}
        offsets = ", ".join(f"{k} {v * 1e3:+.1f} ms" for k, v in clocks.items())
        console.print(f"over servers: {', '.join(st['servers'])} (this machine first)"
                      + (f"; clocks against this one: {offsets}" if offsets else ""))
        for why in (st.get("clock_off") or {}).values():
            console.print(f"[red]clock: {why}[/]")
    t = Table(title="switches")
    for col in ("switch", "role", *(("server",) if spread else ()), "gRPC", "alive", "session",
                "last reconcile"):
        t.add_column(col)
    for s in st["switches"]:
        last = s.get("last_reconcile") or {}
        counts = last.get("counts") or {}
        rec = (f"{last.get('reason')}: +{counts.get('insert', 0)} ~{counts.get('modify', 0)} "
               f"-{counts.get('delete', 0)} ={counts.get('unchanged', 0)} in "
               f"{last.get('seconds', 0):.3f} s") if last else ""
        t.add_row(s["name"], s["role"], *((s.get("server") or "",) if spread else ()),
                  s["grpc_addr"], "yes" if s["alive"] else "[red]no[/]",
                  "primary" if s["ready"] else "[yellow]not ready[/]", rec)
    console.print(t)
    down = [lk["id"] for lk in st.get("links", []) if not lk["up"]]
    hosts = ", ".join(h["name"] for h in st.get("hosts", []))
    console.print(f"hosts: {hosts}")
    console.print("links down: " + (", ".join(down) if down else "none"))
    for f in st.get("failures", []):
        console.print(f"  {f['link']}: {f['cause']}, detected after {f.get('detected_after')} s,"
                      f" reconverged in {f.get('reconverged_after', 0):.3f} s, "
                      f"{f.get('lost_packets')} packet(s) lost")


def stats_table(snap: dict[str, Any], *, hosts: bool = False) -> Group:
    """The statistics snapshot as tables: links, tiers, queues/PFC/ECN, drops."""
    links = Table(title="link load (Mb/s and share of the emulated rate)")
    for col in ("link", "tier", "up", "a -> b", "b -> a"):
        links.add_column(col, justify="right" if "->" in col else "left")
    for lk in snap.get("links", []):
        if lk["tier"] == "host" and not hosts:
            continue
        ab, ba = lk.get("a_to_b") or {}, lk.get("b_to_a") or {}
        links.add_row(f"{lk['a']}:{lk['a_port']} - {lk['b']}:{lk['b_port']}", lk["tier"],
                      "yes" if lk["up"] else "[red]DOWN[/]",
                      mbps(ab.get("bps")) + _pct(ab.get("util")),
                      mbps(ba.get("bps")) + _pct(ba.get("util")))
    tiers = Table(title="uplink imbalance per tier (max / mean)")
    for col in ("tier", "links", "mean Mb/s", "max Mb/s", "imbalance"):
        tiers.add_column(col, justify="right")
    for name, t in sorted((snap.get("tiers") or {}).items()):
        tiers.add_row(name, str(t["links"]), mbps(t["mean_bps"]), mbps(t["max_bps"]),
                      "-" if t["imbalance"] is None else f"{t['imbalance']:.2f}")
    queues = Table(title="queues, PFC and ECN per (switch, port, class): rates and marks over "
                          "the last interval")
    for col in ("switch", "port", "class", "Mb/s", "depth", "peak", "pauses sent (total)",
                "pauses rcvd (total)", "ECN marks", "TM drops (total)"):
        queues.add_column(col, justify="right")
    drops = Table(title="drops by reason (this interval / total)")
    for col in ("switch", "reason", "interval", "total"):
        drops.add_column(col, justify="right")
    for sw, data in sorted((snap.get("switches") or {}).items()):
        for port, p in sorted(data["ports"].items(), key=lambda kv: int(kv[0])):
            for tc, c in sorted(p["classes"].items()):
                queues.add_row(sw, port, tc, mbps(c.get("bps", 0.0)), str(c.get("queue_depth", "")),
                               str(c.get("queue_peak", "")), str(c.get("pauses_sent", "")),
                               str(c.get("pauses_received", "")), str(c.get("ecn_marks", "")),
                               str(c.get("tm_dropped", "")))
        for reason, d in sorted(data["drops"].items()):
            drops.add_row(sw, reason, str(d["interval"]), str(d["total"]))
    parts: list[Any] = [links, tiers]
    if queues.row_count:
        parts.append(queues)
    if drops.row_count:
        parts.append(drops)
    return Group(*parts)


def show_stats(console: Console, snap: dict[str, Any], *, hosts: bool = False) -> None:
    """`aizone stats`: the snapshot's tables (`stats_table`), or a note before the first poll."""
    if not snap:
        console.print("no statistics yet (the first poll is a second after bring-up)")
        return
    console.print(stats_table(snap, hosts=hosts))


def show_history(console: Console, data: dict[str, Any]) -> None:
    """`aizone routes --history SWITCH`: each Write RPC, its time, reason and updates."""
    writes = data["writes"]
    if not writes:
        console.print(f"{data['switch']}: no write recorded")
        return
    for w in writes:
        console.print(f"[bold]# {w['at']}[/] {data['switch']} reason [bold]{w['reason']}[/] "
                      f"({w['updates']} update{'s' if w['updates'] != 1 else ''})")
        console.print(w["text"], markup=False, highlight=False)
    total = sum(w["updates"] for w in writes)
    console.print(f"{len(writes)} writes, {total} updates")


def show_routes(console: Console, data: dict[str, Any]) -> None:
    """`aizone routes`: the mode and failed links, then each switch's entries read back."""
    console.print(f"mode [bold]{data['mode']}[/], failed links: "
                  + (", ".join(data["failed"]) or "none"))
    for sw, info in data["switches"].items():
        t = Table(title=f"{sw}: {len(info['entries'])} entities read back, "
                        + ("equal to the intent" if info["matches_intent"]
                           else f"[red]differ from the intent[/] {info['diff']}"))
        t.add_column("entity")
        for line in info["entries"]:
            t.add_row(line)
        console.print(t)


def show_check(console: Console, data: dict[str, Any]) -> None:
    """`aizone check`: the failed checks as a table, or one line when every check passed."""
    t = Table(title=f"check: {data['pings']} pings, {data['roce']} RoCEv2 transfers")
    for col in ("kind", "src", "dst", "result", "detail"):
        t.add_column(col)
    for r in data["failed"]:
        t.add_row(r["kind"], f"{r['src']} {r.get('src_ip', '')}", f"{r['dst']} {r.get('dst_ip', '')}",
                  "[red]FAILED[/]", r.get("detail", ""))
    if data["failed"]:
        console.print(t)
        console.print(f"[bold red]{len(data['failed'])} of {data['pairs']} checks failed[/]")
    else:
        rtts = [r["rtt_ms"] for r in data["results"] if r.get("rtt_ms")]
        avg = f", average ping {sum(rtts) / len(rtts):.2f} ms" if rtts else ""
        console.print(f"[bold green]all {data['pairs']} checks passed[/] ({data['pings']} pings, "
                      f"{data['roce']} RoCEv2 transfers{avg})")


def _writes(writes: dict[str, dict[str, int]]) -> str:
    total = {k: sum(w.get(k, 0) for w in writes.values()) for k in ("insert", "modify", "delete")}
    return f"+{total['insert']} ~{total['modify']} -{total['delete']} on {len(writes)} switch(es)"


def show_acl(console: Console, data: dict[str, Any]) -> None:
    """`aizone acl SW ...`: how many rules the switch has now, the time taken and the writes."""
    console.print(f"{data['switch']}: {data['rules']} ACL rule(s) added by people, written in "
                  f"{data['seconds']:.3f} s ({_writes(data['writes'])})")


def show_mode(console: Console, data: dict[str, Any]) -> None:
    """`aizone mode`: the previous and the new mode, the time taken and the writes."""
    console.print(f"mode {data['previous']} -> [bold]{data['mode']}[/] in {data['seconds']:.3f} s"
                  f" ({_writes(data['writes'])})")


def show_link(console: Console, data: dict[str, Any]) -> None:
    """`aizone link`: the reconvergence time, writes and packets lost, or why nothing moved."""
    state = "up" if data["up"] else "down"
    if data.get("silent"):
        console.print(f"link {data['link']} {state} silently: the controller's probes will "
                      f"{'find it back' if data['up'] else 'find it dead'} (aizone status)")
        return
    if data.get("changed") is False:  # None (the API's default): the record did not say
        console.print(f"link {data['link']} {state}: routes unchanged")
        return
    lost = data.get("lost_packets")
    console.print(f"link {data['link']} {state}: reconverged in {data['reconverged_after']:.3f} s"
                  f" ({_writes(data.get('writes', {}))})"
                  + (f", {lost} packet(s) sent into the dead link" if lost is not None else ""))


def show_trace(console: Console, data: dict[str, Any]) -> None:
    """`aizone trace`: the predicted hops, where the packet ends, and the confirmation."""
    pred = data["prediction"]
    conn = data.get("connection")
    whose = ("" if conn is None else f", job {data['job']}'s" if data.get("job") is not None
             else ",")
    of = "" if conn is None else f"{whose} connection {conn} QP #{data.get('qp_index', 0)}"
    t = Table(title=f"{data['src']} -> {data['dst_ip']} (UDP {data['sport']} -> {data['dport']},"
                    f" QP {data['qp']}{of})")
    for col in ("switch", "in", "out", "via", "link", "confirmed"):
        t.add_column(col)
    conf = data.get("confirmation") or {}
    by_switch = {h["switch"]: h for h in conf.get("hops", [])}
    for h in pred["hops"]:
        via = (f"group {h['group_id']} member #{h['member_index']}" if h.get("group_id")
               else f"next hop {h['next_id']}")
        c = by_switch.get(h["switch"])
        mark = "" if c is None else (f"[green]yes[/] ({c['sent']} sent)" if c["ok"]
                                     else f"[red]no[/] ({c['sent']} sent, others "
                                          f"{c['other_members']})")
        t.add_row(h["switch"], str(h["ingress_port"]), str(h["egress_port"]), via, h["link"], mark)
    console.print(t)
    if pred["delivered_to"]:
        console.print(f"delivered to {pred['delivered_to']}")
    else:
        console.print(f"[red]dropped at {pred['dropped_at']}[/]: {pred['reason']}")
    if conf.get("confirmed") is True:
        console.print(f"[bold green]confirmed[/] by the switches' counters "
                      f"({conf['packets']} packets sent)")
    elif conf.get("confirmed") is False:
        console.print(f"[bold red]not confirmed[/] {conf.get('error', '')}")
    elif conf:
        console.print(f"not sent: {conf.get('error')}")


def _bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.2f} {unit}"
    return f"{n:.0f} B"


def show_run(console: Console, data: dict[str, Any]) -> None:
    """`aizone run`: the collective's time and bandwidth, bytes per tier, drops, CPU limits."""
    r = data["result"]
    req = data["request"]
    t = Table(title=f"{data['pattern']} over {r['ranks']} ranks, {_bytes(r['size'])} per rank, "
                    f"{req['qps']} QP(s) {req['strategy']}, mode {data.get('mode')}")
    for col in ("time", "algbw", "busbw", "retransmitted", "PAUSE rcvd", "CNPs", "status"):
        t.add_column(col, justify="right")
    t.add_row(f"{r['time_s'] * 1e3:.1f} ms", f"{r['algbw_gbps'] * 1e3:.2f} Mb/s",
              f"{r['busbw_gbps'] * 1e3:.2f} Mb/s", str(r["retransmitted"]),
              str(r["pause_frames"]), str(r["cnps_received"]),
              r["status"] if r["status"] == "ok" else f"[red]{r['status']}[/]")
    console.print(t)
    tiers = Table(title="bytes per fabric link during the job (from the switches' counters; "
                        "predicted: the job's data as the routes and the hash place it)")
    for col in ("tier", "links", "mean", "max", "min", "max/mean", "predicted max",
                "predicted max/mean"):
        tiers.add_column(col, justify="right")
    for name, tr in data["tiers"].items():
        want = tr.get("predicted") or {}
        tiers.add_row(name, str(tr["links"]), _bytes(tr["mean_bytes"]), _bytes(tr["max_bytes"]),
                      _bytes(tr["min_bytes"]),
                      "-" if tr["imbalance"] is None else f"{tr['imbalance']:.2f}",
                      _bytes(want.get("max_bytes")),
                      "-" if want.get("imbalance") is None else f"{want['imbalance']:.2f}")
    console.print(tiers)
    tm = data.get("tm") or {}
    if any(tm.values()) or data.get("switch_drops"):
        console.print(f"switches: {tm.get('pauses_sent', 0)} PFC pause(s) sent, "
                      f"{tm.get('tm_dropped', 0)} queue drop(s), drops "
                      f"{data.get('switch_drops') or 'none'}")
    if data.get("ack_timeout_ms"):
        cpu = data.get("machine_cpu")
        console.print(f"RC ACK timeout {data['ack_timeout_ms']:.0f} ms"
                      + (f"; the machine's CPUs {cpu:.0%} busy during the job"
                         if cpu is not None else ""))
    if data.get("cpu_bound"):
        console.print("[bold yellow]CPU-bound:[/] " + "; ".join(data["cpu_bound_reasons"])
                      + " - the emulator, not the emulated fabric, limited this run")


def show_plan(console: Console, plan: Any) -> None:
    """`aizone plan`: an `AddressPlan`'s switches (ports to peers) and hosts' NICs."""
    t = Table(title=f"fabric {plan.name}: switches")
    for col in ("switch", "role", "device id", "gRPC", "ports"):
        t.add_column(col)
    for s in plan.switches:
        t.add_row(s.name, s.role, str(s.device_id), s.grpc_addr,
                  ", ".join(f"{p.port}->{p.peer}" for p in s.ports))
    console.print(t)
    h = Table(title="hosts")
    for col in ("host", "NIC", "address", "gateway", "MAC", "switch port"):
        h.add_column(col)
    for host in plan.hosts:
        for n in host.nics:
            h.add_row(host.name, n.intf, n.cidr, n.gateway, n.mac, f"{n.switch}:{n.switch_port}")
    console.print(h)
