"""The SQLite audit log (SPEC B2, P6)."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
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


# --------------------------------------------------------------------------- group commit


class _Commits:
    """``record_then`` callbacks that note, when they run, the time and which request ids
    another connection can already read: a callback must never run before its record is
    committed (the relay answers from it, SPEC P6)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self.seen: dict[str, tuple[float, set[str]]] = {}
        self.enqueued: dict[str, float] = {}
        self.all_done = asyncio.Event()
        self.expected = 0

    def record(self, log: AuditLog, request_id: str) -> None:
        self.expected += 1
        self.all_done.clear()
        self.enqueued[request_id] = time.monotonic()

        def on_commit(error: sqlite3.Error | None) -> None:
            assert error is None
            with sqlite3.connect(self._path) as reader:
                visible = {row[0] for row in reader.execute("SELECT request_id FROM audit")}
            self.seen[request_id] = (time.monotonic(), visible)
            if len(self.seen) == self.expected:
                self.all_done.set()

        log.record_then(on_commit, AuditEvent.TOOL_CALL, request_id=request_id)

    def waited(self, request_id: str) -> float:
        return self.seen[request_id][0] - self.enqueued[request_id]

    def assert_each_committed_before_its_callback(self) -> None:
        for request_id, (_, visible) in self.seen.items():
            assert request_id in visible

    async def record_spaced(self, log: AuditLog, count: int, gap_s: float) -> None:
        """Record ``r-0`` .. ``r-{count-1}`` ``gap_s`` apart, then wait until all settled."""
        for n in range(count):
            self.record(log, f"r-{n}")
            await asyncio.sleep(gap_s)
        await self.settled()

    async def settled(self) -> None:
        """Wait until every recorded callback ran; each found its own record committed."""
        await asyncio.wait_for(self.all_done.wait(), 10)
        self.assert_each_committed_before_its_callback()


@contextlib.contextmanager
def _windowed(tmp_path: Path, window_s: float) -> Iterator[tuple[AuditLog, _Commits]]:
    """An audit log with a commit window of ``window_s``, and callbacks watching it."""
    log = AuditLog(tmp_path / "audit.db", commit_window_s=window_s)
    try:
        yield log, _Commits(tmp_path / "audit.db")
    finally:
        log.close()


async def test_records_arriving_close_together_share_one_commit(tmp_path: Path) -> None:
    # Records a loop iteration or more apart but within the window share one transaction
    # (group commit), and each callback still runs only after its record committed.
    with _windowed(tmp_path, 0.5) as (log, commits):
        await commits.record_spaced(log, 10, 0.001)
        # The first record found the log idle and went at once; the nine after it shared one.
        assert (log.commits, log.committed_records) == (2, 10)
        assert commits.waited("r-0") < 0.25


async def test_a_lone_record_is_not_held_for_the_window(tmp_path: Path) -> None:
    # Records further apart than the window (low load): nothing would share the commit, so
    # none waits for the window.
    with _windowed(tmp_path, 0.2) as (log, commits):
        for n in range(3):
            commits.record(log, f"r-{n}")
            await asyncio.wait_for(commits.all_done.wait(), 10)
            await asyncio.sleep(0.3)
        commits.assert_each_committed_before_its_callback()
        assert max(commits.waited(f"r-{n}") for n in range(3)) < 0.15
        assert log.commits == 3


async def test_a_record_waits_no_longer_than_the_window(tmp_path: Path) -> None:
    with _windowed(tmp_path, 0.1) as (log, commits):
        commits.record(log, "r-0")
        await asyncio.sleep(0)  # the next record comes a loop iteration later: busy
        commits.record(log, "r-1")
        await commits.settled()
        # It did wait for company (it was the first of its batch), and then went: the window
        # plus scheduling slack on a loaded machine.
        assert 0.09 <= commits.waited("r-1") < 0.6
        assert log.commits == 2


async def test_a_window_closes_early_once_many_records_wait(tmp_path: Path) -> None:
    with _windowed(tmp_path, 30) as (log, commits):
        commits.record(log, "first")
        await asyncio.wait_for(commits.all_done.wait(), 10)
        # A burst: the window opens with the first of it and closes when 32 wait.
        for n in range(40):
            commits.record(log, f"r-{n}")
            await asyncio.sleep(0)
        started = time.monotonic()
        while len(commits.seen) < 33:
            assert time.monotonic() - started < 10, "the full batch did not commit early"
            await asyncio.sleep(0.01)
        commits.assert_each_committed_before_its_callback()
        assert log.committed_records == 33
        assert log.commits == 2


async def test_without_a_window_each_loop_iteration_commits(tmp_path: Path) -> None:
    with _windowed(tmp_path, 0) as (log, commits):
        await commits.record_spaced(log, 5, 0.001)
        assert log.commits == 5


async def test_a_flush_from_another_thread_commits_a_batch_waiting_in_its_window(
    tmp_path: Path,
) -> None:
    with _windowed(tmp_path, 30) as (log, commits):
        commits.record(log, "r-0")
        await asyncio.wait_for(commits.all_done.wait(), 10)
        commits.record(log, "r-1")  # opens a 30 s window
        await asyncio.to_thread(log.flush)
        await commits.settled()
        await asyncio.sleep(0.05)
        assert (log.commits, log.committed_records) == (2, 2)


async def test_a_record_past_half_the_window_commits_its_batch_at_once(tmp_path: Path) -> None:
    # It closes the window in its own loop iteration instead of waiting for the timer.
    # A 1 s window and a record 0.6 s into it: 0.4 s of slack before the timer would fire,
    # for a loaded machine oversleeping.
    with _windowed(tmp_path, 1.0) as (log, commits):
        commits.record(log, "r-0")
        await asyncio.sleep(0)
        commits.record(log, "r-1")  # opens the window
        await asyncio.sleep(0.6)
        commits.record(log, "r-2")
        await commits.settled()
        assert commits.waited("r-2") < 0.1
        assert 0.55 < commits.waited("r-1") < 0.99
        assert (log.commits, log.committed_records) == (2, 3)
