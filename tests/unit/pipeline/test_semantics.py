"""BMv2/P4-16 details closed by the pipeline: copy-in/copy-out, digest timing, length register."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

COPYIO = Path(__file__).parent / "p4" / "copyio.p4"

ETH = b"\x02" * 6 + b"\x04" * 6 + b"\x12\x34"
H2 = bytes([1, 2, 3, 4])


def frame(d: int) -> bytes:
    return ETH + bytes([10, 20, 30, d]) + H2


@pytest.fixture
def sw(make_switch):
    return make_switch("copyio")


def test_inout_header_is_copied_in_and_out(sw):
    """An action's inout copy overwrites what the body wrote through the aliased global (§6.8)."""
    ((port, out),) = sw.send(1, frame(1))
    assert port == 2 and out[14:18] == bytes([11, 20, 30, 1])


def test_out_header_parameter_starts_invalid_and_is_copied_out(sw):
    """An out header is invalid inside the callee and its (invalid) value is copied back."""
    ((_, out),) = sw.send(1, frame(2))
    assert out[14:] == bytes([10, 20, 2, 2])  # h2 no longer emitted


def test_digest_data_is_its_value_at_the_call(sw):
    """digest() data is what the fields held at the call, not what ingress left in them: p4c
    copies it to temporaries at the call for BMv2 (tests/differential/test_digests.py)."""
    sw.send(1, frame(3))
    assert sw.digests == [("dg_t", (10,))]


def test_set_valid_grows_the_packet_length_seen_in_egress(sw):
    """setValid of an invalid header adds its bytes to egress packet_length (BMv2 add_header)."""
    ((_, out),) = sw.send(1, frame(4))
    assert out[21] == len(frame(4)) + 4
    ((_, out),) = sw.send(1, frame(1))
    assert out[21] == len(frame(1))


def test_deprecated_resubmit_data_preserves_the_listed_fields(sw):
    """resubmit({meta.keep}) keeps meta.keep in the resubmitted copy and zeroes the rest."""
    ((_, out),) = sw.send(1, frame(5))
    assert out[14:18] == bytes([10, 11, 0, 5])


def test_copy_in_is_decided_from_the_action_being_generated(tmp_path):
    """Each build looks at the body in front of it, not at what an earlier build saw.

    A cache of which variables an action names, kept by object id past the program's
    build, once handed copyio's `bump` the answer of a freed action at the same address:
    no copy-in, so the body's write through `hdr.h.b` survived (a CI failure that
    depended on test order). Here the same declaration object is built twice, the
    second time with a body that writes the global: the copy-out must still win.
    """
    src = COPYIO.read_text()
    write = "        hdr.h.b = x.a;        /* overwritten by the copy-out of x */\n"
    assert write in src
    (tmp_path / "plain.p4").write_text(src.replace(write, ""))
    plain = compile_file(tmp_path / "plain.p4")
    bump = plain.pipeline["ig"].decl.locals[0]
    assert bump.name == "bump"
    with PortHarness(plain) as h:  # plain bump: a = 11, b untouched
        ((_, out),) = h.send(1, frame(1))
        assert out[14:18] == bytes([11, 20, 30, 1])
    writes = compile_file(COPYIO).pipeline["ig"].decl.locals[0]
    assert writes.name == "bump"
    bump.body = writes.body  # the same object, now writing hdr.h.b = 11 through the global
    with PortHarness(plain) as h:
        ((_, out),) = h.send(1, frame(1))
        assert out[14:18] == bytes([11, 20, 30, 1])  # b: x's copy (20) copied out over the 11
