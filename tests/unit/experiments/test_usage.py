"""Tests for experiments.usage: frames lost between the ends of cables, rates and CPU, by hand.

A hand-sized fabric: one RTSW (rtsw1) with host h1 (NIC h1-eth0 on port 1)
and one CTSW (ctsw1) on rtsw1's port 2 (ctsw1 port 1). Between the two
samples (2 s apart):

- h1-eth0 sent 1,000 frames (100,000 bytes); rtsw1 port 1 received 990:
  10 lost host -> switch;
- rtsw1 port 1 sent 500 frames to h1, which received 520 of which 30 were
  PAUSE frames (from the traffic manager, not counted by tx_port): 490
  counted, 10 lost;
- rtsw1 port 2 sent 990 frames up, ctsw1 port 1 received 990: none lost;
  ctsw1 port 1 sent 5 down, rtsw1 port 2 received 5.

On the fabric link a reading may catch one frame (a link probe) on the
wire; a failed link's losses are counted apart.

Sent: 1,000 + 500 + 990 + 5 = 2,495; lost 20: loss 20 / 2,495.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from experiments.fabric import Sample
from experiments.usage import Usage, cpu_share, link_balance
from topologies.addressing import AddressPlan, plan_addresses
from topologies.spec import parse_spec

SPEC = {"name": "tiny", "racks": [{"count": 1, "hosts": 1, "nics": 1}], "ctsws": 1}


def _sample(at: float, *, h_sent: int, h_got: int, h_pauses: int, r1: tuple[int, int],
            r2: tuple[int, int], c1: tuple[int, int], busy: float, total: float,
            cpu: float) -> Sample:
    return Sample(at=at,
                  ports={"rtsw1": {"rx": {1: (r1[0], 0), 2: (r2[0], 0)},
                                   "tx": {1: (r1[1], 0), 2: (r2[1], 0)}},
                         "ctsw1": {"rx": {1: (c1[0], 0)}, "tx": {1: (c1[1], 0)}}},
                  nics={"h1-eth0": {"frames_sent": h_sent, "bytes_sent": h_sent * 100,
                                    "frames_received": h_got, "pause_frames": h_pauses}},
                  agent_cpu={"h1": cpu}, switch_cpu={"rtsw1": cpu * 2, "ctsw1": cpu},
                  machine=(busy, total))


def _plan() -> AddressPlan:
    return plan_addresses(parse_spec(SPEC))


def test_link_balance_is_never_negative() -> None:
    """Sent 10 received 7: 3 lost; sent 10 received 12 (frames of the host's kernel): 0."""
    assert link_balance(0, 10, 0, 7) == 3
    assert link_balance(0, 10, 0, 12) == 0


def test_cpu_share_per_name() -> None:
    """1.5 CPU-s in 3 s is half a core; a name in one reading only is left out."""
    assert cpu_share({"a": 1.0, "b": 0.0}, {"a": 2.5, "c": 9.0}, 3.0) == {"a": 0.5}


def test_usage_of_the_hand_worked_case() -> None:
    """20 of 2,495 frames lost, on the two host-link directions; rates over 2 s."""
    plan = _plan()
    assert [(lk.a, lk.a_port, lk.b, lk.b_port) for lk in plan.links] == [
        ("h1", 0, "rtsw1", 1), ("rtsw1", 2, "ctsw1", 1)]
    before = _sample(10.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(0, 0), c1=(0, 0),
                     busy=100, total=400, cpu=1.0)
    after = _sample(12.0, h_sent=1000, h_got=520, h_pauses=30, r1=(990, 500), r2=(5, 990),
                    c1=(990, 5), busy=300, total=800, cpu=2.0)
    u = Usage.of(plan, before, after)
    assert (u.sent, u.lost) == (2495, 20)
    assert u.lost_on == {"h1-eth0--rtsw1-eth1 up": 10, "h1-eth0--rtsw1-eth1 down": 10}
    assert u.loss == pytest.approx(20 / 2495)
    assert u.host_frames == 1000 and u.host_pps == 500.0
    assert u.host_gbps == pytest.approx(100_000 * 8 / 2 / 1e9)
    assert u.switch_pps == pytest.approx((990 + 5 + 990) / 2)
    assert u.machine_cpu == 0.5  # 200 busy of 400 jiffies
    assert u.agent_cpu == {"h1": 0.5} and u.switch_cpu == {"rtsw1": 1.0, "ctsw1": 0.5}
    assert u.complete


def test_other_servers_busy_share_from_their_own_readings() -> None:
    """A fabric over servers: each other server's share from its two /proc/stat readings
    (150 busy of 200 jiffies: 0.75); one read only once is left out."""
    plan = _plan()
    before = replace(_sample(0.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(0, 0),
                             c1=(0, 0), busy=0, total=100, cpu=0),
                     servers={"b": (50.0, 1000.0), "c": (0.0, 10.0)})
    after = replace(_sample(1.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(0, 0),
                            c1=(0, 0), busy=10, total=200, cpu=0),
                    servers={"b": (200.0, 1200.0), "d": (5.0, 10.0)})
    u = Usage.of(plan, before, after)
    assert u.server_cpu == {"b": 0.75}
    assert u.machine_cpu == 0.1


def test_usage_rates_over_the_jobs_own_span() -> None:
    """Given seconds=1, the same frames make twice the rate of the 2 s between samples."""
    plan = _plan()
    before = _sample(0.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(0, 0), c1=(0, 0),
                     busy=0, total=1, cpu=0)
    after = _sample(2.0, h_sent=100, h_got=0, h_pauses=0, r1=(100, 0), r2=(0, 100),
                    c1=(100, 0), busy=0, total=2, cpu=0)
    assert Usage.of(plan, before, after, seconds=1.0).host_pps == 100.0


def test_usage_is_incomplete_when_a_switch_was_not_read() -> None:
    """A switch with no counters in a sample: the figures are not complete."""
    plan = _plan()
    s = _sample(0.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(0, 0), c1=(0, 0),
                busy=0, total=1, cpu=0)
    missing = Sample(at=1.0, ports={"rtsw1": s.ports["rtsw1"], "ctsw1": {"rx": {}, "tx": {}}},
                     nics=s.nics, agent_cpu={}, switch_cpu={}, machine=(0, 2))
    assert not Usage.of(plan, s, missing).complete


def _fabric_link_case(c1_got: int) -> tuple[Sample, Sample]:
    """No host traffic; rtsw1 port 2 sends 990 up, ctsw1 port 1 receives c1_got."""
    before = _sample(0.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(0, 0), c1=(0, 0),
                     busy=0, total=1, cpu=0)
    after = _sample(1.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(0, 990),
                    c1=(c1_got, 0), busy=0, total=2, cpu=0)
    return before, after


@pytest.mark.parametrize(("got", "lost"), [(989, 0), (987, 2)], ids=["one-on-wire", "three"])
def test_one_frame_per_fabric_cable_may_be_on_the_wire(got: int, lost: int) -> None:
    """990 sent up: 989 received is a probe caught on the wire; 987 is 2 lost beyond it."""
    u = Usage.of(_plan(), *_fabric_link_case(got))
    assert u.lost == lost


def test_a_failed_links_losses_are_counted_apart() -> None:
    """The failed rtsw1-ctsw1 link's 90 missing frames are the failure's, not the emulator's."""
    link = "rtsw1-eth2--ctsw1-eth1"
    u = Usage.of(_plan(), *_fabric_link_case(900), failed=frozenset({link}))
    assert u.lost == 0 and u.failed_lost == {f"{link} up": 90}


def _read_apart(rtsw_rx: float, ctsw_tx: float) -> tuple[Sample, Sample]:
    """ctsw1 port 1 sent 10 down, rtsw1 port 2 received 6; in the second sample rtsw1's
    rx_port was read at `rtsw_rx` and ctsw1's tx_port at `ctsw_tx` (seconds)."""
    before = _sample(0.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(0, 0), c1=(0, 0),
                     busy=0, total=1, cpu=0)
    after = _sample(1.0, h_sent=0, h_got=0, h_pauses=0, r1=(0, 0), r2=(6, 0), c1=(0, 10),
                    busy=0, total=2, cpu=0)
    return before, replace(after, read_at={"rtsw1": (rtsw_rx, rtsw_rx + 0.05),
                                           "ctsw1": (ctsw_tx - 0.05, ctsw_tx)})


@pytest.mark.parametrize(("rtsw_rx", "ctsw_tx", "lost"), [
    (1.0, 1.5, 0),  # 0.5 s apart: up to ceil(0.5 / 0.2) = 3 probes + 1 on the wire = 4
    (1.0, 1.3, 1),  # 0.3 s: 2 probes + 1 on the wire = 3 of the 4 missing
    (1.5, 1.0, 3),  # the sender read first: nothing it sent later is counted; 1 on the wire
], ids=["read-0.5s-apart", "read-0.3s-apart", "sender-read-first"])
def test_probes_sent_between_the_two_ends_reads_are_not_lost(rtsw_rx: float, ctsw_tx: float,
                                                               lost: int) -> None:
    """4 frames missing on ctsw1 -> rtsw1: the probes (one per 0.2 s) ctsw1 sent after rtsw1
    was read and before it was read itself are not counted lost; the rest are."""
    u = Usage.of(_plan(), *_read_apart(rtsw_rx, ctsw_tx))
    assert u.lost == lost
