"""Many ``mao-embed serve`` instances as one cluster on Redis (SPEC B6, W2, W3; docs/cluster.md).

``ClusterRelay`` is the ``Relay`` of an instance started with ``--redis``; without it the
plain ``Relay`` runs and nothing here is imported. What Redis holds (names under a namespace
derived from the secret and the API key, so only instances that share both form a cluster):

- ``{ns}:i:{instance}``: the instance is alive (expires after the liveness window, refreshed
  several times per window); ``{ns}:instances``: the set of instance names;
- ``{ns}:i:{instance}:sessions``: hash of that instance's connected sessions (the
  ``GET /api/sessions`` entries); listed only while the instance is alive and subscribed to
  its channel, so a killed instance's sessions leave the list as soon as Redis sees its
  connection close, and a vanished host's within the liveness window;
- ``{ns}:s:{sessionId}``: which instance holds the session and whose it is (user, agent,
  origin), for routing and for resuming the id on another instance; expires a resume window
  after its instance stops refreshing it;
- ``{ns}:r:{sessionId}:{requestId}``: an agent-chosen requestId's claim while in flight
  (``P|caller|page instance``), then its first result (``R|json``) for the retention window;
- ``{ns}:n:{sessionId}``: the session's page left its document (SPEC B7) on the instance it
  names; until the tab's next page resumes the session (on any instance, which deletes it),
  calls wait for that page instead of answering ``session_not_found``.

Requests and results travel by pub/sub, one channel per instance (``{ns}:c:{instance}``):
at most once, which is what a write needs (SPEC W3: never replayed), and ``PUBLISH`` says how
many subscribers got the message, so a request nobody received is known not to have been
delivered. What a lost message costs is bounded: every call has its timeout, a claimed
requestId's result is also in Redis, and an instance whose subscription drops answers its
waiting calls ``backend_unavailable`` at once (docs/cluster.md has the comparison with
streams).

Message formats on a channel (fields separated by newlines; JSON never holds a raw one):
``R caller claimed session request tool timeout-ms write request-json`` a request for a page
here, built and validated by the caller (the page's instance sends the JSON on as it is);
``A instance session request result-json`` its answer, from the page's instance;
``X session request reason`` cancel it; ``K session new-instance`` the session resumed
elsewhere, drop it here; ``N session json`` a message for the page (a chat event) from the
instance whose chat loop made it, which a navigation may have left behind (SPEC B7).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from mao_page.protocol import (
    ArgumentError,
    ErrorCode,
    Hello,
    PageInfo,
    PageToolResult,
    SiteContext,
    build_request,
)
from pydantic import ValidationError
from redis.exceptions import RedisError

from mao_embed.audit import AuditEvent, AuditLog
from mao_embed.config import ServerConfig
from mao_embed.relay.local import (
    _NAVIGATION_HANDOVER_S,
    _REQUEST_PREFIX,
    _TOOL_NAMES,
    NOTIFY_NEXT_PAGE_WAIT_MS,
    Attachment,
    CloseCode,
    ForwardedRequest,
    Relay,
    SessionIdentity,
    SessionTransport,
    _code_of,
    _deliver,
    failure,
    is_valid_request_id,
    new_request_id,
)
from mao_embed.relay.redis_link import (
    CommandLink,
    RedisUnavailable,
    Script,
    Subscriber,
    client_for,
    pack,
)

logger = logging.getLogger(__name__)

# How much longer than the page's instance a caller waits for an answer, so that instance's
# own ``timeout`` answer (which may say what was applied) arrives first.
_REMOTE_MARGIN_S = 0.5
# A claim outlives its call by this much: the page's instance always answers by the call's
# timeout plus grace, and a claim that expired early could let a repeat run the call twice.
_CLAIM_SLACK_MS = 10_000
# How often a caller checks that the instances running its calls are still there, and ends
# the calls past their deadline.
_WATCH_INTERVAL_S = 0.25
# Waiting for a requestId in flight on another instance: first poll, cap.
_POLL_FIRST_S = 0.02
_POLL_CAP_S = 0.25
# Codes that mean the request never reached a page: its claim is released, not kept, so a
# retry (e.g. after the page resumed on another instance) runs it.
_NOT_DISPATCHED = frozenset({
    ErrorCode.SESSION_NOT_FOUND.value,
    ErrorCode.UNKNOWN_TOOL.value,
    ErrorCode.BACKEND_UNAVAILABLE.value,
})

# KEYS: directory entry, request key, between-pages marker. ARGV: channel prefix, caller,
# claim ttl ms, claim?, message. Claim (if asked) and publish in one round trip: {0} no such
# session, {1, value} the requestId is already claimed or answered, {2, instance, receivers},
# {3} the page left its document and the tab's next page has not resumed the session yet (a
# marker left by an instance that no longer holds the directory entry is stale and ignored).
_ROUTE = Script("""
local entry = redis.call('GET', KEYS[1])
if not entry then return {0} end
local instance = string.sub(entry, 1, string.find(entry, '\\n', 1, true) - 1)
if redis.call('GET', KEYS[3]) == instance then return {3} end
if ARGV[4] == '1' then
  if not redis.call('SET', KEYS[2], 'P|' .. ARGV[2] .. '|' .. instance, 'NX', 'PX', ARGV[3]) then
    return {1, redis.call('GET', KEYS[2]) or ''}
  end
end
local receivers = redis.call('PUBLISH', ARGV[1] .. instance, ARGV[5])
if receivers == 0 and ARGV[4] == '1' then redis.call('DEL', KEYS[2]) end
return {2, instance, receivers}
""")
# KEYS: request key. ARGV: the claim it must still hold, the result to keep ('' releases
# the claim), retention ms, channel ('' publishes nothing), message.
_SETTLE = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[2] == '' then redis.call('DEL', KEYS[1])
  else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
end
if ARGV[4] ~= '' then return redis.call('PUBLISH', ARGV[4], ARGV[5]) end
return 0
""")
# ARGV: namespace, '1' to require the liveness key too, instance names. 1 per instance that
# is alive (its channel has a subscriber; and its liveness key exists), else 0.
_ALIVE = Script("""
local out = {}
for i = 3, #ARGV do
  local alive = 0
  if ARGV[2] ~= '1' or redis.call('EXISTS', ARGV[1] .. ':i:' .. ARGV[i]) == 1 then
    if redis.call('PUBSUB', 'NUMSUB', ARGV[1] .. ':c:' .. ARGV[i])[2] > 0 then alive = 1 end
  end
  out[#out + 1] = alive
end
return out
""")
# ARGV: namespace, this instance. The session entries of every other live instance.
_LIST = Script("""
local out = {}
for _, instance in ipairs(redis.call('SMEMBERS', ARGV[1] .. ':instances')) do
  if instance ~= ARGV[2] and redis.call('EXISTS', ARGV[1] .. ':i:' .. instance) == 1
     and redis.call('PUBSUB', 'NUMSUB', ARGV[1] .. ':c:' .. instance)[2] > 0 then
    for _, entry in ipairs(redis.call('HVALS', ARGV[1] .. ':i:' .. instance .. ':sessions')) do
      out[#out + 1] = entry
    end
  end
end
return out
""")


def namespace(config: ServerConfig) -> str:
    """Key prefix of the cluster: a digest of the secret and the API key, so instances that
    could not verify each other's tokens, or would let different agents in, never mix."""
    material = b"mao-embed cluster\0" + (config.api_key or "").encode()
    return "mao:" + hmac.new(config.secret.encode(), material, hashlib.sha256).hexdigest()[:16]


class _RemoteCall:
    """A tool call this instance took for a page on another instance."""

    __slots__ = (
        "claimed", "deadline", "is_write", "started", "target", "timeout_ms", "tool", "waiters"
    )

    def __init__(
        self, tool: str, is_write: bool, timeout_ms: int, claimed: bool,
        waiter: asyncio.Future[Any],
    ) -> None:
        self.tool = tool
        self.is_write = is_write
        self.timeout_ms = timeout_ms
        self.claimed = claimed
        self.waiters: list[asyncio.Future[PageToolResult]] = [waiter]
        self.target: str | None = None
        # Set once the request reached the page's instance: when this one stops waiting.
        self.deadline = float("inf")
        self.started = time.monotonic()


class ClusterRelay(Relay):
    """The relay of one cluster instance: local sessions as in ``Relay``, the others reached
    through Redis (module docstring)."""

    def __init__(self, config: ServerConfig, *, audit: AuditLog) -> None:
        super().__init__(
            audit=audit,
            default_timeout_ms=config.default_timeout_ms,
            resume_window_ms=config.resume_window_ms,
            response_grace_ms=config.response_grace_ms,
        )
        assert config.redis_url and config.instance_name
        self.instance = config.instance_name
        self._url = config.redis_url
        self._ns = namespace(config)
        self._channel_prefix = f"{self._ns}:c:"
        self._channel = self._channel_prefix + self.instance
        self._alive_key = f"{self._ns}:i:{self.instance}"
        self._sessions_key = f"{self._alive_key}:sessions"
        heartbeat_window_ms = config.heartbeat_interval_ms * config.heartbeat_misses
        self._liveness_ms = max(300, min(config.cluster_liveness_ms, heartbeat_window_ms))
        self._retention_ms = config.request_retention_ms
        self._directory_ttl_ms = config.resume_window_ms + self._liveness_ms
        self._link = CommandLink(self._url)
        self._client = client_for(self._url)
        self._subscriber = Subscriber(
            self._url, self._channel, self._on_message, self._joined, self._lost
        )
        self._remote: dict[tuple[str, str], _RemoteCall] = {}
        self._watch: asyncio.TimerHandle | None = None
        self._last_refresh = 0.0

    # ------------------------------------------------------------------ lifecycle

    @property
    def joined(self) -> bool:
        """Subscribed to this instance's channel: other instances can reach its pages."""
        return self._subscriber.subscribed.is_set()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        await self._check_name_is_free()
        subscriber = asyncio.get_running_loop().create_task(self._subscriber.run())
        maintenance = asyncio.get_running_loop().create_task(self._maintain())
        try:
            # Join before serving when Redis is there; start anyway when it is not (local
            # pages work, and the subscriber keeps trying).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await self._subscriber.subscribed.wait()
            if not self.joined:
                logger.warning("instance %s started without Redis; it joins when Redis answers",
                               self.instance)
            yield
        finally:
            subscriber.cancel()
            maintenance.cancel()
            for task in (subscriber, maintenance):
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await self._leave()
            await self._link.close()
            await self._client.aclose()

    async def _check_name_is_free(self) -> None:
        try:
            alive = await self._alive([self.instance])
        except RedisUnavailable:
            return
        if alive[0]:
            raise RuntimeError(
                f"another live instance is named {self.instance!r}: instance names must be "
                "unique in a cluster"
            )

    async def _joined(self) -> None:
        """Subscribed (again): announce this instance and every local session. A Redis that
        restarted has forgotten them; other instances see this one again from here."""
        try:
            registered = list(self._sessions)
            # One transaction: entries a previous run under this name left are replaced, and
            # no session registering meanwhile is wiped with them.
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.sadd(f"{self._ns}:instances", self.instance)
                pipe.set(self._alive_key, str(time.time()), px=self._liveness_ms)
                pipe.delete(self._sessions_key)
                for session_id in registered:
                    self._queue_registration(pipe, session_id)
                await pipe.execute()
            for session_id in set(self._sessions) - set(registered):
                await self._register(session_id)
            self._last_refresh = time.monotonic()
        except (RedisError, OSError) as error:
            logger.warning("instance %s could not register in Redis: %s", self.instance, error)
            return
        logger.info("instance %s joined the cluster with %d sessions", self.instance,
                    len(self._sessions))

    def _lost(self, error: BaseException) -> None:
        """The subscription dropped: answers for calls waiting on other instances can no
        longer arrive. They end now, rather than at their timeout."""
        logger.warning("instance %s lost Redis: %s", self.instance, error)
        self._end_remote(
            lambda call: True,
            ErrorCode.BACKEND_UNAVAILABLE,
            lambda call: "the connection to the cluster's Redis was lost while the page's "
            "instance was running the request; it is not retried",
            store=False,
        )

    async def _leave(self) -> None:
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                pipe.delete(self._alive_key, self._sessions_key)
                pipe.srem(f"{self._ns}:instances", self.instance)
                await pipe.execute()
        except (RedisError, OSError) as error:
            logger.info("instance %s could not deregister: %s", self.instance, error)

    async def _maintain(self) -> None:
        """Keep this instance alive in Redis, refresh its directory entries, forget dead
        instances."""
        interval = self._liveness_ms / 3000
        directory_every = max(interval, self._directory_ttl_ms / 3000)
        while True:
            await asyncio.sleep(interval)
            if not self.joined:
                continue
            try:
                existed = await self._client.set(
                    self._alive_key, str(time.time()), px=self._liveness_ms, get=True
                )
                if existed is None:
                    # Expired (this loop was starved) or Redis lost it: register everything.
                    await self._joined()
                    continue
                if time.monotonic() - self._last_refresh >= directory_every:
                    async with self._client.pipeline(transaction=False) as pipe:
                        for session in list(self._sessions.values()):
                            self._queue_registration(pipe, session.session_id)
                        pipe.pexpire(self._sessions_key, self._directory_ttl_ms)
                        await pipe.execute()
                    self._last_refresh = time.monotonic()
                await self._forget_dead_instances()
            except (RedisError, OSError, RedisUnavailable) as error:
                logger.debug("cluster maintenance skipped: %s", error)

    async def _forget_dead_instances(self) -> None:
        names = [n.decode() for n in await self._client.smembers(f"{self._ns}:instances")]
        others = [n for n in names if n != self.instance]
        if not others:
            return
        alive = await self._alive(others)
        dead = [n for n, live in zip(others, alive, strict=True) if not live]
        if dead:
            async with self._client.pipeline(transaction=False) as pipe:
                for name in dead:
                    # Its session entries only; directory entries expire by themselves, and
                    # until then let its pages resume their ids here.
                    pipe.delete(f"{self._ns}:i:{name}:sessions")
                    pipe.srem(f"{self._ns}:instances", name)
                await pipe.execute()

    async def _alive(self, names: list[str], *, strict: bool = True) -> list[int]:
        """Which instances are alive. ``strict=False`` asks only whether they are still
        subscribed: a process that died has lost its subscription with its connection, while
        one too busy to refresh its liveness key in time is still working on its calls, and
        must not have them declared lost."""
        reply = await self._link.evalsha(
            _ALIVE, [], [self._ns, "1" if strict else "0", *names]
        )
        return [int(v) for v in reply]

    # ------------------------------------------------------------------ directory

    def _entry(self, session_id: str) -> str:
        return f"{self._ns}:s:{session_id}"

    def _registration(self, session_id: str) -> tuple[str, str] | None:
        """The session's list entry and directory entry, as stored."""
        session = self._sessions.get(session_id)
        if session is None:
            return None
        info = session.info()
        wire = info.to_wire()
        wire["instance"] = self.instance
        identity = {"user": info.user_id, "agent": info.agent_id, "origin": info.origin}
        return (
            json.dumps(wire, separators=(",", ":")),
            f"{self.instance}\n{json.dumps(identity, separators=(',', ':'))}",
        )

    def _queue_registration(self, pipe: Any, session_id: str) -> None:
        entries = self._registration(session_id)
        if entries is not None:
            pipe.hset(self._sessions_key, session_id, entries[0])
            pipe.set(self._entry(session_id), entries[1], px=self._directory_ttl_ms)
            context = self._site_context_json(session_id)
            if context is not None:
                pipe.set(self._site_key(session_id), context, px=self._directory_ttl_ms)

    # ------------------------------------------------------------------ site tools

    def _site_key(self, session_id: str) -> str:
        return f"{self._ns}:t:{session_id}"

    def _site_context_json(self, session_id: str) -> str | None:
        session = self._sessions.get(session_id)
        if session is None or session.site_context is None:
            return None
        return session.site_context.to_json()

    def set_site_context(self, session_id: str, context: SiteContext) -> None:
        """As ``Relay.set_site_context``, and stored in Redis beside the session's directory
        entry (refreshed with it), so an agent on any instance lists the page's site tools.
        ``list_changed`` reaches the MCP clients of this instance only."""
        super().set_site_context(session_id, context)
        self._spawn(self._store_site_context(session_id))

    async def _store_site_context(self, session_id: str) -> None:
        context = self._site_context_json(session_id)
        if context is None:
            return
        try:
            await self._link.command(pack(
                "SET", self._site_key(session_id), context, "PX", str(self._directory_ttl_ms)
            ))
        except (RedisUnavailable, RedisError) as error:
            logger.warning("site tools of %s not stored in Redis: %s", session_id, error)

    async def find_site_context(self, session_id: str) -> SiteContext | None:
        local = self.site_context(session_id)
        if local is not None:
            return local
        try:
            stored = await self._link.command(pack("GET", self._site_key(session_id)))
        except (RedisUnavailable, RedisError):
            stored = None
        if stored is not None:
            with contextlib.suppress(ValueError):
                return SiteContext.model_validate_json(stored)
        return SiteContext() if await self.find_session(session_id) is not None else None

    async def _register(self, session_id: str) -> None:
        # On the shared command link: pages connect in bursts, and a pool connection per
        # registration meant a burst of new connections to Redis, some timing out.
        entries = self._registration(session_id)
        if entries is None:
            return
        try:
            await asyncio.gather(
                self._link.command(pack("HSET", self._sessions_key, session_id, entries[0])),
                self._link.command(pack("SET", self._entry(session_id), entries[1], "PX",
                                        str(self._directory_ttl_ms))),
            )
        except (RedisUnavailable, RedisError) as error:
            # Listed again when this instance rejoins (``_joined``) or refreshes.
            logger.warning("session %s not registered in Redis: %s", session_id, error)

    async def attach(
        self, hello: Hello, origin: str, transport: SessionTransport, *, adopt: bool = False
    ) -> Attachment:
        wanted = hello.resume_session_id
        if wanted and wanted not in self._sessions and wanted not in self._detached:
            identity = SessionIdentity(hello.user.id, hello.agent_id, origin)
            # SPEC B7: a next page never takes over a session another instance's live
            # connection holds (a duplicated tab); it gets a new session.
            if hello.resume_kind != "navigation" or not await self._held_elsewhere(wanted):
                adopt = await self._adopt(wanted, identity)
        attachment = await super().attach(hello, origin, transport, adopt=adopt)
        await self._register(attachment.session_id)
        if attachment.resumed:
            # After the directory names this instance: a call that stops waiting routes here.
            with contextlib.suppress(RedisError, RedisUnavailable):
                await self._link.command(pack("DEL", self._between_key(attachment.session_id)))
        return attachment

    def _between_key(self, session_id: str) -> str:
        return f"{self._ns}:n:{session_id}"

    async def _held_elsewhere(self, session_id: str) -> bool:
        """Whether another instance still lists ``session_id`` as connected after the
        handover time (its page's close may be read after the next page's hello, as in
        ``Relay._still_held``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _NAVIGATION_HANDOVER_S
        while True:
            try:
                entry = await self._link.command(pack("GET", self._entry(session_id)))
                if entry is None:
                    return False
                owner = entry.decode().partition("\n")[0]
                if owner == self.instance:
                    return False
                listed = await self._link.command(
                    pack("HEXISTS", f"{self._ns}:i:{owner}:sessions", session_id)
                )
            except (RedisError, RedisUnavailable):
                return False
            if not listed:
                return False
            if loop.time() >= deadline:
                return True
            await asyncio.sleep(_POLL_FIRST_S)

    async def _adopt(self, session_id: str, identity: SessionIdentity) -> bool:
        """Whether a page may resume ``session_id`` here: the id was this identity's on
        another instance (SPEC W4 across instances). That instance, if still alive, is told
        to drop its connection of the session (its half-dead socket, as for a local resume)."""
        try:
            entry = await self._link.command(pack("GET", self._entry(session_id)))
        except (RedisError, RedisUnavailable):
            return False
        if entry is None:
            return False
        owner, _, raw_identity = entry.decode().partition("\n")
        try:
            known = json.loads(raw_identity)
        except ValueError:
            return False
        if (known.get("user"), known.get("agent"), known.get("origin")) != (
            identity.user_id, identity.agent_id, identity.origin
        ):
            return False
        if owner != self.instance:
            with contextlib.suppress(RedisError, OSError, RedisUnavailable):
                await self._link.command(
                    pack("PUBLISH", self._channel_prefix + owner,
                         f"K\n{session_id}\n{self.instance}\n")
                )
        return True

    def detach(
        self,
        session_id: str,
        transport: SessionTransport,
        *,
        reason: str,
        navigating: bool = False,
    ) -> None:
        session = self._sessions.get(session_id)
        owned = session is not None and session.transport is transport
        super().detach(session_id, transport, reason=reason, navigating=navigating)
        if owned:
            self._spawn(self._unregister(session_id, navigating=navigating))

    async def _unregister(self, session_id: str, *, navigating: bool = False) -> None:
        if session_id in self._sessions:  # resumed here meanwhile
            return
        with contextlib.suppress(RedisError, RedisUnavailable):
            if navigating:
                # Calls on any instance wait for the tab's next page, wherever it lands.
                await self._link.command(pack(
                    "SET", self._between_key(session_id), self.instance,
                    "PX", str(self._directory_ttl_ms),
                ))
            await self._link.command(pack("HDEL", self._sessions_key, session_id))
            await self._link.command(pack("DEL", self._site_key(session_id)))

    def touch(self, session_id: str, page: PageInfo | None = None) -> None:
        session = self._sessions.get(session_id)
        changed = (
            session is not None
            and page is not None
            and (session.url, session.title) != (page.url, page.title)
        )
        super().touch(session_id, page)
        if changed:
            self._spawn(self._register(session_id))

    def mark_ready(self, session_id: str, page: PageInfo | None = None) -> bool:
        marked = super().mark_ready(session_id, page)
        if marked:
            self._spawn(self._register(session_id))
        return marked

    async def list_sessions(self) -> list[dict[str, Any]]:
        local = await super().list_sessions()
        for entry in local:
            entry["instance"] = self.instance
        try:
            remote = await self._link.evalsha(_LIST, [], [self._ns, self.instance])
        except RedisUnavailable as error:
            logger.warning("session list has this instance's sessions only: %s", error)
            return local
        mine = {entry["sessionId"] for entry in local}
        others = [json.loads(raw) for raw in remote]
        return local + [entry for entry in others if entry.get("sessionId") not in mine]

    async def find_session(self, session_id: str) -> dict[str, Any] | None:
        for entry in await self.list_sessions():
            if entry["sessionId"] == session_id:
                return entry
        return None

    # ------------------------------------------------------------------ tool calls

    async def call_tool(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any],
        *,
        request_id: str | None = None,
        timeout_ms: int | None = None,
    ) -> PageToolResult:
        """As ``Relay.call_tool``, for a page on any instance. An agent-chosen requestId is
        claimed in Redis before the page can see it, so a repeat on any instance gets the
        first result or waits for it (SPEC W2)."""
        agent_chosen = (
            request_id is not None
            and not request_id.startswith(_REQUEST_PREFIX)
            and is_valid_request_id(request_id)
            and tool in _TOOL_NAMES
        )
        session = self._sessions.get(session_id)
        if session is not None:
            if not agent_chosen or request_id in session.pending or (
                request_id in session.completed
            ):
                return await super().call_tool(
                    session_id, tool, args, request_id=request_id, timeout_ms=timeout_ms
                )
            assert request_id is not None
            return await self._call_local_claimed(session_id, tool, args, request_id, timeout_ms)
        detached = self._detached.get(session_id)
        if detached is not None and request_id is not None and request_id in detached.completed:
            return await super().call_tool(
                session_id, tool, args, request_id=request_id, timeout_ms=timeout_ms
            )
        if detached is not None and detached.navigating and tool in _TOOL_NAMES:
            # Left from here a moment ago (its Redis marker may not be written yet): wait for
            # the tab's next page as a call from any other instance does.
            request_id = request_id if request_id is not None else new_request_id()
            if is_valid_request_id(request_id):
                waiter: asyncio.Future[PageToolResult] = (
                    asyncio.get_running_loop().create_future()
                )
                call = _RemoteCall(tool, False, 0, agent_chosen, waiter)
                await self._after_next_page(
                    call, session_id, tool, args, request_id,
                    timeout_ms if timeout_ms is not None else self.default_timeout_ms,
                )
                return await waiter
        return await self._call_remote(
            session_id, tool, args, request_id, agent_chosen, timeout_ms
        )

    def _request_key(self, session_id: str, request_id: str) -> str:
        return f"{self._ns}:r:{session_id}:{request_id}"

    def _claim_ttl_ms(self, timeout_ms: int | None) -> int:
        timeout = timeout_ms if timeout_ms is not None else self.default_timeout_ms
        return timeout + int(self._grace_s * 1000) + _CLAIM_SLACK_MS

    async def _call_local_claimed(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any],
        request_id: str,
        timeout_ms: int | None,
    ) -> PageToolResult:
        key = self._request_key(session_id, request_id)
        marker = f"P|{self.instance}|{self.instance}"
        try:
            earlier = await self._link.command(
                pack("SET", key, marker, "NX", "GET", "PX", str(self._claim_ttl_ms(timeout_ms)))
            )
            claimed = earlier is None
        except RedisUnavailable:
            # The page is here: it keeps working, with this instance's own idempotency
            # (a repeat on another instance cannot reach the page while Redis is away).
            earlier, claimed = None, False
        if earlier is not None:
            return await self._answer_from_claim(
                session_id, tool, args, request_id, timeout_ms, earlier
            )
        result = await super().call_tool(
            session_id, tool, args, request_id=request_id, timeout_ms=timeout_ms
        )
        if claimed:
            await self._settle_claim(key, marker, result)
        return result

    async def _settle_claim(
        self, key: str, marker: str, result: PageToolResult, channel: str = "",
        message: bytes = b"", text: str | None = None,
    ) -> None:
        """Keep ``result`` (``text``: its JSON, if the caller has it) as the requestId's first
        result, or release the claim if the request never reached a page; then publish
        ``message`` if given."""
        if _code_of(result) in _NOT_DISPATCHED:
            kept = ""
        else:
            kept = "R|" + (text if text is not None else result.model_dump_json(exclude_unset=True))
        try:
            await self._link.evalsha(
                _SETTLE, [key], [marker, kept, str(self._retention_ms), channel, message]
            )
        except (RedisUnavailable, RedisError) as error:
            logger.warning("result of %s not kept in Redis: %s", key, error)

    async def _answer_from_claim(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any],
        request_id: str,
        timeout_ms: int | None,
        value: bytes,
    ) -> PageToolResult:
        """A repeated requestId another call claimed first: its result, once there (SPEC W2).
        If the instance running it died, the answer is that it may have applied (W3), and
        that answer is kept as the result, so no later repeat runs it either."""
        timeout_s = (timeout_ms if timeout_ms is not None else self.default_timeout_ms) / 1000
        deadline = time.monotonic() + timeout_s + self._grace_s
        key = self._request_key(session_id, request_id)
        delay = _POLL_FIRST_S
        started = time.monotonic()
        while True:
            if value.startswith(b"R|"):
                result = PageToolResult.model_validate_json(value[2:])
                self._record(
                    AuditEvent.TOOL_CALL_RELAYED,
                    session_id=session_id,
                    request_id=request_id,
                    tool=tool,
                    code=_code_of(result),
                    duration_ms=round((time.monotonic() - started) * 1000, 3),
                    detail="repeated requestId answered with the first result",
                )
                return result
            if not value:  # released or expired: nobody ran it, so this call may
                return await self.call_tool(
                    session_id, tool, args, request_id=request_id, timeout_ms=timeout_ms
                )
            owner = value.decode().rsplit("|", 1)[-1]
            try:
                alive = (await self._alive([owner], strict=False))[0]
            except RedisUnavailable:
                return self._unavailable(request_id, may_have_applied=True)
            if not alive:
                result = failure(
                    request_id,
                    ErrorCode.DISCONNECTED,
                    f"the first call with this requestId was running on instance {owner}, "
                    "which stopped; it is not retried",
                    {"mayHaveApplied": _is_write(tool, args, request_id, session_id)},
                )
                await self._settle_claim(key, value.decode(), result)
                continue_value = await self._get(key)
                if continue_value is None or not continue_value.startswith(b"R|"):
                    return result
                value = continue_value
                continue
            if time.monotonic() >= deadline:
                return failure(
                    request_id,
                    ErrorCode.TIMEOUT,
                    f"the first call with this requestId is still running on instance {owner}",
                    {"mayHaveApplied": _is_write(tool, args, request_id, session_id)},
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, _POLL_CAP_S)
            fresh = await self._get(key)
            value = fresh if fresh is not None else b""

    async def _get(self, key: str) -> bytes | None:
        try:
            value = await self._link.command(pack("GET", key))
        except RedisUnavailable:
            return None
        return value  # type: ignore[no-any-return]

    def _unavailable(self, request_id: str, *, may_have_applied: bool) -> PageToolResult:
        return failure(
            request_id,
            ErrorCode.BACKEND_UNAVAILABLE,
            "the cluster's Redis cannot be reached; pages on other instances are out of reach",
            {"mayHaveApplied": may_have_applied},
        )

    async def _call_remote(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any],
        request_id: str | None,
        claim: bool,
        timeout_ms: int | None,
    ) -> PageToolResult:
        if request_id is None:
            request_id = new_request_id()
        elif not is_valid_request_id(request_id):
            return await super().call_tool(session_id, tool, args, request_id=request_id)
        if tool not in _TOOL_NAMES:
            return await super().call_tool(session_id, tool, args, request_id=request_id)
        key = (session_id, request_id)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[PageToolResult] = loop.create_future()
        in_flight = self._remote.get(key)
        if in_flight is not None:
            in_flight.waiters.append(waiter)
            return await waiter
        request = self._build_request(session_id, tool, args, request_id, timeout_ms)
        if isinstance(request, PageToolResult):
            return request
        is_write = request.is_write
        call = _RemoteCall(tool, is_write, request.timeout_ms, claim, waiter)
        self._remote[key] = call
        message = b"\n".join((
            b"R", self.instance.encode(), b"1" if claim else b"0", session_id.encode(),
            request_id.encode(), tool.encode(), b"%d" % request.timeout_ms,
            b"1" if is_write else b"0", request.to_json().encode(),
        ))
        try:
            reply = await self._link.evalsha(
                _ROUTE,
                [self._entry(session_id), self._request_key(session_id, request_id),
                 self._between_key(session_id)],
                [self._channel_prefix, self.instance,
                 str(self._claim_ttl_ms(request.timeout_ms)), "1" if claim else "0", message],
            )
        except (RedisUnavailable, RedisError):
            self._finish_remote(key, self._unavailable(request_id, may_have_applied=False))
            return await waiter
        if key not in self._remote:  # ended meanwhile (the subscription dropped)
            return await waiter
        if reply[0] == 0:
            self._remote.pop(key, None)
            _deliver(call.waiters, failure(
                request_id, ErrorCode.SESSION_NOT_FOUND, f"no connected page session {session_id!r}"
            ))
        elif reply[0] == 3:
            self._remote.pop(key, None)
            self._spawn(self._after_next_page(
                call, session_id, tool, args, request_id, request.timeout_ms
            ))
        elif reply[0] == 1:
            self._remote.pop(key, None)
            result = await self._answer_from_claim(
                session_id, tool, args, request_id, timeout_ms, reply[1]
            )
            _deliver(call.waiters, result)
        elif reply[2] == 0:
            self._finish_remote(key, failure(
                request_id,
                ErrorCode.BACKEND_UNAVAILABLE,
                f"the page's instance {reply[1].decode()} is not reachable; nothing was sent",
                {"mayHaveApplied": False},
            ), store=False)
        else:
            call.target = reply[1].decode()
            call.deadline = (
                time.monotonic() + request.timeout_ms / 1000 + self._grace_s + _REMOTE_MARGIN_S
            )
            self._watch_targets()
        return await waiter

    async def _after_next_page(
        self,
        call: _RemoteCall,
        session_id: str,
        tool: str,
        args: dict[str, Any],
        request_id: str,
        timeout_ms: int,
    ) -> None:
        """SPEC B7 across instances: the session's page left its document; wait (within the
        call's timeout) until the tab's next page resumed it on some instance, then make the
        call there with what is left of the timeout. Nothing was sent or claimed yet."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout_ms / 1000
        result: PageToolResult | None = None
        while loop.time() < deadline:
            if session_id in self._sessions:
                break
            if self._between_pages(session_id, request_id):
                # Left from this instance; dropped here when it resumes elsewhere ("K").
                await asyncio.sleep(_POLL_FIRST_S * 2)
                continue
            try:
                marker = await self._link.command(pack("GET", self._between_key(session_id)))
            except (RedisError, RedisUnavailable):
                result = self._unavailable(request_id, may_have_applied=False)
                break
            if marker is None:
                break
            await asyncio.sleep(_POLL_FIRST_S * 2)
        else:
            result = failure(
                request_id,
                ErrorCode.TIMEOUT,
                f"the page left (a navigation, a reload or the tab closing) and no next page "
                f"of its tab resumed the session within {timeout_ms} ms; nothing was sent",
                {"mayHaveApplied": False, "reason": "navigated"},
            )
        if result is None:
            left = max(100, timeout_ms - round((loop.time() - started) * 1000))
            result = await self.call_tool(
                session_id, tool, args, request_id=request_id, timeout_ms=left
            )
        _deliver(call.waiters, result)

    async def notify(self, session_id: str, message: dict[str, Any]) -> bool:
        """As ``Relay.notify``, for a page on any instance: a chat loop runs where the user's
        message arrived, and the page may have moved since, with a navigation (SPEC B7)."""
        if session_id not in self._sessions and self._between_pages(session_id, ""):
            # Left from here: woken when it resumes here (attach) or elsewhere ("K").
            await self.wait_for_next_page(session_id, NOTIFY_NEXT_PAGE_WAIT_MS)
        if session_id in self._sessions:
            return await super().notify(session_id, message)
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + NOTIFY_NEXT_PAGE_WAIT_MS / 1000
        while True:
            try:
                entry, between = await self._link.command(
                    pack("MGET", self._entry(session_id), self._between_key(session_id))
                )
            except (RedisError, RedisUnavailable, ValueError):
                return False
            if entry is None:
                return False
            owner = entry.decode().partition("\n")[0]
            if between is not None and between.decode() == owner and loop.time() < deadline:
                await asyncio.sleep(_POLL_FIRST_S * 2)  # the tab's next page is on its way
                continue
            if owner == self.instance or session_id in self._sessions:
                return await super().notify(session_id, message)
            try:
                receivers = await self._link.command(
                    pack("PUBLISH", self._channel_prefix + owner, f"N\n{session_id}\n{text}")
                )
            except (RedisError, RedisUnavailable):
                return False
            return bool(receivers)

    def _finish_remote(
        self, key: tuple[str, str], result: PageToolResult, *, store: bool = True
    ) -> None:
        """End a remote call here (timeout, dead instance, no Redis): audit, answer its
        callers, and for a claimed requestId keep this outcome as its first result."""
        call = self._remote.pop(key, None)
        if call is None:
            return
        self._audit_remote(key, call, result)
        _deliver(call.waiters, result)
        if store and call.claimed and call.target is not None:
            marker = f"P|{self.instance}|{call.target}"
            self._spawn(self._settle_claim(self._request_key(*key), marker, result))

    def _audit_remote(
        self, key: tuple[str, str], call: _RemoteCall, result: PageToolResult
    ) -> None:
        self._record(
            AuditEvent.TOOL_CALL_RELAYED,
            session_id=key[0],
            request_id=key[1],
            tool=call.tool,
            code=_code_of(result),
            duration_ms=round((time.monotonic() - call.started) * 1000, 3),
            detail=f"page on instance {call.target}" if call.target else None,
        )

    def _end_remote(
        self,
        ended: Callable[[_RemoteCall], bool],
        code: ErrorCode,
        why: Callable[[_RemoteCall], str],
        *,
        store: bool = True,
    ) -> None:
        """End the remote calls ``ended`` selects with ``code``; a write may have applied."""
        for key, call in [(k, c) for k, c in self._remote.items() if ended(c)]:
            self._finish_remote(
                key,
                failure(key[1], code, why(call), {"mayHaveApplied": call.is_write}),
                store=store,
            )

    def _watch_targets(self) -> None:
        if self._watch is None and self._remote:
            self._watch = asyncio.get_running_loop().call_later(
                _WATCH_INTERVAL_S, lambda: self._spawn(self._check_targets())
            )

    async def _check_targets(self) -> None:
        """End the calls whose page instance died (SPEC W3: they may have applied), and those
        past their deadline."""
        self._watch = None
        now = time.monotonic()
        # Past the deadline: the answer was lost (the page's instance answers a timeout of
        # its own before that).
        self._end_remote(
            lambda call: call.deadline <= now,
            ErrorCode.TIMEOUT,
            lambda call: f"no answer from the page's instance {call.target} within "
            f"{call.timeout_ms} ms; the request is not retried",
        )
        targets = sorted({c.target for c in self._remote.values() if c.target is not None})
        if targets:
            try:
                alive = await self._alive(targets, strict=False)
            except (RedisUnavailable, RedisError):
                alive = [1] * len(targets)  # the subscription's own loss ends them if need be
            dead = {t for t, live in zip(targets, alive, strict=True) if not live}
            self._end_remote(
                lambda call: call.target in dead,
                ErrorCode.DISCONNECTED,
                lambda call: f"the page's instance {call.target} stopped before answering; "
                "the request is not retried",
            )
        self._watch_targets()

    async def cancel(self, session_id: str, request_id: str, reason: str = "") -> bool:
        key = (session_id, request_id)
        call = self._remote.get(key)
        if call is None:
            return await super().cancel(session_id, request_id, reason)
        target = call.target
        self._finish_remote(key, failure(
            request_id,
            ErrorCode.CANCELLED,
            f"cancelled by the agent{': ' + reason if reason else ''}",
            {"mayHaveApplied": call.is_write},
        ))
        if target is not None:
            with contextlib.suppress(RedisUnavailable, RedisError):
                await self._link.command(pack(
                    "PUBLISH", self._channel_prefix + target,
                    f"X\n{session_id}\n{request_id}\n{reason or 'cancelled by the agent'}",
                ))
        return True

    # ------------------------------------------------------------------ messages

    def _on_message(self, data: bytes) -> None:
        kind = data[:2]
        if kind == b"A\n":
            _, sender, session_id, request_id, payload = data.split(b"\n", 4)
            key = (session_id.decode(), request_id.decode())
            call = self._remote.get(key)
            if call is None:  # ended here already (timeout, cancel): nothing waits for it
                return
            # The answer can overtake the reply to the route command (another connection).
            call.target = call.target or sender.decode()
            try:
                result = PageToolResult.model_validate_json(payload)
            except ValidationError:
                logger.error("malformed answer from instance %s for %s", call.target, key)
                return
            self._finish_remote(key, result, store=False)
        elif kind == b"R\n":
            try:
                _, caller, claimed, session_id, request_id, tool, timeout_ms, write, frame = (
                    data.split(b"\n", 8)
                )
                request = ForwardedRequest(
                    request_id.decode(), session_id.decode(), tool.decode(), int(timeout_ms),
                    write == b"1", frame.decode(),
                )
            except ValueError:  # a message of another version of this code
                logger.error("malformed request %r", data[:80])
                return
            self._spawn(self._serve(caller.decode(), claimed == b"1", request))
        elif kind == b"X\n":
            _, session_id, request_id, reason = data.split(b"\n", 3)
            self._spawn(
                super().cancel(session_id.decode(), request_id.decode(), reason.decode())
            )
        elif kind == b"N\n":
            _, session_id, payload = data.split(b"\n", 2)
            try:
                message = json.loads(payload)
            except ValueError:
                logger.error("malformed page message for %s", session_id[:80])
                return
            self._spawn(super().notify(session_id.decode(), message))
        elif kind == b"K\n":
            _, session_id, new_owner, _rest = data.split(b"\n", 3)
            self._release(session_id.decode(), new_owner.decode())
        else:
            logger.error("unknown cluster message %r", data[:40])

    async def _serve(self, caller: str, claimed: bool, request: ForwardedRequest) -> None:
        """Run a request another instance routed here, and send it the answer."""
        result = await self.call_request(request)
        session_id, request_id = request.session_id, request.request_id
        session = self._sessions.get(session_id)
        frame = session.completed.get(request_id) if session is not None else None
        text = frame if frame is not None else result.model_dump_json(exclude_unset=True)
        channel = self._channel_prefix + caller
        message = b"A\n%s\n%s\n%s\n%s" % (
            self.instance.encode(), session_id.encode(), request_id.encode(), text.encode()
        )
        if claimed:
            key = self._request_key(session_id, request_id)
            await self._settle_claim(
                key, f"P|{caller}|{self.instance}", result, channel, message, text
            )
            return
        try:
            await self._link.command(pack("PUBLISH", channel, message))
        except (RedisUnavailable, RedisError) as error:
            logger.warning("answer to %s for %s lost: %s", caller, request_id, error)

    def _release(self, session_id: str, new_owner: str) -> None:
        """The page resumed its session on ``new_owner``: drop this instance's hold on it,
        and wake what waited here for the tab's next page (it goes there through Redis)."""
        self._detached.pop(session_id, None)
        for waiter in self._returns.pop(session_id, ()):
            if not waiter.done():
                waiter.set_result(None)
        session = self._sessions.get(session_id)
        if session is not None:
            self.disconnect(
                session_id,
                session.transport,
                CloseCode.REPLACED,
                "session resumed elsewhere",
                reason=f"resumed on instance {new_owner}",
            )


def _is_write(tool: str, args: dict[str, Any], request_id: str, session_id: str) -> bool:
    try:
        return build_request(tool, args, request_id=request_id, session_id=session_id).is_write
    except ArgumentError:
        return True
