"""The flow-level model: Meta-scale fabrics predicted with the emulator's own routes and hash.

The same topology spec and addressing plan as the emulator, the same route
computation (`controller.routegraph.RouteGraph`) and the same program hash
(`controller.hashing`), applied to the flows of a collective with numpy:
per-link load, imbalance per tier, the bottleneck and the collective's
time under max-min fair sharing. `aizone model` (`model.cli`) runs it;
`model.sweep` runs grids of it on Ray. See docs/model.md.

Public names: `Model`, `ModelConfig`, `ModelResult`, `run_model`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topologies.lazyexports import lazy_exports

if TYPE_CHECKING:
    from .run import Model, ModelConfig, ModelResult, run_model

# Loaded on first use: `aizone` builds its parser from `model.cli` without numpy.
__getattr__ = lazy_exports(__name__, dict.fromkeys(("Model", "ModelConfig", "ModelResult", "run_model"), "run"))

__all__ = ["Model", "ModelConfig", "ModelResult", "run_model"]
