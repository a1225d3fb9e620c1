"""The protobuf modules p4switch uses, under short fixed aliases.

Everything generated comes from finsy's modern P4Runtime protos, imported here
and only here, so the rest of p4switch says `from p4switch.proto import p4r`.

Names defined here: `p4r` (p4.v1.p4runtime), `p4r_grpc` (its gRPC stubs),
`p4i` (p4.config.v1.p4info), `p4d` (p4.v1.p4data), `rpc_status`
(google.rpc.status), `rpc_code` (google.rpc.code).
"""

from __future__ import annotations

from finsy.proto import p4d, p4i, p4r, p4r_grpc, rpc_code, rpc_status

__all__ = ["p4d", "p4i", "p4r", "p4r_grpc", "rpc_code", "rpc_status"]
