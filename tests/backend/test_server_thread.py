"""start_in_thread: what the pytest plugin and the demo build on."""

from __future__ import annotations

import socket
from dataclasses import replace

import httpx
import pytest
import websockets
from mao_embed.config import ServerConfig
from mao_embed.server import start_in_thread


def test_port_zero_reports_the_real_port_and_stop_releases_it(base_config: ServerConfig) -> None:
    running = start_in_thread(base_config)
    assert running.port > 0 and running.url == f"http://127.0.0.1:{running.port}"
    assert httpx.get(f"{running.url}/healthz").status_code == 200
    running.stop()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", running.port)) != 0


def test_port_in_use_fails_loudly(base_config: ServerConfig) -> None:
    with start_in_thread(base_config) as first, pytest.raises(RuntimeError):
        start_in_thread(replace(base_config, port=first.port))


async def test_demo_mode_allows_the_servers_own_origin(base_config: ServerConfig) -> None:
    with start_in_thread(replace(base_config, demo=True)) as running:
        own = f"http://127.0.0.1:{running.port}"
        async with websockets.connect(running.ws_url, origin=own) as connection:  # type: ignore[arg-type]
            assert connection.response is not None and connection.response.status_code == 101
