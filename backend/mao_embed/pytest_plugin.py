"""Public pytest plugin: browser-side tests of your own pages with Mao Embed embedded.

Installed with the package (entry point ``pytest11``), so these fixtures are available in
any project that installs ``mao-embed``:

``mao_backend``
    A real Mao Embed backend on a free localhost port (session scope).
``mao_pages``
    A page server on a second localhost port: ``mao_pages.add("/form.html", html)``.
``mao_agent``
    An ``AgentClient`` speaking the agent HTTP API of that backend.
``mao_browser``
    Headless Chromium through Playwright (``/usr/bin/chromium`` or ``MAO_CHROMIUM``).
``mao_embed``
    ``mao_embed(body_html, ...)`` serves a page with the SDK snippet, opens it in a fresh
    browser context, waits for ``MaoChat.ready`` and returns an ``EmbeddedPage`` whose
    ``call(tool, **args)`` goes through the agent HTTP API. Acting as the user, it grants
    ``authorization="full"`` in the SDK panel with a real click (``authorization=None``
    keeps the default ``per_action``: every action then waits for a click on the card).

Example::

    def test_signup_form(mao_embed):
        page = mao_embed('<label>Email <input type="email"></label>')
        snapshot = page.inspect()
        email = page.find(snapshot, label="Email")
        assert page.call("page_fill", snapshotId=snapshot["snapshotId"],
                         elementId=email["elementId"], value="a@b.c")["success"]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .assets import ensure_built
from .config import ServerConfig
from .server import RunningServer, start_in_thread
from .testing import (
    AgentClient,
    PageServer,
    embed_snippet,
    launch_chromium,
    page_html,
    random_secret,
    renderer_crashes,
    with_open_panel,
)

_page_counter = itertools.count(1)


@dataclass
class EmbeddedPage:
    """A browser page with the SDK embedded and its backend session."""

    page: Any  # playwright.sync_api.Page
    url: str
    session_id: str
    agent: AgentClient
    backend: RunningServer

    def call(self, tool: str, *, request_id: str | None = None, **args: Any) -> dict[str, Any]:
        return self.agent.call(self.session_id, tool, args, request_id=request_id)

    def call_site_tool(
        self, name: str, args: dict[str, Any] | None = None, *, timeout_ms: int | None = None
    ) -> dict[str, Any]:
        """Run one of the page's site tools (docs/site-tools.md) as an agent would."""
        return self.agent.call_site_tool(self.session_id, name, args, timeout_ms=timeout_ms)

    def site_tools(self) -> list[dict[str, Any]]:
        return self.agent.site_tools(self.session_id)

    def grant(self, level: str) -> None:
        """Act as the user: pick an authorization level in the SDK panel with a real click,
        found by role and accessible name (README "Panel controls"). ``per_action``, ``task``
        or ``full``; the page's ``init`` cannot do this for you (SPEC P2)."""
        import re

        from playwright.sync_api import expect

        names = {
            "per_action": ("Ask each time", "每次确认"),
            "task": ("This task", "本次任务"),
            "full": ("Full access", "完全授权"),
        }
        english, chinese = names[level]
        opener = self.page.get_by_role("button", name=re.compile("^(Open panel|打开面板)$"))
        if opener.is_visible():
            opener.click()
        radio = self.page.get_by_role(
            "radio", name=re.compile(f"^({re.escape(english)}|{chinese})$")
        )
        if radio.get_attribute("aria-checked") != "true":
            radio.click()
        expect(radio).to_have_attribute("aria-checked", "true")

    def inspect(self, **args: Any) -> dict[str, Any]:
        result = self.call("page_inspect", **args)
        assert result["success"], result
        return result["result"]

    @staticmethod
    def find(
        snapshot: dict[str, Any], *, label: str | None = None, role: str | None = None
    ) -> dict[str, Any]:
        """The one element of a snapshot with this label (and role); fails when not unique."""
        matches = [
            e for e in snapshot["elements"]
            if (label is None or e["label"] == label) and (role is None or e["role"] == role)
        ]
        if len(matches) != 1:
            found = [(e["role"], e["label"]) for e in snapshot["elements"]]
            raise AssertionError(
                f"expected one element label={label!r} role={role!r}, got {len(matches)} in {found}"
            )
        return matches[0]


@pytest.fixture(scope="session")
def mao_sdk_assets() -> Path:
    return ensure_built().sdk_dir


@pytest.fixture(scope="session")
def mao_pages() -> Iterator[PageServer]:
    server = PageServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def mao_backend(
    mao_sdk_assets: Path, mao_pages: PageServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    db = tmp_path_factory.mktemp("mao-embed") / "audit.db"
    config = ServerConfig(
        host="127.0.0.1", port=0, secret=random_secret(), allowed_origins=(mao_pages.origin,),
        db_path=db, demo=True,
    )
    server = start_in_thread(config)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def mao_agent(mao_backend: RunningServer) -> Iterator[AgentClient]:
    client = AgentClient(mao_backend.url)
    yield client
    client.close()


@pytest.fixture(scope="module")
def mao_browser() -> Iterator[Any]:
    # Module scope on purpose: Playwright's sync API leaves its event loop marked as running
    # on the main thread while it is open, which breaks pytest-asyncio tests elsewhere in the
    # session. Closing it per module keeps async tests in other modules working.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright, log=True)
        yield browser
        browser.close()


@pytest.fixture
def mao_context(mao_browser: Any) -> Iterator[Any]:
    context = mao_browser.new_context(viewport={"width": 1280, "height": 800})
    renderer_crashes.watch(context)
    yield context
    context.close()


@pytest.fixture
def mao_embed(
    mao_context: Any, mao_pages: PageServer, mao_backend: RunningServer, mao_agent: AgentClient
) -> Callable[..., EmbeddedPage]:
    def open_page(
        body: str,
        *,
        user_id: str = "test-user",
        agent_id: str = "test-agent",
        title: str = "Test page",
        head: str = "",
        init: dict[str, Any] | None = None,
        path: str | None = None,
        headers: dict[str, str] | None = None,
        wait_ready: bool = True,
        wait_until: str = "load",
        authorization: str | None = "full",
    ) -> EmbeddedPage:
        token = mao_backend.issue_token(user_id, agent_id, origin=mao_pages.origin)
        snippet = embed_snippet(
            mao_backend.url, agent_id=agent_id, user_id=user_id, token=token,
            extra=with_open_panel(init),
        )
        url = mao_pages.add(
            path or f"/page-{next(_page_counter)}.html",
            page_html(body, snippet, title=title, head=head),
            headers,
        )
        known = {s["sessionId"] for s in mao_agent.sessions()}
        page = mao_context.new_page()
        page.goto(url, wait_until=wait_until)
        if not wait_ready:
            return EmbeddedPage(page, url, "", mao_agent, mao_backend)
        # The runtime boots on first use (SPEC E6); a test page wants it ready.
        page.evaluate("() => MaoChat.boot()")
        session = mao_agent.wait_for_session(url=url, exclude=known)
        embedded = EmbeddedPage(page, url, session["sessionId"], mao_agent, mao_backend)
        if authorization is not None:
            # The SDK asks the user before every action by default (SPEC P1); a test that
            # drives the page as an agent first grants a level as the user would.
            embedded.grant(authorization)
        return embedded

    return open_page
