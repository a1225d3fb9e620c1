"""The protobuf modules p4switch uses, under short fixed aliases.

Everything generated comes from finsy's modern P4Runtime protos, imported here
and only here, so the rest of p4switch says `from p4switch.proto import p4r`.

Names defined here: `p4r` (p4.v1.p4runtime), `p4r_grpc` (its gRPC stubs),
`p4i` (p4.config.v1.p4info), `p4d` (p4.v1.p4data), `rpc_status`
(google.rpc.status), `rpc_code` (google.rpc.code), and `alias_p4_modules()`
(`AliasError` when it cannot).

`alias_p4_modules()` makes finsy's modules importable under the names the
P4Runtime reference bindings use (`p4.v1.p4runtime_pb2`,
`p4.config.v1.p4info_pb2`, ...), which is what p4runtime-shell imports. The
`p4runtime` package on PyPI ships generated code that does not load under
protobuf >= 4; regenerating it would register the same .proto files a second
time in the default descriptor pool (a conflict as soon as both are imported).
Aliasing the very same module objects in `sys.modules` registers nothing
twice, so finsy, p4switch and p4runtime-shell share one set of message classes.
"""

from __future__ import annotations

import importlib
import sys
import types

from finsy.proto import p4d, p4i, p4r, p4r_grpc, p4t, rpc_code, rpc_status

__all__ = ["p4d", "p4i", "p4r", "p4r_grpc", "p4t", "rpc_code", "rpc_status", "alias_p4_modules"]

# reference name -> finsy module; the `p4.*` packages are created empty around them.
_ALIASES = {
    "p4.v1.p4runtime_pb2": "finsy.proto.p4.v1.p4runtime_pb2",
    "p4.v1.p4runtime_pb2_grpc": "finsy.proto.p4.v1.p4runtime_pb2_grpc",
    "p4.v1.p4data_pb2": "finsy.proto.p4.v1.p4data_pb2",
    "p4.config.v1.p4info_pb2": "finsy.proto.p4.config.v1.p4info_pb2",
    "p4.config.v1.p4types_pb2": "finsy.proto.p4.config.v1.p4types_pb2",
    # googleapis-common-protos' status.proto differs from finsy's (file options),
    # so the pool refuses the second one: alias it to the one already loaded.
    "google.rpc.status_pb2": "finsy.proto.google.rpc.status_pb2",
}


class AliasError(ImportError):
    """Another `p4` package is already imported (its protos would clash with finsy's)."""


def alias_p4_modules() -> None:
    """Register finsy's P4Runtime modules as `p4.v1.*`, `p4.config.v1.*` and
    `google.rpc.status_pb2` (idempotent).

    `google.rpc.code_pb2` needs no alias: googleapis-common-protos provides it
    and the pool accepts the identical file finsy registers. Other
    `google.rpc` modules stay googleapis-common-protos' own.
    """
    existing = sys.modules.get("p4")
    if existing is not None and not getattr(existing, "__p4switch_alias__", False):
        raise AliasError(f"a 'p4' package is already imported from "
                         f"{getattr(existing, '__file__', '?')}; import p4switch.proto first")
    for alias, target in _ALIASES.items():
        module = importlib.import_module(target)
        if sys.modules.get(alias) is module:
            continue
        parts = alias.split(".")
        if parts[0] == "google":  # a real package: only the leaf is replaced
            importlib.import_module("google.rpc")
        for i in range(1, len(parts)):
            name = ".".join(parts[:i])
            pkg = sys.modules.get(name)
            if pkg is None:
                pkg = types.ModuleType(name, f"finsy.proto modules under the name {name!r}")
                pkg.__path__ = []  # a package, but nothing to find on disk
                pkg.__p4switch_alias__ = True  # type: ignore[attr-defined]  # our marker attribute
                sys.modules[name] = pkg
                if i > 1:
                    setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1], pkg)
        sys.modules[alias] = module
        setattr(sys.modules[".".join(parts[:-1])], parts[-1], module)
