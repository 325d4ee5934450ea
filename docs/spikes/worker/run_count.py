"""Q6: how many JS crossings (messages in worker mode) each page tool costs, measured on the real
SDK (a `git archive` of commit ca0ae6d in ./repo-head, assets built without snapshot) running
today's main-thread mode on the demo page, with the loader patched to count calls.
Needs: repo-head backend on :8803 (see REPORT.md). Usage: run_count.py"""
import json, re, time, sys
from pathlib import Path
import urllib.request
from playwright.sync_api import sync_playwright
from common import launch, dump

SERVER = "http://127.0.0.1:8803"
PATCH = Path(__file__).with_name("count_patch.js").read_text()


def api(method, path, body=None):
    req = urllib.request.Request(SERVER + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def patch_loader(route):
    body = route.fetch().text()
    assert "primitives: Object.freeze(MaoDom)," in body
    body = body.replace("primitives: Object.freeze(MaoDom),", "primitives: Object.freeze(__maoCount.wrap('', MaoDom)),")
    body = re.sub(r"\n(\s+)ui,\n", r"\n\1ui: __maoCount.wrapUi(ui),\n", body, count=1)
    route.fulfill(body=PATCH + "\n" + body, headers={"content-type": "text/javascript"})


out = {}
with sync_playwright() as p:
    browser = launch(p)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.route(re.compile(r".*/sdk/mao-chat\.js.*"), patch_loader)
    page.goto(SERVER + "/demo/")
    page.wait_for_function("() => window.MaoChat", timeout=30000)
    page.evaluate("() => MaoChat.ready")
    out["boot"] = page.evaluate("() => __maoCount.reset()")
    page.get_by_role("radio", name="Full access", exact=True).click()
    page.get_by_role("radio", name="Full access", exact=True).and_(page.locator("[aria-checked=true]")).wait_for()
    time.sleep(0.5)
    out["grant (panel click)"] = page.evaluate("() => __maoCount.reset()")
    sid = [s for s in api("GET", "/api/sessions") if s.get("ready", True)][0]["sessionId"]
    out["page size"] = page.evaluate("() => document.querySelectorAll('*').length")

    def call(label, tool, args):
        page.evaluate("() => __maoCount.reset()")
        t = time.time()
        r = api("POST", f"/api/sessions/{sid}/tools/{tool}", args)
        ms = round((time.time() - t) * 1000)
        time.sleep(0.3)
        c = page.evaluate("() => __maoCount.reset()")
        out[label] = {"success": r.get("success"), "ms": ms, "total": sum(c.values()), "calls": dict(sorted(c.items(), key=lambda kv: -kv[1]))}
        print(label, out[label]["total"], r.get("success"), (r.get("error") or {}).get("code"), file=sys.stderr, flush=True)
        return r

    snap = call("page_inspect", "page_inspect", {"format": "json"})["result"]
    by = {e["label"]: e for e in snap["elements"]}
    sidn = snap["snapshotId"]
    ref = lambda label: {"snapshotId": sidn, "elementId": by[label]["elementId"]}
    call("page_inspect (text)", "page_inspect", {"format": "text"})
    call("page_fill (one field)", "page_fill", {**ref("Claim title"), "value": "Client visit Shanghai"})
    call("page_fill (second field)", "page_fill", {**ref("Amount (CNY)"), "value": "1280.50"})
    call("page_select (native select)", "page_select", {**ref("Category"), "values": ["Travel"]})
    call("page_check", "page_check", {**ref("I have attached the receipt")})
    call("batch of 5 (fill, fill, check, fill, check)", "page_fill", {"actions": [
        {"action": "fill", **ref("Date of expense"), "value": "2026-11-27"},
        {"action": "fill", **ref("Notes"), "value": "Taxi and train"},
        {"action": "check", **ref("Personal (reimburse me)")},
        {"action": "fill", **ref("Claim title"), "value": "Client visit Shanghai!"},
        {"action": "uncheck", **ref("I have attached the receipt")},
    ]})
    call("page_extract", "page_extract", {})
    call("page_find", "page_find", {"query": "claim"})
    call("page_observe", "page_observe", {})
    call("page_click (submit)", "page_click", ref("Submit claim"))
    browser.close()
dump(out)
