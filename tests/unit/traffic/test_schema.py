"""Job and report models: what is accepted, what is refused and how it is said."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from traffic.schema import Admission, Job, Send, Transport


def _job(**changes: Any) -> dict[str, Any]:
    job: dict[str, Any] = {
        "name": "t",
        "connections": [
            {"id": "c0", "nic": "eth0", "peer_ip": "10.0.0.2",
             "qps": [{"local": 0x11, "remote": 0x21}, {"local": 0x12, "remote": 0x22}]},
        ],
        "steps": [{"sends": [{"conn": "c0", "bytes": 4096, "qps": 2}],
                   "recvs": [{"conn": "c0", "bytes": 100}]}],
    }
    job.update(changes)
    return job


def test_a_job_round_trips_through_json() -> None:
    """model -> JSON -> model is the same job, defaults filled in."""
    job = Job.model_validate(_job())
    again = Job.model_validate(json.loads(job.model_dump_json()))
    assert again == job
    assert job.transport == Transport() and job.transport.ack_every == 16
    assert job.steps[0].sends[0].strategy == "rr"


@pytest.mark.parametrize("spelling", ["rr", "round_robin", "round-robin"])
def test_round_robin_has_three_spellings(spelling: str) -> None:
    """rr, round_robin and round-robin all mean rr."""
    assert Send(conn="c", bytes=1, strategy=spelling).strategy == "rr"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"steps": [{"sends": [{"conn": "nope", "bytes": 1}]}]}, "no such connection"),
        ({"steps": [{"sends": [{"conn": "c0", "bytes": 1, "qps": 3}]}]}, "qps=3"),
        ({"steps": [{"recvs": [{"conn": "c0", "bytes": 1}, {"conn": "c0", "bytes": 2}]}]},
         "one recv per connection"),
        ({"steps": [{"sends": [{"conn": "c0", "bytes": 5000, "message_bytes": 1}]}]},
         "messages"),
        ({"transport": {"path_mtu": 1500}}, "path_mtu"),
        ({"transport": {"ack_every": 200}}, "ack_every"),
        ({"admission": {"channel_buffer": 2, "slots": 4}}, "slots"),
    ],
    ids=["unknown-conn", "too-many-qps", "two-recvs", "too-many-messages", "mtu", "ack-every",
         "slots"],
)
def test_inconsistent_jobs_are_refused_with_the_reason(changes: dict[str, Any], message: str) -> None:
    """Each inconsistency names what and where."""
    with pytest.raises(ValidationError, match=message):
        Job.model_validate(_job(**changes))


def test_a_qp_number_used_twice_on_one_nic_is_refused() -> None:
    """Two connections on eth0 cannot both own QP 0x11."""
    conns = _job()["connections"] + [
        {"id": "c1", "nic": "eth0", "peer_ip": "10.0.0.3", "qps": [{"local": 0x11, "remote": 5}]}
    ]
    with pytest.raises(ValidationError, match="used twice"):
        Job.model_validate(_job(connections=conns))


def test_unknown_keys_and_bad_addresses_are_refused() -> None:
    """A misspelt key or a peer that is not IPv4 does not pass silently."""
    with pytest.raises(ValidationError, match="extra"):
        Job.model_validate(_job(stepz=[]))
    bad = _job()
    bad["connections"][0]["peer_ip"] = "10.0.0"
    with pytest.raises(ValidationError, match="not an IPv4 address"):
        Job.model_validate(bad)


def test_admission_defaults_cap_in_flight_at_128_kib() -> None:
    """2 channels x 64 KiB in 4 slots of 16 KiB."""
    adm = Admission()
    assert (adm.channels * adm.channel_buffer, adm.channel_buffer // adm.slots) == (131072, 16384)


def test_send_counts_its_messages() -> None:
    """5000 bytes in messages of 2048: 3 messages; no message size: 1; no bytes: 0."""
    assert Send(conn="c", bytes=5000, message_bytes=2048).messages == 3
    assert Send(conn="c", bytes=5000).messages == 1
    assert Send(conn="c", bytes=0).messages == 0


def test_a_report_carries_every_total_a_nic_keeps(hosts: Any) -> None:
    """The NIC's totals (its counters, its QPs', the paused times) are exactly the report's
    counter fields, and each validates as one: a new counter reaches the reports by itself."""
    from traffic.schema import Counters

    mem = hosts(1)
    totals = mem.nics["h0"].totals(0.0)
    assert set(totals) == set(Counters.model_fields)
    assert Counters.model_validate(totals).paused_seconds == 0.0
