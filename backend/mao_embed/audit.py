"""The backend audit log: SQLite in WAL mode (SPEC B2, P6).

What is recorded: sessions connecting, resuming, disconnecting and being refused; every tool
call with its requestId, sessionId, tool, result code and duration; page results the relay
ignored (late, duplicate, unknown). What is never recorded: token values, tool arguments
(they may carry what the user typed) and page content.

Records made on an event loop are committed on that loop's thread (one INSERT, which in
autocommit mode is one transaction, per up to 500 records); records made elsewhere (the CLI,
synchronous tests) are committed at once by the caller. An earlier design handed batches to a
writer thread: at 1,000 tool calls/s the thread used ~75 us of CPU per call and the loop thread
as much again to hand batches over and take answers back, while a one-row commit costs ~40 us;
committing on the loop cut the server's CPU per call by 13-17% in alternated benchmark series
(issue 7, bench/README.md, relay_load fourth round). In WAL mode with ``synchronous=NORMAL`` a
commit appends to the WAL file without fsync; the fsyncs happen in checkpoints, and those run
on a checkpoint thread with its own connection (the committing connection has
``wal_autocheckpoint=0``), so a slow disk does not stall the loop on a checkpoint. The loop
does wait for a commit's ``write`` calls, and at most ``_BUSY_TIMEOUT_S`` for another process's
write lock on the same file.

Group commit. About half of a one-record commit is fixed cost (the transaction, the WAL frame
headers and ``write`` calls, the locks), the rest is per record (mostly the two indexes):
measured in isolation, 1 record ~24 us of CPU, 2 ~35, 4 ~54. A server that keeps up with
1,000 calls/s gives every call its own loop iteration and so its own commit. So, like
PostgreSQL's ``commit_delay``, records may wait up to ``commit_window_s``
(``ServerConfig.audit_commit_window_ms``, default 1 ms; 0 commits once per loop iteration) for
others to share their commit. The window opens only when it can help: when the previous record
came less than a window before this one (records arrive faster than one per window, so another
is likely to come). A lone record after a quiet spell is committed in the next loop iteration,
as without a window. A window closes early, in the loop iteration of the record that closes
it, once ``_EARLY_COMMIT_ROWS`` records wait (the fixed cost per record is then small, and
holding more answers would only add latency) or when a record comes after half the window has
passed: the batch has had most of the sharing the window can give, and committing then spares
the loop a wake-up for the timer (records coming steadily every half to one window share
commits in pairs, and no timer wakes the loop). Nothing else changes: the callbacks of
``record_then`` still run only after their record committed. uvloop rounds a timer to whole
milliseconds (a window under 0.5 ms ends in the next loop iteration), so the default window
ends 1.0-1.1 ms after it opened on an idle loop; on a busy or starved loop a timer, like any
callback, runs late.

Durability. ``record`` is fire-and-forget. ``record_then`` calls a function once the record's
transaction has committed; the relay answers a tool call only after that, so a tool call an
agent saw answered is on disk (in the WAL) even if the process is killed the next instant
(``kill -9``; tested in ``tests/backend/test_chaos.py``). "Acknowledged" means exactly that:
the agent received the result. ``synchronous=NORMAL`` is the documented safe setting for WAL:
a committed transaction survives a process crash; only an OS crash or power loss may lose the
last transactions, never corrupt the file. Records that are only ``record``-ed (connections,
refusals) may be lost if the process dies before their commit (at most a commit window).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from mao_embed.config import DEFAULT_AUDIT_COMMIT_WINDOW_MS

logger = logging.getLogger(__name__)


class AuditEvent(StrEnum):
    SESSION_CONNECTED = "session_connected"
    SESSION_RESUMED = "session_resumed"
    SESSION_DISCONNECTED = "session_disconnected"
    CONNECTION_REFUSED = "connection_refused"
    FRAME_REJECTED = "frame_rejected"
    TOOL_CALL = "tool_call"
    CANCEL_SENT = "cancel_sent"
    RESULT_IGNORED = "result_ignored"
    # One panel chat message answered by the agent loop; code says how it ended.
    CHAT_TURN = "chat_turn"
    # Reported by the page's authorization center (protocol ``audit_event``, SPEC P6).
    PAGE_AUTHORIZATION = "page_authorization"
    PAGE_ACTION = "page_action"


@dataclass(frozen=True, slots=True)
class AuditRecord:
    event: AuditEvent
    at: float = 0.0
    session_id: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    origin: str | None = None
    request_id: str | None = None
    tool: str | None = None
    code: str | None = None
    duration_ms: float | None = None
    detail: str | None = None


_COLUMNS = tuple(f.name for f in fields(AuditRecord))
_VALUE_COLUMNS = _COLUMNS[2:]
_Row = tuple[Any, ...]
# ``id`` is the rowid without AUTOINCREMENT: SQLite then picks max(rowid) + 1, which in an
# append-only table is the same increasing sequence, and a commit skips the sqlite_sequence
# row (one WAL page fewer: ~2.5 us of the loop thread's ~40 us per commit, issue 7). Databases
# created with AUTOINCREMENT keep it (CREATE TABLE IF NOT EXISTS); both order by id alike.
# The two indexes cost ~9 us per commit each; they keep the audit queries by session and by
# request from scanning the table.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    event TEXT NOT NULL,
    at REAL NOT NULL,
    session_id TEXT,
    user_id TEXT,
    agent_id TEXT,
    origin TEXT,
    request_id TEXT,
    tool TEXT,
    code TEXT,
    duration_ms REAL,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS audit_session ON audit (session_id, at);
CREATE INDEX IF NOT EXISTS audit_request ON audit (request_id);
"""

# One multi-row INSERT per chunk rather than executemany, which steps (and releases and re-takes
# the GIL) once per row. 11 columns x 500 rows stays under SQLite's 32,766 bound parameters.
_ROWS_PER_INSERT = 500
# How long a commit waits for another connection's write lock (a second server on the same
# file) before the batch is reported as failed; the event loop waits with it.
_BUSY_TIMEOUT_S = 0.1
# WAL checkpoints (the fsyncs) are taken this often on the checkpoint thread.
CHECKPOINT_INTERVAL_S = 1.0
# Group commit (module docstring): how long records may wait for others to share their commit.
COMMIT_WINDOW_S = DEFAULT_AUDIT_COMMIT_WINDOW_MS / 1000
# A window closes at once when this many records wait: a commit's fixed cost (~12 us of the
# ~24 us of a one-record commit) is then well under 1 us per record.
_EARLY_COMMIT_ROWS = 32


@functools.lru_cache(maxsize=_ROWS_PER_INSERT)
def _insert_statement(rows: int) -> str:
    values = "(" + ", ".join("?" for _ in _COLUMNS) + ")"
    return f"INSERT INTO audit ({', '.join(_COLUMNS)}) VALUES {', '.join([values] * rows)}"


def _row_of(event: AuditEvent, values: dict[str, Any]) -> _Row:
    """One record as its row, in ``_COLUMNS`` order. Records wait for their commit as rows:
    building an ``AuditRecord`` (a frozen dataclass sets its 11 fields one
    ``object.__setattr__`` at a time) and reading it back cost ~3 us per record on the loop
    thread (issue 7); ``query`` still answers ``AuditRecord``s."""
    at = values.pop("at", None)
    row = (event, time.time() if at is None else at, *map(values.pop, _VALUE_COLUMNS, _NONES))
    if values:
        raise TypeError(f"unknown audit record fields: {', '.join(sorted(values))}")
    return row


_NONES = (None,) * len(_VALUE_COLUMNS)
_Callback = Callable[[sqlite3.Error | None], None]


class _Batch:
    """What one event loop recorded since its last commit: rows, and the ``record_then``
    callbacks to run (on that loop) once they have committed."""

    __slots__ = ("callbacks", "opened", "rows", "timer")

    def __init__(self, opened: float) -> None:
        self.rows: list[_Row] = []
        self.callbacks: list[_Callback] = []
        # When the first record came (time.monotonic), and the timer that ends the batch's
        # window while one is open; the timer is only used on the loop's own thread.
        self.opened = opened
        self.timer: asyncio.TimerHandle | None = None


class AuditLog:
    """Append-only audit trail. ``path=None`` keeps it in memory (tests, embedded servers)."""

    def __init__(
        self,
        path: Path | None,
        *,
        checkpoint_interval_s: float = CHECKPOINT_INTERVAL_S,
        commit_window_s: float = COMMIT_WINDOW_S,
    ) -> None:
        if commit_window_s < 0:
            raise ValueError("commit_window_s must be 0 or more")
        self.path = path
        self._window_s = commit_window_s
        # When the latest record was enqueued on a loop (time.monotonic): whether the next
        # one opens a window.
        self._last_enqueued = float("-inf")
        # Transactions written and records in them, for tests and benchmarks.
        self.commits = 0
        self.committed_records = 0
        # An unusable path (permissions, read-only disk) fails here, at start-up, not mid-call.
        self._connection = _open(path)
        # The connection is used by each loop's thread and by callers off any loop (query,
        # flush, close); sqlite3 objects must not be used by two threads at once.
        self._connection_lock = threading.Lock()
        # Records made on each event loop since its last commit, committed together (group
        # commit, module docstring).
        self._batches: dict[asyncio.AbstractEventLoop, _Batch] = {}
        self._batches_lock = threading.Lock()
        self._checkpoints = (
            _Checkpointer(path, checkpoint_interval_s) if path is not None else None
        )
        self._closed = False

    def record(self, event: AuditEvent, **values: Any) -> None:
        if self._closed:
            return
        row = _row_of(event, values)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            # Off any event loop: commit now, in the caller's thread.
            self._write([row])
            return
        self._enqueue(loop, row, None)

    def record_then(
        self,
        on_commit: Callable[[sqlite3.Error | None], None],
        event: AuditEvent,
        **values: Any,
    ) -> None:
        """Like ``record``, and ``on_commit(None)`` (or ``on_commit(error)`` if the write
        failed) runs on the calling loop once the record is committed; call it from a running
        loop. The commit and the callbacks run in the same loop iteration, directly: a future's
        done-callbacks would run one iteration later each, and under load an iteration takes
        milliseconds (issue 7). After ``close`` it is called at once, nothing written."""
        if self._closed:
            on_commit(None)
            return
        self._enqueue(asyncio.get_running_loop(), _row_of(event, values), on_commit)

    def query(
        self,
        *,
        event: AuditEvent | None = None,
        session_id: str | None = None,
        request_id: str | None = None,
        limit: int = 1000,
    ) -> list[AuditRecord]:
        """Records in the order written, after everything recorded so far has been committed."""
        clauses, params = [], []
        for column, value in (
            ("event", event),
            ("session_id", session_id),
            ("request_id", request_id),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(str(value))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT {', '.join(_COLUMNS)} FROM audit {where} ORDER BY id LIMIT ?"
        params.append(limit)
        if self._closed:
            raise RuntimeError("audit log is closed")
        self._commit_all()
        with self._connection_lock:
            rows = self._connection.execute(sql, params).fetchall()
        return [AuditRecord(AuditEvent(row[0]), *row[1:]) for row in rows]

    def flush(self) -> None:
        """Commit everything recorded so far, from whichever loop."""
        if self._closed:
            raise RuntimeError("audit log is closed")
        self._commit_all()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._commit_all()
        if self._checkpoints is not None:
            self._checkpoints.stop()
        with self._connection_lock:
            # The last connection to close checkpoints the WAL into the database file.
            self._connection.close()

    def _enqueue(
        self, loop: asyncio.AbstractEventLoop, row: _Row, on_commit: _Callback | None
    ) -> None:
        now = time.monotonic()
        with self._batches_lock:
            batch = self._batches.get(loop)
            first = batch is None
            if batch is None:
                batch = self._batches[loop] = _Batch(now)
            batch.rows.append(row)
            if on_commit is not None:
                batch.callbacks.append(on_commit)
            waiting = len(batch.rows)
            busy = now - self._last_enqueued < self._window_s
            self._last_enqueued = now
        if first:
            if busy:
                batch.timer = loop.call_later(self._window_s, self._commit_batch, loop, batch)
            else:
                loop.call_soon(self._commit_batch, loop, batch)
        elif batch.timer is not None and (
            waiting >= _EARLY_COMMIT_ROWS or now - batch.opened >= self._window_s / 2
        ):
            # Close the window now, in the loop iteration this record woke the loop for,
            # rather than wake it once more for the timer: a record that finds the window
            # half over has had most of the sharing a window gives.
            batch.timer.cancel()
            batch.timer = None
            loop.call_soon(self._commit_batch, loop, batch)

    def _commit_batch(self, loop: asyncio.AbstractEventLoop, batch: _Batch) -> None:
        """On ``loop``'s thread: commit ``batch``, then run its callbacks right away. A flush
        from another thread may have taken the batch first; then nothing is left to do."""
        with self._batches_lock:
            if self._batches.get(loop) is not batch:
                return
            del self._batches[loop]
        if batch.timer is not None:
            batch.timer.cancel()
        _run_callbacks(batch.callbacks, self._write(batch.rows))

    def _commit_all(self) -> None:
        """Commit every loop's pending records from the calling thread; their callbacks are
        handed to their own loops (which may be blocked in this very call)."""
        with self._batches_lock:
            batches = list(self._batches.items())
            self._batches.clear()
        for loop, batch in batches:
            error = self._write(batch.rows)
            if batch.callbacks:
                try:
                    loop.call_soon_threadsafe(_run_callbacks, batch.callbacks, error)
                except RuntimeError:
                    # That loop has closed (server shut down): nobody is waiting any more.
                    continue

    def _write(self, rows: list[_Row]) -> sqlite3.Error | None:
        try:
            with self._connection_lock:
                # Autocommit: each INSERT is its own transaction, committed when execute
                # returns.
                for start in range(0, len(rows), _ROWS_PER_INSERT):
                    chunk = rows[start : start + _ROWS_PER_INSERT]
                    self._connection.execute(
                        _insert_statement(len(chunk)),
                        [value for row in chunk for value in row],
                    )
                    self.commits += 1
                    self.committed_records += len(chunk)
        except sqlite3.Error as error:
            # The audit trail must not take the relay down with it; losing records is
            # reported loudly instead, and to whoever waits for the commit.
            logger.exception("could not write %d audit records", len(rows))
            return error
        return None


class _Checkpointer:
    """Checkpoints the WAL into the database file on its own thread and connection, so their
    fsyncs never run on an event loop (the committing connection never checkpoints)."""

    def __init__(self, path: Path, interval_s: float) -> None:
        self._path = path
        self._interval_s = interval_s
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="mao-embed-audit-checkpoint", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        connection = sqlite3.connect(self._path, isolation_level=None)
        try:
            while not self._stopping.wait(self._interval_s):
                try:
                    # PASSIVE: copies what no reader still needs, never waits for the writer.
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    # The WAL keeps growing until a later checkpoint succeeds; nothing lost.
                    logger.exception("audit WAL checkpoint failed")
        finally:
            connection.close()


def _open(path: Path | None) -> sqlite3.Connection:
    # isolation_level=None: autocommit, see ``AuditLog._write``.
    if path is None:
        connection = sqlite3.connect(
            ":memory:", check_same_thread=False, isolation_level=None, timeout=_BUSY_TIMEOUT_S
        )
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=_BUSY_TIMEOUT_S
        )
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA wal_autocheckpoint=0")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.executescript(_SCHEMA)
    return connection


def _run_callbacks(callbacks: list[_Callback], error: sqlite3.Error | None) -> None:
    for on_commit in callbacks:
        try:
            on_commit(error)
        except Exception:
            # One waiter's failure must not keep the others waiting.
            logger.exception("audit commit callback failed")
