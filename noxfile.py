"""Sessions. They run in the project's .venv (made by scripts/bootstrap), not in fresh
virtualenvs: the browser runtime and Chromium are shared, and re-installing per session
would only add minutes.

    nox -s tests          lint, the whole suite (CPython unit tests, real Chromium in the default
                          worker mode), then the page tools again in main-thread mode
    nox -s lint           ruff only
    nox -s tests_unit     CPython only (fast)
    nox -s bench          benchmarks; JSON results under bench/results/
    nox -s fuzz           long property-based fuzzing of every inbound message, both ends
"""

from __future__ import annotations

import sys

import nox

nox.options.default_venv_backend = "none"
nox.options.sessions = ["tests"]


LINTED = ("pyodide_pkg", "backend", "tests", "bench", "noxfile.py", "hatch_build.py")


@nox.session
def lint(session: nox.Session) -> None:
    session.run(sys.executable, "-m", "ruff", "check", *LINTED)


# The page tools again with the runtime on the page's main thread (init({mode: "main-thread"}),
# and what a page whose CSP allows no blob worker gets): the whole suite runs in the default
# worker mode, this job keeps the other mode tested (SPEC E6).
MAIN_THREAD_JOB = (
    "tests/browser/test_executor_native.py",
    "tests/browser/test_read_tools.py",
    "tests/browser/test_boot.py",
    "tests/browser/test_authorization.py",
    "tests/browser/test_snapshot_rules.py",
)


@nox.session
def tests(session: nox.Session) -> None:
    session.run(sys.executable, "-m", "ruff", "check", *LINTED)
    session.run(sys.executable, "-m", "pytest", "-q", "-ra", *session.posargs)
    if not session.posargs:
        session.run(
            sys.executable, "-m", "pytest", "-q", "-ra", *MAIN_THREAD_JOB,
            env={"MAO_EMBED_TEST_MODE": "main-thread"},
        )


@nox.session
def tests_unit(session: nox.Session) -> None:
    session.run(
        sys.executable, "-m", "pytest", "-q", "-m", "not browser and not selenium", *session.posargs
    )


@nox.session
def bench(session: nox.Session) -> None:
    session.run(sys.executable, "-m", "bench", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """The suite's fuzz tests with many more examples (MAO_EMBED_FUZZ_EXAMPLES, default 5000)."""
    examples = session.env.get("MAO_EMBED_FUZZ_EXAMPLES") or "5000"
    session.run(
        sys.executable, "-m", "pytest", "-q",
        "tests/backend/test_fuzz_inbound.py", "tests/backend/test_fuzz_page_inbound.py",
        *session.posargs,
        env={"MAO_EMBED_FUZZ_EXAMPLES": examples},
    )
