"""p4switch: aizone's built-in P4 target, a pure-Python v1model switch.

The few names users need, imported lazily (so `import p4switch` stays cheap
and one part can be used without the others):

* `compile_file(path) -> ir.Program` (front end, `p4switch.frontend`) and
  `build_p4info(program)` (`p4switch.p4info`);
* `Switch` (the v1model pipeline, `p4switch.pipeline`);
* `P4RuntimeServer`, `TlsConfig`, `ServerError` (`p4switch.server`);
* `RawPorts`, `MemoryPorts`, `PortError` (`p4switch.io`);
* `main` (the `p4switch` command line, `p4switch.__main__`).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "compile_file": "p4switch.frontend",
    "build_p4info": "p4switch.p4info",
    "Switch": "p4switch.pipeline",
    "P4RuntimeServer": "p4switch.server",
    "TlsConfig": "p4switch.server",
    "ServerError": "p4switch.server",
    "RawPorts": "p4switch.io",
    "MemoryPorts": "p4switch.io",
    "PortError": "p4switch.io",
    "main": "p4switch.__main__",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'p4switch' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
