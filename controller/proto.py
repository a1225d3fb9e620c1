"""The generated protobuf modules the controller uses, under short fixed aliases.

Imported here and only here (finsy ships the modern P4Runtime protos), so
the rest of the controller says `from .proto import p4r`.

Names defined here: `p4r` (p4.v1.p4runtime), `p4r_grpc` (its stubs), `p4i`
(p4.config.v1.p4info), `p4d` (p4.v1.p4data), `rpc_status`, `rpc_code`.
"""

from __future__ import annotations

from finsy.proto import p4d, p4i, p4r, p4r_grpc, rpc_code, rpc_status

__all__ = ["p4d", "p4i", "p4r", "p4r_grpc", "rpc_code", "rpc_status"]
