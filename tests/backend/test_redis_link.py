"""The cluster's pipelined Redis connection on a real ``redis-server`` (SPEC B6;
docs/cluster.md): many callers share one connection, so every reply must reach the caller
whose command it answers, and a caller that gives up must not break it for the others."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest
from cluster_servers import RedisServer
from mao_embed.relay.redis_link import CommandLink, pack


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis-link")).start()
    yield server
    server.stop()


@pytest.fixture
async def link(redis_server: RedisServer) -> AsyncIterator[CommandLink]:
    link = CommandLink(redis_server.url)
    yield link
    await link.close()


async def test_every_caller_gets_the_reply_to_its_own_command_across_batches(
    link: CommandLink,
) -> None:
    async def set_then_get(index: int) -> bytes:
        # Spread over loop iterations, so commands go out in several writes of several sizes.
        await asyncio.sleep(0 if index % 3 else 0.001 * (index % 5))
        assert await link.command(pack("SET", f"link:{index}", f"value-{index}")) == b"OK"
        return await link.command(pack("GET", f"link:{index}"))  # type: ignore[no-any-return]

    replies = await asyncio.gather(*(set_then_get(index) for index in range(300)))
    assert replies == [f"value-{index}".encode() for index in range(300)]


async def test_a_cancelled_caller_leaves_the_shared_connection_to_the_others(
    link: CommandLink,
) -> None:
    client_id = await link.command(pack("CLIENT", "ID"))
    callers = [
        asyncio.create_task(link.command(pack("INCR", "link:counter"))) for _ in range(100)
    ]
    await asyncio.sleep(0)  # every command is queued; none is written yet
    for caller in callers[::2]:
        caller.cancel()
    done = await asyncio.gather(*callers, return_exceptions=True)
    kept = [reply for reply in done if not isinstance(reply, BaseException)]
    assert len(kept) == 50
    # Cancelled callers only stopped waiting: all 100 commands ran, in order.
    assert kept == list(range(2, 101, 2))
    assert await link.command(pack("GET", "link:counter")) == b"100"
    # The same connection throughout: nothing was dropped and reopened.
    assert await link.command(pack("CLIENT", "ID")) == client_id


async def test_an_error_reply_reaches_its_own_caller_only(link: CommandLink) -> None:
    from redis.exceptions import ResponseError

    await link.command(pack("SET", "link:text", "not a number"))
    before, failing, after = await asyncio.gather(
        link.command(pack("SET", "link:a", "1")),
        link.command(pack("INCR", "link:text")),
        link.command(pack("GET", "link:a")),
        return_exceptions=True,
    )
    assert before == b"OK"
    assert isinstance(failing, ResponseError)
    assert after == b"1"
