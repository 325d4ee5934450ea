"""The agent HTTP API (SPEC B4, CONTRACT "Agent HTTP API").

``POST /api/sessions/{sessionId}/tools/{tool}`` answers the ``PageToolResult`` JSON, with page
text marked untrusted by one additive field (``mao_embed.agents.untrusted``, SPEC B5). Outcomes
the page reports, including its failures, are HTTP 200: the agent reads ``success`` and
``error.code``. Only requests the backend itself refuses get another status: 400
``invalid_request``, 404 ``unknown_tool`` / ``session_not_found``, 401/403 for auth.

Authentication: with ``MAO_EMBED_API_KEY`` set, every request needs
``Authorization: Bearer KEY``. Without it only loopback clients are served, and because a
web page in the user's own browser is also a loopback client, such requests must also name a
loopback host and carry no foreign Origin; otherwise any site could drive the user's pages
through this API (cross-site requests, DNS rebinding).
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import json
from typing import Any

from mao_page.protocol import ErrorCode, PageToolResult
from starlette.datastructures import Headers
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mao_embed.agents.sitetools import instructions_view, site_tool_list
from mao_embed.agents.tools import tool_catalog
from mao_embed.agents.untrusted import agent_view_json
from mao_embed.config import ServerConfig
from mao_embed.relay.local import Relay, failure, is_valid_request_id, new_request_id

_STATUS_FOR_CODE: dict[str, int] = {
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.MESSAGE_TOO_LARGE: 413,
    ErrorCode.UNKNOWN_TOOL: 404,
    ErrorCode.SESSION_NOT_FOUND: 404,
}
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def error_body(code: ErrorCode, message: str) -> dict[str, Any]:
    """The error shape for answers that have no requestId (auth, listing endpoints)."""
    return {"success": False, "error": {"code": code.value, "message": message}}


def authorize(config: ServerConfig, connection: HTTPConnection) -> Response | None:
    """None when the caller may use the agent API, else the refusal to send."""
    return _authorize(config, connection.scope, connection.headers)


def _authorize(config: ServerConfig, scope: Scope, headers: Headers) -> Response | None:
    if config.api_key:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), config.api_key.encode()
        ):
            return None
        return JSONResponse(
            error_body(ErrorCode.UNAUTHORIZED, "missing or wrong API key (Authorization: Bearer)"),
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="mao-embed"'},
        )
    if not _is_loopback_client(scope, headers):
        return JSONResponse(
            error_body(
                ErrorCode.UNAUTHORIZED,
                "without MAO_EMBED_API_KEY the agent API answers loopback clients only",
            ),
            status_code=403,
        )
    return None


@functools.lru_cache(maxsize=1024)
def _is_loopback_address(host: str) -> bool:
    # Cached: parsing the address was a fifth of a tool call's time in this module.
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_loopback_client(scope: Scope, headers: Headers) -> bool:
    client = scope.get("client")
    if client is None or not _is_loopback_address(client[0]):
        return False
    host = headers.get("host", "")
    hostname = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    if hostname.lower() not in _LOOPBACK_HOSTS:
        return False
    origin = headers.get("origin")
    if origin is None:
        return True
    # A browser page calling us: only the backend's own pages (e.g. the demo) may.
    return origin in (f"http://{host}", f"https://{host}")


class AgentApi:
    def __init__(self, config: ServerConfig, relay: Relay) -> None:
        self._config = config
        self._relay = relay

    def routes(self) -> list[Route]:
        # Tool calls first: the router tries routes in order (``app.create_app``).
        return [
            Route(
                "/api/sessions/{session_id}/tools/{tool}",
                ToolCallEndpoint(self._config, self._relay),
                methods=["POST"],
            ),
            Route(
                "/api/sessions/{session_id}/site-tools/{name}",
                ToolCallEndpoint(self._config, self._relay, site=True),
                methods=["POST"],
            ),
            Route(
                "/api/sessions/{session_id}/site-tools", self.list_site_tools, methods=["GET"]
            ),
            Route("/api/sessions/{session_id}", self.get_session, methods=["GET"]),
            Route("/api/sessions", self.list_sessions, methods=["GET"]),
            Route("/api/tools", self.list_tools, methods=["GET"]),
        ]

    async def list_sessions(self, request: Request) -> Response:
        refusal = authorize(self._config, request)
        if refusal is not None:
            return refusal
        return JSONResponse(await self._relay.list_sessions())

    async def get_session(self, request: Request) -> Response:
        """One session as ``GET /api/sessions`` lists it, plus the site's ``instructions``
        (marked as the site's words) and how many site tools it offers."""
        refusal = authorize(self._config, request)
        if refusal is not None:
            return refusal
        session_id = request.path_params["session_id"]
        entry = await self._relay.find_session(session_id)
        if entry is None:
            return _no_session(session_id)
        context = await self._relay.find_site_context(session_id)
        if context is not None:
            entry = {**entry, "siteTools": len(context.tools)}
            if context.instructions:
                entry["instructions"] = instructions_view(context.instructions)
        return _escaped_json(entry)

    async def list_site_tools(self, request: Request) -> Response:
        """``GET /api/sessions/{id}/site-tools``: the page's WebMCP tools (CONTRACT)."""
        refusal = authorize(self._config, request)
        if refusal is not None:
            return refusal
        session_id = request.path_params["session_id"]
        context = await self._relay.find_site_context(session_id)
        if context is None:
            return _no_session(session_id)
        return _escaped_json(site_tool_list(context))

    async def list_tools(self, request: Request) -> Response:
        refusal = authorize(self._config, request)
        if refusal is not None:
            return refusal
        return JSONResponse(tool_catalog())


class ToolCallEndpoint:
    """``POST /api/sessions/{sessionId}/tools/{tool}`` as a plain ASGI app: the ``PageToolResult``
    JSON plus the additive ``untrusted`` marking (SPEC B5).

    The agent API's hot path. Starlette calls a route's function through its request/response
    wrapping (a ``Request``, an exception wrapper per request, a ``Response`` building its
    headers), which cost about as much as everything else this module does per call (measured
    in process, docs/performance.md); anything else it calls as ASGI, so this reads the body
    and sends its two messages itself. The router, the methods check and the app's error
    middleware still apply. Reading the body here also refuses an oversized one as soon as it
    passes the limit.
    """

    def __init__(self, config: ServerConfig, relay: Relay, *, site: bool = False) -> None:
        self._config = config
        self._relay = relay
        # ``POST /api/sessions/{id}/site-tools/{name}``: the body is the site tool's arguments.
        self._site = site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        refusal = _authorize(self._config, scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        request_id = headers.get("x-request-id")
        # Echo the caller's X-Request-Id in early refusals when it is usable as one.
        reply_id = (
            request_id if request_id and is_valid_request_id(request_id) else new_request_id()
        )
        body = await _read_body(receive, self._config.max_message_bytes)
        if body is None:  # the client went away mid-request: nobody to answer
            return
        if body is _TOO_LARGE:
            result = failure(reply_id, ErrorCode.MESSAGE_TOO_LARGE, "request body is too large")
        else:
            result = await self._tool_result(scope, headers, body, request_id, reply_id)
        code = result.error.code.value if result.error else None
        answer = agent_view_json(result).encode()
        await send({
            "type": "http.response.start",
            "status": _STATUS_FOR_CODE.get(code or "", 200),
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(answer)).encode("latin-1")),
            ],
        })
        await send({"type": "http.response.body", "body": answer})

    async def _tool_result(
        self, scope: Scope, headers: Headers, body: bytes, request_id: str | None, reply_id: str
    ) -> PageToolResult:
        path_params = scope["path_params"]
        try:
            args = json.loads(body) if body.strip() else {}
        except (ValueError, UnicodeDecodeError) as error:
            return failure(reply_id, ErrorCode.INVALID_REQUEST, f"body is not JSON: {error}")
        except RecursionError:
            # Deeply nested arrays (found by the fuzz tests) were a 500 before.
            return failure(reply_id, ErrorCode.INVALID_REQUEST, "body is nested too deeply")
        if not isinstance(args, dict):
            return failure(
                reply_id,
                ErrorCode.INVALID_REQUEST,
                "body must be a JSON object of tool arguments",
            )
        timeout_ms: int | None = None
        raw_timeout = headers.get("x-timeout-ms")
        if raw_timeout is not None:
            if not raw_timeout.isdigit():
                return failure(
                    reply_id,
                    ErrorCode.INVALID_REQUEST,
                    "X-Timeout-Ms must be a whole number of milliseconds",
                )
            timeout_ms = int(raw_timeout)
        if self._site:
            return await self._relay.call_site_tool(
                path_params["session_id"], path_params["name"], args, request_id=request_id,
                timeout_ms=timeout_ms,
            )
        return await self._relay.call_tool(
            path_params["session_id"], path_params["tool"], args, request_id=request_id,
            timeout_ms=timeout_ms,
        )


def _no_session(session_id: str) -> Response:
    return JSONResponse(
        error_body(ErrorCode.SESSION_NOT_FOUND, f"no connected page session {session_id[:80]!r}"),
        status_code=404,
    )


def _escaped_json(value: Any) -> Response:
    """JSON with ``<`` escaped, as page-written text is in every answer (untrusted.py)."""
    text = json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")
    return Response(text, media_type="application/json")


_TOO_LARGE = b"<too large>"


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body; ``_TOO_LARGE`` (by identity) once it passes ``limit`` bytes, without
    reading the rest; None if the client disconnected first."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # http.disconnect
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return _TOO_LARGE
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def unknown_endpoint(request: Request, exc: Exception) -> Response:
    """404 for any path the router did not match; under /api in the agent API's JSON shape."""
    path = request.url.path
    # "/api" itself too: a client normalizing "/api/sessions/../tools/.." sends "/api" (found
    # by tests/backend/test_fuzz_inbound.py).
    if path == "/api" or path.startswith("/api/"):
        return JSONResponse(
            error_body(
                ErrorCode.INVALID_REQUEST,
                "no such agent API endpoint; see GET /api/tools and GET /api/sessions",
            ),
            status_code=404,
        )
    return PlainTextResponse("Not Found", status_code=404)
