"""Device configs as clients send them: a p4switch program file, bare or in PI's P4DeviceConfig.

`ForwardingPipelineConfig.p4_device_config` holds target-specific bytes;
p4switch's are its program file (the JSON `p4switch-compile` writes). Clients
written for BMv2's PI server, such as older releases of the p4lang tutorials'
`p4runtime_lib`, wrap the target's file in PI's `p4.tmp.P4DeviceConfig`
(p4lang/PI ``proto/p4/tmp/p4config.proto``) and send it serialised::

    message P4DeviceConfig {
      message Extras { map<string, string> kv = 1; }
      bool reassign = 1;
      Extras extras = 2;
      bytes device_data = 3;
    }

`P4DeviceConfig` is that message class, built from its descriptor in a
private pool: the `p4runtime` package that would generate it does not load
under the protobuf p4switch runs on, and a private pool cannot clash with
another copy of the file in the default one.

`program_bytes` gives the program file in a device config: the bytes
themselves when they are JSON (the first byte after any whitespace is ``{``,
which no P4DeviceConfig starts with), else the `device_data` of the
P4DeviceConfig they are, which must be JSON in turn. `reassign` and `extras`
(BMv2 start-up options) mean nothing to p4switch and are ignored.

Names defined here: `P4DeviceConfig`, `DeviceConfigError`, `program_bytes`.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError


def _p4config_proto() -> descriptor_pb2.FileDescriptorProto:
    """p4/tmp/p4config.proto as a FileDescriptorProto."""
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="p4/tmp/p4config.proto", package="p4.tmp", syntax="proto3")
    msg = file.message_type.add(name="P4DeviceConfig")
    extras = msg.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, json_name="key")
    entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, json_name="value")
    extras.field.add(name="kv", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, json_name="kv",
                     type_name=".p4.tmp.P4DeviceConfig.Extras.KvEntry")
    msg.field.add(name="reassign", number=1, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL, json_name="reassign")
    msg.field.add(name="extras", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, json_name="extras",
                  type_name=".p4.tmp.P4DeviceConfig.Extras")
    msg.field.add(name="device_data", number=3, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL,
                  json_name="deviceData")
    return file


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_p4config_proto())
P4DeviceConfig: Any = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("p4.tmp.P4DeviceConfig"))


class DeviceConfigError(ValueError):
    """A device config that is neither a program file nor a P4DeviceConfig holding one."""


def _is_json(data: bytes) -> bool:
    return data.lstrip(b" \t\r\n")[:1] == b"{"


def program_bytes(device_config: bytes) -> bytes:
    """The p4switch program file in `device_config` (bare, or a P4DeviceConfig's device_data)."""
    if _is_json(device_config):
        return device_config
    try:
        wrapper = P4DeviceConfig.FromString(device_config)
    except DecodeError:
        raise DeviceConfigError(
            "not a p4switch program file (neither JSON nor a p4.tmp.P4DeviceConfig holding one)") from None
    data: bytes = wrapper.device_data
    if not data:
        raise DeviceConfigError("not a p4switch program file (a p4.tmp.P4DeviceConfig without device_data)")
    if not _is_json(data):
        raise DeviceConfigError(
            "not a p4switch program file (the device_data of its p4.tmp.P4DeviceConfig is not JSON)")
    return data


__all__ = ["P4DeviceConfig", "DeviceConfigError", "program_bytes"]
