"""Cross-site WebSocket hijacking (SPEC B5).

A WebSocket handshake carries the browser's cookies and no same-origin protection, so any
site the user visits could open ``/ws/sdk``. What stops it: the Origin allowlist (exact
match, checked before the upgrade), tokens bound to an origin, and sessions that only resume
for the same user, agent and origin. ``test_sdk_socket`` covers the plain cases (a foreign
Origin, no Origin, tokens for another user, agent or an unlisted origin); these are the
near misses.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import websockets
from backend_fakes import AGENT_ID, PAGE_ORIGIN, USER_ID, FakePage, HandshakeRefusedByServer
from mao_embed.audit import AuditEvent
from mao_embed.server import RunningServer
from mao_page.protocol import ErrorCode

MakePage = Callable[..., FakePage]
OTHER_ALLOWED = "https://admin.example"


@pytest.mark.parametrize(
    "origin",
    [
        "https://shop.example.evil.example",  # suffix
        "https://evil-shop.example",
        "https://evil.example/https://shop.example",
        "http://shop.example",  # scheme downgrade
        "https://shop.example:8443",  # other port
        "https://SHOP.example",  # browsers serialize lowercase: not our page
        "null",  # sandboxed iframe, file://
        "https://shop.example, https://evil.example",
        "https://shop.example/",
        "",
    ],
)
async def test_handshake_from_a_near_miss_origin_is_refused_before_the_upgrade(
    server: RunningServer, origin: str
) -> None:
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(server.ws_url, origin=origin)  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    assert server.sessions() == []


async def test_token_bound_to_one_allowed_origin_is_refused_from_another_allowed_origin(
    server: RunningServer, make_page: MakePage
) -> None:
    # Both origins may embed the SDK, but a token minted for the admin site, stolen and
    # replayed from the shop (or a script injected there), opens nothing.
    server.allow_origin(OTHER_ALLOWED)
    stolen = server.issue_token(USER_ID, AGENT_ID, origin=OTHER_ALLOWED)
    page = make_page(server, token=stolen, origin=PAGE_ORIGIN)
    with pytest.raises(HandshakeRefusedByServer) as refused:
        await page.connect()
    assert refused.value.error is not None
    assert refused.value.error.code is ErrorCode.UNAUTHORIZED
    assert "another origin" in refused.value.error.message
    assert refused.value.close_code == 1008
    assert server.sessions() == []
    audited = server.app.state.audit.query(event=AuditEvent.CONNECTION_REFUSED)
    assert [(r.origin, r.code) for r in audited] == [(PAGE_ORIGIN, "unauthorized")]

    # The same token from its own origin works: the refusal was about the origin.
    own = make_page(server, token=stolen, origin=OTHER_ALLOWED)
    await own.connect()


async def test_session_id_from_another_origin_cannot_be_resumed(
    server: RunningServer, make_page: MakePage
) -> None:
    server.allow_origin(OTHER_ALLOWED)
    victim = make_page(server, origin=PAGE_ORIGIN)
    await victim.connect()
    victim_session = victim.session_id
    await victim.drop()

    # Same user and agent (a token without an origin binding), other origin: the resume is
    # refused and the attacker gets a fresh, empty session, never the victim's.
    attacker = make_page(server, origin=OTHER_ALLOWED)
    welcome = await attacker.connect(resume_session_id=victim_session)
    assert welcome.resumed is False and welcome.session_id != victim_session
