"""Shared Playwright setup for the spike scripts (flags as in ../shared/NOTES-pyodide.md)."""
import json
from playwright.sync_api import sync_playwright

PAGE = "http://127.0.0.1:8801/"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]


def launch(p, extra=()):
    return p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS + list(extra), headless=True)


def attach_console(page, sink):
    page.on("console", lambda m: sink.append(f"[{m.type}] {m.text}"[:600]))
    page.on("pageerror", lambda e: sink.append(f"[pageerror] {e}"[:600]))
    page.on("worker", lambda w: w.on("console", lambda m: sink.append(f"[worker {m.type}] {m.text}"[:600])) if hasattr(w, "on") else None)


def dump(obj):
    print(json.dumps(obj, indent=1, default=str), flush=True)
