"""The audit journal: where a record is written before it reaches SQLite, and how a crashed
server's records are found and imported (SPEC P6).

Each ``AuditLog`` on a file writes its own journal, ``<db>.mao-journal.<pid>-<128 random
bits>``, and holds an exclusive ``flock`` on it from its creation until it is deleted (the
lock goes when the process dies, however it dies). An ``AuditLog`` opening the database
imports every journal nobody holds (a crashed server's, ``orphan_journals``), from where its
import had got to, then deletes it; a journal still locked belongs to a running server on the
same database and is left to it. A journal is created under a temporary name, locked, then
linked to its real name (``link`` never replaces a file), so nobody can take a new journal for
an orphan; a temporary name younger than a minute is left alone. ``Importer`` is the thread
that moves new lines into SQLite on a schedule.

``append`` raises ``OSError`` when the write fails (disk full; the journal sealed). A line that
does not decode (a torn write at a full disk, a hand-edited file) is skipped and logged as an
error with its position.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .records import READ_CHUNK, Row, decode_lines, encode

logger = logging.getLogger(__name__)

JOURNAL_INFIX = ".mao-journal."
NEW_JOURNAL_INFIX = ".mao-journal-new."
# A journal is created under a temporary name, locked, then named (``FileJournal.create``);
# a temporary name younger than this may be a live server's, between creating and locking.
NEW_JOURNAL_GRACE_S = 60.0


def _closed_error() -> OSError:
    return OSError(errno.EBADF, "the audit log is closed")


class MemoryJournal:
    """``path=None``: records wait in a list (nothing survives the process anyway), as the
    same JSON text a file journal holds: a str is invisible to the garbage collector, a row
    tuple holding enum members is not, so a busy server's collections stay short."""

    name: str | None = None

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._sealed = False

    @property
    def waiting(self) -> int:
        return len(self._lines)

    def append(self, line: str) -> None:
        with self._lock:
            if self._sealed:
                raise _closed_error()
            self._lines.append(line)

    def seal(self) -> None:
        with self._lock:
            self._sealed = True

    def read(self) -> tuple[list[Row], None]:
        with self._lock:
            lines, self._lines = self._lines, []
        if not lines:
            return [], None
        return decode_lines(("\n".join(lines) + "\n").encode(), "memory journal", 0), None

    def unread(self, rows: list[Row]) -> None:
        lines = [encode(row) for row in rows]
        with self._lock:
            self._lines[:0] = lines

    def consumed(self, mark: int | None) -> None:
        pass


class FileJournal:
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
        self._successor: FileJournal | None = None
        # Where the next import starts (a line boundary).
        self.offset = 0
        # A failed write may have left part of a line: the next one starts on a new line.
        self._torn = False

    @classmethod
    def create(cls, db: Path) -> FileJournal:
        # 128 random bits: a name is never used twice, even by a server that is always pid 1.
        token = f"{os.getpid()}-{secrets.token_hex(16)}"
        fresh = db.with_name(db.name + NEW_JOURNAL_INFIX + token)
        final = db.with_name(db.name + JOURNAL_INFIX + token)
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

    def append(self, line: str) -> None:
        """Write one record line; ``OSError`` if it could not be (a part may be on disk: the
        next line starts on a new line, and the torn part is skipped at import)."""
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
                except OSError:
                    self._torn = True
                    raise
                self._torn = False
                return
            successor = self._successor
        # Rotated away while the caller held this journal: the record goes to the new one.
        if successor is not None:
            successor.append(line)
            return
        raise _closed_error()

    def seal(self, successor: FileJournal | None = None) -> None:
        """No record lands here after this: they go to ``successor`` (rotation; this journal
        becomes an orphan of ours, still locked, so no other server imports it while we do),
        or get an error (``AuditLog.close``)."""
        with self._write_lock:
            self._writable = False
            self._successor = successor

    def read(self) -> tuple[list[Row], int | None]:
        """The complete lines after the import offset, decoded, and the offset after them;
        ``([], None)`` when there is none."""
        if self._read_fd is None:  # closed
            return [], None
        data = os.pread(self._read_fd, READ_CHUNK, self.offset)
        end = data.rfind(b"\n") + 1
        if end == 0:
            if len(data) == READ_CHUNK:  # one line longer than a chunk: not ours, skip it
                logger.error("audit journal %s: a line of over %d bytes at %d skipped",
                             self.name, READ_CHUNK, self.offset)
                return [], self.offset + len(data)
            return [], None
        rows = decode_lines(data[:end], f"audit journal {self.name}", self.offset)
        return rows, self.offset + end

    def unread(self, rows: list[Row]) -> None:
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


def orphan_journals(db: Path) -> list[FileJournal]:
    """Journals of ``db`` nobody holds: those of servers that died, oldest first."""
    orphans = []
    if not db.parent.is_dir():
        return orphans
    for entry in sorted(db.parent.iterdir(), key=_mtime):
        if not entry.name.startswith(db.name + ".mao-journal"):
            continue
        fresh = entry.name.startswith(db.name + NEW_JOURNAL_INFIX)
        if fresh and time.time() - _mtime(entry) < NEW_JOURNAL_GRACE_S:
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
        orphans.append(FileJournal(entry, fd, None))
    return orphans


def _mtime(entry: Path) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0


class Importer:
    """Imports journal lines and checkpoints the WAL on its own thread."""

    def __init__(
        self,
        import_all: Callable[[], object],
        checkpoint: Callable[[], None],
        interval_s: float,
        checkpoint_interval_s: float,
    ) -> None:
        self._import_all = import_all
        self._checkpoint = checkpoint
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
                self._import_all()
                if time.monotonic() - last_checkpoint >= self._checkpoint_interval_s:
                    last_checkpoint = time.monotonic()
                    self._checkpoint()
            except Exception:
                # Whatever it was, the journal still holds the records; try again later.
                logger.exception("audit import failed")
