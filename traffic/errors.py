"""The one exception the traffic package raises at its boundary: ``TrafficError``."""

from __future__ import annotations

__all__ = ["TrafficError"]


class TrafficError(Exception):
    """A host agent cannot do what it was asked (bad interface, no route, no ARP reply...)."""
