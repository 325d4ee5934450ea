"""Q1-Q3: start the blob module worker cross-origin, boot Pyodide (fresh or from the project's
snapshot), try run_sync from each entry point, benchmark the RPC.
Usage: run_boot.py [--snapshot] [--nocors | --echo-origin] [--coi] [--runtime] [--bench N] [--nofix]"""
import sys, time
from urllib.parse import quote
from playwright.sync_api import sync_playwright
from common import PAGE, launch, attach_console, dump

args = sys.argv[1:]
snapshot = "--snapshot" in args
cors = "--nocors" not in args
runtime = "--runtime" in args
n = int(args[args.index("--bench") + 1]) if "--bench" in args else 0
url = PAGE + "spike.html"
ERR = """
try:
    rpc("no_such_primitive")
    r = "no error"
except Exception as e:
    r = type(e).__name__ + ": " + str(e)
r
"""
if "--coi" in args:
    url += "?coi=1"
out = {"args": args}
console = []
with sync_playwright() as p:
    browser = launch(p)
    page = browser.new_page()
    attach_console(page, console)
    page.goto(url)
    t = time.time()
    out["start"] = page.evaluate("(o) => spike.startWorker(o)", {"cors": cors, "echo": "--echo-origin" in args})
    try:
        out["boot"] = page.evaluate("(o) => spike.cmd('boot', o)", {"snapshot": snapshot, "importRuntime": runtime, "fixRunSync": "--nofix" not in args})
        out["boot_wall_s"] = round(time.time() - t, 2)
        out["entry"] = page.evaluate("() => spike.cmd('entryTests')")
        out["reentrancy"] = page.evaluate("() => spike.cmd('reentrancy')")
        out["error_propagation"] = page.evaluate("(c) => spike.cmd('runAsync', c)", ERR)
        if n:
            out["bench"] = page.evaluate("(n) => spike.cmd('bench', n)", n)
            out["main_thread_handler"] = page.evaluate("() => spike.handlerSummary()")
        out["crossOriginIsolated"] = page.evaluate("() => spike.crossOriginIsolated()")
    except Exception as e:
        out["error"] = str(e)[:3000]
    out["events"] = page.evaluate("() => spike.events")
    out["console"] = console[:40]
    browser.close()
dump(out)
