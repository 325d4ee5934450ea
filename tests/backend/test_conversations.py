"""Conversations that last (SPEC U5, B7): the panel's conversation stored per user + origin +
agent, in SQLite (across a backend restart) or Redis (across the instances of a cluster), with
schema migrations, retention, New and Delete; and never its content in the audit log."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from backend_fakes import AGENT_ID, PAGE_ORIGIN, USER_ID, FakePage
from chat_standin import ChatCompletionsStandIn, call, say
from cluster_servers import RedisServer
from mao_embed.audit import AuditEvent
from mao_embed.config import LlmConfig, ServerConfig, parse_duration
from mao_embed.conversations import (
    Conversation,
    ConversationKey,
    SchemaError,
    SqliteConversationStore,
    conversations_path,
)
from mao_embed.conversations import store as store_module
from mao_embed.server import RunningServer, start_in_thread
from mao_embed.testing import random_secret
from mao_page.protocol import ChatHistory

MakePage = Callable[..., FakePage]
KEY = ConversationKey(USER_ID, PAGE_ORIGIN, AGENT_ID)


@pytest.fixture
def stand_in() -> Iterator[Callable[..., ChatCompletionsStandIn]]:
    started: list[ChatCompletionsStandIn] = []

    def start(*script: Any) -> ChatCompletionsStandIn:
        model = ChatCompletionsStandIn(list(script)).start()
        started.append(model)
        return model

    yield start
    for model in started:
        model.stop()


def llm(model: ChatCompletionsStandIn) -> LlmConfig:
    return LlmConfig(base_url=model.base_url, model="stand-in-1", api_key="sk-test")


async def control(page: FakePage, action: str) -> ChatHistory:
    """Send ``chat_control`` and wait for the ``chat_history`` it is answered with."""
    seen = len([m for m in page.other if isinstance(m, ChatHistory)])
    await page.send({"type": "chat_control", "action": action})

    def histories() -> list[ChatHistory]:
        return [m for m in page.other if isinstance(m, ChatHistory)]

    await page.wait_until(lambda: len(histories()) > seen)
    return histories()[seen]


def shown(history: ChatHistory) -> list[tuple[str, str]]:
    return [(e.role, e.text or f"{e.tool}:{e.success}") for e in history.entries]


# --------------------------------------------------------------------------- the SQLite store


async def test_sqlite_store_keeps_entries_in_order_per_owner(tmp_path: Path) -> None:  # SPEC U5
    store = SqliteConversationStore(tmp_path / "conversations.db")
    other = ConversationKey("someone-else", PAGE_ORIGIN, AGENT_ID)
    first = await store.append(KEY, None, [{"m": {"role": "user", "content": "one"}}])
    assert await store.append(KEY, first, [{"m": {"role": "assistant", "content": "two"}}]) == first
    await store.append(other, None, [{"m": {"role": "user", "content": "not yours"}}])

    conversation = await store.current(KEY)
    assert conversation.conversation_id == first
    assert [e["m"]["content"] for e in conversation.entries] == ["one", "two"]
    await store.aclose()


async def test_sqlite_store_survives_a_restart(tmp_path: Path) -> None:  # SPEC U5, B7
    path = tmp_path / "conversations.db"
    store = SqliteConversationStore(path)
    await store.append(KEY, None, [{"m": {"role": "user", "content": "remember me"}}])
    await store.aclose()

    reopened = SqliteConversationStore(path)
    conversation = await reopened.current(KEY)
    assert [e["m"]["content"] for e in conversation.entries] == ["remember me"]
    await reopened.aclose()


async def test_what_another_server_on_the_same_file_adds_is_read(tmp_path: Path) -> None:
    # Each store keeps the entries it read decoded, and reads only what is newer after that.
    path = tmp_path / "conversations.db"
    one, other = SqliteConversationStore(path), SqliteConversationStore(path)
    first = await one.append(KEY, None, [{"m": {"role": "user", "content": "a"}}])
    assert len((await other.current(KEY)).entries) == 1
    await one.append(KEY, first, [{"m": {"role": "assistant", "content": "b"}}])
    await other.append(KEY, first, [{"m": {"role": "user", "content": "c"}}])
    for store in (one, other):
        entries = (await store.current(KEY)).entries
        assert [e["m"]["content"] for e in entries] == ["a", "b", "c"]
    await one.aclose()
    await other.aclose()


async def test_new_conversation_is_current_and_delete_removes_every_one(
    tmp_path: Path,
) -> None:  # SPEC U5
    store = SqliteConversationStore(tmp_path / "conversations.db")
    await store.append(KEY, None, [{"m": {"role": "user", "content": "old"}}])
    fresh = await store.start_new(KEY)
    assert (await store.current(KEY)).conversation_id == fresh
    assert (await store.current(KEY)).entries == []

    assert await store.delete(KEY) == 2
    assert (await store.current(KEY)).conversation_id is None
    rows = sqlite3.connect(tmp_path / "conversations.db").execute(
        "SELECT COUNT(*) FROM conversation_entries"
    ).fetchone()
    assert rows == (0,)
    await store.aclose()


async def test_conversations_expire_after_the_retention_since_their_last_entry(
    tmp_path: Path,
) -> None:  # SPEC U5 (--conversation-ttl)
    now = [1_000_000.0]
    path = tmp_path / "conversations.db"
    store = SqliteConversationStore(path, ttl_s=3600, clock=lambda: now[0])
    await store.append(KEY, None, [{"m": {"role": "user", "content": "soon gone"}}])
    now[0] += 3599
    assert len((await store.current(KEY)).entries) == 1
    now[0] += 2
    # Never read once expired, and deleted by the purge (hourly, and at start-up).
    assert (await store.current(KEY)).conversation_id is None
    assert await store.purge_expired() == 1
    await store.aclose()


def test_migrations_bring_a_new_database_to_the_newest_schema(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "c.db", isolation_level=None)
    assert store_module.migrate(connection) == len(store_module.MIGRATIONS)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == len(store_module.MIGRATIONS)
    tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"conversations", "conversation_entries"} <= tables


def test_a_later_migration_runs_once_on_an_existing_database(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "c.db", isolation_level=None)
    store_module.migrate(connection)
    connection.execute(
        "INSERT INTO conversations VALUES ('cv-1', 'u', 'https://o', 'a', 1.0, 1.0)"
    )
    later = (*store_module.MIGRATIONS, "ALTER TABLE conversations ADD COLUMN title TEXT;")
    assert store_module.migrate(connection, later) == len(later)
    assert store_module.migrate(connection, later) == len(later)  # nothing to do twice
    assert connection.execute("SELECT id, title FROM conversations").fetchall() == [("cv-1", None)]


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "c.db", isolation_level=None)
    connection.execute(f"PRAGMA user_version = {len(store_module.MIGRATIONS) + 1}")
    with pytest.raises(SchemaError, match="newer"):
        store_module.migrate(connection)


def test_retention_is_read_from_the_command_line_form() -> None:
    assert parse_duration("30d") == 30 * 86400
    assert parse_duration("12h") == 12 * 3600
    assert parse_duration("90m") == 90 * 60
    assert parse_duration("3600") == 3600
    for bad in ("", "0", "-1d", "soon", "3w"):
        with pytest.raises(ValueError):
            parse_duration(bad)


# --------------------------------------------------------------------------- through the backend


async def test_a_reloaded_page_gets_its_conversation_with_the_task_log(
    make_server: Callable[..., RunningServer],
    make_page: MakePage,
    stand_in: Callable[..., ChatCompletionsStandIn],
) -> None:  # SPEC U5
    model = stand_in(call("page_observe", {}), say("Nothing changed."))
    server = make_server(llm=llm(model))
    page = make_page(server)
    await page.connect()
    assert (await control(page, "history")).entries == []
    await page.chat("What changed?")
    await page.chat_turn()
    await page.close()

    reloaded = make_page(server, url="https://shop.example/next")  # the next page, same owner
    await reloaded.connect()
    history = await control(reloaded, "history")
    assert shown(history) == [
        ("user", "What changed?"),
        ("tool", "page_observe:True"),
        ("assistant", "Nothing changed."),
    ]
    assert history.conversation_id is not None

    # The model continues the same conversation.
    model.script.append(say("Still nothing."))
    await reloaded.chat("And now?")
    await reloaded.chat_turn()
    roles = [m["role"] for m in model.requests[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]


async def test_another_user_origin_or_agent_sees_none_of_it(
    make_server: Callable[..., RunningServer],
    make_page: MakePage,
    stand_in: Callable[..., ChatCompletionsStandIn],
) -> None:  # SPEC U5: per user + origin + agent
    model = stand_in(say("hello"))
    server = make_server(llm=llm(model))
    page = make_page(server)
    await page.connect()
    await page.chat("mine")
    await page.chat_turn()

    stranger = make_page(server, user_id="someone-else")
    await stranger.connect()
    assert (await control(stranger, "history")).entries == []
    other_agent = make_page(server, agent_id="other-agent")
    await other_agent.connect()
    assert (await control(other_agent, "history")).entries == []


async def test_the_conversation_survives_a_backend_restart(
    base_config: ServerConfig,
    make_page: MakePage,
    stand_in: Callable[..., ChatCompletionsStandIn],
) -> None:  # SPEC U5, B7 (SQLite)
    model = stand_in(say("Stored."))
    first = start_in_thread(replace(base_config, llm=llm(model)))
    try:
        page = make_page(first)
        await page.connect()
        await page.chat("Keep this")
        await page.chat_turn()
        await page.close()
    finally:
        first.stop(wait=True)
    assert conversations_path(base_config.db_path).is_file()  # type: ignore[union-attr]

    second = start_in_thread(base_config)
    try:
        page = make_page(second)
        await page.connect()
        assert shown(await control(page, "history")) == [
            ("user", "Keep this"), ("assistant", "Stored.")
        ]
    finally:
        second.stop(wait=False)


async def test_new_and_delete_from_the_panel_and_the_audit_says_only_that(
    make_server: Callable[..., RunningServer],
    make_page: MakePage,
    stand_in: Callable[..., ChatCompletionsStandIn],
) -> None:  # SPEC U5, P6
    model = stand_in(say("secret answer 42"), say("second"))
    server = make_server(llm=llm(model))
    page = make_page(server)
    await page.connect()
    await page.chat("my secret question")
    await page.chat_turn()

    started = await control(page, "new")
    assert (started.action, started.entries) == ("new", [])
    assert (await control(page, "history")).entries == []
    await page.chat("fresh start")
    await page.chat_turn()
    # The model starts from the new conversation only.
    assert [m["content"] for m in model.requests[-1]["messages"][1:]] == ["fresh start"]

    deleted = await control(page, "delete")
    assert (deleted.action, deleted.entries) == ("delete", [])
    assert (await control(page, "history")).entries == []

    audit = server.app.state.audit
    audit.flush()
    conversation_records = audit.query(event=AuditEvent.CHAT_CONVERSATION)
    assert [(r.code, r.user_id, r.origin) for r in conversation_records] == [
        ("new", USER_ID, PAGE_ORIGIN),
        ("deleted", USER_ID, PAGE_ORIGIN),
    ]
    assert [r.code for r in audit.query(event=AuditEvent.CHAT_TURN)] == ["ok", "ok"]
    # Chat content never goes to the audit log.
    everything = repr(audit.query(limit=10_000))
    for said in ("my secret question", "secret answer 42", "fresh start"):
        assert said not in everything


# --------------------------------------------------------------------------- a cluster (Redis)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


async def test_any_instance_of_a_cluster_serves_the_conversation(
    base_config: ServerConfig,
    redis_server: RedisServer,
    tmp_path: Path,
    make_page: MakePage,
    stand_in: Callable[..., ChatCompletionsStandIn],
) -> None:  # SPEC U5, B6, B7 (Redis)
    model = stand_in(say("from instance A"), say("from instance B"))
    secret = random_secret()
    instances = [
        start_in_thread(
            replace(
                base_config,
                secret=secret,
                redis_url=redis_server.url,
                instance_name=name,
                db_path=tmp_path / f"audit-{name}.db",
                llm=llm(model),
            )
        )
        for name in ("a", "b")
    ]
    try:
        page = make_page(instances[0])
        await page.connect()
        await page.chat("asked on A")
        await page.chat_turn()
        await page.close()

        # The next page lands on instance B, which never saw the conversation.
        moved = make_page(instances[1])
        await moved.connect()
        assert shown(await control(moved, "history")) == [
            ("user", "asked on A"), ("assistant", "from instance A")
        ]
        await moved.chat("asked on B")
        await moved.chat_turn()
        assert [m["content"] for m in model.requests[-1]["messages"][1:]] == [
            "asked on A", "from instance A", "asked on B"
        ]
        # Nothing in SQLite: the cluster's conversations are Redis's.
        assert not (tmp_path / "conversations.db").exists()

        assert (await control(moved, "delete")).entries == []
        again = make_page(instances[0])
        await again.connect()
        assert (await control(again, "history")).entries == []
    finally:
        for instance in instances:
            instance.stop(wait=False)


async def test_the_redis_store_reads_what_other_instances_add_and_honours_delete(
    redis_server: RedisServer,
) -> None:  # SPEC U5, B6: two instances' stores on one Redis
    from mao_embed.conversations.redis_store import RedisConversationStore
    from mao_embed.relay.redis_link import client_for

    namespace = f"test-{random_secret()[:8]}"
    one = RedisConversationStore(client_for(redis_server.url), namespace, ttl_s=60)
    other = RedisConversationStore(client_for(redis_server.url), namespace, ttl_s=60)
    first = await one.append(KEY, None, [{"m": {"role": "user", "content": "a"}}])
    assert [e["m"]["content"] for e in (await other.current(KEY)).entries] == ["a"]
    await one.append(KEY, first, [{"m": {"role": "assistant", "content": "b"}}])
    await other.append(KEY, first, [{"m": {"role": "user", "content": "c"}}])
    for store in (one, other):
        conversation = await store.current(KEY)
        assert conversation.conversation_id == first
        assert [e["m"]["content"] for e in conversation.entries] == ["a", "b", "c"]
    assert [e["m"]["content"] for e in (await one.current(KEY, limit=2)).entries] == ["b", "c"]

    fresh = await other.start_new(KEY)
    assert (await one.current(KEY)) == Conversation(fresh, [])
    assert await one.delete(KEY) == 2
    # A turn still running on the deleted conversation adds nothing back.
    await other.append(KEY, first, [{"m": {"role": "user", "content": "late"}}])
    assert (await other.current(KEY)).conversation_id is None
    await one.aclose()
    await other.aclose()
