"""The traffic manager's settings: what it starts with and how a port's value is found.

`TmConfig` holds the initial settings (queues, depths, drain rates, port
speeds, PFC and watchdog per port, `None` for every port, and the buffer);
`BufferConfig` is how the buffer is counted (packets or bytes) and its
optional shared pool with dynamic thresholds; `PfcConfig` and
`WatchdogConfig` are one port's PFC and PFC watchdog; `Settings` is the
mutable copy the running `TrafficManager` changes through its `set_*`
methods and reads most specific first ((port, priority), then (every port,
priority), then port, then every port); `VirtualClock` is a clock that only
moves when the traffic manager is told to advance (exact tests).

Names defined here: `TmConfig`, `BufferConfig`, `PfcConfig`, `WatchdogConfig`,
`Settings`, `VirtualClock`, `DEFAULT_SPEED`, `UNITS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_SPEED", "UNITS", "BufferConfig", "PfcConfig", "Settings", "TmConfig",
           "VirtualClock", "WatchdogConfig"]

DEFAULT_SPEED = 10_000_000_000  # bits/s, for pause quanta when no speed is set
UNITS = ("packets", "bytes")  # what queue depths, PFC thresholds, headroom and the pool count


@dataclass(frozen=True, kw_only=True)
class BufferConfig:
    """How the traffic manager counts its buffer, and its optional shared pool."""

    unit: str = "packets"
    """"packets" (each queued packet counts 1, as BMv2's queues do) or "bytes" (a packet
    counts its frame's length, as a switch's MMU does): the unit of every queue depth,
    PFC threshold and headroom, and of `pool`."""
    pool: int | None = None
    """A shared buffer every queue draws from (in `unit`); None: none, each queue is
    bounded by its depth alone. PFC headroom is reserved apart from the pool."""
    alpha: float | None = None
    """Dynamic thresholds on the pool (needs `pool`): a queue, or a lossless priority
    group's XOFF point, may hold at most `alpha` times the pool still free, so one
    congested queue alone settles at alpha / (1 + alpha) of the pool. None: static."""

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"buffer unit must be 'packets' or 'bytes', not {self.unit!r}")
        if self.pool is not None and self.pool <= 0:
            raise ValueError(f"shared buffer must be > 0 {self.unit}, got {self.pool}")
        if self.alpha is not None and (self.pool is None or not self.alpha > 0):
            raise ValueError("alpha needs a shared buffer and must be > 0"
                             if self.pool is None else f"alpha must be > 0, got {self.alpha}")


@dataclass(frozen=True, kw_only=True)
class PfcConfig:
    """PFC on one port: the priorities it covers, XOFF/XON thresholds and headroom (in the
    buffer's unit), PAUSE quanta."""

    priorities: frozenset[int]
    xoff: int = 48
    xon: int = 32
    quanta: int = 0xFFFF
    headroom: int | None = None
    """What a priority group may hold beyond its XOFF point: what the upstream sent before
    its PAUSE took effect. None: no headroom apart, the group holds up to the ingress
    port's queue depth whatever its XOFF."""


@dataclass(frozen=True, kw_only=True)
class WatchdogConfig:
    """PFC watchdog on one port: priorities watched, detection/restoration times, action."""

    priorities: frozenset[int]
    detection_s: float = 0.2
    restoration_s: float = 0.2
    action: str = "drop"  # drop | forward

    def __post_init__(self) -> None:
        if self.action not in ("drop", "forward"):
            raise ValueError(f"watchdog action must be 'drop' or 'forward', not {self.action!r}")
        if self.detection_s <= 0 or self.restoration_s <= 0:
            raise ValueError("watchdog detection and restoration times must be > 0")


@dataclass(frozen=True, kw_only=True)
class TmConfig:
    """Initial settings; `TrafficManager.set_*` change them at run time. None keys: every port."""

    queues: int = 1
    depth: int = 64
    port_depth: dict[int, int] = field(default_factory=dict)
    rate_pps: float | None = None
    port_rate_pps: dict[int, float] = field(default_factory=dict)
    speed_bps: float | None = None
    port_speed_bps: dict[int, float] = field(default_factory=dict)
    pfc: dict[int | None, PfcConfig] = field(default_factory=dict)
    watchdog: dict[int | None, WatchdogConfig] = field(default_factory=dict)
    buffer: BufferConfig = BufferConfig()


class VirtualClock:
    """A clock that only moves when told to (`TrafficManager.advance`)."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t


class Settings:
    """Mutable per-port / per-queue settings, looked up most specific first."""

    def __init__(self, c: TmConfig) -> None:
        self.depth: dict[Any, int] = {None: c.depth, **c.port_depth}
        self.rate: dict[Any, float | None] = {None: c.rate_pps, **c.port_rate_pps}
        self.speed: dict[Any, float | None] = {None: c.speed_bps, **c.port_speed_bps}
        self.pfc: dict[Any, PfcConfig | None] = dict(c.pfc)
        # (port, prio) -> (xoff, xon, headroom): what set_thresholds gave, over the PfcConfig's
        # (a headroom of None keeps the PfcConfig's)
        self.thresholds: dict[tuple[int | None, int], tuple[int, int, int | None]] = {}
        self.watchdog: dict[Any, WatchdogConfig | None] = dict(c.watchdog)
        self.buffer = c.buffer
        # What each lookup found, by (setting, port, prio): asked for per packet, changed
        # rarely; `put` and `drop` forget it all.
        self._found: dict[tuple[str, int, int | None], Any] = {}

    def put(self, setting: str, key: Any, value: Any) -> None:
        """Set `setting`'s (depth, rate, speed, pfc, thresholds, watchdog) entry `key`."""
        getattr(self, setting)[key] = value
        self._found.clear()

    def drop(self, setting: str, key: Any) -> None:
        """Take `setting`'s entry `key` out (the less specific ones hold again)."""
        getattr(self, setting).pop(key, None)
        self._found.clear()

    @staticmethod
    def _get(d: dict, port: int, prio: int | None = None) -> Any:
        if prio is not None:
            for k in ((port, prio), (None, prio)):
                if k in d:
                    return d[k]
        if port in d:
            return d[port]
        return d.get(None)

    def _lookup(self, setting: str, port: int, prio: int | None = None) -> Any:
        """`setting`'s most specific entry for (port, prio), remembered until a change."""
        k = (setting, port, prio)
        try:
            return self._found[k]
        except KeyError:
            v = self._found[k] = self._get(getattr(self, setting), port, prio)
            return v

    def depth_of(self, port: int, prio: int) -> int:
        """Queue depth of (port, prio), in the buffer's unit."""
        return self._lookup("depth", port, prio)

    def rate_of(self, port: int, prio: int) -> float | None:
        """Drain rate in packets/s of (port, prio); None: unlimited."""
        return self._lookup("rate", port, prio)

    def speed_set(self, port: int) -> float | None:
        """Port speed in bits/s as set; None: none (no serialisation delay)."""
        return self._lookup("speed", port)

    def speed_of(self, port: int) -> float:
        """Port speed in bits/s, `DEFAULT_SPEED` when none is set."""
        return self.speed_set(port) or DEFAULT_SPEED

    def pfc_of(self, port: int) -> PfcConfig | None:
        """The PfcConfig of a port (None: PFC off there)."""
        return self._get(self.pfc, port)

    def pfc_for(self, port: int, prio: int) -> tuple[int, int, int, int | None] | None:
        """(xoff, xon, quanta, headroom) when PFC covers (port, prio), else None."""
        k = ("pfc_for", port, prio)
        try:
            found: tuple[int, int, int, int | None] | None = self._found[k]
        except KeyError:
            found = self._found[k] = self._pfc_for(port, prio)
        return found

    def _pfc_for(self, port: int, prio: int) -> tuple[int, int, int, int | None] | None:
        cfg = self._get(self.pfc, port)
        if cfg is None or prio not in cfg.priorities:
            return None
        xoff, xon, headroom = self._get(self.thresholds, port, prio) or (cfg.xoff, cfg.xon, None)
        return xoff, xon, cfg.quanta, cfg.headroom if headroom is None else headroom

    def watchdog_of(self, port: int, prio: int) -> WatchdogConfig | None:
        """The WatchdogConfig watching (port, prio), or None."""
        cfg = self._get(self.watchdog, port)
        return cfg if cfg is not None and prio in cfg.priorities else None
