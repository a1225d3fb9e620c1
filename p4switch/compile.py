"""`p4switch-compile`: a drop-in for `p4c-bm2-ss --arch v1model` producing p4switch programs.

    p4switch-compile prog.p4 -o out.json --p4runtime-files out.p4info.txtpb [-I DIR] [-D NAME[=VAL]]
                     [--p4runtime-entries-files entries.txtpb]

The output file is the p4switch program file (`ir.to_json`, the P4Info
embedded); `--p4runtime-files` (P4Info) and `--p4runtime-entries-files`
(the tables' `entries` as a P4Runtime WriteRequest) take comma-separated
lists whose formats follow the extensions as in p4c (.txt/.txtpb text,
.json, .bin). Errors are
one line, ``file:line:col: error: message``, followed by the source line and
a caret; warnings (`P4Warning`: what compiles but p4c would warn about, or
a switch label that never matches) read ``file:line:col: warning: message``,
the source line and a caret, and do not change the status. The exit status is 1 on error, 0 on success. The file written is
read back by p4switch's loader first (`ir.from_json`), so a program whose
names p4switch would refuse at load fails here.

Names defined here: `build_parser`, `main`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from p4switch import ir
from p4switch.frontend import P4Error, P4Warning, compile_file
from p4switch.frontend.entries import build_entries, write_entries
from p4switch.p4info import P4InfoError, build_p4info, p4info_text, write_p4info

_FORMATS = (".txt", ".txtpb", ".json", ".bin")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `p4switch-compile` (p4c-bm2-ss compatible flags)."""
    p = argparse.ArgumentParser(
        prog="p4switch-compile",
        description="Compile a P4-16 v1model program for the p4switch target (p4c-bm2-ss compatible flags).",
    )
    p.add_argument("source", help="P4-16 source file")
    p.add_argument("-o", "--output", help="program file to write (default: <source>.json)")
    p.add_argument("--p4runtime-files", default="", help="comma-separated P4Info outputs (.txt, .txtpb, .json, .bin)")
    p.add_argument("--p4runtime-format", choices=("text", "json", "binary"), help="format for --p4runtime-file")
    p.add_argument("--p4runtime-file", default="", help="P4Info output (format from --p4runtime-format; deprecated in p4c)")
    p.add_argument("--p4runtime-entries-files", default="",
                   help="comma-separated outputs for the tables' static entries as a P4Runtime WriteRequest "
                        "(.txt, .txtpb, .json, .bin)")
    p.add_argument("--p4runtime-entries-file", default="",
                   help="static entries output (format from --p4runtime-format; deprecated in p4c)")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="include directory")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]", help="preprocessor define")
    p.add_argument("--std", default="p4-16", help="language (only p4-16)")
    p.add_argument("--arch", default="v1model", help="architecture (only v1model)")
    p.add_argument("--target", default="bmv2", help="target (accepted for compatibility)")
    return p


def _outputs(files: str, single: str, args: argparse.Namespace,
             parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """(path, format suffix) pairs: the deprecated single-file flag first, as p4c does."""
    outs: list[tuple[str, str]] = []
    if single:
        outs.append((single, {"text": ".txt", "json": ".json", "binary": ".bin", None: ".txt"}[args.p4runtime_format]))
    for f in (f for f in files.split(",") if f):
        if not f.endswith(_FORMATS):
            parser.error(f"{f}: unknown file kind; known suffixes are .bin, .txt, .txtpb, .json")
        outs.append((f, Path(f).suffix))
    return outs


def main(argv: list[str] | None = None) -> int:
    """Run `p4switch-compile`: compile, write the outputs; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.std not in ("p4-16", "p416"):
        parser.error(f"--std {args.std}: only p4-16 is supported")
    if args.arch != "v1model":
        parser.error(f"--arch {args.arch}: only v1model is supported")
    outs = _outputs(args.p4runtime_files, args.p4runtime_file, args, parser)
    entry_outs = _outputs(args.p4runtime_entries_files, args.p4runtime_entries_file, args, parser)
    if not os.path.isfile(args.source):
        print(f"p4switch-compile: error: {args.source}: no such file", file=sys.stderr)
        return 1
    output = args.output or str(Path(args.source).with_suffix(".json").name)
    try:
        with _printing_warnings():
            program = compile_file(args.source, args.include, args.defines)
        try:
            with _printing_warnings():
                info = build_p4info(program)
        except P4InfoError as e:
            if outs or entry_outs:
                raise
            # p4c-bm2-ss only describes the program in P4Info when asked to:
            # without P4Runtime outputs such a program still compiles
            print(f"{_where(e, args.source)}: warning: no P4Info embedded: {e.message}", file=sys.stderr)
            Path(output).write_text(_loadable(ir.to_json(program, "")))
            return 0
        Path(output).write_text(_loadable(ir.to_json(program, p4info_text(info))))
        for path, ext in outs:
            _write_as(lambda p: write_p4info(info, p), path, ext)
        if entry_outs:
            entries = build_entries(program, info)
            for path, ext in entry_outs:
                _write_as(lambda p: write_entries(entries, p), path, ext)
    except P4Error as e:
        print(str(e), file=sys.stderr)
        caret = e.caret()
        if caret:
            print(caret, file=sys.stderr)
        return 1
    except P4InfoError as e:
        print(f"{_where(e, args.source)}: error: {e.message}", file=sys.stderr)
        return 1
    except ir.ProgramFileError as e:
        print(f"p4switch-compile: error: p4switch would refuse this program: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"p4switch-compile: error: {e}", file=sys.stderr)
        return 1
    return 0


@contextlib.contextmanager
def _printing_warnings() -> Iterator[None]:
    """The program's warnings raised inside, printed to stderr as p4c prints its own (each
    one, in order): the front end's, and P4Info's (a digest it must name itself)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", P4Warning)
        try:
            yield
        finally:
            for w in caught:
                if isinstance(w.message, P4Warning):
                    print(str(w.message), file=sys.stderr)
                    caret = w.message.caret()
                    if caret:
                        print(caret, file=sys.stderr)
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _loadable(text: str) -> str:
    """The program file, once p4switch's loader has read it back: names p4c lets through but
    p4switch refuses (an `@name` that is not identifiers joined by dots) fail here, not at load."""
    ir.from_json(text)
    return text


def _where(e: P4InfoError, source: str) -> str:
    return str(e.coord) if e.coord is not None else source


def _write_as(write: Callable[[str], None], path: str, ext: str) -> None:
    """Write `path` in the format of suffix `ext` (the deprecated flags name the format apart)."""
    if path.endswith(ext):
        write(path)
        return
    tmp = tempfile.NamedTemporaryFile(suffix=ext, delete=False)
    tmp.close()
    try:
        write(tmp.name)
        Path(path).write_bytes(Path(tmp.name).read_bytes())
    finally:
        os.unlink(tmp.name)


if __name__ == "__main__":
    sys.exit(main())
