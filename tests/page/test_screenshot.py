"""page_screenshot decisions on CPython (mao_page.read.screenshot): what is masked, the size and the
byte-cap ladder, the unmasked refusal, and failures turned into screenshot_failed. Rendering
itself is tested in real Chromium (tests/browser/test_screenshot*.py)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from mao_page.errors import ToolFailure
from mao_page.protocol import PageToolRequest, ScreenshotOptions
from mao_page.read.screenshot import (
    DEFAULT_MAX_BYTES,
    RefuseUnmasked,
    Screenshotter,
    base64_size,
    encode_ladder,
    mask_targets,
    output_scale,
)
from mao_page.snapshot.inspector import Inspector
from mao_page.snapshot.scanner import scan
from mao_page.snapshot.store import SnapshotStore

from .page_rows import VIEWPORT, PageRows


def _request(**options: Any) -> PageToolRequest:
    return PageToolRequest(
        request_id="r1",
        session_id="s1",
        tool="page_screenshot",
        screenshot=ScreenshotOptions(**options),
    )


def test_sensitive_private_and_not_collectable_elements_are_masked_outermost_first():
    page = PageRows()
    name = page.add("input", type="text", aria_label="Name")
    card = page.add("input", type="text", autocomplete="cc-number", aria_label="Card")
    password = page.add("input", type="password", aria_label="Password")
    note = page.add("input", type="text", aria_label="Note", privacy="private")
    balance = page.add("div", privacy="ignore")
    page.add("input", parent=balance, type="text", aria_label="Inside ignored")
    scanned = scan(page.rows, VIEWPORT)
    chosen = dict(mask_targets(page.rows, scanned, mask_sensitive=True))
    assert chosen == {
        card: "sensitive",
        password: "sensitive",
        note: "private",
        balance: "not_collectable",
    }
    assert name not in chosen


def test_lifting_sensitive_masks_keeps_the_page_owners_marks():
    page = PageRows()
    page.add("input", type="password", aria_label="Password")
    note = page.add("div", privacy="private")
    chosen = dict(mask_targets(page.rows, scan(page.rows, VIEWPORT), mask_sensitive=False))
    assert chosen == {note: "private"}


def test_the_longest_side_is_capped_and_never_upscaled():
    assert output_scale(1280, 800, 1280) == 1.0
    assert output_scale(1280, 800, 640) == 0.5
    assert output_scale(800, 1600, 1280) == 0.8
    assert output_scale(400, 300, 1280) == 1.0


def test_the_ladder_lowers_quality_before_scale_and_png_only_scales():
    lossy = encode_ladder("webp", 1.0)
    assert [s.quality for s in lossy[:4]] == [0.85, 0.7, 0.55, 0.4]
    assert all(s.scale == 1.0 for s in lossy[:4]) and lossy[4].scale < 1.0
    assert [s.scale for s in lossy] == sorted((s.scale for s in lossy), reverse=True)
    png = encode_ladder("png", 0.5)
    assert all(s.quality is None for s in png) and png[0].scale == 0.5 and png[-1].scale < 0.5


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 1000, 1001])
def test_base64_size_is_the_decoded_length(size):
    assert base64_size(base64.b64encode(b"x" * size).decode()) == size


def test_unmasked_screenshots_are_refused_until_a_confirmation_exists():
    # SPEC X3: without an authorization center to ask the user, unmasked is refused.
    with pytest.raises(ToolFailure) as refused:
        asyncio.run(RefuseUnmasked().allow_unmasked(_request(mask_sensitive=False)))
    assert refused.value.code == "permission_denied" and "confirmation" in refused.value.message


class _Facts:
    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows, self.scopes, self.frames = rows, [["document", 0, -1]], []

    def handle(self, index: int) -> str:
        return f"el{index}"

    def release(self) -> None:
        pass


class _Rendering:
    width, height, scroll_x, scroll_y, device_pixel_ratio, render_ms = (
        1280,
        800,
        0.0,
        120.0,
        1.0,
        5.0,
    )
    unrendered = [
        ("cross_origin_frame", [1.0, 2.0, 30.0, 40.0]),
        ("something_new", [0.0, 0.0, 1.0, 1.0]),
    ]
    warnings = ["image-fallback"]

    def __init__(self, masks: int, sizes: list[int], refuse: bool = False) -> None:
        self.masked = [[10.0, 10.0, 120.0, 24.0]] * masks
        self.labelled: list[Any] = []
        self._sizes = sizes
        self._refuse = refuse
        self.encoded: list[tuple[str, float | None, int, int]] = []
        self.released = False

    def encode(self, mime: str, quality: float | None, width: int, height: int) -> str:
        if self._refuse:
            raise RuntimeError("SecurityError: Tainted canvases may not be exported.")
        self.encoded.append((mime, quality, width, height))
        size = self._sizes[min(len(self.encoded) - 1, len(self._sizes) - 1)]
        return f"data:{mime};base64," + base64.b64encode(b"\0" * size).decode()

    def release(self) -> None:
        self.released = True


class _Page:
    def __init__(
        self, rows: list[list[Any]], rendering: _Rendering | None, delay: float = 0.0
    ) -> None:
        self._rows, self.rendering, self._delay = rows, rendering, delay
        self.masks: list[Any] = []

    def collect_main_document(self, *, viewport_only: bool = False) -> _Facts:
        # The rows stand for the whole page; a viewport-only walk would return a subset.
        return _Facts(self._rows)

    def viewport(self) -> list[float]:
        return [1280, 800, 0, 120, 1]

    def counters(self) -> tuple[int, int, float, str, str]:
        return 3, 0, 0.0, "http://example.test/", "Example"

    async def render_viewport(self, masks: list[Any], labels: list[Any]) -> _Rendering:
        self.masks = masks
        await asyncio.sleep(self._delay)
        if self.rendering is None:
            raise RuntimeError("Error: the screenshot library could not be loaded")
        return self.rendering


def _shoot(page: _Page, **options: Any) -> Any:
    # A real Inspector over the fake page: the masks come from the snapshot engine's scan.
    inspector = Inspector(page, SnapshotStore())  # type: ignore[arg-type]
    return asyncio.run(Screenshotter(page, inspector, timeout_s=0.5).run(_request(**options)))  # type: ignore[arg-type]


def test_over_the_cap_it_steps_down_and_reports_what_it_sent():
    rows = PageRows()
    rows.add("input", type="password", aria_label="Password")
    rendering = _Rendering(masks=1, sizes=[DEFAULT_MAX_BYTES + 10, DEFAULT_MAX_BYTES + 5, 900_000])
    page = _Page(rows.rows, rendering)
    result = _shoot(page, format="jpeg")
    assert result.success and page.masks == ["el2"] and rendering.released
    shot = result.result
    assert [q for _, q, _, _ in rendering.encoded] == [0.85, 0.7, 0.55]
    assert (shot["bytes"], shot["quality"], shot["width"], shot["scale"]) == (
        900_000,
        0.55,
        1280,
        1.0,
    )
    assert shot["maskedRegions"] == [
        {"rect": {"x": 10.0, "y": 10.0, "width": 120.0, "height": 24.0}, "reason": "sensitive"}
    ]
    assert shot["unrenderedRegions"] == [
        {"rect": {"x": 1.0, "y": 2.0, "width": 30.0, "height": 40.0}, "kind": "cross_origin_frame"}
    ]
    assert shot["covers"] == {"x": 0.0, "y": 120.0, "width": 1280.0, "height": 800.0}
    assert result.page_version == "0.3"


def test_an_image_that_never_fits_is_screenshot_failed():
    rendering = _Rendering(masks=0, sizes=[DEFAULT_MAX_BYTES + 1])
    with pytest.raises(ToolFailure) as failed:
        _shoot(_Page(PageRows().rows, rendering), format="png")
    assert failed.value.code == "screenshot_failed"
    assert failed.value.details["reason"] == "too_large" and rendering.released


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        (_Page(PageRows().rows, None), "render_failed"),
        (_Page(PageRows().rows, _Rendering(masks=0, sizes=[10]), delay=2.0), "timeout"),
        (_Page(PageRows().rows, _Rendering(masks=0, sizes=[10], refuse=True)), "export_refused"),
    ],
)
def test_failures_are_screenshot_failed_with_the_reason(page, reason):
    # PageTools.run turns the ToolFailure into the structured error result.
    with pytest.raises(ToolFailure) as failed:
        _shoot(page)
    assert failed.value.code == "screenshot_failed" and failed.value.details["reason"] == reason
