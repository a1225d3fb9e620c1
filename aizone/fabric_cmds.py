"""The fabric's subcommands: its life, what it is, and its control through the daemon.

`up` starts a fabric and its daemon (`controller.launch.bring_up`) and
follows its progress; `down` stops it and removes leftovers; `status`,
`dashboard`, `check`, `stats`, `routes`, `mode`, `acl`, `link`, `exec`
and `shell` ask the running daemon through its local API
(`controller.client`); `topo show` and `plan` read a topology file and
need neither root nor a daemon. Each function's docstring is its
subcommand's help (`aizone.parser`); each returns the exit code
(`aizone.output`) and leaves exceptions to `aizone.cli.main`.

Names defined here: `cmd_up`, `cmd_down`, `cmd_status`, `cmd_dashboard`,
`cmd_check`, `cmd_stats`, `cmd_routes`, `cmd_mode`, `cmd_acl`,
`acl_match`, `cmd_link`, `cmd_exec`, `cmd_shell`, `cmd_topo`, `cmd_plan`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live

from controller.access import token_path
from controller.client import ApiClient, ApiError, NotRunning
from topologies.pki import FabricPki
from topologies.runstate import PKI_DIR, state_dir

from .output import EXIT_FAIL, EXIT_OK, UpProgress, dashboard_url, emit_json, err_console
from .views import (
    show_acl,
    show_check,
    show_history,
    show_link,
    show_mode,
    show_plan,
    show_routes,
    show_stats,
    show_status,
    stats_table,
)

__all__ = ["acl_match", "cmd_acl", "cmd_check", "cmd_dashboard", "cmd_down", "cmd_exec",
           "cmd_link", "cmd_mode", "cmd_plan", "cmd_routes", "cmd_shell", "cmd_stats",
           "cmd_status", "cmd_topo", "cmd_up"]


# --- the fabric's life ------------------------------------------------------------


def cmd_up(args: argparse.Namespace) -> int:
    """Start the fabric of TOPO and its controller daemon; return once it is up.

    Shows a progress bar per switch, then the API address (and the
    dashboard's URL). The daemon keeps the fabric until `aizone down`. When a
    fabric is still running without its daemon (the daemon was killed), `up`
    (with no topology, or the same one) starts a daemon that re-attaches to
    it and reconciles every switch.
    """
    from controller.launch import DaemonOptions, bring_up, stop_daemon, will_attach

    topology = args.topo or args.topology
    console = err_console()
    options = DaemonOptions(
        topology=Path(topology) if topology else None, target=args.target, mode=args.mode,
        pfc=args.pfc, build_dir=args.build_dir, api_host=args.api_host,
        api_port=args.api_port, api_allow_hosts=tuple(args.api_allow_host),
        switch_log=args.switch_log, pcap_dir=args.pcap, servers=args.servers)
    attach = will_attach(options.topology)
    with UpProgress(console, quiet=args.json, attach=attach) as view:
        child, info = bring_up(options, view.on_event)
    api = info.get("api") or {}
    # The dashboard's URL carries the token once (the page then keeps it in a cookie):
    # printed to the person who started the fabric, never logged by the daemon.
    page = dashboard_url(api)
    if args.json:
        print(json.dumps({**info, "dashboard": page}))
    else:
        console.print(f"[bold green]fabric {info.get('name')!r} is up[/] on {info.get('target')},"
                      f" mode {info.get('mode')}: API {api.get('url')}api/v1 "
                      f"(unix socket {api.get('unix')}, token in {token_path()}), "
                      f"dashboard {page}")
        console.print("next: aizone check | aizone stats --watch | aizone down")
    if args.foreground:
        try:
            child.wait()
        except KeyboardInterrupt:
            stop_daemon(child.pid)
            raise
    return EXIT_OK


def cmd_down(args: argparse.Namespace) -> int:
    """Stop the running fabric (if any) and remove leftovers of crashed runs.

    Asks the daemon to stop (it tears its network down), then removes only
    what aizone made and may have left: its processes (found by the
    AIZONE_RUN marker), host namespaces, interfaces, the state file; for a
    fabric over several servers whose daemon died, what it left on each of
    them too (exit 1, naming the server, when one cannot be reached); with
    --servers and no record left (the controller's machine crashed), every
    leftover of aizone on those servers.
    """
    from controller.launch import tear_down

    data = tear_down(tuple(getattr(args, "servers", ()) or ()))
    stopped = data["stopped_daemon"]
    if emit_json(args, data):
        return EXIT_OK if not any(data["servers"].values()) else EXIT_FAIL
    parts = []
    if stopped:
        parts.append(f"stopped the fabric's daemon (pid {stopped})")
    if data["stopped_owner"]:
        parts.append(f"stopped the running fabric (pid {data['stopped_owner']})")
    if data["killed"]:
        parts.append(f"ended {len(data['killed'])} leftover process(es)")
    if data["interfaces"]:
        parts.append(f"deleted {len(data['interfaces'])} leftover interface(s)")
    if data["state_removed"] and not parts:
        parts.append("removed the state file")
    cleaned = [s for s, why in data["servers"].items() if not why]
    if cleaned:
        parts.append(f"ended what was left on {', '.join(cleaned)}")
    print("aizone down: " + (", ".join(parts) if parts else "nothing was running"))
    failed = {s: why for s, why in data["servers"].items() if why}
    for why in failed.values():
        print(f"aizone down: {why}: run `aizone down` again once it answers", file=sys.stderr)
    return EXIT_OK if not failed else EXIT_FAIL


# --- what runs, and its control through the daemon -------------------------------


def cmd_status(args: argparse.Namespace) -> int:
    """The running fabric: switches (alive, session, last reconcile), hosts, links, failures."""
    with ApiClient() as c:
        try:
            st = c.get("/status")
        except NotRunning:
            from controller.launch import orphan

            left = orphan()
            data = {"running": False, "orphan": left.name if left else None}
            if not emit_json(args, data):
                print("aizone: no fabric is running" + (
                    f" (fabric {left.name!r} runs without its daemon: `aizone up` re-attaches,"
                    " `aizone down` removes it)" if left else ""))
            return EXIT_OK
    st["running"] = True
    if not emit_json(args, st):
        show_status(Console(highlight=False), st)
    return EXIT_OK


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Print the dashboard's URL, with the fabric's token (root only: it is a key).

    Open it in a browser on this machine (or through an SSH tunnel to it):
    the page keeps the token in a cookie and drops it from the address bar.
    """
    with ApiClient() as c:
        st = c.get("/status")
    url = dashboard_url(st.get("api") or {})
    if args.json:
        print(json.dumps({"dashboard": url}))
    else:
        print(url)
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Every host pair: ping (each NIC) and one RoCEv2 RDMA WRITE; exit 1 with the failing pairs."""
    with ApiClient() as c:
        with err_console().status("checking every host pair ..."):
            data = c.post("/check", {"roce": not args.no_roce})
    if not emit_json(args, data):
        show_check(Console(highlight=False), data)
    return EXIT_OK if data["ok"] else EXIT_FAIL


def cmd_stats(args: argparse.Namespace) -> int:
    """Link load, queue depth, PFC pauses, ECN marks, drops and uplink imbalance per tier.

    From the switches' counters over the daemon's polling interval (1 s).
    With --watch, updates until Ctrl-C.
    """
    with ApiClient() as c:
        if not args.watch:
            snap = c.get("/stats")
            if not emit_json(args, snap):
                show_stats(Console(highlight=False), snap, hosts=args.hosts)
            return EXIT_OK
        console = Console(highlight=False)
        snap = c.get("/stats")
        if args.json:
            for _kind, event in c.events({"stats"}):
                print(json.dumps(event["data"]), flush=True)
            return EXIT_OK
        with Live(stats_table(snap, hosts=args.hosts) if snap else "waiting for statistics",
                  console=console, refresh_per_second=2) as live:
            for _kind, event in c.events({"stats"}):
                live.update(stats_table(event["data"], hosts=args.hosts))
    return EXIT_OK


def cmd_routes(args: argparse.Namespace) -> int:
    """Entries read back over P4Runtime (all switches, or SWITCH), and whether they equal the intent."""
    if args.history:
        with ApiClient() as c:
            data = c.get(f"/routes/history/{args.history}", limit=args.limit)
        if not emit_json(args, data):
            show_history(Console(highlight=False), data)
        return EXIT_OK
    with ApiClient() as c:
        data = c.get("/routes", switch=args.switch)
    if not emit_json(args, data):
        show_routes(Console(highlight=False), data)
    return EXIT_OK


def cmd_mode(args: argparse.Namespace) -> int:
    """Switch the routing mode (pin | ecmp | eecmp) on the live fabric, make-before-break."""
    with ApiClient() as c:
        data = c.post("/mode", {"mode": args.mode})
    if not emit_json(args, data):
        show_mode(Console(highlight=False), data)
    return EXIT_OK


def acl_match(text: str) -> tuple[str, list[int]]:
    """argparse type of an ACL match: FIELD=VALUE or FIELD=VALUE&&&MASK -> (field, [value, mask])
    (mask -1: the whole field)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r}: give FIELD=VALUE or FIELD=VALUE&&&MASK")
    v, _, m = value.partition("&&&")
    try:
        return name, [int(v, 0), int(m, 0)] if m else [int(v, 0), -1]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: values are numbers (0x.. for hex)") from None


def cmd_acl(args: argparse.Namespace) -> int:
    """Add ACL rules to a switch (drop, permit or punt matching packets), clear them, or list them.

    `aizone acl rtsw1 drop ingress_port=1 l4_dst_port=4791` drops the RoCEv2
    packets that enter rtsw1 on port 1 until `aizone acl rtsw1 clear`; a
    value may carry a mask (bth_psn=0x10&&&0xff). Fields: ingress_port,
    eth_dst, eth_type, ip_proto, l4_dst_port, bth_dst_qp, bth_psn. The
    rules are part of the controller's intent (written as a diff, read back
    by `aizone routes`) while the daemon runs. Without SWITCH: the rules.
    """
    with ApiClient() as c:
        current = c.get("/acl")
        if args.switch is None:
            data: Any = current
            if not emit_json(args, data):
                console = Console(highlight=False)
                for sw, listed in data.items():
                    for r in listed:
                        console.print(f"{sw}: {r['text']}", markup=False)
                if not data:
                    console.print("no ACL rules added")
            return EXIT_OK
        if args.action == "clear":
            rules: list[dict[str, Any]] = []
        elif args.action is None or not args.match:
            raise ApiError("give drop, permit or punt and at least one FIELD=VALUE, or clear",
                           400)
        else:
            from controller.intent import ACL_FIELDS

            match: dict[str, Any] = {}
            for name, (value, mask) in args.match:
                full = (1 << ACL_FIELDS.get(name, 1)) - 1
                match[name] = [value, full if mask == -1 else mask]
            keep = [{"action": r["action"], "priority": r["priority"], "match": r["match"]}
                    for r in current.get(args.switch, [])]
            rules = [*keep, {"action": args.action, "priority": args.priority, "match": match}]
        data = c.put(f"/acl/{args.switch}", {"rules": rules})
    if not emit_json(args, data):
        show_acl(Console(highlight=False), data)
    return EXIT_OK


def cmd_link(args: argparse.Namespace) -> int:
    """Fail (down) or restore (up) the link between A and B; prints the reconvergence time.

    With --silent the link dies without the controller being told (its
    ports keep their carrier and drop everything): the link probes find it,
    and `aizone status` says after how long.
    """
    with ApiClient() as c:
        data = c.post("/link", {"a": args.a, "b": args.b, "index": args.index,
                                "up": args.state == "up", "silent": args.silent})
    if not emit_json(args, data):
        show_link(Console(highlight=False), data)
    return EXIT_OK


def cmd_exec(args: argparse.Namespace) -> int:
    """Run CMD inside HOST's network namespace; its output and exit status are CMD's."""
    argv = list(args.cmd)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise ApiError("give a command to run, e.g. `aizone exec h1 ip addr`", 400)
    with ApiClient() as c:
        data = c.post("/exec", {"host": args.host, "argv": argv, "timeout": args.timeout})
    if emit_json(args, data):
        return EXIT_OK
    sys.stdout.write(data["stdout"])
    sys.stderr.write(data["stderr"])
    return int(data["returncode"]) if data["returncode"] is not None else EXIT_FAIL


def cmd_shell(args: argparse.Namespace) -> int:
    """p4runtime-shell on SWITCH, attached as a secondary controller (reads; the daemon stays primary)."""
    with ApiClient() as c:
        st = c.get("/status")
    sw = next((s for s in st.get("switches", []) if s["name"] == args.switch), None)
    if sw is None:
        raise ApiError(f"no switch named {args.switch!r} in fabric {st.get('name')}", 400)
    argv = [sys.executable, "-m", "p4switch.server.p4rt_shell", "--grpc-addr", sw["grpc_addr"],
            "--device-id", str(sw["device_id"]), "--election-id", "0,1"]
    pki = FabricPki(directory=state_dir() / PKI_DIR)
    if pki.exists():  # the switches take only clients with the fabric's certificate
        argv += ["--ssl", "--cacert", str(pki.ca), "--cert", str(pki.client_cert),
                 "--private-key", str(pki.client_key)]
    if args.print_command:
        print(" ".join(argv))
        return EXIT_OK
    os.execv(sys.executable, argv)
    return EXIT_FAIL  # not reached


# --- a topology file: no root, no daemon ------------------------------------------


def cmd_topo(args: argparse.Namespace) -> int:
    """Show TOPO's tiers, counts, oversubscription per tier and addressing (no root needed)."""
    from topologies.addressing import plan_addresses
    from topologies.spec import load_spec
    from topologies.summary import render_summary, summarize

    spec = load_spec(args.topo)
    if getattr(args, "servers", None) is not None:
        from .serverview import show_placement

        return show_placement(args, spec)
    summary = summarize(spec, plan_addresses(spec))
    if not emit_json(args, summary):
        render_summary(Console(highlight=False), summary)
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    """Print the addressing plan of --topology: switches, ports, hosts, addresses."""
    from topologies.addressing import plan_addresses
    from topologies.spec import load_spec

    plan = plan_addresses(load_spec(args.topology))
    if args.json:
        from dataclasses import asdict

        print(json.dumps(asdict(plan), default=str))
    else:
        show_plan(Console(highlight=False), plan)
    return EXIT_OK
