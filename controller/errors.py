"""The controller's exceptions: one base class, one subclass per kind of failure.

`ControllerError` is what the CLI catches and turns into a one-line error.
`SchemaError`: a name or value that the P4Info does not have or cannot hold.
`P4RuntimeError`: a gRPC call failed (carries the status code name).
`WriteError`: a Write failed for some updates; lists each by index, code and
message (model: p4runtime-shell's write exception).
`BuildError`: compiling a P4 program failed.

Names defined here: `ControllerError`, `DaemonError`, `SchemaError`, `P4RuntimeError`,
`WriteError`, `UpdateError`, `BuildError`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DaemonError",
    "BuildError",
    "ControllerError",
    "P4RuntimeError",
    "SchemaError",
    "UpdateError",
    "WriteError",
]


class ControllerError(Exception):
    """Base of every error the controller raises on purpose."""


class DaemonError(ControllerError):
    """A daemon operation that cannot be done as asked (bad name, wrong state)."""


class SchemaError(ControllerError, LookupError):
    """A P4 object, field or parameter the P4Info does not define, or a value that does not fit."""


class BuildError(ControllerError):
    """A P4 program could not be compiled (the message carries the compiler's first error)."""


class P4RuntimeError(ControllerError):
    """A P4Runtime RPC failed; `code` is the gRPC status code name (e.g. "UNAVAILABLE")."""

    def __init__(self, message: str, code: str = "UNKNOWN") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, kw_only=True)
class UpdateError:
    """The failure of one update of a batch: its index in the batch, code and message."""

    index: int
    code: str
    message: str
    what: str = ""

    def __str__(self) -> str:
        what = f" {self.what}" if self.what else ""
        return f"#{self.index}{what}: {self.code}: {self.message}"


class WriteError(P4RuntimeError):
    """Some updates of a Write failed; `errors` has one `UpdateError` per failed update."""

    def __init__(self, switch: str, total: int, errors: list[UpdateError],
                 code: str = "UNKNOWN") -> None:
        self.switch = switch
        self.total = total
        self.errors = errors
        head = f"{switch}: write failed for {len(errors)} of {total} update(s)"
        super().__init__(head + ": " + "; ".join(str(e) for e in errors[:5])
                         + (" ..." if len(errors) > 5 else ""), code)
