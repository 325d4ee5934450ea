"""The cluster's connections to Redis, on the official ``redis`` client's asyncio API.

Two connections per instance, both ``redis.asyncio.Connection`` (the client's own connect,
AUTH, SELECT, TLS and hiredis parser):

- ``CommandLink``: the commands of the tool-call path (route a request, settle a result).
  Many callers share the one connection: one writer task writes the commands of each loop
  iteration in one write, and one reader task reads their replies in order, so there is no
  pool checkout, lock, task or timer per command. ``redis.asyncio.Redis`` spent ~90-120 us of CPU
  per command on this machine (pool, per-command timeout context, observability hooks) against
  ~25-50 here, and a routed tool call makes two of them (docs/cluster.md).
- ``Subscriber``: the instance's own pub/sub channel, read message by message.

Everything else (the session list, liveness, bookkeeping) uses a plain ``redis.asyncio.Redis``
client. Whatever goes wrong with Redis surfaces as ``RedisUnavailable``; the links reconnect
on the next use, so an instance rejoins by itself when Redis comes back.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aredis
from redis.asyncio.connection import Connection, ConnectionPool
from redis.exceptions import NoScriptError, RedisError, ResponseError

logger = logging.getLogger(__name__)

# Connecting to an unreachable Redis must fail well inside a tool call's timeout.
CONNECT_TIMEOUT_S = 1.0
# A command whose reply has not come back in this long means the link is broken (a Redis
# that stopped answering, a dead peer without a reset): every waiting command fails at once.
COMMAND_TIMEOUT_S = 2.0


class RedisUnavailable(Exception):
    """Redis could not be reached, or did not answer in time."""


def client_for(url: str) -> aredis.Redis:
    """The general-purpose client (not on the tool-call path)."""
    return aredis.Redis.from_url(
        url,
        protocol=2,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        socket_timeout=COMMAND_TIMEOUT_S,
        # A failure is reported at once; the caller decides (answer ``backend_unavailable``).
        retry_on_error=[],
        retry=None,
        decode_responses=False,
    )


def _connection_for(url: str) -> Connection:
    # RESP2: pub/sub messages are plain replies, read like any other.
    pool = ConnectionPool.from_url(
        url, protocol=2, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=None
    )
    return pool.make_connection()  # type: ignore[no-any-return]


def pack(*parts: str | bytes) -> bytes:
    """One command in RESP, ready for ``CommandLink.command``."""
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode()
        out += (b"$%d\r\n" % len(data), data, b"\r\n")
    return b"".join(out)


class Script:
    """A Lua script run by its SHA1; loaded again if Redis forgot it (a restart)."""

    def __init__(self, source: str) -> None:
        import hashlib

        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()


class CommandLink:
    """Commands over one pipelined connection (module docstring)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._connection: Connection | None = None
        self._connecting: asyncio.Task[Connection] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        # One entry per command written, in order: its future (None: nobody waits) and when.
        self._waiting: collections.deque[tuple[asyncio.Future[Any] | None, float]] = (
            collections.deque()
        )
        self._watchdog: asyncio.TimerHandle | None = None
        # Commands not written yet, in the order of ``_waiting``; the writer takes them all.
        self._outbox: list[bytes] = []
        # Set while the writer waits for commands: resolving it wakes the writer.
        self._wake: asyncio.Future[None] | None = None

    @property
    def connected(self) -> bool:
        return self._connection is not None

    async def command(self, packed: bytes) -> Any:
        """Send one packed command and return its reply; ``RedisUnavailable`` on failure,
        ``ResponseError`` for Redis's own error reply.

        Commands made in the same event-loop iteration go out in one write: on loopback each
        send costs the sender the kernel's whole delivery to Redis (tens of us on a busy
        host), and under load many calls share an iteration."""
        if self._connection is None:
            await self._connect()
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((future, time.monotonic()))
        self._outbox.append(packed)
        wake = self._wake
        if wake is not None:
            # The writer runs once this iteration's callbacks have run, so it finds every
            # command they made.
            self._wake = None
            wake.set_result(None)
        return await future

    async def _write(self, connection: Connection) -> None:
        """The connection's one writer, for as long as it lives: a task of its own, not a
        caller's (cancelling a tool call mid-write would make the client drop the connection
        every caller shares), and one writer, so commands go out in the order of
        ``_waiting``."""
        loop = asyncio.get_running_loop()
        while True:
            if not self._outbox:
                self._wake = loop.create_future()
                await self._wake
                continue
            batch, self._outbox = self._outbox, []
            if not connection.is_connected:
                # send_packed_command would connect again behind the reader's back.
                self._broken(connection, RedisUnavailable("not connected"))
                return
            try:
                # No health check and no socket timeout (``_connection_for``): the
                # watchdog notices a Redis that stopped answering.
                await connection.send_packed_command(b"".join(batch), check_health=False)
            except (RedisError, OSError, RuntimeError) as error:  # a transport closed under us
                self._broken(connection, error)
                return

    async def evalsha(self, script: Script, keys: list[str], args: list[str | bytes]) -> Any:
        try:
            return await self.command(
                pack("EVALSHA", script.sha, str(len(keys)), *keys, *args)
            )
        except NoScriptError:
            # Redis restarted and forgot its scripts; EVAL loads it again.
            return await self.command(pack("EVAL", script.source, str(len(keys)), *keys, *args))

    async def close(self) -> None:
        if self._connection is not None:
            self._broken(self._connection, RedisUnavailable("closed"))

    async def _connect(self) -> Connection:
        if self._connecting is None:
            self._connecting = asyncio.get_running_loop().create_task(self._open())
        try:
            return await asyncio.shield(self._connecting)
        finally:
            if self._connecting is not None and self._connecting.done():
                self._connecting = None

    async def _open(self) -> Connection:
        connection = _connection_for(self._url)
        try:
            await connection.connect()
        except (RedisError, OSError) as error:
            raise RedisUnavailable(f"cannot connect to Redis: {error}") from None
        self._connection = connection
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read(connection))
        self._writer = loop.create_task(self._write(connection))
        self._arm_watchdog()
        return connection

    async def _read(self, connection: Connection) -> None:
        while True:
            try:
                reply: Any = await connection.read_response(
                    disable_decoding=True, timeout=math.inf
                )
            except ResponseError as error:
                reply = error
            except (RedisError, OSError, asyncio.IncompleteReadError) as error:
                self._broken(connection, error)
                return
            if not self._waiting:
                logger.error("Redis sent a reply nobody asked for; reconnecting")
                self._broken(connection, RedisUnavailable("unexpected reply"))
                return
            future, _ = self._waiting.popleft()
            if future is None or future.done():
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    def _broken(self, connection: Connection, error: BaseException) -> None:
        """Fail every waiting command and drop the connection; the next command reconnects."""
        if self._connection is not connection:
            return
        self._connection = None
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        for task in (self._reader, self._writer):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        self._reader = self._writer = self._wake = None
        waiting, self._waiting = self._waiting, collections.deque()
        self._outbox = []
        unavailable = RedisUnavailable(f"Redis connection lost: {error}")
        for future, _ in waiting:
            if future is not None and not future.done():
                future.set_exception(unavailable)
        asyncio.get_running_loop().create_task(_disconnect_quietly(connection))

    def _arm_watchdog(self) -> None:
        loop = asyncio.get_running_loop()
        self._watchdog = loop.call_later(COMMAND_TIMEOUT_S / 4, self._check_overdue)

    def _check_overdue(self) -> None:
        self._watchdog = None
        connection = self._connection
        if connection is None:
            return
        if self._waiting and time.monotonic() - self._waiting[0][1] > COMMAND_TIMEOUT_S:
            self._broken(connection, RedisUnavailable("Redis did not answer in time"))
            return
        self._arm_watchdog()


class Subscriber:
    """Reads this instance's channel; calls ``on_message`` with each message's bytes.

    ``run`` keeps (re)subscribing until cancelled; ``on_joined`` runs after each successful
    subscription (the instance then re-registers itself, since a Redis that restarted has
    forgotten it) and ``on_lost`` when the subscription drops."""

    def __init__(
        self,
        url: str,
        channel: str,
        on_message: Callable[[bytes], None],
        on_joined: Callable[[], Awaitable[None]],
        on_lost: Callable[[BaseException], None],
        *,
        retry_s: float = 0.25,
    ) -> None:
        self._url = url
        self._channel = channel
        self._on_message = on_message
        self._on_joined = on_joined
        self._on_lost = on_lost
        self._retry_s = retry_s
        self.subscribed = asyncio.Event()

    async def run(self) -> None:
        while True:
            connection = _connection_for(self._url)
            try:
                await connection.connect()
                await connection.send_packed_command(pack("SUBSCRIBE", self._channel))
                await connection.read_response(disable_decoding=True, timeout=math.inf)
                # Reachable once registered: before that, other instances would not list it.
                await self._on_joined()
                self.subscribed.set()
                while True:
                    message = await connection.read_response(
                        disable_decoding=True, timeout=math.inf
                    )
                    # [b"message", channel, data]
                    if type(message) is list and len(message) == 3:
                        self._on_message(message[2])
            except (RedisError, OSError, RedisUnavailable, asyncio.IncompleteReadError) as error:
                if self.subscribed.is_set():
                    self.subscribed.clear()
                    self._on_lost(error)
            finally:
                await _disconnect_quietly(connection)
            await asyncio.sleep(self._retry_s)


async def _disconnect_quietly(connection: Connection) -> None:
    try:
        await connection.disconnect(nowait=True)
    except (RedisError, OSError):
        return
