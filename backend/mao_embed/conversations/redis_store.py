"""The conversation store of a cluster (``serve --redis``): any instance serves any
conversation, so a page that lands on another instance, or a tab on another instance, shows
the same one (SPEC U5, B7). The interface and the entries are ``store``'s.

What Redis holds, under the cluster's namespace (``relay.cluster.namespace``: instances with
another secret or API key never read these):

- ``{ns}:cv:schema``: the schema version of the keys below (kept);
- ``{ns}:cv:o:{owner}``: sorted set of the owner's conversation ids, by creation time (expires
  retention after the owner's last entry);
- ``{ns}:cv:e:{id}``: list of the conversation's entries (JSON), the newest
  ``MAX_STORED_ENTRIES`` (expires retention after its last entry).

``owner`` is a digest of user, origin and agent, so no user id appears in a key name.
Retention is Redis's own ``EXPIRE``, renewed by every append: nothing to purge.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence

import redis.asyncio as aredis

from .store import (
    DEFAULT_TTL_S,
    MAX_STORED_ENTRIES,
    Conversation,
    ConversationKey,
    Entry,
    SchemaError,
    new_conversation_id,
)

Migration = Callable[[aredis.Redis, str], Awaitable[None]]


async def _first_schema(client: aredis.Redis, prefix: str) -> None:
    """Version 1: the keys in the module docstring; nothing to convert."""


# Numbered like the SQLite store's: migration N takes the keys from version N-1 to N.
MIGRATIONS: tuple[Migration, ...] = (_first_schema,)


class RedisConversationStore:
    def __init__(
        self,
        client: aredis.Redis,
        namespace: str,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        migrations: Sequence[Migration] = MIGRATIONS,
    ) -> None:
        self._client = client
        self._prefix = f"{namespace}:cv"
        self._ttl_ms = max(1000, int(ttl_s * 1000))
        self._migrations = tuple(migrations)
        self._ready = False

    async def _schema(self) -> None:
        """Migrate once per process, at first use (Redis may not be up at start-up)."""
        if self._ready:
            return
        key = f"{self._prefix}:schema"
        version = int(await self._client.get(key) or 0)
        if version > len(self._migrations):
            raise SchemaError(
                f"the conversations in Redis are at schema version {version}, newer than this "
                f"Mao Embed knows ({len(self._migrations)})"
            )
        for number in range(version + 1, len(self._migrations) + 1):
            await self._migrations[number - 1](self._client, self._prefix)
            await self._client.set(key, number)
        self._ready = True

    def _owner_key(self, key: ConversationKey) -> str:
        digest = hashlib.sha256(
            json.dumps([key.user_id, key.origin, key.agent_id]).encode()
        ).hexdigest()[:32]
        return f"{self._prefix}:o:{digest}"

    def _entries_key(self, conversation_id: str) -> str:
        return f"{self._prefix}:e:{conversation_id}"

    async def _current_id(self, owner: str) -> str | None:
        newest = await self._client.zrevrange(owner, 0, 0)
        return newest[0].decode() if newest else None

    async def current(
        self, key: ConversationKey, limit: int = MAX_STORED_ENTRIES
    ) -> Conversation:
        await self._schema()
        conversation_id = await self._current_id(self._owner_key(key))
        if conversation_id is None:
            return Conversation(None, [])
        raw = await self._client.lrange(
            self._entries_key(conversation_id), -min(limit, MAX_STORED_ENTRIES), -1
        )
        return Conversation(conversation_id, [json.loads(item) for item in raw])

    async def append(
        self, key: ConversationKey, conversation_id: str | None, entries: Sequence[Entry]
    ) -> str:
        await self._schema()
        owner = self._owner_key(key)
        target = conversation_id or await self._current_id(owner)
        if target is None:
            target = await self.start_new(key)
        elif await self._client.zscore(owner, target) is None:
            return target  # deleted meanwhile (the user pressed Delete mid-turn)
        entries_key = self._entries_key(target)
        bodies = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries]
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.rpush(entries_key, *bodies)
            pipe.ltrim(entries_key, -MAX_STORED_ENTRIES, -1)
            pipe.pexpire(entries_key, self._ttl_ms)
            pipe.pexpire(owner, self._ttl_ms)
            await pipe.execute()
        return target

    async def start_new(self, key: ConversationKey) -> str:
        await self._schema()
        owner = self._owner_key(key)
        conversation_id = new_conversation_id()
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.zadd(owner, {conversation_id: time.time()})
            pipe.pexpire(owner, self._ttl_ms)
            await pipe.execute()
        return conversation_id

    async def delete(self, key: ConversationKey) -> int:
        await self._schema()
        owner = self._owner_key(key)
        ids = [item.decode() for item in await self._client.zrange(owner, 0, -1)]
        await self._client.delete(owner, *(self._entries_key(i) for i in ids))
        return len(ids)

    async def purge_expired(self) -> int:
        return 0  # Redis expires the keys itself

    async def aclose(self) -> None:
        await self._client.aclose()
