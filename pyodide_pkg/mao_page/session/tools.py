"""The page tools: route each request to the inspector, the screenshots or the batch runner.

Every tool answers a ``PageToolResult``; failures inside are ``ToolFailure`` and become
structured errors here. Tools whose issue has not landed answer ``unsupported``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from ..actions import (
    ActingListener,
    Authorizer,
    BatchRunner,
    SettlePolicy,
    StepListener,
    allow_everything,
)
from ..bridge.page import Page, read_state
from ..errors import ToolFailure
from ..protocol import (
    ErrorCode,
    InspectOptions,
    PageToolRequest,
    PageToolResult,
    SiteTool,
    ToolName,
)
from ..read.reader import PageReader
from ..read.screenshot import Screenshotter
from ..sitetools.runner import SiteToolRunner
from ..snapshot.inspector import Inspector, KeepSensitiveMasked, SensitiveRelease
from ..snapshot.store import SnapshotStore

AskUser = Callable[[PageToolRequest], Awaitable[PageToolResult]]


async def _no_one_to_ask(request: PageToolRequest) -> PageToolResult:
    raise ToolFailure(ErrorCode.UNSUPPORTED, "there is no panel to ask the user in")


class PageTools:
    def __init__(self, page: Page, store: SnapshotStore, settle: SettlePolicy | None = None, *,
                 authorize: Authorizer = allow_everything, on_step: StepListener | None = None,
                 on_acting: ActingListener | None = None,
                 ask_user: AskUser = _no_one_to_ask) -> None:
        # ``authorize``, ``on_step`` and ``on_acting`` are the authorization center's hooks
        # (mao_page.supervision.supervisor), as are ``sensitive_release`` and the screenshots'
        # ``unmasked_policy`` (set by the runtime); the defaults are for tests of the tools alone.
        self._page = page
        self.inspector = Inspector(page, store)
        self.actions = BatchRunner(
            page, self.inspector, settle, authorize=authorize, on_step=on_step, on_acting=on_acting
        )
        self.screenshots = Screenshotter(page, self.inspector)  # type: ignore[arg-type]
        self.reader = PageReader(page, self.inspector)
        self.sensitive_release: SensitiveRelease = KeepSensitiveMasked()
        # The page's WebMCP tools (set by the runtime; None where no registry is reachable).
        self.site_tools: SiteToolRunner | None = None
        # page_ask_user: the supervisor's question in the panel (SPEC U5).
        self._ask_user = ask_user
        # Actions run one request at a time, in the order they came (asyncio.Lock is FIFO): two
        # agents typing into the page must not interleave their keys. In worker mode every
        # bridge call lets other tasks run, not only the actions' own waits.
        self._acting = asyncio.Lock()

    def page_version(self) -> str:
        return read_state(self._page).version

    async def run(self, request: PageToolRequest) -> PageToolResult:
        started = time.monotonic()
        try:
            if request.tool is SiteTool.RUN:
                if self.site_tools is None:
                    raise ToolFailure(ErrorCode.UNSUPPORTED, "this page has no site tools")
                return await self.site_tools.run(request, started)
            if request.tool is ToolName.INSPECT:
                options = request.inspect or InspectOptions()
                # SPEC P5: sensitive values only when the agent asks and the level allows.
                release = (
                    not options.mask_sensitive
                    and await self.sensitive_release.release_sensitive_values(request)
                )
                snapshot = self.inspector.inspect(options, release_sensitive=release)
                self.actions.remember_snapshot(snapshot, options.include_offscreen)
                return PageToolResult(
                    request_id=request.request_id,
                    success=True,
                    page_version=snapshot.page_version,
                    snapshot_id=snapshot.snapshot_id,
                    result=snapshot.to_wire(),
                )
            if request.tool is ToolName.SCREENSHOT:
                return await self.screenshots.run(request)
            if request.tool is ToolName.ASK_USER:
                return await self._ask_user(request)
            # The read tools change nothing on the page: no authorization hook, no card.
            if request.tool is ToolName.EXTRACT:
                return self.reader.extract(request)
            if request.tool is ToolName.FIND:
                result, snapshot = await self.reader.find(request)
                self.actions.remember_snapshot(snapshot, True)
                return result
            async with self._acting:
                return await self.actions.run_actions(request)
        except ToolFailure as failure:
            return PageToolResult(
                request_id=request.request_id,
                success=False,
                page_version=self.page_version(),
                error=failure.to_error(),
            )
