"""The backend audit log: SQLite in WAL mode (SPEC B2, P6).

What is recorded: sessions connecting, resuming, disconnecting and being refused; every tool
call with its requestId, sessionId, tool, result code and duration; page results the relay
ignored (late, duplicate, unknown). What is never recorded: token values, tool arguments
(they may carry what the user typed) and page content.

Writes go through one dedicated thread that owns the SQLite connection. The event loop only
puts a record on a queue, so a slow disk (fsync on a WAL checkpoint) never stalls WebSocket
traffic; the thread commits whatever has queued up together (group commit: one INSERT, which in
autocommit mode is one transaction, per up to 500 records).

Durability. ``record`` is fire-and-forget. ``record_then`` calls a function once the record's
transaction has committed; the relay
answers a tool call only after that, so a tool call an agent saw answered is on disk (in the WAL) even if the process is killed
the next instant (``kill -9``; tested in ``tests/backend/test_chaos.py``). "Acknowledged"
means exactly that: the agent received the result. ``synchronous=NORMAL`` is the documented
safe setting for WAL: a committed transaction survives a process crash; only an OS crash or
power loss may lose the last transactions, never corrupt the file. Records that are only
``record``-ed (connections, refusals) may be lost in the last few milliseconds before a crash.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import operator
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

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
# dataclasses.astuple deep-copies field by field in Python; this runs on the writer thread,
# which competes with the event loop for the GIL, once per record.
_row = operator.attrgetter(*_COLUMNS)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
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

_STOP = object()
# One multi-row INSERT per chunk rather than executemany: executemany releases and re-takes
# the GIL around every row's step, and each re-take can wait a whole switch interval (5 ms)
# while the event loop thread is busy, so a batch of N records cost up to N waits. 11
# columns x 500 rows stays under SQLite's 32,766 bound parameters.
_ROWS_PER_INSERT = 500


@functools.lru_cache(maxsize=_ROWS_PER_INSERT)
def _insert_statement(rows: int) -> str:
    values = "(" + ", ".join("?" for _ in _COLUMNS) + ")"
    return f"INSERT INTO audit ({', '.join(_COLUMNS)}) VALUES {', '.join([values] * rows)}"


@dataclass(frozen=True, slots=True)
class _Acknowledged:
    record: AuditRecord
    loop: asyncio.AbstractEventLoop
    # Called on ``loop`` once the record's transaction ended: None, or the write's error.
    on_commit: Callable[[sqlite3.Error | None], None]


class AuditLog:
    """Append-only audit trail. ``path=None`` keeps it in memory (tests, embedded servers)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # Records made on an event loop are handed to the writer once per loop iteration, as
        # one list: a queue put per record (each waking the writer thread, which then wants
        # the GIL) cost the relay about a third of its throughput (measured, issue 7).
        self._batches: dict[asyncio.AbstractEventLoop, list[Any]] = {}
        self._batches_lock = threading.Lock()
        self._ready: Future[None] = Future()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="mao-embed-audit", daemon=True)
        self._thread.start()
        # Surface an unusable path (permissions, read-only disk) at start-up, not mid-call.
        self._ready.result(timeout=10)

    def record(self, event: AuditEvent, **values: Any) -> None:
        if self._closed:
            return
        self._enqueue(AuditRecord(event=event, at=values.pop("at", time.time()), **values))

    def record_then(
        self,
        on_commit: Callable[[sqlite3.Error | None], None],
        event: AuditEvent,
        **values: Any,
    ) -> None:
        """Like ``record``, and ``on_commit(None)`` (or ``on_commit(error)`` if the write
        failed) runs on the calling loop once the record is committed, directly from the
        writer's hand-back; call it from a running loop. The writer wakes each waiting loop
        once per transaction, not once per record: per-record wake-ups cost a third of the
        relay's throughput. A callback, not a future: a future's done-callbacks run one loop
        iteration later each, and under load an iteration takes milliseconds (issue 7).
        After ``close`` it is called at once, nothing written."""
        if self._closed:
            on_commit(None)
            return
        record = AuditRecord(event=event, at=values.pop("at", time.time()), **values)
        self._enqueue(_Acknowledged(record, asyncio.get_running_loop(), on_commit))

    def query(
        self,
        *,
        event: AuditEvent | None = None,
        session_id: str | None = None,
        request_id: str | None = None,
        limit: int = 1000,
    ) -> list[AuditRecord]:
        """Records in the order written, after everything queued so far has been committed."""
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

        def run(connection: sqlite3.Connection) -> list[AuditRecord]:
            rows = connection.execute(sql, params).fetchall()
            return [AuditRecord(AuditEvent(row[0]), *row[1:]) for row in rows]

        return self._submit(run)

    def flush(self) -> None:
        self._submit(lambda connection: None)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._hand_over_all()
        self._queue.put(_STOP)
        self._thread.join(timeout=10)

    def _enqueue(self, item: AuditRecord | _Acknowledged) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._queue.put(item)
            return
        with self._batches_lock:
            batch = self._batches.get(loop)
            if batch is None:
                self._batches[loop] = [item]
            else:
                batch.append(item)
        if batch is None:
            loop.call_soon(self._hand_over, loop)

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._batches_lock:
            batch = self._batches.pop(loop, None)
        if batch:
            self._queue.put(batch)

    def _hand_over_all(self) -> None:
        with self._batches_lock:
            batches = list(self._batches.values())
            self._batches.clear()
        for batch in batches:
            self._queue.put(batch)

    def _submit(self, job: Callable[[sqlite3.Connection], Any]) -> Any:
        if self._closed:
            raise RuntimeError("audit log is closed")
        future: Future[Any] = Future()
        # Everything recorded so far goes first, so a query sees it.
        self._hand_over_all()
        self._queue.put((job, future))
        return future.result(timeout=30)

    def _run(self) -> None:
        try:
            connection = self._open()
        except (sqlite3.Error, OSError) as error:
            self._ready.set_exception(error)
            return
        self._ready.set_result(None)
        try:
            while True:
                item = self._queue.get()
                batch = item if isinstance(item, list) else [item]
                # Drain what has queued meanwhile so a burst costs one commit.
                while len(batch) < 500:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if isinstance(item, list):
                        batch.extend(item)
                    else:
                        batch.append(item)
                if not self._process(connection, batch):
                    return
        finally:
            connection.close()

    def _process(self, connection: sqlite3.Connection, batch: list[Any]) -> bool:
        records = [
            item.record if isinstance(item, _Acknowledged) else item
            for item in batch
            if isinstance(item, AuditRecord | _Acknowledged)
        ]
        waiting = [item for item in batch if isinstance(item, _Acknowledged)]
        error: sqlite3.Error | None = None
        if records:
            try:
                # Autocommit: each INSERT is its own transaction, committed when execute
                # returns. No BEGIN and COMMIT statements: each one released and re-took the
                # GIL (several times: prepare, step, finalize), and under load every re-take
                # waited behind the busy event loop, so a commit cost ~8 handoffs instead of
                # one and the answers held for it waited that long (issue 7).
                for start in range(0, len(records), _ROWS_PER_INSERT):
                    chunk = records[start : start + _ROWS_PER_INSERT]
                    connection.execute(
                        _insert_statement(len(chunk)),
                        [value for record in chunk for value in _row(record)],
                    )
            except sqlite3.Error as failed:
                # The audit trail must not take the relay down with it; losing records is
                # reported loudly instead, and to whoever waits for the commit.
                logger.exception("could not write %d audit records", len(records))
                error = failed
        if waiting:
            _wake(waiting, error)
        for item in batch:
            if isinstance(item, tuple):
                job, future = item
                try:
                    future.set_result(job(connection))
                except sqlite3.Error as error:
                    future.set_exception(error)
        return not any(item is _STOP for item in batch)

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: autocommit, see ``_process``.
        if self.path is None:
            connection = sqlite3.connect(":memory:", check_same_thread=True, isolation_level=None)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, check_same_thread=True, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.executescript(_SCHEMA)
        return connection


def _wake(waiting: list[_Acknowledged], error: sqlite3.Error | None) -> None:
    """Run the commit callbacks from the writer thread: one hand-off per event loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[Callable[[sqlite3.Error | None], None]]] = {}
    for item in waiting:
        by_loop.setdefault(item.loop, []).append(item.on_commit)
    for loop, callbacks in by_loop.items():
        try:
            loop.call_soon_threadsafe(_run_callbacks, callbacks, error)
        except RuntimeError:
            # That loop has closed (server shut down): nobody is waiting any more.
            continue


def _run_callbacks(
    callbacks: list[Callable[[sqlite3.Error | None], None]], error: sqlite3.Error | None
) -> None:
    for on_commit in callbacks:
        try:
            on_commit(error)
        except Exception:
            # One waiter's failure must not keep the others waiting.
            logger.exception("audit commit callback failed")
