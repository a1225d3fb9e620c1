"""DeviceRuntime's memory management at commit (refreeze_heap)."""

from __future__ import annotations

import gc
import weakref

from p4switch.proto import p4r
from p4switch.server.runtime import DeviceRuntime

from .conftest import CPU_PORT, compiled, switch_factory

COMMIT = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT


def _config() -> p4r.ForwardingPipelineConfig:
    info, blob = compiled()
    return p4r.ForwardingPipelineConfig(p4info=info, p4_device_config=blob)


def test_commit_freezes_the_live_pipeline_and_frees_the_replaced_one() -> None:
    """After a commit the pipeline is out of the collector's sight; a later commit frees the old one."""
    rt = DeviceRuntime(1, switch_factory, cpu_port=CPU_PORT)
    try:
        rt.set_pipeline(COMMIT, _config())
        first = weakref.ref(rt.committed.device)
        assert gc.get_freeze_count() > 0
        assert not any(o is first() for o in gc.get_objects())  # frozen: not tracked by generations
        rt.set_pipeline(COMMIT, _config())
        assert first() is None
        assert rt.committed.device is not None
    finally:
        rt.close()
        gc.unfreeze()
