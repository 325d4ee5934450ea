"""Browser tests use the public plugin's fixtures (mao_embed.pytest_plugin), like users do."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Chromium's own stderr (through Playwright's driver), shown with a failed test's captured
    # output: a renderer that dies ("Target crashed") leaves its reason there and nowhere else.
    # Two CI runs in session 7 lost a renderer mid-test without a word of why.
    os.environ.setdefault("DEBUG", "pw:browser")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="module")
def reusable_pages(mao_browser, mao_pages, mao_backend, mao_agent):
    """Embedded pages booted once per module and remounted per test (frameworks.ReusablePages)."""
    from frameworks import ReusablePages

    pages = ReusablePages(mao_browser, mao_pages, mao_backend, mao_agent)
    yield pages
    pages.close()
