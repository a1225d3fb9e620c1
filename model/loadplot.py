"""Plots of model results: link-load histograms per tier and imbalance per routing mode.

`plot_results(results, path)` draws one figure: a histogram of the bytes
per step on the directed links of each loaded tier (for the first result),
and a bar chart of max/mean per tier for every result given (one bar group
per tier, one bar per mode), and writes it as PNG and SVG (`path` with
each suffix). Uses matplotlib's Agg backend (no display needed).

Names defined here: `plot_results`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .forward import TIERS
from .run import ModelResult

__all__ = ["plot_results"]


def plot_results(results: Sequence[ModelResult], path: str | Path) -> list[Path]:
    """Write the figure as PNG and SVG next to `path`; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    first = results[0]
    tiers = [t for t in TIERS if first.tier(t).max_bytes > 0]
    fig, axes = plt.subplots(1, len(tiers) + 1, figsize=(4 * (len(tiers) + 1), 3.6),
                             squeeze=False)
    for ax, name in zip(axes[0], tiers, strict=False):
        sel = first.links.tier == TIERS.index(name)
        loads = first.loads[sel]
        loads = loads[loads > 0] / 2**20
        ax.hist(loads, bins=min(40, max(5, len(np.unique(loads)))), color="tab:blue")
        st = first.tier(name)
        ax.set_title(f"{name}: max/mean {st.imbalance:.2f}", fontsize=9)
        ax.set_xlabel("MiB per step on a link")
        ax.set_ylabel("links")
    ax = axes[0][-1]
    width = 0.8 / max(1, len(results))
    x = np.arange(len(tiers))
    for i, r in enumerate(results):
        ax.bar(x + i * width, [r.tier(t).imbalance for t in tiers], width,
               label=f"{r.config.mode} ({r.time_s * 1e3:.1f} ms)")
    ax.set_xticks(x + width * (len(results) - 1) / 2, [t.replace(" ", "\n") for t in tiers],
                  fontsize=8)
    ax.set_ylabel("max / mean")
    ax.set_title("imbalance per mode (estimated time)", fontsize=9)
    ax.legend(fontsize=8)
    c = first.config
    fig.suptitle(f"{first.topology}: {c.pattern} over {first.ranks} ranks, {c.placement}, "
                 f"{c.qps} QP(s) {c.strategy}" + (f", {len(c.failed)} link(s) down"
                                                  if c.failed else ""), fontsize=10)
    fig.tight_layout()
    base = Path(path)
    out = []
    for suffix in (".png", ".svg"):
        target = base.with_suffix(suffix)
        target.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(target, dpi=120)
        out.append(target)
    plt.close(fig)
    return out
