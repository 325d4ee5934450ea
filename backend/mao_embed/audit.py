"""The backend audit log: SQLite in WAL mode, fed through an append-only journal (SPEC B2, P6).

What is recorded: sessions connecting, resuming, disconnecting and being refused; every tool
call with its requestId, sessionId, tool, result code and duration; page results the relay
ignored (late, duplicate, unknown). What is never recorded: token values, tool arguments
(they may carry what the user typed) and page content.

Where records go. The audit log is the SQLite database (``audit`` table, WAL mode,
``synchronous=NORMAL``); operators query it. A record reaches it in two steps:

1. ``record`` appends the record to this process's journal file, one JSON line with one
   ``os.write``, and returns. When ``record`` has returned, the record is in the OS page
   cache: a ``kill -9`` of the server the next instant does not lose it, which is exactly the
   durability a WAL commit with ``synchronous=NORMAL`` gave (that does not fsync either; an OS
   crash or power loss may lose the last records in both designs). The relay answers a tool
   call only after its record returned, so every answer an agent saw is in the journal.
2. An importer thread moves new journal lines into SQLite every ``import_interval_s``, many
   records per transaction, together with how far the journal has been imported (table
   ``audit_journal``), so a crash between the two never imports a line twice. It also
   checkpoints the WAL (the fsyncs) every ``checkpoint_interval_s``. ``query``, ``flush`` and
   ``close`` import first, so they see every record made before them.

Why a journal (issue 7): a SQLite commit of one record cost ~40 us of CPU back to back and
80-138 us run cold on a busy server (WAL frame writes, locks, two index updates), and tool
calls at 1,000/s each got their own commit; answers also waited a loop iteration for it. A
journal record costs ~5 us on the event loop's thread (the row, its JSON, one ``write``), the
answer goes out in the same loop iteration, and the import costs ~8-10 us per record in
batches of thousands on its own thread (``IMPORT_INTERVAL_S`` says what the cost depends on).
bench/README "Eighth round" has the end-to-end figures. Readers of the database from
another process see records up to one import interval late; the log itself never loses or
repeats one.

Recovery. Each ``AuditLog`` on a file writes its own journal,
``<db>.mao-journal.<pid>-<128 random bits>``, and holds an exclusive ``flock`` on it from its
creation until it is deleted (the lock goes when the process dies, however it dies). An
``AuditLog`` opening the database imports every journal nobody holds (a crashed server's),
from where its import had got to, then deletes it; a journal still locked belongs to a running
server on the same database and is left to it. A journal is created under a temporary name,
locked, then linked to its real name (``link`` never replaces a file), so nobody can take a
new journal for an orphan; a temporary name younger than a minute is left alone. Journals are
rotated after ``_ROTATE_BYTES`` imported bytes: records go to a new journal at once, the old
one stays locked until its rest is imported and it is deleted. ``record`` refuses (raises for)
any value the database could not store or the journal could not give back, so a record once
acknowledged is always importable; a line that does not decode anyway (a torn write at a full
disk, a hand-edited file) is skipped and logged as an error with its position, and a row the
database refuses is skipped and logged, the records around it imported.

With ``path=None`` (tests, embedded servers) the database is in memory and the journal is a
list; it is imported when 1,000 records wait and on ``query``, ``flush`` and ``close``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import logging
import math
import os
import secrets
import sqlite3
import threading
import time
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
    # Cluster mode: an agent's tool call this instance took and the page's instance ran (that
    # instance records the ``tool_call``); detail names the page's instance.
    TOOL_CALL_RELAYED = "tool_call_relayed"


_EVENTS = frozenset(AuditEvent)


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
    # The instance that made the record (``serve --instance``; None outside a cluster), so
    # records of one session from several instances' logs can be told apart and merged.
    instance: str | None = None


_COLUMNS = tuple(f.name for f in fields(AuditRecord))
# Given by the caller; ``instance`` is the log's own.
_VALUE_COLUMNS = _COLUMNS[2:-1]
_Row = tuple[Any, ...]
# ``id`` is the rowid without AUTOINCREMENT: SQLite then picks max(rowid) + 1, which in an
# append-only table is the same increasing sequence (databases created with AUTOINCREMENT keep
# it; both order by id alike). The two indexes keep the audit queries by session and by
# request from scanning the table. ``audit_journal``: how many bytes of each journal file are
# in ``audit``, written in the same transaction as the rows; rows of journals since deleted
# stay, so a late reader of a deleted journal finds it fully imported.
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
    detail TEXT,
    instance TEXT
);
CREATE INDEX IF NOT EXISTS audit_session ON audit (session_id, at);
CREATE INDEX IF NOT EXISTS audit_request ON audit (request_id);
CREATE TABLE IF NOT EXISTS audit_journal (
    name TEXT PRIMARY KEY,
    imported INTEGER NOT NULL
);
"""

# One multi-row INSERT per chunk rather than executemany, which steps (and so releases and
# re-takes the GIL) once per row: each re-take can make the event loop's thread hand the GIL
# over. Not one statement for a whole batch either: building and binding its values holds
# the GIL while the event loop's thread may wait for it; between chunks of 100 the importer
# yields it (``time.sleep(0)``). With the journal, tool-call p99 at 500 sessions rose from
# 2-3 to 4-5 ms (bench/README, eighth round); with chunks of 500 and no yield, ABBA p99 read
# 4.4 / 8.6 ms, with this 4.3 / 3.5 (two runs each: suggestive, not conclusive).
_ROWS_PER_INSERT = 100
_SET_IMPORTED = "INSERT OR REPLACE INTO audit_journal (name, imported) VALUES (?, ?)"
# The importer's connection is the only one writing the file in this process; it may wait
# this long for another server's write lock on the same file (off the event loop).
_BUSY_TIMEOUT_S = 5.0
# How often new journal lines are imported, and the WAL checkpointed (both on the importer
# thread). The cost of an import is mostly the session index: with 500 sessions calling in
# turn, each record lands on another leaf page of it, and every page a transaction changes is
# written to the WAL and again at the checkpoint. More records per transaction share those
# page writes. At 1,000 calls/s, 5 s is ~5,000 records per transaction: SQLite time ~8 us per
# record with the cache below, ~16 with 1,000 per transaction and the default 2 MiB cache
# (issue 7, session 8; 60,000-100,000 rows in, /tmp/s8/sq2.py in the closing note).
IMPORT_INTERVAL_S = 5.0
CHECKPOINT_INTERVAL_S = 5.0
# The importer's page cache (SQLite's default is 2 MiB): the session index's leaves that a
# busy server keeps touching stay in memory instead of being read back from the OS. Pages are
# allocated as they are used, so a small database costs what it holds.
_CACHE_KIB = 32 * 1024
# A journal is replaced by a new one once this much of it has been imported (~40,000 records).
_ROTATE_BYTES = 8 << 20
# At most this much journal is read per import transaction.
_READ_CHUNK = 4 << 20
# The in-memory journal is imported by ``record`` once this many records wait.
_MEMORY_IMPORT_ROWS = 1000
_JOURNAL_INFIX = ".mao-journal."
_NEW_JOURNAL_INFIX = ".mao-journal-new."
# A journal is created under a temporary name, locked, then named (``_FileJournal.create``);
# a temporary name younger than this may be a live server's, between creating and locking.
_NEW_JOURNAL_GRACE_S = 60.0


@functools.lru_cache(maxsize=_ROWS_PER_INSERT)
def _insert_statement(rows: int) -> str:
    values = "(" + ", ".join("?" for _ in _COLUMNS) + ")"
    return f"INSERT INTO audit ({', '.join(_COLUMNS)}) VALUES {', '.join([values] * rows)}"


def _row_of(event: AuditEvent, values: dict[str, Any], instance: str | None = None) -> _Row:
    """One record as its row, in ``_COLUMNS`` order, checked: a value the database could not
    store (or the journal could not give back) raises here, before anything is written,
    instead of being acknowledged and then refused by every import after it."""
    at = values.pop("at", None)
    row = (
        event, time.time() if at is None else at, *map(values.pop, _VALUE_COLUMNS, _NONES),
        instance,
    )
    if values:
        raise TypeError(f"unknown audit record fields: {', '.join(sorted(values))}")
    if event not in _EVENTS:
        raise ValueError(f"unknown audit event {event!r}")
    if not _is_number(row[1]):
        raise TypeError(f"audit record time must be a finite number, not {row[1]!r}")
    for name, value in zip(_VALUE_COLUMNS, row[2:-1], strict=True):
        if value is None:
            continue
        if isinstance(value, str):
            if not value.isascii():
                value.encode()  # a lone surrogate raises UnicodeEncodeError: SQLite refuses it
        elif name != "duration_ms" or not _is_number(value):
            raise TypeError(f"audit record field {name} cannot be {value!r}")
    return row


def _is_number(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    return kind is int and -(2**63) <= value < 2**63  # bool is not: type(True) is bool


_NONES = (None,) * len(_VALUE_COLUMNS)
# A StrEnum member encodes as its value; ASCII output escapes every control character, so a
# line never contains a newline of its own. ``JSONEncoder.encode`` builds a C encoder per
# call; one built once and reused encodes a record in ~1.75 us instead of ~2.7 (on the event
# loop's thread, once per tool call). Without the C module: the documented encoder.
_c_encoder = getattr(json.encoder, "c_make_encoder", None)
if _c_encoder is not None:
    _encode_chunks = _c_encoder(
        None, None, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )

    def _encode(row: _Row) -> str:
        return "".join(_encode_chunks(row, 0))

else:  # pragma: no cover - CPython always has the C encoder
    _encode = json.JSONEncoder(separators=(",", ":")).encode


class AuditLog:
    """Append-only audit trail. ``path=None`` keeps it in memory (tests, embedded servers)."""

    def __init__(
        self,
        path: Path | None,
        *,
        import_interval_s: float = IMPORT_INTERVAL_S,
        checkpoint_interval_s: float = CHECKPOINT_INTERVAL_S,
        rotate_bytes: int = _ROTATE_BYTES,
        instance: str | None = None,
    ) -> None:
        self.path = path
        self.instance = instance
        # Import transactions and records imported, for tests and benchmarks.
        self.imports = 0
        self.imported_records = 0
        # An unusable path (permissions, read-only disk) fails here, at start-up, not mid-call.
        self._connection = _open(path)
        # Held while importing and while anything uses the connection.
        self._import_lock = threading.Lock()
        self._closed = False
        self._rotate_bytes = rotate_bytes
        self._journal: _FileJournal | _MemoryJournal
        if path is None:
            self._journal = _MemoryJournal()
            self._importer: _Importer | None = None
            return
        for orphan in _orphan_journals(path):
            with self._import_lock:
                self._import_orphan(orphan)
        self._journal = _FileJournal.create(path)
        self._importer = _Importer(self, import_interval_s, checkpoint_interval_s)

    def record(self, event: AuditEvent, **values: Any) -> OSError | None:
        """Append one record to the journal. When this returns ``None`` the record survives a
        crash of this process (module docstring). An ``OSError`` (disk full; the log closed)
        is returned, and logged unless the log is closed: the record may be lost, and the
        caller decides what to tell whom. A value the log cannot keep (an unknown event or
        field, a type other than str / None, a number other than a finite time or duration,
        a lone surrogate, a record over 4 MiB) raises ``TypeError`` / ``ValueError`` and
        writes nothing."""
        line = _encode(_row_of(event, values, self.instance))
        if len(line) >= _READ_CHUNK:
            raise ValueError(f"audit record of {len(line)} bytes; the limit is {_READ_CHUNK}")
        if self._closed:
            return _closed_error()
        error = self._journal.append(line)
        if error is not None:
            if not self._closed:
                logger.error("could not write an audit record (%s): %s", event, error)
        elif self._importer is None:  # in memory: no importer thread, ``record`` imports
            journal = self._journal
            if isinstance(journal, _MemoryJournal) and journal.waiting >= _MEMORY_IMPORT_ROWS:
                self._import_all()
        return error

    def query(
        self,
        *,
        event: AuditEvent | None = None,
        session_id: str | None = None,
        request_id: str | None = None,
        instance: str | None = None,
        limit: int = 1000,
    ) -> list[AuditRecord]:
        """Records in the order written, after everything recorded so far has been imported."""
        clauses, params = [], []
        for column, value in (
            ("event", event),
            ("session_id", session_id),
            ("request_id", request_id),
            ("instance", instance),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(str(value))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT {', '.join(_COLUMNS)} FROM audit {where} ORDER BY id LIMIT ?"
        params.append(limit)
        if self._closed:
            raise RuntimeError("audit log is closed")
        with self._import_lock:
            self._import_locked()
            rows = self._connection.execute(sql, params).fetchall()
        return [AuditRecord(AuditEvent(row[0]), *row[1:]) for row in rows]

    def flush(self) -> None:
        """Import everything recorded so far into the database."""
        if self._closed:
            raise RuntimeError("audit log is closed")
        self._import_all()

    def close(self) -> None:
        """Import everything, delete this process's journal, close the database."""
        if self._closed:
            return
        self._closed = True
        if self._importer is not None:
            self._importer.stop()
        # From here a record racing this close gets an error; none lands after the last import.
        self._journal.seal()
        with self._import_lock:
            # Drained, not rotated: a fresh journal now would only be created to be deleted,
            # and a record racing this close could be handed over to it after its import.
            imported = self._drain(self._journal)
            if isinstance(self._journal, _FileJournal):
                if imported:
                    self._journal.delete()
                else:  # left, unlocked, for the next start to import
                    self._journal.close()
            # The last connection to close checkpoints the WAL into the database file.
            self._connection.close()

    # ------------------------------------------------------------------ importing

    def _import_all(self) -> bool:
        with self._import_lock:
            return self._import_locked()

    def _import_locked(self) -> bool:
        """Import every complete line of this process's journal; False if the database
        refused (logged; the lines stay in the journal for the next try)."""
        if not self._drain(self._journal):
            return False
        journal = self._journal
        if isinstance(journal, _FileJournal) and journal.offset >= self._rotate_bytes:
            self._rotate(journal)
        return True

    def _drain(self, journal: _FileJournal | _MemoryJournal) -> bool:
        while True:
            rows, mark = journal.read()
            if not rows and mark is None:
                return True
            if not self._insert(rows, journal.name, mark):
                journal.unread(rows)
                return False
            journal.consumed(mark)

    def _insert(self, rows: list[_Row], journal: str | None, imported: int | None) -> bool:
        """One transaction: the rows, and how far into their journal they reach. False if
        the database is busy or failing (logged; retried at the next import). A row the
        database refuses for what it holds (only a hand-edited journal has one: ``record``
        checks every value) is skipped and logged, so it cannot block the rows after it."""
        try:
            try:
                self._transaction(rows, journal, imported, skip_bad_rows=False)
            except sqlite3.OperationalError:
                raise
            except (sqlite3.Error, ValueError, TypeError, OverflowError):
                self._transaction(rows, journal, imported, skip_bad_rows=True)
        except sqlite3.Error:
            logger.exception("could not import %d audit records; will retry", len(rows))
            return False
        self.imports += 1
        self.imported_records += len(rows)
        return True

    def _transaction(
        self, rows: list[_Row], journal: str | None, imported: int | None, *, skip_bad_rows: bool
    ) -> None:
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            if skip_bad_rows:
                statement = _insert_statement(1)
                for row in rows:
                    try:
                        connection.execute(statement, row)
                    except sqlite3.OperationalError:
                        raise
                    except (sqlite3.Error, ValueError, TypeError, OverflowError) as error:
                        logger.error("audit record skipped, the database refused it (%s): %r",
                                     error, row)
            else:
                for start in range(0, len(rows), _ROWS_PER_INSERT):
                    if start:
                        time.sleep(0)  # let a waiting event loop have the GIL
                    chunk = rows[start : start + _ROWS_PER_INSERT]
                    connection.execute(
                        _insert_statement(len(chunk)), [value for row in chunk for value in row]
                    )
            if journal is not None:
                connection.execute(_SET_IMPORTED, (journal, imported))
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    def _rotate(self, old: _FileJournal) -> None:
        """Start a new journal; import the rest of the old one and delete it."""
        assert self.path is not None
        try:
            fresh = _FileJournal.create(self.path)
        except OSError:
            logger.exception("could not start a new audit journal; keeping %s", old.name)
            return
        old.seal(successor=fresh)
        self._journal = fresh
        if not self._import_orphan(old):
            logger.error("audit journal %s left for the next start to import", old.name)

    def _import_orphan(self, journal: _FileJournal) -> bool:
        """Import the rest of a journal nobody writes any more (a crashed server's, or ours
        after rotation), then delete it. If the database refuses, the file stays (and its
        lock goes) for the next start."""
        row = self._connection.execute(
            "SELECT imported FROM audit_journal WHERE name = ?", (journal.name,)
        ).fetchone()
        if row is not None:
            journal.consumed(row[0])
        if not self._drain(journal):
            journal.close()
            return False
        torn = journal.torn_tail()
        if torn:
            # Never acknowledged: the write that left it did not complete.
            logger.error(
                "audit journal %s ends in %d bytes of an incomplete record", journal.name, torn
            )
        journal.delete()
        return True

    def _checkpoint(self) -> None:
        with self._import_lock:
            if self._closed:
                return
            try:
                # PASSIVE: copies what no reader still needs, never waits for them.
                self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error:
                # The WAL keeps growing until a later checkpoint succeeds; nothing lost.
                logger.exception("audit WAL checkpoint failed")


class _MemoryJournal:
    """``path=None``: records wait in a list (nothing survives the process anyway), as the
    same JSON text a file journal holds: a str is invisible to the garbage collector, a row
    tuple holding enum members is not (issue 7)."""

    name = None

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._sealed = False

    @property
    def waiting(self) -> int:
        return len(self._lines)

    def append(self, line: str) -> OSError | None:
        with self._lock:
            if self._sealed:
                return _closed_error()
            self._lines.append(line)
        return None

    def seal(self) -> None:
        with self._lock:
            self._sealed = True

    def read(self) -> tuple[list[_Row], None]:
        with self._lock:
            lines, self._lines = self._lines, []
        if not lines:
            return [], None
        return _decode_lines(("\n".join(lines) + "\n").encode(), "memory journal", 0), None

    def unread(self, rows: list[_Row]) -> None:
        lines = [_encode(row) for row in rows]
        with self._lock:
            self._lines[:0] = lines

    def consumed(self, mark: int | None) -> None:
        pass


def _closed_error() -> OSError:
    return OSError(errno.EBADF, "the audit log is closed")


class _FileJournal:
    """One journal file: appended to by ``record`` (any thread), read by the importer. Its
    owner holds an exclusive ``flock`` on it from creation until the file is deleted (or the
    process dies): whoever can take the lock may import it as an orphan."""

    def __init__(self, path: Path, read_fd: int, lock_fd: int | None) -> None:
        self.path = path
        self.name = path.name
        # None once closed.
        self._read_fd: int | None = read_fd
        # The descriptor records are written to and the lock is held by; None for an orphan
        # found at start (its lock is on read_fd). Kept open, and so locked, until close.
        self._lock_fd = lock_fd
        self._write_lock = threading.Lock()
        # False once sealed (closing) or handed over (rotation): records go to the successor
        # if there is one, else they get an error.
        self._writable = lock_fd is not None
        self._successor: _FileJournal | None = None
        # Where the next import starts (a line boundary).
        self.offset = 0
        # A failed write may have left part of a line: the next one starts on a new line.
        self._torn = False

    @classmethod
    def create(cls, db: Path) -> _FileJournal:
        # 128 random bits: a name is never used twice, even by a server that is always pid 1.
        token = f"{os.getpid()}-{secrets.token_hex(16)}"
        fresh = db.with_name(db.name + _NEW_JOURNAL_INFIX + token)
        final = db.with_name(db.name + _JOURNAL_INFIX + token)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
        lock_fd = os.open(fresh, flags, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # Locked before it gets the name other servers look for; link, unlike rename,
            # never replaces an existing file. The lock is on the file, not on a name.
            os.link(fresh, final)
            with contextlib.suppress(OSError):
                os.unlink(fresh)
            read_fd = os.open(final, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            os.close(lock_fd)
            with contextlib.suppress(OSError):
                os.unlink(fresh)
            raise
        return cls(final, read_fd, lock_fd)

    def append(self, line: str) -> OSError | None:
        data = (line + "\n").encode()
        with self._write_lock:
            if self._writable:
                if self._torn:
                    data = b"\n" + data
                fd = self._lock_fd
                assert fd is not None
                try:
                    written = os.write(fd, data)
                    while written < len(data):  # a short write (disk nearly full)
                        written += os.write(fd, data[written:])
                except OSError as error:
                    self._torn = True
                    return error
                self._torn = False
                return None
            successor = self._successor
        # Rotated away while the caller held this journal: the record goes to the new one.
        if successor is not None:
            return successor.append(line)
        return _closed_error()

    def seal(self, successor: _FileJournal | None = None) -> None:
        """No record lands here after this: they go to ``successor`` (rotation; this journal
        becomes an orphan of ours, still locked, so no other server imports it while we do),
        or get an error (``AuditLog.close``)."""
        with self._write_lock:
            self._writable = False
            self._successor = successor

    def read(self) -> tuple[list[_Row], int | None]:
        """The complete lines after the import offset, decoded, and the offset after them;
        ``([], None)`` when there is none."""
        if self._read_fd is None:  # closed
            return [], None
        data = os.pread(self._read_fd, _READ_CHUNK, self.offset)
        end = data.rfind(b"\n") + 1
        if end == 0:
            if len(data) == _READ_CHUNK:  # one line longer than a chunk: not ours, skip it
                logger.error("audit journal %s: a line of over %d bytes at %d skipped",
                             self.name, _READ_CHUNK, self.offset)
                return [], self.offset + len(data)
            return [], None
        rows = _decode_lines(data[:end], f"audit journal {self.name}", self.offset)
        return rows, self.offset + end

    def unread(self, rows: list[_Row]) -> None:
        pass  # the offset did not move

    def consumed(self, mark: int | None) -> None:
        if mark is not None:
            self.offset = mark

    def torn_tail(self) -> int:
        if self._read_fd is None:
            return 0
        return os.fstat(self._read_fd).st_size - self.offset

    def delete(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        self.close()

    def close(self) -> None:
        # Under the write lock: a record racing a close gets an error, never a write to
        # whatever file reuses the descriptor number.
        with self._write_lock:
            self._writable = False
            lock_fd, self._lock_fd = self._lock_fd, None
            read_fd, self._read_fd = self._read_fd, None
        for fd in (lock_fd, read_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _decode_lines(data: bytes, source: str, offset: int) -> list[_Row]:
    """The records in ``data``, complete lines each ending in a newline. All at once as one
    JSON array (~0.7 us per record against ~2.7 decoding line by line); line by line only if
    that fails, to skip just the lines that do not decode, each logged with its position."""
    try:
        rows = json.loads(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    except ValueError:
        rows = None
    if rows is not None and all(map(_is_row, rows)):
        return [row if len(row) == _ROW_LENGTH else [*row, None] for row in rows]
    rows = []
    position = offset
    for line in data[:-1].split(b"\n"):
        if not line:  # a write that failed before its first byte, then a new line
            position += 1
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if _is_row(row):
            rows.append(row if len(row) == _ROW_LENGTH else [*row, None])
        else:
            logger.error("%s: an undecodable record at byte %d skipped", source, position)
        position += len(line) + 1
    return rows


def _is_row(row: Any) -> bool:
    return (
        type(row) is list
        # One column short: written before records named their instance.
        and len(row) in (_ROW_LENGTH, _ROW_LENGTH - 1)
        and row[0] in _EVENTS
        and _is_number(row[1])
    )


_ROW_LENGTH = len(_COLUMNS)


def _orphan_journals(db: Path) -> list[_FileJournal]:
    """Journals of ``db`` nobody holds: those of servers that died, oldest first."""
    orphans = []
    if not db.parent.is_dir():
        return orphans
    for entry in sorted(db.parent.iterdir(), key=_mtime):
        if not entry.name.startswith(db.name + ".mao-journal"):
            continue
        fresh = entry.name.startswith(db.name + _NEW_JOURNAL_INFIX)
        if fresh and time.time() - _mtime(entry) < _NEW_JOURNAL_GRACE_S:
            continue  # a live server may be between creating and locking it
        try:
            fd = os.open(entry, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue  # a live server's journal
            raise
        if os.fstat(fd).st_nlink == 0:  # another server imported and deleted it meanwhile
            os.close(fd)
            continue
        if fresh:
            # Its server died before naming it (nothing was written to it) or between naming
            # it and removing this second name (the journal is under its own name too).
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry)
            os.close(fd)
            continue
        orphans.append(_FileJournal(entry, fd, None))
    return orphans


def _mtime(entry: Path) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0


class _Importer:
    """Imports journal lines and checkpoints the WAL on its own thread."""

    def __init__(self, log: AuditLog, interval_s: float, checkpoint_interval_s: float) -> None:
        self._log = log
        self._interval_s = interval_s
        self._checkpoint_interval_s = checkpoint_interval_s
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="mao-embed-audit-import", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        last_checkpoint = time.monotonic()
        while not self._stopping.wait(self._interval_s):
            try:
                self._log._import_all()
                if time.monotonic() - last_checkpoint >= self._checkpoint_interval_s:
                    last_checkpoint = time.monotonic()
                    self._log._checkpoint()
            except Exception:
                # Whatever it was, the journal still holds the records; try again later.
                logger.exception("audit import failed")


def _open(path: Path | None) -> sqlite3.Connection:
    # isolation_level=None: autocommit outside ``with connection`` blocks, see ``_insert``.
    if path is None:
        connection = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=_BUSY_TIMEOUT_S
        )
        connection.execute("PRAGMA journal_mode=WAL")
        # Checkpoints (fsyncs) only on the importer thread, on its schedule.
        connection.execute("PRAGMA wal_autocheckpoint=0")
        connection.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.executescript(_SCHEMA)
    columns = {row[1] for row in connection.execute("PRAGMA table_info(audit)")}
    if "instance" not in columns:  # a database made before records named their instance
        connection.execute("ALTER TABLE audit ADD COLUMN instance TEXT")
    return connection
