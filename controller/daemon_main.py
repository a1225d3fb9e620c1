"""The controller daemon's process: `python -m controller.daemon_main`, what `aizone up` starts.

`build_parser` is its command line (one option per `DaemonConfig` field);
`main` sets up the process (umask 0077, the state directory, the daemon
log), runs one `controller.daemon.Daemon` until its fabric is down and
maps what went wrong to an exit code and one line on stderr: 0, 1 when
the fabric failed, 2 without a topology. `controller.launch` builds the
command line and spawns it.

Names defined here: `build_parser`, `main`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from topologies.errors import NetworkError
from topologies.runstate import state_dir
from topologies.spec import Mode, SpecError, Target
from topologies.targets import Pfc

from .clocks import CLOCK_INTERVAL_S
from .daemon import DEFAULT_API_PORT, Daemon, DaemonConfig, one_line
from .errors import ControllerError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The daemon's command line (`python -m controller.daemon_main`; see `DaemonConfig`)."""
    p = argparse.ArgumentParser(prog="python -m controller.daemon_main",
                                description="the aizone controller daemon (started by `aizone up`)")
    p.add_argument("--topology", type=Path)
    p.add_argument("--target", type=Target, choices=list(Target), default=Target.AUTO)
    p.add_argument("--mode", type=Mode, choices=list(Mode))
    p.add_argument("--pfc", type=Pfc, choices=list(Pfc), default=None,
                   help="where PFC runs: native (p4switch's traffic manager) or program (the "
                        "role programs' own); default: the target's")
    p.add_argument("--build-dir", type=Path, default=Path(os.environ.get("AIZONE_BUILD_DIR",
                                                                          "build")))
    p.add_argument("--api-host", default="127.0.0.1")
    p.add_argument("--api-port", type=int, default=DEFAULT_API_PORT)
    p.add_argument("--api-allow-host", action="append", default=[], metavar="NAME",
                   help="another Host name the TCP API answers to (with --api-host)")
    p.add_argument("--attach", action="store_true")
    # The defaults are DaemonConfig's, written once there (experiments.usage reads them too).
    p.add_argument("--stats-interval", type=float, default=DaemonConfig.stats_interval,
                   help="seconds between statistics snapshots")
    p.add_argument("--probe-interval", type=float, default=DaemonConfig.probe_interval,
                   help="seconds between link probe rounds")
    p.add_argument("--probe-dead-after", type=float, default=DaemonConfig.probe_dead_after,
                   help="a link whose probes have not arrived for this long is down")
    p.add_argument("--clock-interval", type=float, default=CLOCK_INTERVAL_S,
                   help="seconds between readings of the other servers' clocks")
    p.add_argument("--switch-log", action="store_true")
    p.add_argument("--pcap", type=Path, default=None, metavar="DIR")
    p.add_argument("--servers", default="", metavar="A,B,...")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the daemon until its fabric is down; the exit code (1 failed, 2 no topology)."""
    args = build_parser().parse_args(argv)
    if not args.attach and args.topology is None:
        print("aizone daemon: error: --topology is required (or --attach)", file=sys.stderr)
        return 2
    # Everything the daemon (and what it starts: switches, host shells, agents) creates is
    # its own: sockets, logs, run.json and the token are never readable by another user.
    os.umask(0o077)
    directory = state_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    logging.basicConfig(filename=directory / "daemon.log", filemode="a" if args.attach else "w",
                        level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("finsy").setLevel(logging.INFO)
    config = DaemonConfig(topology=args.topology, target=args.target, mode=args.mode,
                          pfc=args.pfc,
                          build_dir=args.build_dir, api_host=args.api_host,
                          api_port=args.api_port, api_extra_hosts=tuple(args.api_allow_host),
                          attach=args.attach,
                          stats_interval=args.stats_interval, probe_interval=args.probe_interval,
                          probe_dead_after=args.probe_dead_after, log_console=args.switch_log,
                          clock_interval=args.clock_interval,
                          pcap_dir=args.pcap.resolve() if args.pcap else None,
                          servers=tuple(s for s in args.servers.split(",") if s))
    try:
        return asyncio.run(Daemon(config).run())
    except (SpecError, NetworkError, ControllerError, OSError) as exc:
        print(f"aizone daemon: error: {one_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    code = main()
    # Everything the daemon started is stopped by now; the interpreter's own teardown
    # of its heap (the intent, the sessions' protobufs) would hold `aizone down` for seconds.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

