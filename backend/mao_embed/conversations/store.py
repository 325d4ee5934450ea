"""Where the panel's conversations are kept (SPEC U5, B7): per user + origin + agent, so a
reload, the next page of the site, another tab or another instance of a cluster shows the same
conversation and the model continues it.

A conversation is a list of entries, oldest first. An entry is one JSON object:

- ``{"m": {...}}``: one chat-completions message as the model reads it (``user``,
  ``assistant`` with its ``tool_calls``, ``tool``), so the next turn sends the model the same
  history;
- plus what the panel shows of it: ``"tool"``, ``"ok"``, ``"code"`` for a tool message (the
  task log), and ``"at"``, when it was written (ms since the epoch);
- ``{"note": "stopped"}``: something the panel shows that the model does not read.

Each owner (``ConversationKey``) has a current conversation, the newest; *New conversation*
starts another (the earlier ones are kept until retention ends), *Delete* deletes every
conversation of the owner. Retention (``serve --conversation-ttl``, default 30 days) counts
from a conversation's last entry.

Two stores with one interface: ``SqliteConversationStore`` (the embedded default, a database
beside the audit log, schema by numbered migrations) and ``RedisConversationStore``
(``conversations.redis_store``, with ``serve --redis``: any instance serves any conversation).
What
is never stored here: tokens, and anything of the page the model did not read. Chat content
never goes to the audit log (it records that a turn happened, ``chat_turn``).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

DEFAULT_TTL_S = 30 * 24 * 3600
# The newest entries kept per conversation (older ones are dropped as new ones come), and the
# newest loaded for a turn or for the panel: a conversation is bounded, however long it runs.
MAX_STORED_ENTRIES = 400
Entry = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ConversationKey:
    """Whose conversation: the user and agent the page's token proved and the Origin the backend
    checked (never what the page says)."""

    user_id: str
    origin: str
    agent_id: str


@dataclass(frozen=True, slots=True)
class Conversation:
    conversation_id: str | None  # None: the owner has none yet (the first entry makes it)
    entries: list[Entry]


def new_conversation_id() -> str:
    return "cv-" + secrets.token_hex(10)


class SchemaError(RuntimeError):
    """The store was written by a newer version of Mao Embed: refuse it rather than guess."""


class ConversationStore(Protocol):
    async def current(
        self, key: ConversationKey, limit: int = MAX_STORED_ENTRIES
    ) -> Conversation:
        """The owner's current conversation: its newest ``limit`` entries, oldest first."""
        ...

    async def append(
        self, key: ConversationKey, conversation_id: str | None, entries: Sequence[Entry]
    ) -> str:
        """Add entries to the conversation (the owner's current one when None, created if it
        has none); answers the conversation's id."""
        ...

    async def start_new(self, key: ConversationKey) -> str: ...

    async def delete(self, key: ConversationKey) -> int:
        """Delete every conversation of the owner; answers how many there were."""
        ...

    async def purge_expired(self) -> int: ...

    async def aclose(self) -> None: ...


# SQLite ------------------------------------------------------------------------------------

# The schema, as numbered migrations: migration N takes a database from ``user_version`` N-1 to
# N, in one transaction with the version bump, so a crash leaves the old version or the new,
# never half of one. Add a migration at the end; never edit one that has shipped.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX conversations_owner ON conversations (user_id, origin, agent_id, created_at);
    CREATE INDEX conversations_updated ON conversations (updated_at);
    CREATE TABLE conversation_entries (
        conversation_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (conversation_id, seq)
    ) WITHOUT ROWID;
    """,
)


def migrate(connection: sqlite3.Connection, migrations: Sequence[str] = MIGRATIONS) -> int:
    """Bring the database to the newest schema; answers the version it is at."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > len(migrations):
        raise SchemaError(
            f"the conversation database is at schema version {version}, newer than this "
            f"Mao Embed knows ({len(migrations)}); upgrade Mao Embed or use another file"
        )
    for number in range(version + 1, len(migrations) + 1):
        # The explicit transaction holds the migration and its version bump together.
        try:
            connection.executescript(
                f"BEGIN IMMEDIATE;\n{migrations[number - 1]}\n"
                f"PRAGMA user_version = {number};\nCOMMIT;"
            )
        except sqlite3.Error:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
    return len(migrations)


# Conversations whose entries the SQLite store keeps decoded in memory.
_CACHED_CONVERSATIONS = 256


class SqliteConversationStore:
    """The embedded default: one SQLite file (WAL), or memory with ``path=None``. Every call
    runs on one worker thread of its own, off the event loop, on one connection.

    The entries of recently used conversations are kept decoded, with the newest ``seq``
    read: a turn reads only what other processes on the same file added since (usually
    nothing), rather than decoding its whole history (tool results included) every time; that
    was most of the storage's cost per turn (bench/chat_turn.py). Entries handed out are
    shared: callers read them and never change them."""

    def __init__(
        self,
        path: Path | None,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self._ttl_s = ttl_s
        self._clock = clock
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="conversations")
        # conversation id -> (newest seq read, its newest entries), on the store's thread only.
        self._cache: OrderedDict[str, tuple[int, list[Entry]]] = OrderedDict()
        # Opened and migrated at start-up: an unusable file fails here, not mid-turn.
        self._connection = self._executor.submit(self._open).result()
        self._executor.submit(self._purge).result()

    def _open(self) -> sqlite3.Connection:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            str(self.path) if self.path is not None else ":memory:",
            isolation_level=None,
            check_same_thread=False,
        )
        if self.path is not None:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA busy_timeout=5000")
        migrate(connection)
        return connection

    async def _run(self, work: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)

    def _horizon(self) -> float:
        return self._clock() - self._ttl_s

    def _remember(self, conversation_id: str, newest: int, entries: list[Entry]) -> None:
        self._cache[conversation_id] = (newest, entries[-MAX_STORED_ENTRIES:])
        while len(self._cache) > _CACHED_CONVERSATIONS:
            self._cache.popitem(last=False)

    def _current_id(self, key: ConversationKey) -> str | None:
        row = self._connection.execute(
            "SELECT id FROM conversations WHERE user_id = ? AND origin = ? AND agent_id = ? "
            "AND updated_at >= ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
            (key.user_id, key.origin, key.agent_id, self._horizon()),
        ).fetchone()
        return row[0] if row else None

    async def current(
        self, key: ConversationKey, limit: int = MAX_STORED_ENTRIES
    ) -> Conversation:
        def read() -> Conversation:
            conversation_id = self._current_id(key)
            if conversation_id is None:
                return Conversation(None, [])
            newest, entries = self._cache.pop(conversation_id, (0, []))
            rows = self._connection.execute(
                "SELECT seq, body FROM conversation_entries WHERE conversation_id = ? "
                "AND seq > ? ORDER BY seq DESC LIMIT ?",
                (conversation_id, newest, MAX_STORED_ENTRIES),
            ).fetchall()
            if rows:
                if len(rows) == MAX_STORED_ENTRIES:
                    entries = []  # everything cached has been pushed out
                entries = entries + [json.loads(body) for _, body in reversed(rows)]
                newest = rows[0][0]
            self._remember(conversation_id, newest, entries)
            return Conversation(conversation_id, entries[-min(limit, MAX_STORED_ENTRIES):])

        result: Conversation = await self._run(read)
        return result

    async def append(
        self, key: ConversationKey, conversation_id: str | None, entries: Sequence[Entry]
    ) -> str:
        bodies = [json.dumps(entry, ensure_ascii=False, separators=(",", ":")) for entry in entries]

        def write() -> str:
            now = self._clock()
            connection = self._connection
            target: str | None = None
            connection.execute("BEGIN IMMEDIATE")
            try:
                target = conversation_id or self._current_id(key)
                if target is None:
                    target = new_conversation_id()
                    connection.execute(
                        "INSERT INTO conversations VALUES (?, ?, ?, ?, ?, ?)",
                        (target, key.user_id, key.origin, key.agent_id, now, now),
                    )
                else:
                    updated = connection.execute(
                        "UPDATE conversations SET updated_at = ? WHERE id = ? AND user_id = ? "
                        "AND origin = ? AND agent_id = ?",
                        (now, target, key.user_id, key.origin, key.agent_id),
                    ).rowcount
                    if not updated:  # deleted meanwhile (the user pressed Delete mid-turn)
                        connection.execute("COMMIT")
                        return target
                last = connection.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM conversation_entries "
                    "WHERE conversation_id = ?",
                    (target,),
                ).fetchone()[0]
                connection.executemany(
                    "INSERT INTO conversation_entries VALUES (?, ?, ?)",
                    [(target, last + index, body) for index, body in enumerate(bodies, 1)],
                )
                newest = last + len(bodies)
                if newest > MAX_STORED_ENTRIES:
                    connection.execute(
                        "DELETE FROM conversation_entries WHERE conversation_id = ? AND seq <= ?",
                        (target, newest - MAX_STORED_ENTRIES),
                    )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                self._cache.pop(target or "", None)
                raise
            cached = self._cache.pop(target, None)
            if cached is not None and cached[0] == last:  # nobody else wrote in between
                self._remember(target, newest, [*cached[1], *entries])
            return target

        result: str = await self._run(write)
        return result

    async def start_new(self, key: ConversationKey) -> str:
        conversation_id = new_conversation_id()

        def write() -> None:
            now = self._clock()
            self._connection.execute(
                "INSERT INTO conversations VALUES (?, ?, ?, ?, ?, ?)",
                (conversation_id, key.user_id, key.origin, key.agent_id, now, now),
            )

        await self._run(write)
        return conversation_id

    async def delete(self, key: ConversationKey) -> int:
        def write() -> int:
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                ids = [
                    row[0]
                    for row in connection.execute(
                        "SELECT id FROM conversations WHERE user_id = ? AND origin = ? "
                        "AND agent_id = ?",
                        (key.user_id, key.origin, key.agent_id),
                    )
                ]
                self._delete_ids(ids)
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            return len(ids)

        result: int = await self._run(write)
        return result

    def _delete_ids(self, ids: list[str]) -> None:
        for conversation_id in ids:
            self._cache.pop(conversation_id, None)
            self._connection.execute(
                "DELETE FROM conversation_entries WHERE conversation_id = ?", (conversation_id,)
            )
            self._connection.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def _purge(self) -> int:
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            ids = [
                row[0]
                for row in connection.execute(
                    "SELECT id FROM conversations WHERE updated_at < ?", (self._horizon(),)
                )
            ]
            self._delete_ids(ids)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return len(ids)

    async def purge_expired(self) -> int:
        result: int = await self._run(self._purge)
        return result

    async def aclose(self) -> None:
        await self._run(self._connection.close)
        self._executor.shutdown(wait=True)


def conversations_path(audit_path: Path | None) -> Path | None:
    """The conversation database beside the audit database (``serve --db``); memory when the
    audit log is in memory too."""
    return None if audit_path is None else audit_path.with_name("conversations.db")
