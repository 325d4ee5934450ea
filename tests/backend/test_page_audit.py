"""SPEC P6: the page's authorization decisions and actions reach the backend audit log."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from backend_fakes import AGENT_ID, PAGE_ORIGIN, USER_ID, FakePage
from mao_embed.audit import AuditEvent
from mao_embed.server import RunningServer

MakePage = Callable[..., FakePage]


async def _audited(server: RunningServer, event: AuditEvent, count: int) -> list:
    for _ in range(100):
        records = server.app.state.audit.query(event=event)
        if len(records) >= count:
            return records
        await asyncio.sleep(0.05)
    return server.app.state.audit.query(event=event)


async def test_grant_and_action_reported_by_the_page_are_audited_under_its_session(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    welcome = await page.connect()
    await page.send(
        json.dumps(
            {
                "type": "audit_event",
                "kind": "grant",
                "level": "full",
                "previousLevel": "per_action",
                "atMs": 1.0,
            }
        )
    )
    await page.send(json.dumps({
        "type": "audit_event", "kind": "action", "level": "full", "action": "click",
        "target": "Submit claim", "outcome": "ok", "durationMs": 12.5, "atMs": 2.0,
    }))
    (grant,) = await _audited(server, AuditEvent.PAGE_AUTHORIZATION, 1)
    (action,) = await _audited(server, AuditEvent.PAGE_ACTION, 1)
    # Recorded under the session's identity, whatever the page might claim.
    assert (grant.session_id, grant.user_id, grant.agent_id, grant.origin) == (
        welcome.session_id,
        USER_ID,
        AGENT_ID,
        PAGE_ORIGIN,
    )
    assert grant.code == "grant" and json.loads(grant.detail)["level"] == "full"
    assert (action.tool, action.code, action.duration_ms) == ("click", "ok", 12.5)
    assert json.loads(action.detail)["target"] == "Submit claim"


async def test_audit_event_with_unknown_fields_is_refused_and_not_recorded(
    server: RunningServer, make_page: MakePage
) -> None:
    page = make_page(server)
    await page.connect()
    await page.send(json.dumps({
        "type": "audit_event", "kind": "grant", "level": "full", "atMs": 1.0, "token": "secret",
    }))
    for _ in range(40):
        if page.errors:
            break
        await asyncio.sleep(0.05)
    assert page.errors and page.errors[0].code == "invalid_request"
    assert server.app.state.audit.query(event=AuditEvent.PAGE_AUTHORIZATION) == []
