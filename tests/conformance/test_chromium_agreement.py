"""Our names and roles against Chromium's own accessibility tree, on every snapshot fixture
page (tests/browser/snapshot_pages.py), for the interactive elements our scanner lists.

Each page is loaded in the harness iframe; our scan (Pyodide) lists the elements, and for
each Chromium's AX node (CDP ``Accessibility.getPartialAXTree``) gives its role and name.
Report: build/conformance/chromium-agreement.json.
"""

from __future__ import annotations

import json

from engine_page import REPO, EnginePage, add_harness, normalise
from snapshot_pages import PAGES

REPORT = REPO / "build" / "conformance" / "chromium-agreement.json"
GOAL = 0.98
# The same role under Chromium's internal name (CDP reports some roles by their Blink name).
SAME_ROLE = {"image": "img", "DisclosureTriangle": "button", "Section": "region"}


def _chromium(cdp, index: int) -> tuple[str, str, bool]:
    obj = cdp.send("Runtime.evaluate", {"expression": f"window.__compared[{index}]"})["result"][
        "objectId"
    ]
    nodes = cdp.send("Accessibility.getPartialAXTree", {"objectId": obj, "fetchRelatives": False})[
        "nodes"
    ]
    if not nodes:
        return "", "", True
    node = nodes[0]
    role = (node.get("role") or {}).get("value", "")
    return (
        SAME_ROLE.get(role, role),
        (node.get("name") or {}).get("value", ""),
        bool(node.get("ignored")),
    )


def test_names_and_roles_agree_with_chromium(mao_browser, mao_pages, mao_backend):
    for name, body in PAGES.items():
        mao_pages.add(
            f"/agreement/{name}.html",
            f"<!doctype html><html lang='en'><head><meta charset='utf-8'></head><body>{body}</body>"
            f"</html>",
        )
    harness = add_harness(mao_pages, mao_backend.url)
    context = mao_browser.new_context(viewport={"width": 1280, "height": 1000})
    rows = []
    try:
        page = context.new_page()
        page.goto(harness)
        engine = EnginePage(page)
        cdp = context.new_cdp_session(page)
        cdp.send("Accessibility.enable")
        for name in PAGES:
            engine.load(f"{mao_pages.origin}/agreement/{name}.html")
            page.wait_for_timeout(200)  # srcdoc frames and shadow roots settle
            for position, (_index, role, accname, label, opaque) in enumerate(engine.scan()):
                if opaque:
                    continue
                chrome_role, chrome_name, ignored = _chromium(cdp, position)
                if ignored and role in ("checkbox", "radio"):
                    # A custom checkbox: its real input is display:none, so Chromium has no
                    # node for it; we list it through its label (see test_snapshot_rules).
                    continue
                rows.append(
                    {
                        "page": name,
                        "ourRole": role,
                        "chromiumRole": chrome_role,
                        "ourName": normalise(accname),
                        "chromiumName": normalise(chrome_name),
                        "label": label,
                        "ignoredByChromium": ignored,
                        "roleAgrees": role == chrome_role,
                        "nameAgrees": normalise(accname) == normalise(chrome_name),
                    }
                )
    finally:
        context.close()
    for row in rows:
        row["agrees"] = row["roleAgrees"] and row["nameAgrees"]
    agree = sum(r["agrees"] for r in rows)
    summary = {
        "elements": len(rows),
        "agree": agree,
        "roleAgree": sum(r["roleAgrees"] for r in rows),
        "nameAgree": sum(r["nameAgrees"] for r in rows),
    }
    misses = [r for r in rows if not r["agrees"]]
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {"summary": summary, "misses": misses, "rows": rows}, ensure_ascii=False, indent=1
        )
    )
    print("\nAgreement with Chromium's accessibility tree:", json.dumps(summary))
    for miss in misses:
        print(
            f"  MISS {miss['page']}: ours {miss['ourRole']} {miss['ourName']!r} / chromium "
            f"{miss['chromiumRole']} {miss['chromiumName']!r}"
        )
    assert rows and agree / len(rows) >= GOAL, f"{summary}; misses in {REPORT}"
