"""Fixtures for backend tests: a real uvicorn server on a free port and fake pages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from backend_fakes import AGENT_ID, PAGE_ORIGIN, SECRET, USER_ID, FakePage
from mao_embed.config import ServerConfig
from mao_embed.server import RunningServer, start_in_thread


@pytest.fixture
def base_config(tmp_path: Path) -> ServerConfig:
    sdk_dir = tmp_path / "sdk"
    sdk_dir.mkdir()
    return ServerConfig(
        host="127.0.0.1",
        port=0,
        secret=SECRET,
        allowed_origins=(PAGE_ORIGIN,),
        db_path=tmp_path / "audit.db",
        sdk_dir=sdk_dir,
        demo_dir=tmp_path / "demo",
        response_grace_ms=50,
    )


@pytest.fixture
def make_server(base_config: ServerConfig) -> Iterator[Callable[..., RunningServer]]:
    started: list[RunningServer] = []

    def make(**overrides: Any) -> RunningServer:
        running = start_in_thread(replace(base_config, **overrides))
        started.append(running)
        return running

    yield make
    for running in started:
        # Signalled only: the daemon thread winds down while the next test runs.
        running.stop(wait=False)


@pytest.fixture
def server(make_server: Callable[..., RunningServer]) -> RunningServer:
    return make_server()


@pytest.fixture
async def make_page() -> AsyncIterator[Callable[..., FakePage]]:
    pages: list[FakePage] = []

    def make(running: RunningServer, **options: Any) -> FakePage:
        token = options.pop("token", None) or running.issue_token(
            options.get("user_id", USER_ID), options.get("agent_id", AGENT_ID)
        )
        page = FakePage(running.ws_url, token, **options)
        pages.append(page)
        return page

    yield make
    for page in pages:
        await page.close()
