"""The client of a host's traffic agent (``traffic.hostagent``): ``AgentClient`` and its errors.

``AgentClient(socket_path)`` speaks the agent's JSON-lines protocol over its
Unix socket with blocking methods (``ping``, ``run``, ``status``, ``stop``,
``counters``). Every failure is an ``AgentError``: ``AgentUnreachable``
when nothing answers at the path, ``JobFailed`` when a job did not complete
(with the agent's report). It loads no transport: a controller or a test
drives agents without the engine in its own process.

Names: ``AgentClient``, ``AgentError``, ``AgentUnreachable``, ``JobFailed``,
``MAX_LINE``.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

from traffic.errors import TrafficError
from traffic.schema import HostReport, Job

__all__ = ["MAX_LINE", "AgentClient", "AgentError", "AgentUnreachable", "JobFailed"]

MAX_LINE = 64 << 20  # the longest request or answer line either side reads
_GRACE = 10.0  # seconds a client waits for a run's answer beyond the job's timeout


class AgentError(TrafficError):
    """A traffic agent could not do what it was asked (the client side's one exception)."""

    def __init__(self, message: str, report: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.report = report


class AgentUnreachable(AgentError):
    """Nothing answers at the agent's socket path."""


class JobFailed(AgentError):
    """The agent ran the job and it did not complete (failed, timed out or stopped)."""


class AgentClient:
    """Blocking calls to one agent over its Unix socket."""

    def __init__(self, socket_path: str | os.PathLike[str], *, connect_timeout: float = 5.0) -> None:
        self.path = str(socket_path)
        self.connect_timeout = connect_timeout

    def _call(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.connect_timeout)
            try:
                sock.connect(self.path)
            except (FileNotFoundError, ConnectionRefusedError, TimeoutError, OSError) as exc:
                reason = exc.strerror or type(exc).__name__
                raise AgentUnreachable(f"agent at {self.path} is unreachable: {reason}") from None
            sock.settimeout(timeout)
            sock.sendall(json.dumps(request).encode() + b"\n")
            with sock.makefile("rb") as stream:
                try:
                    line = stream.readline(MAX_LINE)
                except TimeoutError:
                    raise AgentError(
                        f"agent at {self.path} did not answer {request['op']!r} within {timeout:g} s"
                    ) from None
        except OSError as exc:
            raise AgentError(f"agent at {self.path}: {request['op']}: {exc}") from None
        finally:
            sock.close()
        if not line:
            raise AgentError(f"agent at {self.path} closed the connection during {request['op']!r}")
        try:
            answer: dict[str, Any] = json.loads(line)
        except ValueError:
            raise AgentError(f"agent at {self.path} answered something that is not JSON") from None
        return answer

    def _ok(self, request: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        answer = self._call(request, timeout)
        if not answer.get("ok"):
            raise AgentError(f"agent at {self.path}: {answer.get('error', 'no reason given')}")
        return answer

    def ping(self) -> dict[str, Any]:
        """Host, pid, NICs, busy."""
        return self._ok({"op": "ping"})

    def run(self, job: Job | dict[str, Any], timeout: float) -> dict[str, Any]:
        """Run ``job`` (at most ``timeout`` seconds) and return its report (``HostReport`` as JSON).

        Raises ``JobFailed`` (with ``.report``) when it failed, timed out or
        was stopped: the message says which step and which peers.
        """
        body = job.model_dump() if isinstance(job, Job) else job
        answer = self._call({"op": "run", "job": body, "timeout": timeout}, timeout + _GRACE)
        if not answer.get("ok"):
            report = answer.get("report")
            error = answer.get("error", "no reason given")
            if report is not None:
                raise JobFailed(error, report)
            raise AgentError(f"agent at {self.path}: {error}")
        report = answer["report"]
        HostReport.model_validate(report)  # the contract: fail here, not in the caller
        result: dict[str, Any] = report
        return result

    def status(self) -> dict[str, Any]:
        """The running job's step and progress (``Status`` as JSON)."""
        status: dict[str, Any] = self._ok({"op": "status"})["status"]
        return status

    def stop(self) -> dict[str, Any]:
        """Stop the running job."""
        return self._ok({"op": "stop"})

    def counters(self) -> dict[str, Any]:
        """Every NIC's counters since the agent started, and its CPU time."""
        return self._ok({"op": "counters"})
