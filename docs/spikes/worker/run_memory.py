"""Q5: renderer memory (RSS, PSS) with Pyodide booted in the blob worker vs on the main thread,
same page, same boot code (pages/worker-src.js), one fresh browser per run, modes alternated.
Usage: run_memory.py [runs]"""
import sys, time, statistics
from playwright.sync_api import sync_playwright
from common import PAGE, launch, dump

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 3
GC = "--gc" in sys.argv or "--drop" in sys.argv
DROP = "--drop" in sys.argv  # also drop what Pyodide's API.config holds (snapshot bytes, prepare closures)  # launch with --js-flags=--expose-gc and collect garbage (both threads) before measuring
MODES = ["bare", "worker-snapshot", "main-snapshot", "worker-fresh", "main-fresh"]
if "--modes" in sys.argv:
    MODES = sys.argv[sys.argv.index("--modes") + 1].split(",")


def proc_mem(pid):
    out = {}
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                out["rss_mb"] = int(line.split()[1]) / 1024
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss:"):
                out["pss_mb"] = int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return out


def renderer_mem(browser):
    cdp = browser.new_browser_cdp_session()
    info = cdp.send("SystemInfo.getProcessInfo")["processInfo"]
    cdp.detach()
    renderers = [proc_mem(p["id"]) | {"pid": p["id"]} for p in info if p["type"] == "renderer"]
    total = [proc_mem(p["id"]) for p in info]
    # The page's renderer is the biggest one (a spare renderer may exist).
    page_r = max(renderers, key=lambda r: r.get("rss_mb", 0))
    return {"renderer_rss_mb": round(page_r["rss_mb"], 1), "renderer_pss_mb": round(page_r["pss_mb"], 1),
            "renderers": len(renderers),
            "all_processes_pss_mb": round(sum(t.get("pss_mb", 0) for t in total), 1)}


def run(p, mode):
    browser = launch(p, ["--js-flags=--expose-gc"] if GC else [])
    page = browser.new_page()
    page.goto(PAGE + "spike.html")
    time.sleep(1.0)
    r = {"mode": mode}
    if mode != "bare":
        snapshot = mode.endswith("snapshot")
        if mode.startswith("worker"):
            page.evaluate("() => spike.startWorker({})")
            boot = page.evaluate("(o) => spike.cmd('boot', o)", {"snapshot": snapshot, "importRuntime": True})
        else:
            page.evaluate("() => spike.startMain()")
            boot = page.evaluate("(o) => spike.mainCmd('boot', o).then(b => ({path: b.path, marks: b.marks, heap: b.heap}))",
                                 {"snapshot": snapshot, "importRuntime": True})
        r["path"], r["heap_mb"] = boot["path"], round(boot["heap"] / 2**20, 1)
    time.sleep(3.0)
    if DROP:
        r["dropped"] = page.evaluate("() => spike.cmd('dropConfig')") if mode.startswith("worker") else (
            page.evaluate("() => spike.mainCmd('dropConfig')") if mode != "bare" else None)
    if GC:
        r["gc"] = [page.evaluate("() => { if (window.gc) { gc(); return true; } return false; }")]
        if mode.startswith("worker"):
            r["gc"].append(page.evaluate("() => spike.cmd('gc')"))
        time.sleep(1.0)
    r |= renderer_mem(browser)
    if mode.startswith("worker"):
        page.evaluate("() => spike.terminate()")
        time.sleep(3.0)
        after = renderer_mem(browser)
        r["after_terminate_renderer_rss_mb"] = after["renderer_rss_mb"]
        r["after_terminate_renderer_pss_mb"] = after["renderer_pss_mb"]
    browser.close()
    return r


rows = []
with sync_playwright() as p:
    for i in range(RUNS):
        for mode in MODES:
            rows.append(run(p, mode))
            print(rows[-1], file=sys.stderr, flush=True)
summary = {}
for mode in MODES:
    mine = [r for r in rows if r["mode"] == mode]
    summary[mode] = {k: statistics.median(r[k] for r in mine) for k in mine[0] if isinstance(mine[0][k], (int, float))}
dump({"runs": rows, "median": summary})
