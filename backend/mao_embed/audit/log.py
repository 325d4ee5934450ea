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

Why a journal: a SQLite commit per record, on the event loop's thread, cost several times
what the rest of a tool call's bookkeeping did, and every answer waited for it; a journal line
is one ``write``, and the import runs in large batches on its own thread (figures in
docs/performance.md, "Audit journal"). Readers of the database from another process see
records up to one import interval late; the log itself never loses or repeats one.

Recovery (``journal.py``): each log on a file writes its own journal and holds a lock on it;
a log opening the database imports, once, every journal nobody holds (a crashed server's).
Journals are rotated after ``ROTATE_BYTES`` imported bytes: records go to a new journal at
once, the old one stays locked until its rest is imported and it is deleted. ``record``
refuses (raises for) any value the database could not store or the journal could not give
back, so a record once acknowledged is always importable; a row the database refuses anyway
is skipped and logged, the records around it imported.

With ``path=None`` (tests, embedded servers) the database is in memory and the journal is a
list; it is imported when 1,000 records wait and on ``query``, ``flush`` and ``close``.
"""

from __future__ import annotations

import errno
import functools
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from .journal import FileJournal, Importer, MemoryJournal, orphan_journals
from .records import COLUMNS, READ_CHUNK, AuditEvent, AuditRecord, Row, encode, row_of

logger = logging.getLogger(__name__)

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
# yields it (``time.sleep(0)``), which kept tool-call latency at the high percentiles from
# growing with the import (docs/performance.md, "Audit journal").
_ROWS_PER_INSERT = 100
_SET_IMPORTED = "INSERT OR REPLACE INTO audit_journal (name, imported) VALUES (?, ?)"
# The importer's connection is the only one writing the file in this process; it may wait
# this long for another server's write lock on the same file (off the event loop).
_BUSY_TIMEOUT_S = 5.0
# How often new journal lines are imported, and the WAL checkpointed (both on the importer
# thread). The cost of an import is mostly the session index: with 500 sessions calling in
# turn, each record lands on another leaf page of it, and every page a transaction changes is
# written to the WAL and again at the checkpoint. More records per transaction share those
# page writes; at 1,000 calls/s, 5 s is ~5,000 records per transaction, about half the SQLite
# time per record of 1,000 per transaction with the default cache (docs/performance.md).
IMPORT_INTERVAL_S = 5.0
CHECKPOINT_INTERVAL_S = 5.0
# The importer's page cache (SQLite's default is 2 MiB): the session index's leaves that a
# busy server keeps touching stay in memory instead of being read back from the OS. Pages are
# allocated as they are used, so a small database costs what it holds.
_CACHE_KIB = 32 * 1024
# A journal is replaced by a new one once this much of it has been imported (~40,000 records).
ROTATE_BYTES = 8 << 20
# The in-memory journal is imported by ``record`` once this many records wait.
_MEMORY_IMPORT_ROWS = 1000


@functools.lru_cache(maxsize=_ROWS_PER_INSERT)
def _insert_statement(rows: int) -> str:
    values = "(" + ", ".join("?" for _ in COLUMNS) + ")"
    return f"INSERT INTO audit ({', '.join(COLUMNS)}) VALUES {', '.join([values] * rows)}"




class AuditWriteError(OSError):
    """A record could not be written to the journal (disk full, the log closed): it is not in
    the audit log. Raised by ``AuditLog.record`` after logging it, unless the log is closed."""


class AuditLog:
    """Append-only audit trail. ``path=None`` keeps it in memory (tests, embedded servers)."""

    def __init__(
        self,
        path: Path | None,
        *,
        import_interval_s: float = IMPORT_INTERVAL_S,
        checkpoint_interval_s: float = CHECKPOINT_INTERVAL_S,
        rotate_bytes: int = ROTATE_BYTES,
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
        self._journal: FileJournal | MemoryJournal
        if path is None:
            self._journal = MemoryJournal()
            self._importer: Importer | None = None
            return
        for orphan in orphan_journals(path):
            with self._import_lock:
                self._import_orphan(orphan)
        self._journal = FileJournal.create(path)
        self._importer = Importer(
            self._import_all, self._checkpoint, import_interval_s, checkpoint_interval_s
        )

    def record(self, event: AuditEvent, **values: Any) -> None:
        """Append one record to the journal. When this returns the record survives a crash of
        this process (module docstring). ``AuditWriteError`` (an ``OSError``: disk full, the
        log closed) means the record is not in the log; it is logged here unless the log is
        closed, and the caller decides what to tell whom. A value the log cannot keep (an
        unknown event or field, a type other than str / None, a number other than a finite
        time or duration, a lone surrogate, a record over 4 MiB) raises ``TypeError`` /
        ``ValueError`` and writes nothing."""
        line = encode(row_of(event, values, self.instance))
        if len(line) >= READ_CHUNK:
            raise ValueError(f"audit record of {len(line)} bytes; the limit is {READ_CHUNK}")
        if self._closed:
            raise AuditWriteError(errno.EBADF, "the audit log is closed")
        try:
            self._journal.append(line)
        except OSError as error:
            if not self._closed:
                logger.error("could not write an audit record (%s): %s", event, error)
            raise AuditWriteError(
                error.errno, f"audit record not written: {error.strerror}"
            ) from error
        if self._importer is None:  # in memory: no importer thread, ``record`` imports
            journal = self._journal
            if isinstance(journal, MemoryJournal) and journal.waiting >= _MEMORY_IMPORT_ROWS:
                self._import_all()

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
        sql = f"SELECT {', '.join(COLUMNS)} FROM audit {where} ORDER BY id LIMIT ?"
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
            if isinstance(self._journal, FileJournal):
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
        if isinstance(journal, FileJournal) and journal.offset >= self._rotate_bytes:
            self._rotate(journal)
        return True

    def _drain(self, journal: FileJournal | MemoryJournal) -> bool:
        while True:
            rows, mark = journal.read()
            if not rows and mark is None:
                return True
            if not self._insert(rows, journal.name, mark):
                journal.unread(rows)
                return False
            journal.consumed(mark)

    def _insert(self, rows: list[Row], journal: str | None, imported: int | None) -> bool:
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
        self, rows: list[Row], journal: str | None, imported: int | None, *, skip_bad_rows: bool
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

    def _rotate(self, old: FileJournal) -> None:
        """Start a new journal; import the rest of the old one and delete it."""
        assert self.path is not None
        try:
            fresh = FileJournal.create(self.path)
        except OSError:
            logger.exception("could not start a new audit journal; keeping %s", old.name)
            return
        old.seal(successor=fresh)
        self._journal = fresh
        if not self._import_orphan(old):
            logger.error("audit journal %s left for the next start to import", old.name)

    def _import_orphan(self, journal: FileJournal) -> bool:
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
