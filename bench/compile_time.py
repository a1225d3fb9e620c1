"""Compile time of the project's P4 programs with p4switch-compile's front end.

Prints, for p4/rtsw.p4 and for the largest P4 program found under p4/ and
tests/unit/frontend/corpus/valid, the wall-clock time of preprocessing +
parsing + checking + P4Info (best of N runs, after one warm-up that also
fills Lark's grammar cache). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from p4switch.frontend import compile_file
from p4switch.p4info import build_p4info

ROOT = Path(__file__).resolve().parents[1]


def _lines(path: Path) -> int:
    return sum(1 for _ in path.open())


def _time(path: Path, runs: int) -> float:
    compile_file(path, include_dirs=[path.parent])
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        build_p4info(compile_file(path, include_dirs=[path.parent]))
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    programs = sorted(ROOT.glob("p4/*.p4")) + sorted((ROOT / "tests/unit/frontend/corpus/valid").glob("*.p4"))
    chosen = [p for p in programs if p.name == "rtsw.p4"]
    if programs:
        largest = max(programs, key=lambda p: p.stat().st_size)
        if largest not in chosen:
            chosen.append(largest)
    for p in chosen:
        secs = _time(p, args.runs)
        print(f"{p.relative_to(ROOT)}: {_lines(p)} lines, {secs * 1000:.1f} ms (best of {args.runs})")


if __name__ == "__main__":
    main()
