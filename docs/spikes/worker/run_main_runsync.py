"""Side check for Q3: the same snapshot restored on the MAIN thread (today's mode): does run_sync
work there, with and without the heap fix? Usage: run_main_runsync.py"""
from playwright.sync_api import sync_playwright
from common import PAGE, launch, dump

CODE = """
try:
    r = ['ok', str(run_sync(js.resolvedPromise(5)))]
except Exception as e:
    r = [type(e).__name__ + ': ' + str(e)]
json.dumps([bool(can_run_sync())] + r)
"""
out = {}
with sync_playwright() as p:
    for fix in (False, True):
        browser = launch(p)
        page = browser.new_page()
        page.goto(PAGE + "spike.html")
        page.evaluate("() => spike.startMain()")
        b = page.evaluate("(o) => spike.mainCmd('boot', o).then(b => ({path: b.path, runSyncFix: b.runSyncFix}))",
                          {"snapshot": True, "importRuntime": False, "fixRunSync": fix})
        out[f"fix={fix}"] = {"boot": b, "runPythonAsync": page.evaluate("(c) => spike.mainCmd('runAsync', c)", CODE)}
        browser.close()
dump(out)
