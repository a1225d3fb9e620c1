"""The p4switch packet pipeline: v1model semantics compiled from the IR to Python.

Public names: `Switch` (the running device, implementing `state.Device`),
`compile_program` / `CompiledProgram` (IR -> generated Python), `CodegenError`,
`PortHarness` (in-memory ports for tests).
"""

from __future__ import annotations

from .codegen import CodegenError
from .harness import PortHarness
from .switch import Switch
from .v1compile import CompiledProgram, compile_program

__all__ = ["Switch", "CompiledProgram", "compile_program", "CodegenError", "PortHarness"]
