"""Mao Embed benchmarks: ``python -m bench`` (or ``nox -s bench``); see bench/README.md.

One module per benchmark, registered in ``BENCHMARKS``; the shared runner is ``bench.runner``.
Not part of the pytest suite (pytest collects ``tests/`` only).
"""

BENCHMARKS = {
    "startup": "bench.startup",
    "screenshot": "bench.screenshot",
    "actions": "bench.actions",
    "relay_load": "bench.relay_load",
    "inspect": "bench.inspect",
    "extract": "bench.extract",
    "page_cost": "bench.page_cost",
    "site_tools": "bench.site_tools",
    "tab_resume": "bench.tab_resume",
}
