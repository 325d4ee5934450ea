"""Site tools on the wire (SPEC B8; docs/site-tools.md): the WebMCP tools a page declares, as
the page lists them (``site_context``) and as an agent's call reaches the page
(``PageToolRequest.site_tool``).

Everything here is written by the page: names, descriptions and schemas are page text, shown
to agents inside the untrusted marking.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field

from .common import WireModel

# The WebMCP draft's tool name rule (ModelContext.registerTool); declarative names are made
# to fit it by the loader.
SITE_TOOL_NAME = r"^[A-Za-z0-9_.\-]{1,128}$"
MAX_SITE_TOOLS = 64
MAX_SITE_TOOL_DESCRIPTION = 2000
MAX_INSTRUCTIONS_CHARS = 4000

SiteToolNameStr = Annotated[str, Field(pattern=SITE_TOOL_NAME)]


class SiteTool(StrEnum):
    """The request kind that runs a site tool. Apart from ``ToolName``: agents see site tools
    under their own names (``GET /api/sessions/{id}/site-tools``, MCP ``site_<name>``), never
    as one more page tool."""

    RUN = "site_tool"


class SiteToolInfo(WireModel):
    """One tool as ``GET /api/sessions/{id}/site-tools`` lists it."""

    name: SiteToolNameStr
    title: Annotated[str, Field(max_length=200)] | None = None
    description: Annotated[str, Field(max_length=MAX_SITE_TOOL_DESCRIPTION)]
    input_schema: dict[str, Any]
    read_only: bool = False
    source: Literal["script", "form"]
    # The draft's untrustedContentHint: the page itself says the output holds others' text.
    untrusted_content: bool | None = None


class SiteContext(WireModel):
    """Page -> backend, from the loader: the page's site tools and ``init({instructions})``,
    when the session connects (if it has either) and whenever a tool comes or goes. A
    declaration, not page content: the agents' tool list needs it before the runtime boots."""

    type: Literal["site_context"] = "site_context"
    tools: Annotated[list[SiteToolInfo], Field(max_length=MAX_SITE_TOOLS)] = Field(
        default_factory=list
    )
    instructions: Annotated[str, Field(max_length=MAX_INSTRUCTIONS_CHARS)] | None = None


class SiteToolCall(WireModel):
    """What a ``site_tool`` request asks: the tool and its arguments, which the page checks
    against the tool's ``inputSchema`` before the tool sees them."""

    name: SiteToolNameStr
    arguments: dict[str, Any] = Field(default_factory=dict)
