"""A package's re-exported names, each loaded from its module on first use (PEP 562).

`__getattr__ = lazy_exports(__name__, {"Name": "module", ...})` in a package's
`__init__.py`, beside the same names imported under `if TYPE_CHECKING:` for
the type checker: importing the package, or one module of it, then loads
nothing else, and `from package import Name` loads `package.module`. The
`aizone` command imports a few modules of several packages, and each
package's re-exports would otherwise load Mininet, scapy, numpy or finsy
before any command ran.

This module imports nothing of the project, so every package may use it.

Names defined here: `lazy_exports`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `names` maps each exported name to the module
    of the package that defines it."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - the hook Python calls by this name
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f".{module}", package), name)

    return __getattr__
