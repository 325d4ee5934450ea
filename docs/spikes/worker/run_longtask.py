"""Main-thread long tasks (PerformanceObserver 'longtask', >50 ms) while Pyodide boots from the
project's snapshot in the worker vs on the main thread, and while the worker runs 1000 RPCs.
Usage: run_longtask.py [runs]"""
import sys, time
from playwright.sync_api import sync_playwright
from common import PAGE, launch, dump

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
OBSERVE = """() => { window.__long = []; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(Math.round(e.duration)); }).observe({ type: 'longtask' }); }"""
rows = []
with sync_playwright() as p:
    for i in range(RUNS):
        for mode in ("worker", "main"):
            browser = launch(p)
            page = browser.new_page()
            page.goto(PAGE + "spike.html")
            time.sleep(0.5)
            page.evaluate(OBSERVE)
            t = time.time()
            if mode == "worker":
                page.evaluate("() => spike.startWorker({})")
                page.evaluate("(o) => spike.cmd('boot', o)", {"snapshot": True, "importRuntime": True})
            else:
                page.evaluate("() => spike.startMain()")
                page.evaluate("(o) => spike.mainCmd('boot', o).then(() => 1)", {"snapshot": True, "importRuntime": True})
            boot_s = time.time() - t
            time.sleep(0.5)
            r = {"mode": mode, "boot_wall_s": round(boot_s, 2), "boot_longtasks_ms": page.evaluate("() => window.__long.splice(0)")}
            if mode == "worker":
                page.evaluate("() => spike.cmd('bench', 1000)")
                time.sleep(0.3)
                r["bench_longtasks_ms"] = page.evaluate("() => window.__long.splice(0)")
            rows.append(r)
            print(r, file=sys.stderr, flush=True)
            browser.close()
dump(rows)
