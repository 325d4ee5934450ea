"""Image helpers for the screenshot tests: decoding, Chromium's own reference screenshot with
the SDK hidden, and the two comparison figures (mean absolute error and SSIM)."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
from PIL import Image


def decode(result: dict[str, Any]) -> np.ndarray:
    """The tool's image as an RGB array (height, width, 3) of uint8."""
    data = base64.b64decode(result["data"])
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def reference(page: Any) -> np.ndarray:
    """Chromium's own screenshot of the viewport with the SDK host hidden (only for the
    duration of the screenshot)."""
    page.evaluate("() => { document.querySelector('mao-embed-host').style.visibility = 'hidden' }")
    try:
        png = page.screenshot()
    finally:
        page.evaluate("() => { document.querySelector('mao-embed-host').style.visibility = '' }")
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def mean_absolute_error(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over pixels and channels of |a - b|, on the 0-255 scale."""
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).mean())


def _box_mean(x: np.ndarray, size: int) -> np.ndarray:
    """Mean over every size x size window (valid windows only), via an integral image."""
    integral = np.pad(x, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    total = (
        integral[size:, size:]
        - integral[:-size, size:]
        - integral[size:, :-size]
        + integral[:-size, :-size]
    )
    return total / (size * size)


def ssim(a: np.ndarray, b: np.ndarray, window: int = 8) -> float:
    """Mean structural similarity (Wang et al. 2004) of the luma of two RGB images, with a
    uniform window and the paper's constants K1 = 0.01, K2 = 0.03, L = 255."""
    weights = np.array([0.299, 0.587, 0.114])
    x = a.astype(np.float64) @ weights
    y = b.astype(np.float64) @ weights
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = _box_mean(x, window), _box_mean(y, window)
    vx = _box_mean(x * x, window) - mx * mx
    vy = _box_mean(y * y, window) - my * my
    cov = _box_mean(x * y, window) - mx * my
    index = ((2 * mx * my + c1) * (2 * cov + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return float(index.mean())


def shifted(image: np.ndarray, dy: int) -> np.ndarray:
    """The image moved down by dy pixels, the top rows repeated: a known-wrong rendering
    (the layout shifts of the library's viewport pitfall were 20-200 px)."""
    return np.concatenate([np.repeat(image[:1], dy, axis=0), image[:-dy]], axis=0)


def solid_png_data_url(width: int, height: int, seed: int) -> str:
    """A PNG with colour gradients and blocks, as a data: URL (same-origin, readable)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    image = np.stack(
        [(xx * 255 // max(width - 1, 1)), (yy * 255 // max(height - 1, 1)), np.full_like(xx, 128)],
        -1,
    )
    for _ in range(6):
        x0, y0 = rng.integers(0, width - 10), rng.integers(0, height - 10)
        image[y0 : y0 + 12, x0 : x0 + 18] = rng.integers(0, 255, 3)
    buffer = io.BytesIO()
    Image.fromarray(image.astype(np.uint8)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
