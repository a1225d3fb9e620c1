"""The `aizone` command: the application layer on top of the libraries.

`aizone.cli` runs one command (`main`) and maps exceptions to exit codes;
`aizone.parser` builds the command line (`build_parser`); the subcommands
are `aizone.fabric_cmds` (the fabric's life and control) and
`aizone.traffic_cmds` (collectives, traces, captures, the demo), sharing
`aizone.output` (`--json`, consoles, bring-up progress); `aizone.views`
draws what the daemon answers as rich tables; `aizone.demo` is `aizone
demo` (and `make demo`); `aizone.place` is `aizone place`; `aizone.fabric`
is the Python API (`from aizone import Fabric`), over the same local API as
the CLI. The `model`, `sweep` and `experiment` subcommands are the front
ends their packages define (`model.cli`, `model.sweep`, `experiments.cli`),
registered by `aizone.parser`. Everything below is imported from here, and
nothing below imports this package (`make lint` checks it with
import-linter's contracts). `Fabric` loads on first use, so a command does
not pay for the Python API's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topologies.lazyexports import lazy_exports

if TYPE_CHECKING:
    from .fabric import Fabric

__getattr__ = lazy_exports(__name__, {"Fabric": "fabric"})


__all__ = ["Fabric"]
