"""The errors of the emulated network: one base class, so callers catch one.

Names defined here: `NetworkError`, `SwitchStartError`.
"""

from __future__ import annotations

__all__ = ["NetworkError", "SwitchStartError"]


class NetworkError(Exception):
    """The emulated network cannot be built, run or torn down as asked."""


class SwitchStartError(NetworkError):
    """A switch process did not come up (it exited, or its gRPC port never opened)."""
