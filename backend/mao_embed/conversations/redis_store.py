"""The conversation store of a cluster (``serve --redis``): any instance serves any
conversation, so a page that lands on another instance, or a tab on another instance, shows
the same one (SPEC U5, B7). The interface and the entries are ``store``'s.

What Redis holds, under the cluster's namespace (``relay.cluster.namespace``: instances with
another secret or API key never read these):

- ``{ns}:cv:schema``: the schema version of the keys below (kept);
- ``{ns}:cv:o:{owner}``: sorted set of the owner's conversation ids, by creation time (expires
  retention after the owner's last entry);
- ``{ns}:cv:e:{id}``: list of the conversation's entries (JSON), the newest
  ``MAX_STORED_ENTRIES`` (expires retention after its last entry);
- ``{ns}:cv:n:{id}``: how many entries the conversation has had (expires with it).

Two scripts keep each call to one round trip: ``_APPEND`` appends only to a conversation its
owner still has (one deleted mid-turn gets nothing more), ``_CURRENT`` answers the owner's
newest conversation with only the entries this instance has not read yet: like the SQLite
store, recent conversations are kept decoded here, so a turn does not decode its whole history
again.

``owner`` is a digest of user, origin and agent, so no user id appears in a key name.
Retention is Redis's own ``EXPIRE``, renewed by every append: nothing to purge.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
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

# KEYS: owner, entries, count. ARGV: conversation id, retention ms, entries kept, bodies...
# The new count, or -1 when the owner no longer has the conversation.
_APPEND = """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end
redis.call('RPUSH', KEYS[2], unpack(ARGV, 4))
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
local count = redis.call('INCRBY', KEYS[3], #ARGV - 3)
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return count
"""

# KEYS: owner. ARGV: key prefix, the conversation id read before (or ''), the count read then,
# the most entries to answer. {id, count, entries newer than that read (all when another
# conversation is current, or the count went back)} or {} when the owner has none.
_CURRENT = """
local newest = redis.call('ZREVRANGE', KEYS[1], 0, 0)[1]
if not newest then return {} end
local count = tonumber(redis.call('GET', ARGV[1] .. ':n:' .. newest) or '0')
local wanted = count
if newest == ARGV[2] and count >= tonumber(ARGV[3]) then wanted = count - tonumber(ARGV[3]) end
wanted = math.min(wanted, tonumber(ARGV[4]))
local entries = {}
if wanted > 0 then entries = redis.call('LRANGE', ARGV[1] .. ':e:' .. newest, -wanted, -1) end
return {newest, count, entries}
"""

# Conversations whose entries an instance keeps decoded.
_CACHED_CONVERSATIONS = 256


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
        self._append_script = client.register_script(_APPEND)
        self._current_script = client.register_script(_CURRENT)
        # owner key -> (conversation id, count read, its newest entries, decoded).
        self._cache: OrderedDict[str, tuple[str, int, list[Entry]]] = OrderedDict()

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

    async def current(
        self, key: ConversationKey, limit: int = MAX_STORED_ENTRIES
    ) -> Conversation:
        await self._schema()
        owner = self._owner_key(key)
        cached_id, seen, entries = self._cache.pop(owner, ("", 0, []))
        answer = await self._current_script(
            keys=[owner], args=[self._prefix, cached_id, seen, MAX_STORED_ENTRIES]
        )
        if not answer:
            return Conversation(None, [])
        conversation_id, count, raw = answer[0].decode(), int(answer[1]), answer[2]
        if conversation_id != cached_id or count < seen or count - seen > len(raw):
            entries = []  # another conversation, or what was cached has been pushed out
        entries = [*entries, *(json.loads(item) for item in raw)][-MAX_STORED_ENTRIES:]
        self._remember(owner, conversation_id, count, entries)
        return Conversation(conversation_id, entries[-min(limit, MAX_STORED_ENTRIES):])

    def _remember(self, owner: str, conversation_id: str, count: int, entries: list[Entry]) -> None:
        self._cache[owner] = (conversation_id, count, entries)
        while len(self._cache) > _CACHED_CONVERSATIONS:
            self._cache.popitem(last=False)

    async def _newest_id(self, owner: str) -> str | None:
        newest = await self._client.zrevrange(owner, 0, 0)
        return newest[0].decode() if newest else None

    async def append(
        self, key: ConversationKey, conversation_id: str | None, entries: Sequence[Entry]
    ) -> str:
        await self._schema()
        owner = self._owner_key(key)
        target = conversation_id or await self._newest_id(owner)
        if target is None:
            target = await self.start_new(key)
        bodies = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries]
        count = int(
            await self._append_script(
                keys=[owner, f"{self._prefix}:e:{target}", f"{self._prefix}:n:{target}"],
                args=[target, self._ttl_ms, MAX_STORED_ENTRIES, *bodies],
            )
        )
        cached = self._cache.pop(owner, None)
        if count < 0:
            return target  # deleted meanwhile (the user pressed Delete mid-turn)
        if cached is not None and cached[0] == target and cached[1] == count - len(bodies):
            self._remember(owner, target, count, [*cached[2], *entries][-MAX_STORED_ENTRIES:])
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
        self._cache.pop(owner, None)
        ids = [item.decode() for item in await self._client.zrange(owner, 0, -1)]
        names = [f"{self._prefix}:{kind}:{i}" for i in ids for kind in ("e", "n")]
        await self._client.delete(owner, *names)
        return len(ids)

    async def purge_expired(self) -> int:
        return 0  # Redis expires the keys itself

    async def aclose(self) -> None:
        await self._client.aclose()
