"""The SQLite audit log (SPEC B2, P6)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from mao_embed.audit import AuditEvent, AuditLog


def test_audit_file_uses_write_ahead_logging(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "nested" / "audit.db")
    log.record(AuditEvent.SESSION_CONNECTED, session_id="ses-1")
    log.flush()
    with sqlite3.connect(tmp_path / "nested" / "audit.db") as reader:
        assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert reader.execute("SELECT event, session_id FROM audit").fetchall() == [
            ("session_connected", "ses-1")
        ]
    log.close()


def test_records_come_back_in_order_and_filtered(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    log.record(
        AuditEvent.TOOL_CALL,
        session_id="s1",
        request_id="r1",
        tool="page_fill",
        code="ok",
        duration_ms=3.5,
    )
    log.record(
        AuditEvent.TOOL_CALL, session_id="s2", request_id="r2", tool="page_click", code="timeout"
    )
    log.record(AuditEvent.RESULT_IGNORED, session_id="s1", request_id="r9")
    calls = log.query(event=AuditEvent.TOOL_CALL)
    assert [(c.request_id, c.tool, c.code) for c in calls] == [
        ("r1", "page_fill", "ok"),
        ("r2", "page_click", "timeout"),
    ]
    assert [r.event for r in log.query(session_id="s1")] == [
        AuditEvent.TOOL_CALL,
        AuditEvent.RESULT_IGNORED,
    ]
    log.close()


def test_records_survive_a_restart(tmp_path: Path) -> None:
    first = AuditLog(tmp_path / "audit.db")
    first.record(
        AuditEvent.CONNECTION_REFUSED, origin="https://evil.example", code="origin_not_allowed"
    )
    first.close()
    second = AuditLog(tmp_path / "audit.db")
    assert [r.origin for r in second.query()] == ["https://evil.example"]
    second.close()


def test_a_database_made_with_the_autoincrement_schema_keeps_its_records_in_order(
    tmp_path: Path,
) -> None:
    # New databases have a plain rowid id; files written by earlier versions keep theirs.
    with sqlite3.connect(tmp_path / "audit.db") as old:
        old.execute(
            "CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL, "
            "at REAL NOT NULL, session_id TEXT, user_id TEXT, agent_id TEXT, origin TEXT, "
            "request_id TEXT, tool TEXT, code TEXT, duration_ms REAL, detail TEXT)"
        )
        old.execute("INSERT INTO audit (event, at, request_id) VALUES ('tool_call', 1.0, 'r1')")
    old.close()
    log = AuditLog(tmp_path / "audit.db")
    log.record(AuditEvent.TOOL_CALL, request_id="r2")
    assert [r.request_id for r in log.query()] == ["r1", "r2"]
    log.close()


def test_records_after_close_are_dropped_quietly(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    log.close()
    log.record(AuditEvent.SESSION_CONNECTED, session_id="late")


async def committed(log: AuditLog, event: AuditEvent, **values: Any) -> None:
    """``record_then``, awaited: returns once the commit callback ran (raises its error)."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_commit(error: sqlite3.Error | None) -> None:
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    log.record_then(on_commit, event, **values)
    await done


async def test_record_then_calls_back_once_another_connection_can_read_it(
    tmp_path: Path,
) -> None:
    # SPEC P6: the relay holds a tool call's answer until this callback, so once it runs the
    # record must be on disk for any reader (and so for a restart after kill -9).
    log = AuditLog(tmp_path / "audit.db")
    try:
        await committed(log, AuditEvent.TOOL_CALL, request_id="r-1", code="ok")
        with sqlite3.connect(tmp_path / "audit.db") as reader:
            rows = reader.execute("SELECT request_id FROM audit").fetchall()
        assert rows == [("r-1",)]
    finally:
        log.close()


async def test_record_then_after_close_calls_back_without_writing(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    log.close()
    await committed(log, AuditEvent.TOOL_CALL, request_id="r-2")


async def test_record_then_calls_back_on_its_own_loop_thread_after_the_commit(
    tmp_path: Path,
) -> None:
    # The commit runs on the loop that recorded, in the same iteration as the callback: no
    # writer thread to wake and wait for (issue 7).
    log = AuditLog(tmp_path / "audit.db")
    seen: list[tuple[int, list[Any]]] = []
    done = asyncio.get_running_loop().create_future()

    def on_commit(error: sqlite3.Error | None) -> None:
        with sqlite3.connect(tmp_path / "audit.db") as reader:
            rows = reader.execute("SELECT request_id FROM audit").fetchall()
        seen.append((threading.get_ident(), rows))
        done.set_result(error)

    try:
        log.record_then(on_commit, AuditEvent.TOOL_CALL, request_id="r-1")
        assert await done is None
        assert seen == [(threading.get_ident(), [("r-1",)])]
    finally:
        log.close()


async def test_a_query_from_another_thread_commits_what_a_loop_holds_and_wakes_that_loop(
    tmp_path: Path,
) -> None:
    log = AuditLog(tmp_path / "audit.db")
    done = asyncio.get_running_loop().create_future()
    loop_thread = threading.get_ident()

    def on_commit(error: sqlite3.Error | None) -> None:
        done.set_result(threading.get_ident())

    try:
        log.record_then(on_commit, AuditEvent.TOOL_CALL, request_id="r-1")
        # The loop is blocked in this call, so the query thread commits the loop's batch.
        found = await asyncio.to_thread(log.query, request_id="r-1")
        assert [r.request_id for r in found] == ["r-1"]
        assert await done == loop_thread
    finally:
        log.close()


def _checkpointed_request_ids(path: Path) -> list[str]:
    # immutable=1 reads the database file alone, ignoring the WAL: it sees only records a
    # checkpoint has copied there.
    with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as reader:
        # The table itself is created through the WAL too.
        if not reader.execute("SELECT 1 FROM sqlite_master WHERE name = 'audit'").fetchall():
            return []
        return [row[0] for row in reader.execute("SELECT request_id FROM audit ORDER BY id")]


def test_committing_never_checkpoints_so_no_fsync_runs_on_the_event_loop(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", checkpoint_interval_s=3600)
    try:
        # Far past SQLite's default auto-checkpoint threshold of 1,000 WAL pages.
        for n in range(3000):
            log.record(AuditEvent.TOOL_CALL, request_id=f"r-{n}", detail="x" * 200)
        assert len(log.query(limit=5000)) == 3000
        assert _checkpointed_request_ids(tmp_path / "audit.db") == []
    finally:
        log.close()


def _checkpointed_request_ids_or_none(path: Path) -> list[str] | None:
    """None while a checkpoint is copying pages: an immutable reader does not lock, so it can
    read the file half-written ("database disk image is malformed")."""
    try:
        return _checkpointed_request_ids(path)
    except sqlite3.DatabaseError:
        return None


def test_the_checkpoint_thread_moves_committed_records_into_the_database_file(
    tmp_path: Path,
) -> None:
    log = AuditLog(tmp_path / "audit.db", checkpoint_interval_s=0.02)
    try:
        log.record(AuditEvent.TOOL_CALL, request_id="r-1")
        deadline = time.monotonic() + 10
        while not _checkpointed_request_ids_or_none(tmp_path / "audit.db"):
            assert time.monotonic() < deadline, "no checkpoint within 10 s"
            time.sleep(0.02)
        assert _checkpointed_request_ids(tmp_path / "audit.db") == ["r-1"]
    finally:
        log.close()
