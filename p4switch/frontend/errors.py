"""The front end's one exception: `P4Error`, a source error with a `Coord`.

`str(e)` reads ``file:line:col: error: message`` (pycparser/p4c style); the
file is the user's original file (mapped back through cpp's line markers).
`P4Error.source_line` holds the text of that line when known, so the CLI can
print it with a caret under the column. `unsupported` and `user_extern`
build the errors for constructs outside the supported subset.

`P4Warning` is what the front end says about a program it compiles anyway,
where p4c compiles it too (an unknown table property, a switch label that
can never match ...): `warn` issues one through Python's `warnings`, so the
library prints nothing itself; `p4switch-compile` shows each as
``file:line:col: warning: message``, and callers may record or silence them.
"""

from __future__ import annotations

import warnings

from p4switch import ir


class P4Error(Exception):
    """A P4 program the front end rejects (syntax, names, types, unsupported)."""

    def __init__(self, coord: ir.Coord | None, message: str, source_line: str = "") -> None:
        self.coord = coord or ir.NO_COORD
        self.message = message
        self.source_line = source_line
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.coord}: error: {self.message}"

    def caret(self) -> str:
        """The source line and a caret under the column, or '' when unknown."""
        return _caret(self.source_line, self.coord)


def _caret(source_line: str, coord: ir.Coord) -> str:
    if not source_line:
        return ""
    line = source_line.rstrip("\n")
    pad = "".join("\t" if c == "\t" else " " for c in line[: max(coord.col - 1, 0)])
    return f"{line}\n{pad}^"


class P4Warning(UserWarning):
    """A questionable construct that compiles (as on p4c); `str()` reads ``file:line:col: warning: ...``."""

    def __init__(self, coord: ir.Coord | None, message: str) -> None:
        self.coord = coord or ir.NO_COORD
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.coord}: warning: {self.message}"

    def caret(self) -> str:
        """The source line (read from the coordinate's file) and a caret under the column, or ''."""
        try:
            with open(self.coord.file, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return ""
        ok = 0 < self.coord.line <= len(lines)
        return _caret(lines[self.coord.line - 1] if ok else "", self.coord)


def warn(coord: ir.Coord | None, message: str) -> None:
    """Issue a `P4Warning` at `coord` (stacklevel points past the front end: the warning is the program's)."""
    warnings.warn(P4Warning(coord, message), stacklevel=2)


def unsupported(coord: ir.Coord | None, what: str) -> P4Error:
    """The error for a construct outside the supported subset."""
    return P4Error(coord, f"{what} is not supported")


def user_extern(coord: ir.Coord | None, name: str, what: str = "extern function") -> P4Error:
    """The error for an extern the program declares itself: only v1model's run (on BMv2 too)."""
    return P4Error(coord, f"{name}: an {what} declared by the program is not supported: p4switch, like "
                          "BMv2, runs only the externs of core.p4 and v1model.p4")
