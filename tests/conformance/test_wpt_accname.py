"""WPT accname cases (tests/conformance/wpt-accname, a copy of the public WPT data with its
license and source) through our engine in Chromium.

Every case's element is found in the WPT page, loaded in the harness page's iframe; its name
is computed by mao_page.dom.names in Pyodide over the rows of our collect primitive. The report
(every case, pass or miss) goes to build/conformance/wpt-accname.json.
"""

from __future__ import annotations

import collections
import json
import os
from pathlib import Path

from engine_page import REPO, EnginePage, add_harness, normalise

WPT_ROOT = Path(os.environ.get("MAO_WPT_ACCNAME", Path(__file__).parent / "wpt-accname"))
STUBS = (
    "<script>window.AriaUtils = {verifyLabelsBySelector() {}, verifyRolesBySelector() {}};"
    "window.setup = () => {}; window.ATTAcomm = function () {}; window.promise_test = () => {};"
    "</script>"
)
REPORT = REPO / "build" / "conformance" / "wpt-accname.json"
GOAL = 0.95


def _group(case: dict) -> str:
    if case.get("tentative"):
        return "tentative"
    return "noted" if "note" in case else "plain"


def test_wpt_accname_pass_rate(mao_browser, mao_pages, mao_backend):
    cases = json.loads((WPT_ROOT / "cases.json").read_text(encoding="utf-8"))
    by_file: dict[str, list[dict]] = collections.defaultdict(list)
    for case in cases:
        by_file[case["file"]].append(case)
    for file in by_file:
        text = (WPT_ROOT / file).read_text(encoding="utf-8")
        mao_pages.add("/wpt" + file.removeprefix("wpt"), STUBS + text)
    harness = add_harness(mao_pages, mao_backend.url)
    context = mao_browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.goto(harness)
        engine = EnginePage(page)
        results = []
        for file, group in by_file.items():
            engine.load(mao_pages.origin + "/wpt" + file.removeprefix("wpt"))
            found = engine.names([(c.get("selector"), c.get("index")) for c in group])
            for case, got in zip(group, found, strict=True):
                name = normalise(got[0]) if got else None
                results.append({**case, "ours": name, "pass": name == case["expected"]})
    finally:
        context.close()

    tally = collections.Counter((_group(r), r["pass"]) for r in results)
    summary = {
        group: {"pass": tally[(group, True)], "total": tally[(group, True)] + tally[(group, False)]}
        for group in ("plain", "noted", "tentative")
    }
    summary["all"] = {"pass": sum(r["pass"] for r in results), "total": len(results)}
    misses = [
        {k: r[k] for k in ("file", "index", "selector", "testname", "expected", "ours") if k in r}
        | {"group": _group(r)}
        for r in results
        if not r["pass"]
    ]
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {"summary": summary, "misses": misses, "results": results}, ensure_ascii=False, indent=1
        )
    )
    print("\nWPT accname through our engine:", json.dumps(summary))
    for miss in misses:
        print(
            f"  MISS [{miss['group']}] {miss['file']}#{miss.get('index', miss.get('selector'))} "
            f"expected {miss['expected']!r} ours {miss['ours']!r}"
        )
    plain = summary["plain"]
    assert plain["pass"] / plain["total"] >= GOAL, f"{plain} below {GOAL:.0%}; misses in {REPORT}"
