"""Draw the project's import graph from the code: docs/img/imports.png (and .svg).

    .venv/bin/python docs/import_graph.py

The graph is grimp's (the one import-linter checks in `make lint`): every
import between the project's packages, the controller split into its pure
fabric core and the daemon side. Boxes are drawn in the layers of the
import contract (pyproject.toml `[tool.importlinter]`), top to bottom, so
an arrow that points up would be a broken contract; each arrow is labelled
with how many imports it stands for. It also prints the edges.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path

import grimp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# The fabric core is what pyproject.toml's "fabric core" contract holds pure, read from
# there so that the picture and the check cannot disagree.
CORE = {m.split(".", 1)[1]
        for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
            "contracts"] if c["name"].startswith("the fabric core")
        for m in c["source_modules"] if m.startswith("controller.")}


def node_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "controller":
        if len(parts) == 1 or parts[1] in CORE:
            return "controller (core)"
        return "controller (daemon)"
    return parts[0]


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c["layers"] for c in config["contracts"] if c["type"] == "layers")
    graph = grimp.build_graph(*config["root_packages"], exclude_type_checking_imports=True)
    edges: Counter[tuple[str, str]] = Counter()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            a, b = node_of(importer), node_of(imported)
            if a != b:
                edges[(a, b)] += 1
    rows = [n for layer in layers for n in (["controller (daemon)", "controller (core)"]
                                            if layer == "controller" else [layer])]
    # Staggered, so that arrows between rows far apart do not run over the boxes between.
    xs = [0.0, -0.7, 0.7, -0.4, 0.6, -0.8, 0.0, 0.0]
    pos = {n: (xs[i % len(xs)], -i) for i, n in enumerate(rows)}
    fig, ax = plt.subplots(figsize=(9, 9))
    for (a, b), n in sorted(edges.items()):
        (x1, y1), (x2, y2) = pos[a], pos[b]
        up = y2 > y1
        ax.annotate("", xy=(x2, y2), xytext=(x1, y1),
                    arrowprops={"arrowstyle": "-|>", "color": "red" if up else "#4a5a80",
                                "connectionstyle": f"arc3,rad={0.3 if x1 == x2 else 0.05}",
                                "shrinkA": 16, "shrinkB": 16, "lw": 1.0})
        ax.text(x1 + (x2 - x1) * 0.3 + (0.1 if x1 == x2 else 0), y1 + (y2 - y1) * 0.3, str(n),
                fontsize=7, color="#4a5a80",
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
        print(f"{a:22} -> {b:22} {n:4d} imports{'  (UP: broken layering)' if up else ''}")
    for n, (x, y) in pos.items():
        ax.text(x, y, n, ha="center", va="center", fontsize=10,
                bbox={"boxstyle": "round,pad=0.4", "fc": "#eef2fb", "ec": "#4a5a80"})
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-len(rows) + 0.4, 0.6)
    ax.axis("off")
    ax.set_title("aizone's imports between packages, from the code (arrows point down only)")
    out = ROOT / "docs" / "img" / "imports"
    fig.savefig(out.with_suffix(".png"), dpi=110, bbox_inches="tight")
    fig.savefig(out.with_suffix(".svg"), bbox_inches="tight")
    print(f"wrote {out}.png and .svg")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
