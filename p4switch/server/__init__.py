"""The P4Runtime server of p4switch (p4.v1.P4Runtime over gRPC).

Modules, by role: `service` (the P4Runtime service and the server that
hosts it), `transport` (how it reaches the wire: native gRPC C++ or grpcio),
`arbitration` (primary/backup controllers), `roles` (role configs:
stratum.P4RoleConfig), `runtime` (pipeline configs, the running Device, Write
batches and Reads), `stream` (what the StreamChannel carries: packet-in and
packet-out, digests, idle timeouts), `tableentries` (TableEntry),
`directentries` (DirectCounterEntry, DirectMeterEntry) and `entities` (every
other entity) (P4Runtime entities <-> pipeline state), `codecs` (per-table
translators), `digests` (DigestList), `idle` (IdleTimeoutNotification),
`pipeline_state` (one installed config), `devconfig` (the program file in a
device config, bare or in PI's P4DeviceConfig).

Names defined here: `P4RuntimeServer`, `TlsConfig`, `ServerError`,
`DeviceRuntime`, `P4RUNTIME_API_VERSION`.
"""

from __future__ import annotations

from p4switch.server.runtime import DeviceRuntime
from p4switch.server.service import P4RUNTIME_API_VERSION, P4RuntimeServer, ServerError, TlsConfig

__all__ = ["P4RuntimeServer", "TlsConfig", "ServerError", "DeviceRuntime", "P4RUNTIME_API_VERSION"]
