"""Experiments that reproduce the paper's findings on the emulated fabric (`aizone experiment`).

Each experiment brings its fabric up (and down), runs its grid of
collectives through the controller and the hosts' traffic agents,
repeats every point, and writes a results table (markdown and JSON with
the scale, machine, versions, target and CPU-bound flags) and plots (PNG
and SVG); `aizone experiment all` also writes `docs/results.md`.

Modules: `cli` (the command), `qp_scaling`, `pinning`, `incast`,
`failure`, `placement` (one experiment each), `session` (grid, repeats,
progress, metrics, CPU-bound verdicts), `collective` (running one
collective), `fabric` (bring-up, API, samples), `usage` (loss and CPU
between samples), `jobs` (rank orders), `sizes`, `capacity` (the measured
fabric capacity, read from `docs/results/capacity.json`), `schema`, `stats`,
`markdown` (tables and pages), `figures` (plots), `page`, `machine`.

Names exported (each loaded from its module on first use): `EXPERIMENTS`,
`Options`, `ExperimentResult`, `load_result`, `add_parser`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topologies.lazyexports import lazy_exports

if TYPE_CHECKING:
    from .cli import EXPERIMENTS, add_parser
    from .schema import ExperimentResult, load_result
    from .session import Options

__getattr__ = lazy_exports(__name__, {"EXPERIMENTS": "cli", "add_parser": "cli",
                                      "ExperimentResult": "schema", "load_result": "schema",
                                      "Options": "session"})


__all__ = ["EXPERIMENTS", "ExperimentResult", "Options", "add_parser", "load_result"]
