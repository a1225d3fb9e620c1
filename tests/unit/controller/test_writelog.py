"""The P4Runtime write log: records read back as written, reasons quoted, files rotated and bounded."""

from __future__ import annotations

from pathlib import Path

from finsy.proto import p4r
from google.protobuf import text_format

from controller.writelog import WriteLog


def _update(kind: int, table_id: int, value: bytes) -> p4r.Update:
    u = p4r.Update(type=kind)
    te = u.entity.table_entry
    te.table_id = table_id
    m = te.match.add()
    m.field_id = 1
    m.exact.value = value
    return u


def test_records_read_back_with_their_reason_and_updates(tmp_path: Path) -> None:
    log = WriteLog(tmp_path / "p4rt")
    log.record("rtsw1", "start", [_update(p4r.Update.INSERT, 7, b"\x0a"),
                                  _update(p4r.Update.INSERT, 7, b"\x0b")])
    log.record("rtsw1", 'link down "a"\nb', [_update(p4r.Update.DELETE, 9, b"\x01")])
    log.record("ctsw1", "mode ecmp", [_update(p4r.Update.MODIFY, 3, b"\x02")])
    got = log.read("rtsw1")
    assert [(r.reason, r.updates) for r in got] == [("start", 2), ('link down "a" b', 1)]
    # the text is the updates' own text format: it parses back to the same messages
    assert got[0].text.count("type: INSERT") == 2 and "table_id: 7" in got[0].text
    assert got[1].text.count("type: DELETE") == 1
    wrapped = p4r.WriteRequest()
    text_format.Parse(got[1].text, wrapped)
    assert list(wrapped.updates) == [_update(p4r.Update.DELETE, 9, b"\x01")]
    assert got[0].at.endswith("Z")
    assert [r.reason for r in log.read("ctsw1")] == ["mode ecmp"]
    assert log.read("rtsw1", limit=1)[0].reason == 'link down "a" b'
    assert (tmp_path / "p4rt").stat().st_mode & 0o777 == 0o700
    log.close()


def test_files_rotate_and_keep_the_latest(tmp_path: Path) -> None:
    log = WriteLog(tmp_path, max_bytes=2_000, backups=2)
    for i in range(200):
        log.record("s", f"write {i}", [_update(p4r.Update.MODIFY, 1, bytes([i]))])
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["s.txt", "s.txt.1", "s.txt.2"]
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= 3 * 2_000 + 500
    got = log.read("s")
    reasons = [int(r.reason.split()[1]) for r in got]
    assert reasons[-1] == 199 and reasons == list(range(reasons[0], 200)) and reasons[0] > 0
    log.close()


def test_a_new_fabric_starts_afresh_and_a_reattached_daemon_carries_on(tmp_path: Path) -> None:
    first = WriteLog(tmp_path)
    first.record("s", "start", [_update(p4r.Update.INSERT, 1, b"\x01")])
    first.close()
    again = WriteLog(tmp_path)  # the daemon re-attached
    assert [r.reason for r in again.read("s")] == ["start"]
    again.close()
    assert WriteLog(tmp_path, fresh=True).read("s") == []
