"""Side check for Q2: is there a cheaper suspension primitive than run_sync (JsPromise.syncify)?"""
from playwright.sync_api import sync_playwright
from common import PAGE, launch, dump
CODE = """
import time, statistics
p = js.resolvedPromise(1)
r = {"has_syncify": hasattr(p, "syncify")}
if r["has_syncify"]:
    ts = []
    for i in range(1000):
        t = time.perf_counter(); js.resolvedPromise(i).syncify(); ts.append((time.perf_counter() - t) * 1000)
    ts.sort(); r["syncify_resolved_ms"] = [round(statistics.median(ts), 4), round(ts[950], 4)]
    ts = []
    for i in range(1000):
        t = time.perf_counter(); js.maoRpc("echo", to_js([i])).syncify(); ts.append((time.perf_counter() - t) * 1000)
    ts.sort(); r["syncify_rpc_ms"] = [round(statistics.median(ts), 4), round(ts[950], 4)]
ts = []
for i in range(1000):
    t = time.perf_counter(); run_sync(js.resolvedPromise(i)); ts.append((time.perf_counter() - t) * 1000)
ts.sort(); r["run_sync_resolved_ms"] = [round(statistics.median(ts), 4), round(ts[950], 4)]
json.dumps(r)
"""
with sync_playwright() as p:
    b = launch(p); page = b.new_page(); page.goto(PAGE + "spike.html?coi=1")
    page.evaluate("() => spike.startWorker({})")
    page.evaluate("(o) => spike.cmd('boot', o)", {"snapshot": True, "importRuntime": False})
    try:
        dump(page.evaluate("(c) => spike.cmd('runAsync', c)", CODE))
    except Exception as e:
        print(str(e)[:1500])
    b.close()
