"""Host agents end to end: ``recv`` and ``send`` in two network namespaces over a veth.

The agents run as they do in Mininet hosts: ``python -m traffic.agent`` under
``ip netns exec``, real AF_PACKET sockets, ARP through the kernel's peer.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from traffic.agent import main

QPS = "17,18,19,20"


def _start_recv(pair: Any, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    ready = tmp_path / "recv.ready"
    proc = pair.popen(
        pair.ns_b,
        "-m",
        "traffic.agent",
        "recv",
        "--iface",
        pair.if_b,
        "--json",
        "--ready-file",
        str(ready),
        *args,
    )
    for _ in range(300):  # the receiver imports scapy first: allow it a while
        if ready.exists() or proc.poll() is not None:
            break
        time.sleep(0.1)
    if not ready.exists():
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"receiver did not start: rc={proc.returncode} {out} {err}")
    return proc


def _run_send(pair: Any, *args: str) -> tuple[int, dict[str, Any]]:
    proc = pair.popen(
        pair.ns_a,
        "-m",
        "traffic.agent",
        "send",
        "--iface",
        pair.if_a,
        "--dst-ip",
        pair.ip_b,
        "--json",
        *args,
    )
    out, err = proc.communicate(timeout=120)
    assert out, err
    return proc.returncode, json.loads(out)


def _finish(proc: subprocess.Popen[str]) -> tuple[int, dict[str, Any]]:
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out, err
    return proc.returncode, json.loads(out)


@pytest.mark.root
@pytest.mark.parametrize(
    ("strategy", "writes_per_qp"), [("split", 8), ("round_robin", 2)], ids=["split", "round_robin"]
)
def test_receiver_gets_every_message_in_order(
    netns_pair: Any, tmp_path: Path, strategy: str, writes_per_qp: int
) -> None:
    """8 messages of 5000 bytes over 4 QPs arrive whole, ICRC ok, PSNs in order, per strategy."""
    recv = _start_recv(netns_pair, tmp_path, "--messages", "8", "--timeout", "60")
    try:
        rc, sent = _run_send(
            netns_pair,
            "--qps",
            QPS,
            "--messages",
            "8",
            "--size",
            "5000",
            "--strategy",
            strategy,
        )
    finally:
        recv_rc, got = _finish(recv)
    assert rc == 0 and recv_rc == 0
    assert got["done"] and not got["timed_out"]
    assert got["messages_complete"] == 8
    assert got["packets"] == sent["packets"] and got["bytes"] == sent["bytes"]
    assert got["payload_bytes"] == 8 * 5000
    for key in ("icrc_errors", "psn_errors", "sequence_errors", "length_errors", "malformed"):
        assert got[key] == 0, key
    assert {qp: c["writes"] for qp, c in got["per_qp"].items()} == dict.fromkeys(
        QPS.split(","), writes_per_qp
    )
    for qp, counts in got["per_qp"].items():
        assert counts["packets"] == sent["per_qp"][qp]["packets"]
        assert counts["first_psn"] == 0
        assert counts["last_psn"] == sent["per_qp"][qp]["next_psn"] - 1
    assert sent["dst_mac"] != "ff:ff:ff:ff:ff:ff"
    assert got["per_source"] == {netns_pair.ip_a: got["packets"]}


_INJECTOR = """
import sys
from pathlib import Path
from traffic.link import PacketSocket
from traffic.parser import RoceInfo, parse
from traffic.pfc import pfc_frame
iface, priority, ready = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
with PacketSocket(iface) as sock:
    ready.touch()
    while not isinstance(parse(sock.recv(None)[0]), RoceInfo):
        pass
    # The switch's buffer fills: XOFF for the longest pause (0.34 s at 100 Mb/s).
    sock.send(bytes(pfc_frame("02:00:00:00:00:fe", {priority: 0xFFFF})))
"""


@pytest.mark.root
@pytest.mark.parametrize(
    ("paused", "expect_wait"), [(3, True), (5, False)], ids=["own-priority", "other-priority"]
)
def test_sender_honours_pfc_pause_for_its_priority(
    netns_pair: Any, tmp_path: Path, paused: int, expect_wait: bool
) -> None:
    """A PAUSE for the sender's priority holds it back; one for another priority does not."""
    recv = _start_recv(netns_pair, tmp_path, "--messages", "20", "--timeout", "60")
    ready = tmp_path / "injector.ready"
    # Plays the switch: on the first RoCE packet, PAUSE the sender's link.
    injector = netns_pair.popen(
        netns_pair.ns_b, "-c", _INJECTOR, netns_pair.if_b, str(paused), str(ready)
    )
    try:
        for _ in range(300):
            if ready.exists() or injector.poll() is not None:
                break
            time.sleep(0.1)
        assert ready.exists(), injector.communicate()
        # 20 packets paced over ~0.35 s: the PAUSE lands while the sender is busy.
        rc, sent = _run_send(
            netns_pair,
            "--qps",
            "17,18",
            "--messages",
            "20",
            "--size",
            "1024",
            "--rate-mbps",
            "0.5",
            "--link-mbps",
            "100",
            "--priority",
            "3",
        )
    finally:
        if injector.poll() is None:
            injector.kill()
        injector.communicate()
        recv_rc, got = _finish(recv)
    assert rc == 0 and recv_rc == 0
    assert sent["pause_frames"] == 1
    assert (sent["paused_seconds"] > 0) == expect_wait
    assert got["messages_complete"] == 20 and got["psn_errors"] == 0


@pytest.mark.root
def test_recv_reports_a_timeout_before_its_target(netns_pair: Any, tmp_path: Path) -> None:
    """With nothing sent, recv stops at --timeout, reports timed_out, exits 3, writes --out."""
    out = tmp_path / "report.json"
    recv = _start_recv(netns_pair, tmp_path, "--count", "1", "--timeout", "0.5", "--out", str(out))
    rc, got = _finish(recv)
    assert rc == 3
    assert got["timed_out"] and not got["done"] and got["packets"] == 0
    assert json.loads(out.read_text()) == got


@pytest.mark.root
def test_sender_uses_the_gateway_mac_from_the_neighbour_table(
    netns_pair: Any, tmp_path: Path
) -> None:
    """To an off-subnet destination, frames go to the gateway's MAC (a static neighbour)."""
    ns_a, ns_b = netns_pair.ns_a, netns_pair.ns_b
    mac_b = json.loads(
        subprocess.run(
            ["ip", "-n", ns_b, "-j", "link", "show", netns_pair.if_b],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )[0]["address"]
    for cmd in (
        ["ip", "-n", ns_a, "route", "add", "10.99.0.0/24", "via", "10.9.0.254"],
        [
            "ip",
            "-n",
            ns_a,
            "neigh",
            "replace",
            "10.9.0.254",
            "lladdr",
            mac_b,
            "nud",
            "permanent",
            "dev",
            netns_pair.if_a,
        ],
    ):
        subprocess.run(cmd, check=True, capture_output=True)
    recv = _start_recv(
        netns_pair, tmp_path, "--ip", "10.99.0.7", "--messages", "1", "--timeout", "60"
    )
    try:
        proc = netns_pair.popen(
            ns_a,
            "-m",
            "traffic.agent",
            "send",
            "--iface",
            netns_pair.if_a,
            "--dst-ip",
            "10.99.0.7",
            "--qps",
            "9",
            "--json",
        )
        out, err = proc.communicate(timeout=120)
    finally:
        recv_rc, got = _finish(recv)
    sent = json.loads(out)
    assert proc.returncode == 0, err
    assert sent["dst_mac"] == mac_b
    assert recv_rc == 0 and got["messages_complete"] == 1


def test_send_on_a_missing_interface_is_a_one_line_json_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Errors exit 1 and, with --json, print only a JSON object naming the problem."""
    rc = main(["send", "--iface", "nosuch0", "--dst-ip", "10.0.0.1", "--qps", "1", "--json"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "nosuch0" in json.loads(out)["error"]


def test_bad_qp_list_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """A QP list that is not numbers is rejected by the argument parser (exit 2)."""
    with pytest.raises(SystemExit) as exc:
        main(["send", "--iface", "x", "--dst-ip", "10.0.0.1", "--qps", "a,b"])
    assert exc.value.code == 2
    assert "QP numbers" in capsys.readouterr().err
