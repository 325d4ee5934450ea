"""Request dispatch in the page: validation, once-only execution, timeouts, cancellation.

SPEC W1: a request that does not validate (unknown fields such as ``selector`` or
``script``, wrong types) is answered with ``invalid_request`` and nothing runs.
SPEC W2: a repeated requestId is never executed twice: while running it is ignored (the one
result answers both), once finished the first result is sent again.
SPEC W3: every request ends in exactly one result: success, error, ``timeout`` or
``cancelled``.
"""

from __future__ import annotations

import asyncio
import json
import re
import traceback
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from pydantic import ValidationError

from ..protocol import (
    Cancel,
    ErrorCode,
    PageToolRequest,
    PageToolResult,
    ToolError,
    describe_validation_error,
)

REMEMBERED_RESULTS = 256
_REQUEST_ID = re.compile(r"[A-Za-z0-9_.:\-]{1,80}")

Execute = Callable[[PageToolRequest], Awaitable[PageToolResult]]
# A message as JSON text (``WireModel.to_json``).
Send = Callable[[str], None]


class Dispatcher:
    def __init__(self, execute: Execute, send: Send, page_version: Callable[[], str]) -> None:
        self._execute = execute
        self._send = send
        self._page_version = page_version
        self._finished: OrderedDict[str, PageToolResult] = OrderedDict()
        self._running: dict[str, asyncio.Task[None]] = {}
        self._session_id: str | None = None
        self.executed = 0  # count of requests actually run, for tests and diagnostics

    def bind_session(self, session_id: str) -> None:
        self._session_id = session_id

    def replace_sender(self, send: Send) -> None:
        self._send = send

    # -- inbound ------------------------------------------------------------------------

    def reject_invalid(self, raw: str, error: ValidationError) -> None:
        """A frame that failed validation. If it names a requestId, answer it; else drop it."""
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            # RecursionError: deeply nested arrays (found by fuzzing) killed the client.
            return
        if not isinstance(data, dict) or data.get("type") != "page_tool_request":
            return
        request_id = data.get("requestId")
        if not isinstance(request_id, str) or _REQUEST_ID.fullmatch(request_id) is None:
            # No result can carry a malformed requestId (building one raised and killed the
            # client, found by fuzzing); the backend never sends one, so drop the frame.
            return
        self._send(
            self._failure(
                request_id,
                ErrorCode.INVALID_REQUEST,
                "request rejected, nothing was done: " + describe_validation_error(error),
            ).to_json()
        )

    def submit(self, request: PageToolRequest) -> None:
        request_id = request.request_id
        if self._session_id is not None and request.session_id != self._session_id:
            self._send(
                self._failure(
                    request_id,
                    ErrorCode.INVALID_REQUEST,
                    "request addressed to another session; nothing was done",
                ).to_json()
            )
            return
        if request_id in self._running:
            return
        if request_id in self._finished:
            self._send(self._finished[request_id].to_json())
            return
        task = asyncio.get_event_loop().create_task(self._run(request))
        self._running[request_id] = task
        task.add_done_callback(lambda done: self._settle_cancelled_before_start(request, done))

    def cancel(self, message: Cancel) -> None:
        task = self._running.get(message.request_id)
        if task is not None:
            task.cancel(message.reason or "cancelled by the agent")

    def cancel_all(self, reason: str) -> None:
        for task in list(self._running.values()):
            task.cancel(reason)

    # -- execution ----------------------------------------------------------------------

    async def _run(self, request: PageToolRequest) -> None:
        request_id = request.request_id
        try:
            self.executed += 1
            result = await asyncio.wait_for(self._execute(request), request.timeout_ms / 1000)
        except TimeoutError:
            result = self._failure(
                request_id,
                ErrorCode.TIMEOUT,
                f"{request.tool} did not finish within {request.timeout_ms} ms",
            )
        except asyncio.CancelledError:
            result = self._failure(request_id, ErrorCode.CANCELLED, f"{request.tool} was cancelled")
        except Exception as error:  # noqa: BLE001 - the boundary: every request ends in a result (W3)
            traceback.print_exc()  # a defect of ours: its trace goes to the page's console
            result = self._failure(
                request_id,
                ErrorCode.INTERNAL_ERROR,
                f"{request.tool} failed inside the SDK: {type(error).__name__}: {error}",
            )
        finally:
            self._running.pop(request_id, None)
        self._remember(result)
        self._send(result.to_json())

    def _settle_cancelled_before_start(
        self, request: PageToolRequest, task: asyncio.Task[None]
    ) -> None:
        # A task cancelled before its first step (a cancel or disconnect arriving in the same
        # burst as the request) never enters ``_run``, so its handlers cannot answer. The
        # request still owes exactly one result (W3) and must not stay "running", or every
        # retry of its requestId would be ignored (W2).
        if not task.cancelled() or self._running.get(request.request_id) is not task:
            return
        del self._running[request.request_id]
        result = self._failure(
            request.request_id,
            ErrorCode.CANCELLED,
            f"{request.tool} was cancelled before it started",
        )
        self._remember(result)
        self._send(result.to_json())

    def _remember(self, result: PageToolResult) -> None:
        self._finished[result.request_id] = result
        while len(self._finished) > REMEMBERED_RESULTS:
            self._finished.popitem(last=False)

    def _failure(self, request_id: str, code: ErrorCode, message: str) -> PageToolResult:
        try:
            version = self._page_version()
        except Exception:  # noqa: BLE001 - a page version is best effort on an error path
            version = ""
        return PageToolResult(
            request_id=request_id,
            success=False,
            page_version=version,
            error=ToolError(code=code, message=message),
        )
