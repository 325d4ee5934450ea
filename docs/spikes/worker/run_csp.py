"""Q4: how creating the blob module worker fails under a CSP, and how soon the page knows.
Usage: run_csp.py  (runs every policy below, one fresh browser each)"""
import time
from urllib.parse import quote
from playwright.sync_api import sync_playwright
from common import PAGE, launch, attach_console, dump

B = "http://127.0.0.1:8802"
POLICIES = {
    "worker-src 'self'": f"script-src 'self' {B} 'wasm-unsafe-eval'; worker-src 'self'",
    "script-src without blob: (no worker-src)": f"script-src 'self' {B} 'wasm-unsafe-eval'",
    "default-src 'self' + script-src backend": f"default-src 'self'; script-src 'self' {B} 'wasm-unsafe-eval'; connect-src 'self' {B}",
    "worker-src blob: (allowed)": f"script-src 'self' {B} 'wasm-unsafe-eval'; worker-src blob:",
    "worker-src blob:, no wasm-unsafe-eval": f"script-src 'self' {B}; worker-src blob:",
    "worker-src blob:, connect-src 'self' only": f"script-src 'self' {B} 'wasm-unsafe-eval'; worker-src blob:; connect-src 'self'",
    "report-only worker-src 'self'": None,  # handled below
}
results = {}
with sync_playwright() as p:
    for label, csp in POLICIES.items():
        browser = launch(p)
        page = browser.new_page()
        console = []
        attach_console(page, console)
        if csp is None:
            # Content-Security-Policy-Report-Only is not settable via our query; skip
            browser.close()
            continue
        page.goto(PAGE + "spike.html?csp=" + quote(csp))
        r = {"csp": csp}
        try:
          r["start"] = page.evaluate("(o) => Promise.race([spike.startWorker(o), new Promise(r => setTimeout(() => r('no started/error within 5 s'), 5000))])", {})
        except Exception as e:
          r["start"] = str(e)[:300]
        if isinstance(r["start"], dict) and "startedAfterNewMs" in r["start"]:
            t = time.time()
            r["boot"] = page.evaluate("""() => Promise.race([
                spike.cmd('boot', {snapshot: true, importRuntime: false}).then(b => ({path: b.path, fallback: b.fallback && b.fallback.slice(0, 300), marks: b.marks}), e => 'boot error: ' + String(e).slice(0, 400)),
                new Promise(r => setTimeout(() => r('boot did not settle within 15 s'), 15000))])""")
            r["boot_wall_s"] = round(time.time() - t, 2)
        ev = page.evaluate("() => spike.events")
        t_new = r["start"].get("tNew") if isinstance(r["start"], dict) else None
        for e in ev:
            if t_new is not None and "t" in e:
                e["afterNewMs"] = round(e["t"] - t_new, 2)
        r["events"] = ev
        r["console"] = console[:8]
        results[label] = r
        browser.close()
dump(results)
