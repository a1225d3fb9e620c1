"""What a job can ask for by name: the collective patterns and the placement strategies.

`controller.placement` places jobs with these; the `aizone` command offers
them as choices (`aizone place`, `model`, `sweep`) without loading the
placement itself (networkx, numpy).

Names defined here: `PATTERNS`, `STRATEGIES`.
"""

from __future__ import annotations

__all__ = ["PATTERNS", "STRATEGIES"]

PATTERNS = ("ring", "alltoall", "incast", "permutation")
"""The collectives a placement weighs (`controller.placement`'s docstring has their bytes)."""

STRATEGIES = ("mincut", "packed", "random")
"""Where a job's ranks go: the paper's minimum cut, the first NICs in plan order, or random."""
