"""The ssh sessions of a fabric spread over several servers, and which hosts run elsewhere.

`ssh_base()` is the start of every ssh command aizone runs towards another
server: batch mode (never a password prompt), a connect timeout, and `-F
$AIZONE_SSH_CONFIG` when that variable names a config file (the tests'
servers use one; without it ssh reads the user's own). `remote_argv(server,
argv, env)` runs `argv` as root on `server` with `env` set there (ssh does
not carry the environment across). `remote_nodes(meta)` reads, from a run's
metadata (`run.json`, written by `topologies.cluster.ClusterNet`), the
switches and hosts that run on a server other than this machine, so run-time access
(`topologies.attach`) reaches them through ssh.

Names defined here: `SSH_CONFIG_ENV`, `ClusterError`, `ssh_base`, `remote_argv`,
`remote_nodes`, `quote`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .nodes import NetworkError

__all__ = ["SSH_CONFIG_ENV", "ClusterError", "quote", "remote_argv", "remote_nodes", "ssh_base"]

SSH_CONFIG_ENV = "AIZONE_SSH_CONFIG"
# Seconds an ssh session may take to connect before a server counts as unreachable.
_CONNECT_TIMEOUT = 10


class ClusterError(NetworkError):
    """A server of a cluster fabric cannot take part (unreachable, different install)."""


def ssh_base() -> list[str]:
    """The ssh command every cluster session starts with: batch mode, `-F $AIZONE_SSH_CONFIG`."""
    cmd = ["ssh"]
    config = os.environ.get(SSH_CONFIG_ENV)
    if config:
        if not Path(config).is_file():
            raise ClusterError(f"{SSH_CONFIG_ENV}={config}: no such ssh config file")
        cmd += ["-F", config]
    return cmd + ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={_CONNECT_TIMEOUT}"]


def quote(text: str) -> str:
    """`text` as one word of a POSIX shell command line (what ssh hands the remote shell)."""
    return "'" + text.replace("'", "'\\''") + "'"


def remote_argv(server: str, argv: list[str], env: Mapping[str, str], *,
                tty: bool = False) -> list[str]:
    """The local command that runs `argv` as root on `server` with `env` set there.

    `tty`: a pseudo-terminal on the server, so the command is hung up (SIGHUP) when
    the local ssh ends; without it the command may outlive its session.
    """
    return [*ssh_base(), *(["-tt"] if tty else []), f"root@{server}", "env",
            *(quote(f"{k}={v}") for k, v in env.items()), *(quote(a) for a in argv)]


def remote_nodes(meta: Mapping[str, Any]) -> dict[str, str]:
    """node -> server for the switches and hosts a run placed on another server than
    this machine."""
    servers = meta.get("servers") or []
    placement = meta.get("placement") or {}
    if len(servers) < 2:
        return {}
    return {node: server for node, server in placement.items() if server != servers[0]}
