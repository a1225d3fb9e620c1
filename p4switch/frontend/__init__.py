"""The p4switch front end: P4-16 source (v1model) -> `p4switch.ir.Program`.

Passes, in order (p4c frontend.cpp style; the first error stops):

1. `preprocess` - gcc's cpp, line markers kept so coordinates map back;
2. `parse` - Lark LALR(1) grammar `p4.lark` -> AST (`ast`);
3. `elaborate` - declarations collected, names resolved, types checked and
   inferred, constants folded (`exprs`, `calls`, `stmts`), table entry
   priorities assigned (`priorities`, p4c's EntryPriorities), `main`
   instantiated into the IR;
4. `sideeffects` - calls with out/inout arguments taken out of expressions
   in P4-16's evaluation order (p4c's SideEffectOrdering).

Set ``P4SWITCH_DUMP=ast``, ``ir`` or ``sideeffects`` (or ``preprocess``) to
print the program after that pass on stderr.

Public names: `compile_file`, `compile_source`, `P4Error`, `P4Warning` (issued
through Python's `warnings` for what compiles but deserves a word, as p4c
warns).
"""

from __future__ import annotations

import os
import pprint
import sys
from collections.abc import Iterable

from p4switch import ir
from p4switch.frontend.errors import P4Error, P4Warning
from p4switch.frontend.preprocess import Source, preprocess

__all__ = ["compile_file", "compile_source", "P4Error", "P4Warning"]


def _dump(stage: str, obj: object) -> None:
    if os.environ.get("P4SWITCH_DUMP") == stage:
        text = obj if isinstance(obj, str) else pprint.pformat(obj, width=120)
        print(f"// ---- after {stage} ----\n{text}", file=sys.stderr)


def compile_source(src: Source) -> ir.Program:
    """Parse and check preprocessed source (see `compile_file`)."""
    from p4switch.frontend.elaborate import Elaborator
    from p4switch.frontend.parse import parse_source
    from p4switch.frontend.sideeffects import order_side_effects

    try:
        _dump("preprocess", src.text)
        prog = parse_source(src)
        _dump("ast", prog)
        program = Elaborator(prog).elaborate()
        _dump("ir", program)
        program = order_side_effects(program)
        _dump("sideeffects", program)
        return program
    except P4Error as e:
        if not e.source_line and e.coord.line > 0:
            e.source_line = src.source_line(e.coord)
        raise
    except RecursionError:
        raise P4Error(ir.Coord(file=src.main_file, line=0, col=0), "program too deeply nested") from None


def compile_file(
    path: str | os.PathLike[str],
    include_dirs: Iterable[str | os.PathLike[str]] = (),
    defines: Iterable[str] = (),
) -> ir.Program:
    """Compile a P4-16 v1model program to the IR; raises `P4Error` on any error."""
    src = preprocess(path, tuple(include_dirs), tuple(defines))
    return compile_source(src)
