"""The read tools: ``page_extract`` and ``page_find`` (SPEC T1, T2).

Both read the page through one walk (``Page.read_text``, read.js) and build on
``pagetext.parse``, so they read the same text: rendered, no SDK UI, no aria-hidden or
page-owner private content, no sensitive editable region (decided by the snapshot engine's
own rule, ``Inspector.describe``), no form field values. Both are read-only: they need no
confirmation, like ``page_inspect``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..bridge.page import read_state
from ..errors import ToolFailure
from ..protocol import (
    ErrorCode,
    ExtractOptions,
    ExtractResult,
    FindHit,
    FindOptions,
    FindResult,
    InspectOptions,
    PageToolRequest,
    PageToolResult,
)
from ..snapshot import refs
from ..snapshot.inspector import Inspector, InspectResult
from . import extract, find, pagetext

# Characters of text read from the page before the walk stops: more than the Markdown cap,
# since chrome and markup come off and on, yet bounded on any page.
WALK_TEXT_LIMIT = 4 * extract.MAX_EXTRACT_CHARS
# The text a find searches, at most.
FIND_TEXT_LIMIT = 2 * extract.MAX_EXTRACT_CHARS
# A regular expression gets this long (in a worker, stopped after it) and counts this far.
REGEX_TIME_LIMIT_MS = 1000
COUNT_LIMIT = 10_000


_INLINE_DISPLAYS = sorted(pagetext.INLINE_DISPLAYS)
_INLINE_TAGS = sorted(extract.INLINE_TAGS)


class TextWalk(Protocol):
    """A ``read_text`` walk (``bridge.browser.TextWalk``)."""

    tree: pagetext.TextNode | None
    truncated: bool
    editable: list[int]
    flagged: int

    def handle(self, order: int) -> Any: ...
    def release(self) -> None: ...


@dataclass(frozen=True, slots=True)
class _ReadMarkdown:
    """The Markdown of the last extract, with what it was read from: the page version and the
    scope (snapshot id, element id)."""

    key: tuple[str, str | None, str | None]
    markdown: str
    truncated: bool


class PageReader:
    def __init__(self, page: Any, inspector: Inspector) -> None:
        self._page = page
        self._inspector = inspector
        self._last: _ReadMarkdown | None = None

    def _scope(self, snapshot_id: str | None, element_id: str | None) -> Any:
        """The element to read (a ref's), or None for the whole page."""
        if element_id is None or snapshot_id is None:
            return None
        entry, _row = self._inspector.resolve(snapshot_id, element_id)
        return entry.handle

    def _read(self, scope: Any, listed: list[Any] | None, fold_blocks: bool = False) -> TextWalk:
        return self._page.read_text(
            scope, listed, WALK_TEXT_LIMIT, _INLINE_DISPLAYS, _INLINE_TAGS, fold_blocks
        )

    def _tree(self, walk: TextWalk) -> pagetext.TextNode | None:
        """The walk's tree without what no read may return (``pagetext.prune``); editable
        regions are judged by the snapshot engine's sensitive-field rule."""
        sensitive = set()
        for order in walk.editable:
            description = self._inspector.describe(walk.handle(order))
            if description is None or description.sensitive:
                sensitive.add(order)
        if not walk.flagged and not sensitive:
            return walk.tree
        return pagetext.prune(walk.tree, sensitive)

    def extract(self, request: PageToolRequest) -> PageToolResult:
        options = request.extract or ExtractOptions()
        state = read_state(self._page)
        scope = self._scope(options.snapshot_id, options.element_id)
        key = (state.version, options.snapshot_id, options.element_id)
        if options.from_char > 0 and self._last is not None and self._last.key == key:
            # A later part of a document that has not changed since the part before: the same
            # Markdown, so the parts add up exactly, and no second walk of the page.
            markdown, truncated = self._last.markdown, self._last.truncated
        else:
            # Lists and row groups folded: a find keeps each row and item apart, an extract
            # renders them whole.
            walk = self._read(scope, None, fold_blocks=True)
            try:
                tree = self._tree(walk)
            finally:
                walk.release()
            markdown, capped = extract.cap(extract.render_markdown(tree))
            truncated = capped or walk.truncated
            self._last = _ReadMarkdown(key, markdown, truncated)
        if options.from_char > len(markdown) or (options.from_char == len(markdown) and markdown):
            raise ToolFailure(ErrorCode.INVALID_REQUEST,
                              f"fromChar {options.from_char} is past the end of the page's text "
                              f"({len(markdown)} characters now); start again from 0")
        part = extract.page_part(markdown, options.from_char, options.max_chars, truncated)
        result = ExtractResult(
            url=state.url,
            title=state.title,
            markdown=part.markdown,
            from_char=part.from_char,
            total_chars=part.total_chars,
            next_from_char=part.next_from_char,
            truncated=part.truncated,
        )
        return PageToolResult(
            request_id=request.request_id,
            success=True,
            page_version=state.version,
            result=result.to_wire(),
        )

    async def find(self, request: PageToolRequest) -> tuple[PageToolResult, InspectResult]:
        """The hits and the fresh snapshot their refs belong to (the caller records it as the
        latest, as after a ``page_inspect``)."""
        options = request.find
        if options is None:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, "page_find needs a query")
        if options.regex:
            problem = self._page.check_regex(options.query)
            if problem:
                raise ToolFailure(
                    ErrorCode.INVALID_REQUEST, f"query is not a valid regular expression: {problem}"
                )
        scope = self._scope(options.snapshot_id, options.element_id)
        snapshot = self._inspector.inspect(InspectOptions(include_offscreen=True))
        stored = refs.snapshot_of(self._inspector.store, snapshot.snapshot_id)
        element_ids = snapshot.elements.element_ids
        handles = [stored.entries[element_id].handle for element_id in element_ids]
        walk = self._read(scope, handles)
        try:
            tree = self._tree(walk)
        finally:
            walk.release()
        searched = find.search_text(tree, FIND_TEXT_LIMIT)
        spans, total = await self._matches(searched.text, options)
        elements = snapshot.elements
        hits = []
        for start, end in spans:
            near = find.nearest_listed(searched, searched.owner_at(start))
            element = elements[near] if near is not None else None
            hits.append(
                FindHit(
                    text=searched.text[start:end],
                    context=find.context_of(searched.text, start, end),
                    element_id=element.element_id if element else None,
                    role=element.role if element else None,
                    label=element.label if element else None,
                )
            )
        result = FindResult(
            snapshot_id=snapshot.snapshot_id,
            url=snapshot.url,
            title=snapshot.title,
            hits=hits,
            total=total,
        )
        return PageToolResult(
            request_id=request.request_id,
            success=True,
            page_version=snapshot.page_version,
            snapshot_id=snapshot.snapshot_id,
            result=result.to_wire(),
        ), snapshot

    async def _matches(self, text: str, options: FindOptions) -> tuple[list[tuple[int, int]], int]:
        if not options.regex:
            spans: list[tuple[int, int]] = []
            total = 0
            for match in find.literal_pattern(options.query).finditer(text):
                total += 1
                if len(spans) < options.max_results:
                    spans.append(match.span())
                if total >= COUNT_LIMIT:
                    break
            return spans, total
        answer = await self._page.regex_search(
            text, options.query, options.max_results, COUNT_LIMIT, REGEX_TIME_LIMIT_MS
        )
        if answer.get("timedOut"):
            raise ToolFailure(
                ErrorCode.TIMEOUT,
                f"the regular expression ran longer than {REGEX_TIME_LIMIT_MS} ms over the page's "
                f"text "
                "and was stopped; use a simpler pattern or plain text",
                details={"limitMs": REGEX_TIME_LIMIT_MS},
            )
        if "unavailable" in answer:
            raise ToolFailure(
                ErrorCode.UNSUPPORTED,
                "this page's Content-Security-Policy does not let the SDK start the worker a "
                "time-limited regular expression runs in; search for plain text instead",
                details={"reason": str(answer["unavailable"])[:200]},
            )
        astral = find.utf16_to_index(text)
        flat = answer["hits"]
        spans = [
            (find.from_utf16(flat[i], astral), find.from_utf16(flat[i + 1], astral))
            for i in range(0, len(flat), 2)
        ]
        return spans, int(answer["total"])
