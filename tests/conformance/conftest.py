"""Conformance runs in real Chromium: WPT accname cases and agreement with Chromium's own
accessibility tree, both through our engine (mao_page) running in Pyodide in the page."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The fixture pages of the snapshot rule tests are shared with the Chromium comparison.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "browser"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/tests/conformance/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)
