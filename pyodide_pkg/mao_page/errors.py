"""The one exception raised inside the runtime; turned into a ToolError at the boundary."""

from __future__ import annotations

from typing import Any

from .protocol import ErrorCode, ToolError


class ToolFailure(Exception):
    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        element_id: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.element_id = element_id
        self.details = details

    def to_error(self) -> ToolError:
        return ToolError(
            code=self.code, message=self.message, element_id=self.element_id, details=self.details
        )
