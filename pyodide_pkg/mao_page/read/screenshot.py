"""``page_screenshot``: the current viewport rendered from the DOM inside the page.

SPEC X1-X3, P5; docs/tools.md "page_screenshot". Python decides; the JS primitives in
``loader_js/primitives/screenshot.js`` run the DOM-to-image library (@zumer/snapdom, imported
on the first screenshot) and draw on the output canvas:

1. What is masked: sensitive fields and page-owner private fields found by the snapshot
   engine's scanner (``scanner.scan`` marks ``sensitive`` / ``private``), and subtrees the
   owner marks as not collectable. Masked fields are replaced by empty boxes before the
   clone is rendered and covered by solid boxes afterwards, so their values never reach the
   pixels. Page-owner marks always hold; ``maskSensitive: false`` lifts only the sensitive
   masks, and only when the authorization policy allows it (SPEC X3).
2. The size: the longest side at most ``maxWidth`` CSS pixels (default 1280), then the byte
   cap (default ~1 MB): lower quality first, then a smaller scale, until it fits.
3. What the result says: the image (base64), its size and scale, the scroll position and the
   page rectangle it covers, the masked regions, and the regions it could not draw
   (cross-origin frames and images, tainted canvases, cross-origin video, plugin content).

Never stored: the image lives in a canvas until encoded into the result, then the canvas is
released; nothing goes to localStorage, sessionStorage, IndexedDB or BroadcastChannel.
Failures are ``screenshot_failed`` with the reason; DOM observation is never affected.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Protocol

from ..bridge.page import read_state
from ..dom import facts as F
from ..errors import ToolFailure
from ..protocol import (
    Annotation,
    ErrorCode,
    InspectOptions,
    MaskedRegion,
    MaskReason,
    PageToolRequest,
    PageToolResult,
    Rect,
    ScreenshotOptions,
    ScreenshotResult,
    UnrenderedKind,
    UnrenderedRegion,
    Viewport,
)
from ..snapshot import refs
from ..snapshot.inspector import Inspector

DEFAULT_MAX_BYTES = 1_000_000
RENDER_TIMEOUT_S = 20.0
MIME_TYPES = {"webp": "image/webp", "jpeg": "image/jpeg", "png": "image/png"}
FORMATS = {mime: name for name, mime in MIME_TYPES.items()}
# Byte-cap ladder: lossy formats drop quality first (text stays legible down to ~0.4), then
# scale; PNG can only scale. Factors multiply the maxWidth scale.
LOSSY_QUALITIES = (0.85, 0.7, 0.55, 0.4)
SCALE_FACTORS = (1.0, 0.8, 0.64, 0.5, 0.4, 0.32, 0.25)

_UNRENDERED_KINDS = frozenset(UnrenderedKind.__args__)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# What the screenshot needs from the page (``bridge.browser.BrowserPage`` implements it).
# ---------------------------------------------------------------------------


class Rendering(Protocol):
    width: int
    height: int
    scroll_x: float
    scroll_y: float
    device_pixel_ratio: float
    render_ms: float
    masked: list[list[float] | None]
    labelled: list[list[float] | None]
    unrendered: list[tuple[str, list[float]]]
    warnings: list[str]

    def encode(self, mime: str, quality: float | None, width: int, height: int) -> str: ...
    def release(self) -> None: ...


class ScreenshotPage(Protocol):
    def collect_main_document(self, *, viewport_only: bool = False) -> Any: ...
    def viewport(self) -> list[float]: ...
    def counters(self) -> tuple[int, int, float, str, str]: ...
    async def render_viewport(
        self, masks: list[Any], labels: list[tuple[str, Any]]
    ) -> Rendering: ...


class UnmaskedPolicy(Protocol):
    """Decides whether an unmasked screenshot may be taken (SPEC X3, P1, P5): return to
    allow, raise ``ToolFailure`` (permission_denied, user_rejected, ...) to refuse. The
    authorization center plugs in here: under ``per_action`` it asks the user."""

    async def allow_unmasked(self, request: PageToolRequest) -> None: ...


class RefuseUnmasked:
    """Until authorization levels exist, sensitive fields are always masked."""

    async def allow_unmasked(self, request: PageToolRequest) -> None:
        raise ToolFailure(
            ErrorCode.PERMISSION_DENIED,
            "an unmasked screenshot needs the user's confirmation (SPEC X3), and this SDK cannot "
            "ask for it yet; call page_screenshot with maskSensitive: true (the default)",
            details={"reason": "confirmation_unavailable"},
        )


# ---------------------------------------------------------------------------
# Pure decisions (tested on CPython).
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EncodeStep:
    scale: float  # image pixels per CSS pixel
    quality: float | None


def output_scale(width: float, height: float, max_side: int) -> float:
    """Image pixels per CSS pixel so the longest side is at most ``max_side``; never upscaled."""
    longest = max(width, height, 1.0)
    return min(1.0, max_side / longest)


def encode_ladder(image_format: str, base_scale: float) -> list[EncodeStep]:
    """The attempts, best first, to get under the byte cap."""
    if image_format == "png":
        return [EncodeStep(base_scale * f, None) for f in SCALE_FACTORS]
    steps = [EncodeStep(base_scale, q) for q in LOSSY_QUALITIES]
    steps += [EncodeStep(base_scale * f, LOSSY_QUALITIES[-1]) for f in SCALE_FACTORS[1:]]
    return steps


def base64_size(data: str) -> int:
    """Bytes encoded by a base64 string."""
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def mask_targets(
    rows: list[list[Any]], scanned: list[Any], *, mask_sensitive: bool
) -> list[tuple[int, MaskReason]]:
    """Rows to blank, in document order, with the reason.

    Sensitive and private fields come from the scanner; elements the page owner marks
    ``data-mao-private`` or ``data-mao-ignore`` are masked whole, whether interactive or not
    (only the outermost mark: its box covers the rest). Page-owner marks always hold;
    ``mask_sensitive`` only lifts the masks of fields the SDK itself judged sensitive.
    """
    chosen: dict[int, MaskReason] = {}
    marked = [False] * len(rows)
    for index, row in enumerate(rows):
        parent = row[F.PARENT]
        inherited = parent >= 0 and marked[parent]
        privacy = row[F.PRIVACY]
        marked[index] = inherited or bool(privacy)
        if privacy and not inherited:
            chosen[index] = "private" if privacy == "private" else "not_collectable"
    for item in scanned:
        if item.private and not marked[item.index]:
            chosen[item.index] = "private"
        elif item.sensitive and mask_sensitive and not marked[item.index]:
            chosen[item.index] = "sensitive"
    return sorted(chosen.items())


def _rect(values: list[float]) -> Rect:
    x, y, w, h = values
    return Rect(x=round(x, 1), y=round(y, 1), width=round(w, 1), height=round(h, 1))


# ---------------------------------------------------------------------------
# The tool.
# ---------------------------------------------------------------------------


class Screenshotter:
    def __init__(
        self,
        page: ScreenshotPage,
        inspector: Inspector,
        *,
        unmasked_policy: UnmaskedPolicy | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        timeout_s: float = RENDER_TIMEOUT_S,
    ) -> None:
        self._page = page
        self._inspector = inspector
        self.unmasked_policy: UnmaskedPolicy = unmasked_policy or RefuseUnmasked()
        self._max_bytes = max_bytes
        self._timeout_s = timeout_s

    async def run(self, request: PageToolRequest) -> PageToolResult:
        options = request.screenshot or ScreenshotOptions()
        started = time.monotonic()
        if not options.mask_sensitive:
            await self.unmasked_policy.allow_unmasked(request)
        state = read_state(self._page)
        snapshot_id, labels = self._labels() if options.annotate else (None, [])
        scan_started = time.monotonic()
        targets, handles = self._masks(mask_sensitive=options.mask_sensitive)
        scan_ms = (time.monotonic() - scan_started) * 1000
        timeout = min(self._timeout_s, request.timeout_ms / 1000 * 0.8)
        try:
            rendering = await asyncio.wait_for(
                self._page.render_viewport(handles, [(element_id, h) for element_id, h in labels]),
                timeout,
            )
        except TimeoutError:
            raise ToolFailure(
                ErrorCode.SCREENSHOT_FAILED,
                f"rendering the viewport took longer than {timeout:.0f} s; nothing was captured",
                details={"reason": "timeout"},
            ) from None
        except RuntimeError as error:  # bridge.browser.BridgeError: the library or the page refused
            hint = ""
            if "cannot be decoded" in str(error):
                # Measured: a page CSP whose img-src lacks data: blocks the library's SVG image.
                hint = " (if the page has a Content-Security-Policy, its img-src must allow data:)"
            raise ToolFailure(
                ErrorCode.SCREENSHOT_FAILED,
                f"the page could not be rendered: {error}{hint}",
                details={"reason": "render_failed"},
            ) from error
        try:
            result = self._encode(rendering, options, targets, labels, started, scan_ms)
        finally:
            rendering.release()
        return PageToolResult(
            request_id=request.request_id,
            success=True,
            page_version=state.version,
            snapshot_id=snapshot_id,
            result=result.to_wire(),
        )

    def _masks(self, *, mask_sensitive: bool) -> tuple[list[MaskReason], list[Any]]:
        # Only what intersects the viewport can be drawn, so only that is scanned.
        with self._inspector.live_scan(viewport_only=True) as (facts, scanned, _viewport):
            chosen = mask_targets(facts.rows, scanned.elements, mask_sensitive=mask_sensitive)
            return [reason for _, reason in chosen], [facts.handle(index) for index, _ in chosen]

    def _labels(self) -> tuple[str, list[tuple[str, Any]]]:
        """The refs of the latest snapshot, or of a fresh one when the page navigated since
        (its id is returned so the agent can act on the labels it sees)."""
        store = self._inspector.store
        state = read_state(self._page)
        snapshot = store.latest()
        if (
            snapshot is None
            or snapshot.navigation_epoch != state.navigations
            or snapshot.url != state.url
        ):
            fresh = self._inspector.inspect(InspectOptions())
            snapshot = refs.snapshot_of(store, fresh.snapshot_id)
        return snapshot.snapshot_id, [(e.element_id, e.handle) for e in snapshot.entries.values()]

    def _encode(
        self,
        rendering: Rendering,
        options: ScreenshotOptions,
        targets: list[MaskReason],
        labels: list[tuple[str, Any]],
        started: float,
        scan_ms: float,
    ) -> ScreenshotResult:
        encode_started = time.monotonic()
        width, height = rendering.width, rendering.height
        base_scale = output_scale(width, height, options.max_width)
        mime = MIME_TYPES[options.format]
        warnings = list(rendering.warnings)
        chosen: tuple[EncodeStep, str, str, int, int, int] | None = None
        for step in encode_ladder(options.format, base_scale):
            out_w, out_h = max(1, round(width * step.scale)), max(1, round(height * step.scale))
            try:
                url = rendering.encode(mime, step.quality, out_w, out_h)
            except RuntimeError as error:  # bridge.browser.BridgeError, e.g. SecurityError
                raise ToolFailure(
                    ErrorCode.SCREENSHOT_FAILED,
                    f"the browser refused to export the rendered image: {error}",
                    details={"reason": "export_refused"},
                ) from error
            header, _, data = url.partition(",")
            actual = header.removeprefix("data:").split(";", 1)[0]
            size = base64_size(data)
            chosen = (step, actual, data, size, out_w, out_h)
            if size <= self._max_bytes:
                break
        assert chosen is not None
        step, actual, data, size, out_w, out_h = chosen
        if size > self._max_bytes:
            raise ToolFailure(
                ErrorCode.SCREENSHOT_FAILED,
                f"the image stays over {self._max_bytes} bytes even at scale {step.scale:.2f}",
                details={"reason": "too_large", "bytes": size},
            )
        if actual not in FORMATS:
            raise ToolFailure(
                ErrorCode.SCREENSHOT_FAILED,
                f"the browser produced {actual or 'nothing'}",
                details={"reason": "no_image"},
            )
        if actual != mime:
            warnings.append(f"{options.format}_unsupported")
        masked = [
            MaskedRegion(rect=_rect(rect), reason=reason)
            for reason, rect in zip(targets, rendering.masked, strict=True)
            if rect is not None
        ]
        unrendered = [
            UnrenderedRegion(rect=_rect(rect), kind=kind)  # type: ignore[arg-type]
            for kind, rect in rendering.unrendered
            if kind in _UNRENDERED_KINDS
        ]
        annotations = None
        if options.annotate:
            annotations = [
                Annotation(element_id=element_id, rect=_rect(rect))
                for (element_id, _), rect in zip(labels, rendering.labelled, strict=True)
                if rect is not None
            ]
        return ScreenshotResult(
            format=FORMATS[actual],  # type: ignore[arg-type]
            mime_type=actual,
            data=data,
            bytes=size,
            width=out_w,
            height=out_h,
            scale=round(out_w / width, 4) if width else step.scale,
            quality=step.quality if actual != "image/png" else None,
            viewport=Viewport(
                width=width,
                height=height,
                scroll_x=rendering.scroll_x,
                scroll_y=rendering.scroll_y,
                device_pixel_ratio=rendering.device_pixel_ratio,
            ),
            covers=Rect(x=rendering.scroll_x, y=rendering.scroll_y, width=width, height=height),
            masked_regions=masked,
            unrendered_regions=unrendered,
            annotations=annotations,
            warnings=sorted(set(warnings)),
            scan_ms=round(scan_ms, 1),
            render_ms=round(rendering.render_ms, 1),
            encode_ms=round((time.monotonic() - encode_started) * 1000, 1),
            duration_ms=round((time.monotonic() - started) * 1000, 1),
        )
