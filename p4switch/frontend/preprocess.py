"""Run the C preprocessor on a P4 file and map output lines back to sources.

p4c runs cpp too; we keep cpp's line markers (no ``-P``) so that every line of
the preprocessed text maps back to (file, line) of the user's sources, which is
what error messages and IR coordinates use.

Names defined here: `Source` (preprocessed text + line map), `preprocess`,
`P4INCLUDE` (the directory holding the project's core.p4 and v1model.p4).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from p4switch import ir
from p4switch.frontend.errors import P4Error

P4INCLUDE = Path(__file__).resolve().parent.parent / "p4include"

_MARKER = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"')


@dataclass
class Source:
    """Preprocessed text; marker lines are blanked so line numbers stay put."""

    text: str
    main_file: str
    files: list[str] = field(default_factory=list)  # per output line (1-based, index 0 unused)
    lines: list[int] = field(default_factory=list)
    _cache: dict[str, list[str]] = field(default_factory=dict)

    def coord(self, line: int, col: int) -> ir.Coord:
        """Map a (line, col) of the preprocessed text to the original source."""
        if 0 < line < len(self.files):
            return ir.Coord(file=self.files[line], line=self.lines[line], col=col)
        return ir.Coord(file=self.main_file, line=line, col=col)

    def source_line(self, coord: ir.Coord) -> str:
        """The text of the original source line at `coord` ('' when unreadable)."""
        if coord.file not in self._cache:
            try:
                self._cache[coord.file] = Path(coord.file).read_text(errors="replace").splitlines()
            except OSError:
                self._cache[coord.file] = []
        lines = self._cache[coord.file]
        return lines[coord.line - 1] if 0 < coord.line <= len(lines) else ""


def _cpp() -> list[str]:
    for name in ("cpp", "gcc"):
        exe = shutil.which(name)
        if exe:
            return [exe] if name == "cpp" else [exe, "-E"]
    raise P4Error(None, "the C preprocessor (cpp) is not installed; install gcc/cpp")


def preprocess(path: str | os.PathLike[str], include_dirs: Iterable[str | os.PathLike[str]] = (),
               defines: Iterable[str] = ()) -> Source:
    """Preprocess `path` with `#include <core.p4>`/`<v1model.p4>` resolving to P4INCLUDE.

    `defines` are "NAME" or "NAME=VALUE" strings (like -D).
    """
    path = str(path)
    if not os.path.isfile(path):
        raise P4Error(ir.Coord(file=path, line=0, col=0), f"cannot open file: {path}")
    # -undef: no `linux`/`unix` macros; -nostdinc: never the system C headers.
    cmd = _cpp() + ["-x", "c", "-undef", "-nostdinc", "-w"]
    for d in include_dirs:
        cmd += ["-I", str(d)]
    cmd += ["-I", str(P4INCLUDE)]
    for d in defines:
        cmd += ["-D", str(d)]
    cmd.append(path)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        raise P4Error(None, f"cannot run the C preprocessor: {e}") from None
    if proc.returncode != 0:
        raise _cpp_error(proc.stderr, path)
    return _map_lines(proc.stdout, path)


def _cpp_error(stderr: str, path: str) -> P4Error:
    # cpp says: file:line:col: error: message
    for line in stderr.splitlines():
        m = re.match(r"^(.*?):(\d+):(\d+): (?:fatal )?error: (.*)$", line)
        if m:
            return P4Error(
                ir.Coord(file=m.group(1), line=int(m.group(2)), col=int(m.group(3))),
                m.group(4),
            )
    msg = stderr.strip().splitlines()[0] if stderr.strip() else "preprocessing failed"
    return P4Error(ir.Coord(file=path, line=0, col=0), msg)


def _map_lines(text: str, main_file: str) -> Source:
    out_lines = text.split("\n")
    files = [main_file]
    lines = [0]
    cur_file, cur_line = main_file, 1
    for i, line in enumerate(out_lines):
        m = _MARKER.match(line) if line.startswith("#") else None
        if m:
            cur_line = int(m.group(1))
            cur_file = m.group(2).encode().decode("unicode_escape")
            out_lines[i] = ""
            files.append(cur_file)
            lines.append(0)
            continue
        files.append(cur_file)
        lines.append(cur_line)
        cur_line += 1
    return Source(text="\n".join(out_lines), main_file=main_file, files=files, lines=lines)
