"""Compile the P4 program of each switch role, for the chosen target, into a build folder.

`compile_program(source, out_dir, role=..., target=...)` runs
`p4switch-compile` (target p4switch) or `p4c-bm2-ss` (target bmv2) with the
same flags (`-o`, `--p4runtime-files`), and returns the device config and
P4Info paths. Results are cached: a digest of the target, the compiler and
every `.p4` file under the program's folder is stored next to the outputs,
and an unchanged program is not compiled again (bring-up stays quick).

Names defined here: `CompiledProgram`, `compile_program`, `compile_roles`.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError

__all__ = ["CompiledProgram", "compile_program", "compile_roles"]

_P4SWITCH_COMPILE = "import sys; from p4switch.compile import main; sys.exit(main())"


@dataclass(frozen=True, kw_only=True)
class CompiledProgram:
    """A compiled program: where its device config and P4Info are."""

    role: str
    target: str
    source: Path
    device_config: Path
    p4info: Path
    cached: bool = False


def _digest(source: Path, target: str, compiler: list[str]) -> str:
    h = hashlib.sha256()
    h.update(target.encode())
    h.update(" ".join(compiler).encode())
    h.update(str(source.resolve()).encode())
    # Includes may live anywhere below the program's folder.
    for path in sorted(source.resolve().parent.rglob("*.p4")):
        h.update(str(path).encode())
        h.update(path.read_bytes())
    if target == "p4switch":
        # A new compiler version must not reuse an old output.
        import p4switch

        root = Path(p4switch.__file__).parent
        for path in sorted(list(root.rglob("*.py")) + list(root.rglob("*.lark"))):
            h.update(path.read_bytes())
    return h.hexdigest()


def _command(target: str, source: Path, out: Path, p4info: Path) -> list[str]:
    if target == "bmv2":
        exe = shutil.which("p4c-bm2-ss")
        if exe is None:
            raise BuildError("p4c-bm2-ss is not on PATH (install p4c, or use --target p4switch)")
        return [exe, "--p4v", "16", "--p4runtime-files", str(p4info), "-o", str(out), str(source)]
    return [sys.executable, "-c", _P4SWITCH_COMPILE, str(source), "-o", str(out),
            "--p4runtime-files", str(p4info)]


def compile_program(source: str | Path, out_dir: str | Path, *, role: str,
                    target: str = "p4switch") -> CompiledProgram:
    """Compile `source` into `out_dir/<role>.json` + `<role>.p4info.txtpb`; raises `BuildError`."""
    src = Path(source)
    if not src.is_file():
        raise BuildError(f"P4 file {src} not found")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / f"{role}.json"
    # .txtpb: the text-format suffix p4c asks for (it warns that .txt is deprecated).
    p4info_path = out / f"{role}.p4info.txtpb"
    stamp = out / f"{role}.digest"
    cmd = _command(target, src, json_path, p4info_path)
    digest = _digest(src, target, cmd[:1])
    result = CompiledProgram(role=role, target=target, source=src, device_config=json_path,
                             p4info=p4info_path)
    if (stamp.exists() and stamp.read_text() == digest and json_path.exists()
            and p4info_path.exists()):
        return CompiledProgram(**{**result.__dict__, "cached": True})
    stamp.unlink(missing_ok=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not json_path.exists() or not p4info_path.exists():
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        first = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
        raise BuildError(f"compiling {src} for {target} failed: {first.strip() or 'no output'}")
    stamp.write_text(digest)
    return result


def compile_roles(programs: dict[str, Path], out_dir: str | Path, *,
                  target: str) -> dict[str, CompiledProgram]:
    """`compile_program` for each role, by role."""
    return {role: compile_program(src, out_dir, role=role, target=target)
            for role, src in programs.items()}
