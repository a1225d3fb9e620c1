"""`aizone`: the command line for people (rich tables, progress) and programs (`--json`).

The CLI holds no state: `up` starts the controller daemon
(`controller.daemon_main`) and follows its progress; every other command asks
the daemon through its local API (`controller.client`). Subcommands (each
one's docstring is its help):

  up TOPO         start a fabric and its daemon; returns when it is up
  down            stop the running fabric and remove leftovers of crashed runs
  status          the fabric, its switches, sessions, hosts and links
  dashboard       the dashboard's URL, with the fabric's token
  check           all host pairs: ping and one RoCEv2 transfer
  stats           link load, queues, PFC, ECN, drops, imbalance per tier
  routes [SW]     entries read back from the switches (--history: the writes sent)
  mode MODE       switch pin | ecmp | eecmp on the live fabric
  acl [SW ...]    add (drop, permit, punt), clear or list a switch's ACL rules
  link down|up    fail or restore a link
  exec HOST CMD   run a command in a host
  run PATTERN     a collective on the hosts' traffic agents
  capture WHERE   packets of a link, switch port or host NIC, to a pcap file
  trace SRC DST   a flow's path, predicted from the entries read back, then sent
  shell SW        p4runtime-shell on a switch, as a secondary controller
  topo show TOPO  a topology's tiers, counts, oversubscription (no root)
  plan            a topology's addressing plan (no root)
  place           where a job's ranks would go, and each strategy's cross-zone bytes
  model TOPO      the flow-level model of a topology
  sweep TOPO      sweeps of the model: modes, QPs, placements, failure sets
  experiment NAME bring a fabric up, run an experiment's grid, write its results
  demo            bring up, check, a ring AllReduce, counters; always tears down

The parser is built by `aizone.parser.build_parser`; the subcommands live in
`aizone.fabric_cmds` (the fabric's life and control) and `aizone.traffic_cmds`
(collectives, traces, captures, the demo); what they share for output in
`aizone.output`. This module runs one command and maps its exceptions to
exit codes.

Exit codes: 0 success; 1 a failure at run time (network, switch,
P4Runtime, compiler, a failed check); 2 bad input (usage, topology file, P4
file, a name the fabric does not have); 130 interrupted. Errors are one
line on stderr, `aizone: error: ...`. Only this module maps exceptions to
exit codes.

Names defined here: `main`.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from controller.client import ApiError
from controller.errors import BuildError, ControllerError
from topologies.errors import NetworkError
from topologies.spec import SpecError

from .output import EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED, PROG, fail
from .parser import build_parser, validate

__all__ = ["main"]


class _Interrupted(KeyboardInterrupt):
    """SIGTERM/SIGHUP turned into the same unwinding as Ctrl-C."""


def _on_signal(signum: int, _frame: object) -> None:
    """SIGTERM and SIGHUP unwind as Ctrl-C does (the fabric a command started is stopped)."""
    raise _Interrupted(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `aizone` command; the exit code (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    validate(parser, args)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    try:
        return int(args.func(args))
    except SpecError as exc:
        return fail(str(exc), EXIT_INPUT)
    except ApiError as exc:
        return fail(str(exc), EXIT_INPUT if 400 <= exc.status < 500 and exc.status != 409
                    else EXIT_FAIL)
    except BuildError as exc:
        return fail(str(exc), EXIT_FAIL)
    except (NetworkError, ControllerError) as exc:
        return fail(str(exc), EXIT_FAIL)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
