"""The widget matrix's fixtures and its summary (harness.py explains the matrix)."""

from __future__ import annotations

import pytest


@pytest.fixture
def widget_page(reusable_pages, mao_pages):
    """``widget_page(LIB)``: the library's page (booted once per module, remounted now)."""
    from harness import opener

    return opener(reusable_pages, mao_pages)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from harness import OUTCOMES, matrix_markdown, save, summary

    if not OUTCOMES:
        return
    save(OUTCOMES)
    terminalreporter.section("widget matrix")
    terminalreporter.write_line(summary(OUTCOMES))
    for line in matrix_markdown(OUTCOMES).splitlines():
        terminalreporter.write_line(line)
    false = [o for o in OUTCOMES if o.verdict == "false_success"]
    for o in false:
        terminalreporter.write_line(f"FALSE SUCCESS {o.library} {o.cell}: {o.detail}")
