"""Browser tests use the public plugin's fixtures (mao_embed.pytest_plugin), like users do."""

from __future__ import annotations

import os

import pytest
from _pytest.runner import runtestprotocol
from mao_embed.testing import renderer_crashes


def pytest_configure(config: pytest.Config) -> None:
    # Chromium's own stderr (through Playwright's driver), shown with a failed test's captured
    # output: a renderer that dies ("Target crashed") leaves its reason there and nowhere else.
    # Two CI runs in session 7 lost a renderer mid-test without a word of why.
    os.environ.setdefault("DEBUG", "pw:browser")


# Tests rerun after a Chromium renderer crash, with the failed attempt's failure.
_RERUN_AFTER_CRASH: list[tuple[str, str]] = []
# A test runs at most this often, and again only when its failed attempt saw a renderer crash:
# crashes come in bursts (three in 15 s in one CI run, on fresh pages of a fresh browser).
_ATTEMPTS = 3


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Run a browser test again (at most twice) when it failed and a Chromium renderer crashed
    while it ran (``mao_embed.testing.RendererCrashes``);
      the terminal summary lists every such rerun.

    Why: in some whole-suite runs on this 2-core machine a renderer dies mid-test (one to
    three tests in a run of ~1,300, in different files from run to run, sometimes several in a
    row), and the same tests pass when run again. A failure without a crash, a crash during
    setup, or a third crash is reported as it is. Modelled on pytest-rerunfailures' loop
    (pytest's ``runtestprotocol`` supports running an item again)."""
    if item.get_closest_marker("browser") is None:
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for attempt in range(1, _ATTEMPTS + 1):
        crashes_before = renderer_crashes.count
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        renderer_crashes.settle()
        crashed = renderer_crashes.count > crashes_before
        if attempt < _ATTEMPTS and crashed and reports[0].passed and any(r.failed for r in reports):
            failure = next(r for r in reports if r.failed)
            _RERUN_AFTER_CRASH.append((item.nodeid, failure.longreprtext))
            continue
        break
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _RERUN_AFTER_CRASH:
        return
    terminalreporter.section("browser tests rerun after a Chromium renderer crash")
    for nodeid, failure in _RERUN_AFTER_CRASH:
        terminalreporter.write_line(f"RERUN {nodeid}; the attempt before failed with:")
        lines = failure.splitlines()
        for line in [line for line in lines if line.startswith("E ")][:8] + lines[-1:]:
            terminalreporter.write_line(f"    {line}")


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
