"""A one-shot timer as a file descriptor, so that a port loop's epoll also waits for a time.

The traffic manager runs on the ports thread (`io.RawPorts`): the thread
waits in epoll for frames and for the next packet a port may send. epoll's
own timeout counts whole milliseconds, coarser than a frame's serialisation
time at the emulated rates (1500 bytes at 10 Mb/s: 1.2 ms); a Linux timerfd
armed on CLOCK_MONOTONIC (the clock of `time.monotonic`) at an absolute time
wakes it within microseconds. Python 3.11 has no `os.timerfd_*`, so the two
libc calls go through ctypes; where they are missing `Timer.fd` is None and
the caller falls back to the epoll timeout.

Names defined here: `Timer`.
"""

from __future__ import annotations

import ctypes
import math
import os

__all__ = ["Timer"]

_CLOCK_MONOTONIC = 1
_TFD_NONBLOCK = os.O_NONBLOCK
_TFD_CLOEXEC = os.O_CLOEXEC
_TFD_TIMER_ABSTIME = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


def _libc_calls() -> tuple | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        create, settime = libc.timerfd_create, libc.timerfd_settime
    except (OSError, AttributeError):
        return None
    create.argtypes, create.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settime.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_Itimerspec), ctypes.c_void_p]
    settime.restype = ctypes.c_int
    return create, settime


class Timer:
    """A timerfd on CLOCK_MONOTONIC: `set(t)` arms it for `time.monotonic()` time t
    (inf: disarmed); the fd becomes readable then, and `clear()` reads it."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self._settime = None
        self._spec = _Itimerspec()
        calls = _libc_calls()
        if calls is not None:
            create, settime = calls
            fd = create(_CLOCK_MONOTONIC, _TFD_NONBLOCK | _TFD_CLOEXEC)
            if fd >= 0:
                self.fd, self._settime = fd, settime

    def set(self, when: float) -> None:
        """Arm for absolute monotonic time `when`; inf disarms."""
        if self._settime is None or self.fd is None:
            return
        value = self._spec.it_value
        if when == math.inf:
            value.tv_sec = value.tv_nsec = 0  # a zero it_value disarms
        else:
            # A time already past fires at once; never 0.0 exactly, which would disarm.
            when = max(when, 1e-9)
            sec = int(when)
            value.tv_sec, value.tv_nsec = sec, max(1, int((when - sec) * 1e9))
        if self._settime(self.fd, _TFD_TIMER_ABSTIME, ctypes.byref(self._spec), None) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"timerfd_settime: {os.strerror(err)}")

    def clear(self) -> None:
        """Consume an expiry (nothing to read is fine: the timer was re-armed meanwhile)."""
        if self.fd is None:
            return
        try:
            os.read(self.fd, 8)
        except BlockingIOError:
            pass

    def close(self) -> None:
        """Close the fd."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
