"""Walking a p4switch program file's JSON in tests: the nodes of one IR class.

Names defined here: `raw_nodes`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["raw_nodes"]


def raw_nodes(obj: Any, cls: str) -> list[dict[str, Any]]:
    """Every JSON node of class `cls` in a program file, in document order."""
    found: list[dict[str, Any]] = []
    if isinstance(obj, dict):
        if obj.get("@") == cls:
            found.append(obj)
        for v in obj.values():
            found += raw_nodes(v, cls)
    elif isinstance(obj, list):
        for v in obj:
            found += raw_nodes(v, cls)
    return found
