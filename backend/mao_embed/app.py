"""The backend ASGI application: routes only; each concern lives in its own module.

- ``/ws/sdk``: the page's WebSocket (``sdk_socket``)
- ``/sdk/...``: loader, Pyodide and wheels (``sdk_files``, SPEC E3)
- ``/api/...``: the agent HTTP API (``agent_api``, SPEC B4)
- ``/mcp``: the MCP server (``mcp_server``, SPEC B4)
- ``/demo/...``: demo pages, only with ``demo=True``
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from mao_page.protocol import PROTOCOL_VERSION
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from mao_embed.agents.chat_loop import ChatAgent
from mao_embed.agents.http_api import AgentApi, unknown_endpoint
from mao_embed.agents.mcp_server import McpEndpoint
from mao_embed.audit import AuditLog
from mao_embed.config import ServerConfig, default_instance_name
from mao_embed.conversations import (
    ConversationStore,
    SqliteConversationStore,
    conversations_path,
)
from mao_embed.relay.local import Relay
from mao_embed.sdk_files import SdkAssets
from mao_embed.security.origins import OriginPolicy
from mao_embed.transport.sdk_socket import SdkSocket


def create_app(config: ServerConfig, *, audit: AuditLog | None = None) -> Starlette:
    """Build the app. ``app.state`` holds ``config``, ``relay``, ``audit`` and ``origins``.

    With ``config.redis_url`` the relay is a cluster instance's (``cluster.ClusterRelay``,
    imported only then: a single process never loads the Redis client)."""
    if config.redis_url and not config.instance_name:
        config = replace(config, instance_name=default_instance_name())
    if audit is None:
        audit = AuditLog(config.db_path, instance=config.instance_name)
    relay: Relay
    if config.redis_url:
        from mao_embed.relay.cluster import ClusterRelay

        relay = ClusterRelay(config, audit=audit)
    else:
        relay = Relay(
            audit=audit,
            default_timeout_ms=config.default_timeout_ms,
            resume_window_ms=config.resume_window_ms,
            response_grace_ms=config.response_grace_ms,
        )
    origins = OriginPolicy(config.allowed_origins)
    chat = ChatAgent(config.llm, relay, audit, _conversation_store(config))
    sdk_socket = SdkSocket(config, relay, origins, audit, chat)
    assets = SdkAssets(config.sdk_dir, origins)
    agent_api = AgentApi(config, relay)

    mcp = McpEndpoint(config, relay)

    async def index(request: Request) -> Response:
        if config.demo:
            return RedirectResponse("/demo/", status_code=307)
        return JSONResponse(
            {
                "name": "mao-embed",
                "protocolVersion": PROTOCOL_VERSION,
                "endpoints": {
                    "sdkLoader": "/sdk/mao-chat.js",
                    "sdkWebSocket": "/ws/sdk",
                    "sessions": "/api/sessions",
                    "tools": "/api/tools",
                    "callTool": "/api/sessions/{sessionId}/tools/{tool}",
                    "mcp": "/mcp",
                    "health": "/healthz",
                },
            }
        )

    async def healthz(request: Request) -> Response:
        health: dict[str, Any] = {"status": "ok", "sessions": len(relay.sessions())}
        if config.redis_url:
            health["cluster"] = {
                "instance": config.instance_name,
                "joined": getattr(relay, "joined", False),
            }
        return JSONResponse(health)

    routes: list[BaseRoute] = [
        # The router tries routes in order, each with a regex match: the agent API, whose tool
        # calls are the hot path under load, goes first.
        *agent_api.routes(),
        Route("/", index, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        WebSocketRoute("/ws/sdk", sdk_socket.handle),
        Route("/sdk/{path:path}", assets.serve, methods=["GET", "HEAD", "OPTIONS"]),
    ]
    routes.extend(mcp.routes())
    if config.demo:
        routes.append(Route("/demo/token", _demo_token_endpoint(config), methods=["GET"]))
        routes.append(Route("/demo", lambda request: RedirectResponse("/demo/", status_code=307)))
        routes.append(
            Mount("/demo", StaticFiles(directory=config.demo_dir, html=True, check_dir=False))
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with mcp.running(), _cluster_running(relay):
                yield
        finally:
            await chat.aclose()
            await relay.close_all(reason="server shutting down")
            audit.close()

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: unknown_endpoint})
    # Starlette answers an unmatched path with a 307 to the same path with its trailing slash
    # added or removed when that one matches, whatever the method: ``POST /api/tools/`` went
    # to the GET-only ``/api/tools``, ``/api/sessions//tools/x`` to a path of its own. An API
    # answers those with its structured 404 (found by tests/backend/test_fuzz_inbound.py);
    # the one redirect a person relies on, ``/demo`` to ``/demo/``, is a route above.
    app.router.redirect_slashes = False
    app.state.config = config
    app.state.relay = relay
    app.state.audit = audit
    app.state.origins = origins
    app.state.chat = chat
    return app


def _conversation_store(config: ServerConfig) -> ConversationStore:
    """Redis in a cluster, so any instance serves any conversation; else SQLite beside the
    audit database (in memory when that is)."""
    if config.redis_url:
        from mao_embed.conversations.redis_store import RedisConversationStore
        from mao_embed.relay.cluster import namespace
        from mao_embed.relay.redis_link import client_for

        return RedisConversationStore(
            client_for(config.redis_url), namespace(config), ttl_s=config.conversation_ttl_s
        )
    return SqliteConversationStore(
        conversations_path(config.db_path), ttl_s=config.conversation_ttl_s
    )


def _cluster_running(relay: Relay) -> contextlib.AbstractAsyncContextManager[None]:
    running = getattr(relay, "running", None)
    return running() if running is not None else contextlib.nullcontext()


DEMO_USER = "demo-user"
DEMO_AGENT = "demo-agent"


def _demo_token_endpoint(config: ServerConfig) -> Any:
    """Demo mode only: the demo page's token provider. A short-lived token for the fixed demo
    user and agent, bound to the requesting page's origin, and only for the server's own
    allowed origins. A real site mints tokens in its own backend."""
    from .security.tokens import issue_token

    async def demo_token(request: Request) -> Response:
        origin = request.headers.get("origin") or f"{request.url.scheme}://{request.url.netloc}"
        if not request.app.state.origins.allows(origin):
            return JSONResponse({"error": "origin not allowed"}, status_code=403)
        token = issue_token(
            config.secret, user_id=DEMO_USER, agent_id=DEMO_AGENT, origin=origin, ttl_s=600
        )
        return Response(token, media_type="text/plain", headers={"Cache-Control": "no-store"})

    return demo_token
