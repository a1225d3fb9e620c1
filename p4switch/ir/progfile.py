"""The program file: a program (and its P4Info text) as versioned JSON.

`to_json` writes the file ``p4switch-compile`` makes; `from_json` reads one
back for ``p4switch``, checking every node, name and number with
`decode.decode` before anything is built (`ProgramFileError` when it does
not fit).

Names defined here: `IR_VERSION`, `IR_FORMAT`, `to_json`, `from_json`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from . import decode
from .declnodes import Program
from .decode import ProgramFileError
from .exprnodes import Expr

IR_VERSION = 1
IR_FORMAT = "p4switch-ir"

# The fields typed `Any`, as the program file's decoder reads them.
_ANY_FIELDS: dict[tuple[str, str], Any] = {
    ("SwitchCase", "labels"): list[str | Expr],  # action cp_names (table switch) or constants
    ("Annotation", "args"): tuple[bool | int | str, ...],
}


def _encode(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {"@": type(obj).__name__}
        for f in dataclasses.fields(obj):
            out[f.name] = _encode(getattr(obj, f.name))
        return out
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        return [_encode(x) for x in obj]
    if isinstance(obj, dict):
        return {"@dict": [[_encode(k), _encode(v)] for k, v in obj.items()]}
    return obj


def to_json(program: Program, p4info_text: str = "") -> str:
    """Serialise a program (and optionally its P4Info in text format) as a program file."""
    doc = {
        "format": IR_FORMAT,
        "version": IR_VERSION,
        "program": _encode(program),
        "p4info": p4info_text,
    }
    return json.dumps(doc, separators=(",", ":"))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def from_json(text: str | bytes) -> tuple[Program, str]:
    """Load a program file; returns (program, p4info_text).

    The file is untrusted: `decode.decode` checks every node, name and
    number before anything is built from it. Raises ProgramFileError.
    """
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ProgramFileError(f"not a p4switch program file (bad JSON: {e})") from None
    if not isinstance(doc, dict) or doc.get("format") != IR_FORMAT:
        raise ProgramFileError(
            "not a p4switch program file (compile the P4 source with p4switch-compile)"
        )
    version = doc.get("version")
    if type(version) is not int or version != IR_VERSION:
        raise ProgramFileError(
            f"program file version {version!r} is not supported "
            f"(this p4switch reads version {IR_VERSION}); recompile it"
        )
    p4info = doc.get("p4info", "")
    if type(p4info) is not str:
        raise ProgramFileError("invalid program file: p4info: not a string (P4Info in text format)")
    if "program" not in doc:
        raise ProgramFileError("invalid program file: no program")
    program = decode.decode(doc["program"], Program, _ANY_FIELDS)
    return program, p4info


__all__ = ["IR_VERSION", "IR_FORMAT", "to_json", "from_json"]
