"""One site tool call in the page (SPEC B8): find the tool, check the arguments against its
``inputSchema``, ask the authorization center, run it in JavaScript within the call's time,
and shape its output.

The tool itself lives in the loader's registry (``loader_js/site-tools.js``), which holds the
page's ``execute`` functions and forms: Python reaches it through ``SiteToolHost`` with plain
arguments and gets plain data back, never handing JavaScript a callback.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ToolFailure
from ..protocol import ErrorCode, PageToolRequest, PageToolResult
from .schema import SchemaProblems, validate

# The page's answer must come back before the dispatcher gives up on the request, so that the
# agent reads the tool's own ``timeout`` (naming it) and the page's call is abandoned.
ANSWER_MARGIN_MS = 250


@dataclass(frozen=True, slots=True)
class SiteToolView:
    """A tool as the authorization center and the card see it (page-written text)."""

    name: str
    description: str
    read_only: bool
    source: str  # "script" or "form"
    input_schema: dict[str, Any]
    autosubmit: bool = False  # a form that submits itself once filled
    form_action: str = ""  # where that form posts


class SiteToolHost(Protocol):
    """The loader's registry (``bridge.browser.SiteToolBridge``; a fake in tests)."""

    def describe(self, name: str) -> dict[str, Any] | None: ...

    async def run(
        self, call_id: str, name: str, arguments_json: str, timeout_ms: int
    ) -> dict[str, Any]: ...

    def cancel(self, call_id: str) -> None: ...


class SiteToolAuthorizer(Protocol):
    """Raises ``ToolFailure`` (permission_denied, user_rejected, ...) to refuse the call."""

    async def __call__(self, tool: SiteToolView, arguments: dict[str, Any]) -> None: ...


async def allow_every_tool(tool: SiteToolView, arguments: dict[str, Any]) -> None:
    return None


# The registry's outcome codes (site-tools.js ``run``) and the errors they become.
_FAILURES = {
    "not_found": ErrorCode.NOT_FOUND,
    "timeout": ErrorCode.TIMEOUT,
    "cancelled": ErrorCode.CANCELLED,
    "invalid": ErrorCode.INVALID_REQUEST,
    "error": ErrorCode.SITE_TOOL_FAILED,
}


class SiteToolRunner:
    def __init__(self, host: SiteToolHost, authorize: SiteToolAuthorizer = allow_every_tool,
                 clock: Any = time.monotonic,
                 users_turn: Callable[[bool], None] = lambda waiting: None) -> None:
        # ``users_turn``: told while a form tool waits for the user's own submit
        # (``Supervisor.users_turn``), whose input then is no takeover.
        self._host = host
        self._authorize = authorize
        self._clock = clock
        self._users_turn = users_turn

    def view(self, name: str) -> SiteToolView:
        info = self._host.describe(name)
        if info is None:
            raise ToolFailure(
                ErrorCode.NOT_FOUND,
                f"the page has no site tool named {name} (it may have removed it); list the "
                "site tools again",
            )
        schema = info.get("inputSchema")
        return SiteToolView(
            name=name,
            description=str(info.get("description", "")),
            read_only=info.get("readOnly") is True,
            source=str(info.get("source", "script")),
            input_schema=schema if isinstance(schema, dict) else {},
            autosubmit=info.get("autosubmit") is True,
            form_action=str(info.get("formAction") or ""),
        )

    async def run(self, request: PageToolRequest, started: float) -> PageToolResult:
        """``started``: when the request began (``clock``), for what is left of its time."""
        call = request.site_tool
        assert call is not None
        tool = self.view(call.name)
        try:
            validate(call.arguments, tool.input_schema)
        except SchemaProblems as problems:
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST,
                f"the arguments do not fit {tool.name}'s inputSchema; the tool did not run: "
                f"{problems}",
                details={"problems": problems.problems},
            ) from None
        await self._authorize(tool, call.arguments)
        left_ms = int(request.timeout_ms - (self._clock() - started) * 1000 - ANSWER_MARGIN_MS)
        if left_ms <= 0:
            raise ToolFailure(ErrorCode.TIMEOUT, f"no time was left to run {tool.name}")
        began = self._clock()
        call_id = request.request_id
        finished = False
        waits_for_user = tool.source == "form" and not tool.autosubmit
        if waits_for_user:
            self._users_turn(True)
        try:
            outcome = await self._host.run(
                call_id, tool.name, json.dumps(call.arguments, ensure_ascii=False), left_ms
            )
            finished = True
        finally:
            if waits_for_user:
                self._users_turn(False)
            if not finished:  # cancelled (the agent, Stop, the dispatcher's timeout)
                self._host.cancel(call_id)
        duration_ms = round((self._clock() - began) * 1000, 1)
        return self._result(request, tool, outcome, duration_ms)

    def _result(
        self, request: PageToolRequest, tool: SiteToolView, outcome: dict[str, Any],
        duration_ms: float,
    ) -> PageToolResult:
        status = outcome.get("status")
        if status != "ok":
            code = _FAILURES.get(str(status), ErrorCode.SITE_TOOL_FAILED)
            message = str(outcome.get("message") or status)
            if code is ErrorCode.SITE_TOOL_FAILED:
                message = f"the site tool {tool.name} failed: {message}"
            details: dict[str, Any] = {"tool": tool.name, "durationMs": duration_ms}
            if outcome.get("name"):
                details["exception"] = str(outcome["name"])
            if outcome.get("filled"):
                details["filled"] = outcome["filled"]
            raise ToolFailure(code, message, details=details)
        result: dict[str, Any] = {"tool": tool.name, "source": tool.source}
        if "json" in outcome:
            result["output"] = json.loads(outcome["json"])
            result["outputType"] = "json"
        else:
            result["output"] = str(outcome.get("text", ""))
            result["outputType"] = "text"
        if outcome.get("truncated"):
            result["truncated"] = True
        result["durationMs"] = duration_ms
        return PageToolResult(request_id=request.request_id, success=True, result=result)
