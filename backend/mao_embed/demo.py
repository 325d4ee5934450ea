"""``mao-embed demo``: the whole chain, end to end, headless.

Starts the backend on a free port, opens the demo expense-claim page in headless Chromium,
waits for the SDK session, and lets a scripted agent use only the agent HTTP API to inspect,
fill the form, submit and observe, then read the claim back through the page's own site
tool. Prints the action log and the final page state, and exits
0 only if the page's own results table shows the submitted values.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .assets import ensure_built
from .config import ServerConfig
from .server import start_in_thread
from .testing import AgentClient, chromium_path, launch_chromium, random_secret

CLAIM = {
    "Claim title": "Client visit Shanghai",
    "Amount (CNY)": "1280.50",
    "Date of expense": "2026-11-27",
    "Category": "travel",
    "Notes": "Taxi and train to the client office",
}
EXPECTED_ROW = [
    "Client visit Shanghai",
    "1280.50",
    "2026-11-27",
    "Travel",
    "personal",
    "yes",
    "Taxi and train to the client office",
]


@dataclass
class ActionLog:
    started: float
    count: int = 0

    def line(
        self, tool: str, target: str, outcome: str, duration_ms: float, note: str = ""
    ) -> None:
        self.count += 1
        print(
            f"[{self.count:2d}] {tool:<14} {target[:34]:<34} {outcome:<22} {duration_ms:7.0f} ms  "
            f"{note}".rstrip(),
            flush=True,
        )


class DemoFailure(Exception):
    pass


class ScriptedAgent:
    """An agent that knows the task but sees the page only through the tools."""

    def __init__(
        self,
        agent: AgentClient,
        session_id: str,
        log: ActionLog,
        on_drop: Callable[[], None] = lambda: None,
    ) -> None:
        self._agent = agent
        self._session = session_id
        self._log = log
        self._on_drop = on_drop

    def call(
        self, tool: str, args: dict[str, Any] | None = None, *, idempotent: bool = False
    ) -> dict[str, Any]:
        result = self._call_once(tool, args)
        error = result.get("error") or {}
        if idempotent and error.get("code") == "disconnected":
            # SPEC W3: the relay never replays a write after a drop; the agent decides. Setting
            # the same values again is safe (a click would not be), so once the page has
            # resumed its session, this agent repeats the step, as a careful agent would.
            print(
                "     the page's connection dropped during this step; waiting for it to resume",
                flush=True,
            )
            self._on_drop()
            self._wait_for_resume()
            result = self._call_once(tool, args)
        if not result.get("success"):
            error = result.get("error") or {}
            raise DemoFailure(f"{tool} failed: {error.get('code')}: {error.get('message')}")
        return result

    def _wait_for_resume(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(s.get("sessionId") == self._session for s in self._agent.sessions()):
                return
            time.sleep(0.2)
        raise DemoFailure(
            f"the page did not resume session {self._session} within {timeout_s:.0f} s"
        )

    def _call_once(self, tool: str, args: dict[str, Any] | None) -> dict[str, Any]:
        began = time.monotonic()
        result = self._agent.call(self._session, tool, args or {})
        elapsed = (time.monotonic() - began) * 1000
        if tool == "page_inspect" and result.get("success"):
            self._log.line(
                tool,
                "(page)",
                "ok",
                elapsed,
                f"{len(result['result']['elements'])} elements, snapshot {result['snapshotId']}",
            )
        elif result.get("result") and "steps" in result["result"]:
            for step in result["result"]["steps"]:
                outcome = "ok" if step["success"] else f"failed: {step['error']['code']}"
                detail = step.get("outcome") or {}
                note = f"value={detail['value']!r}" if "value" in detail else ""
                if "checked" in detail:
                    note = f"checked={detail['checked']}"
                if "labels" in detail:
                    note = f"selected={detail['labels']}"
                if step["action"] == "observe" and detail:
                    changed, mutations = detail.get("urlChanged"), detail.get("mutations")
                    note = f"url changed={changed}, mutations={mutations}"
                self._log.line(
                    f"batch:{step['action']}" if len(result["result"]["steps"]) > 1 else tool,
                    step.get("targetLabel") or "(page)",
                    outcome,
                    step.get("durationMs", elapsed),
                    note,
                )
        else:
            self._log.line(tool, "", "ok" if result.get("success") else "failed", elapsed)
        return result

    def run(self) -> None:
        snapshot = self.call("page_inspect", {"format": "text"}, idempotent=True)["result"]
        print("\nWhat the agent sees (text form):\n" + snapshot["text"] + "\n", flush=True)
        by_label = {e["label"]: e for e in snapshot["elements"]}
        sid = snapshot["snapshotId"]

        def ref(label: str) -> dict[str, str]:
            if label not in by_label:
                raise DemoFailure(f"the snapshot has no element labelled {label!r}")
            return {"snapshotId": sid, "elementId": by_label[label]["elementId"]}

        # Two single fills, then the rest of the form as one ordered batch (SPEC A5).
        self.call(
            "page_fill", {**ref("Claim title"), "value": CLAIM["Claim title"]}, idempotent=True
        )
        self.call(
            "page_fill", {**ref("Amount (CNY)"), "value": CLAIM["Amount (CNY)"]}, idempotent=True
        )
        self.call("page_fill", idempotent=True, args={"actions": [
            {"action": "fill", **ref("Date of expense"), "value": CLAIM["Date of expense"]},
            {"action": "select", **ref("Category"), "values": ["Travel"]},
            {"action": "check", **ref("Personal (reimburse me)")},
            {"action": "fill", **ref("Notes"), "value": CLAIM["Notes"]},
            {"action": "check", **ref("I have attached the receipt")},
        ]})
        self.call("page_click", ref("Submit claim"))
        self.call("page_observe", idempotent=True)
        after = self.call("page_inspect", idempotent=True)["result"]
        title = next((e for e in after["elements"] if e["label"] == "Claim title"), None)
        if title is None or title["value"] != "":
            raise DemoFailure("after submitting, the form should have been reset by the page")
        self.check_with_site_tool()

    def check_with_site_tool(self) -> None:
        """One step through the page's own WebMCP tool (docs/site-tools.md): the claim as the
        app holds it, read-only, so no card."""
        began = time.monotonic()
        listed = {t["name"] for t in self._agent.site_tools(self._session)}
        if "list_claims" not in listed:
            raise DemoFailure(f"the demo page offers no list_claims site tool (got {listed})")
        result = self._agent.call_site_tool(self._session, "list_claims", {"category": "travel"})
        if not result.get("success"):
            error = result.get("error") or {}
            raise DemoFailure(f"list_claims failed: {error.get('code')}: {error.get('message')}")
        claims = result["result"]["output"]["claims"]
        self._log.line(
            "site:list_claims", "(the app's state)", "ok", (time.monotonic() - began) * 1000,
            f"{len(claims)} travel claim(s)",
        )
        if [c["title"] for c in claims] != [CLAIM["Claim title"]]:
            raise DemoFailure(f"list_claims answered {claims}, expected the submitted claim")


def read_claims_table(page: Any) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#claims tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )


def _print_page_diagnostics(errors: list[str], console: list[str]) -> None:
    """What the page said before a failure: the first thing anyone debugging it needs."""
    for error in errors:
        print(f"page error: {error}", file=sys.stderr)
    for line in console[-30:]:
        print(f"page console {line}", file=sys.stderr)


def _print_session_trail(db_path: Path) -> None:
    """The backend's audit trail of sessions (connects, drops and their reasons) after a failure."""
    import sqlite3

    try:
        with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as connection:
            rows = connection.execute(
                "SELECT at, event, session_id, request_id, tool, code, detail FROM audit"
                " WHERE event LIKE 'session_%' OR event LIKE 'connection_%' OR event = "
                "'frame_rejected'"
                " ORDER BY id"
            ).fetchall()
    except sqlite3.Error as error:
        print(f"(audit log unreadable: {error})", file=sys.stderr)
        return
    print("Backend audit trail of sessions:", file=sys.stderr)
    for at, event, session_id, request_id, tool, code, detail in rows:
        stamp = time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at * 1000) % 1000:03d}"
        fields = " ".join(
            f"{k}={v}"
            for k, v in (
                ("request", request_id),
                ("tool", tool),
                ("code", code),
                ("detail", detail),
            )
            if v
        )
        print(f"  {stamp} {event} {session_id or ''} {fields}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mao-embed demo", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--timeout", type=float, default=90.0, help="seconds to wait for the SDK session"
    )
    args = parser.parse_args(argv)

    print("Building SDK assets (cached after the first run)...", flush=True)
    ensure_built()
    with tempfile.TemporaryDirectory(prefix="mao-demo-") as tmp:
        config = ServerConfig(
            host="127.0.0.1",
            port=0,
            secret=random_secret(),
            demo=True,
            db_path=Path(tmp) / "audit.db",
        )
        server = start_in_thread(config)
        print(f"Backend listening on {server.url} (audit log {config.db_path})", flush=True)
        try:
            code = _drive(server.url, args.timeout, config.db_path)
        finally:
            server.stop()
        if code != 0:
            _print_session_trail(config.db_path)
        return code


def _drive(server_url: str, timeout: float, db_path: Path) -> int:
    from playwright.sync_api import sync_playwright

    log = ActionLog(started=time.monotonic())
    agent = AgentClient(server_url)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            console: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
            page.on("crash", lambda _page: errors.append("the page's renderer process crashed"))
            began = time.monotonic()
            page.goto(f"{server_url}/demo/")
            print(f"Opened {page.url} in headless Chromium ({chromium_path()})", flush=True)
            try:
                # The page registers its session at once; its Python runtime boots on first
                # use (SPEC E6), here when the user opens the panel.
                session = agent.wait_for_session(
                    user_id="demo-user", timeout=timeout, ready=None
                )
                print(
                    f"SDK session {session['sessionId']} registered after "
                    f"{time.monotonic() - began:.1f} s (runtime booted: {session['ready']})",
                    flush=True,
                )
                page.get_by_role("button", name="Open panel", exact=True).click()
                ready = page.evaluate("() => MaoChat.ready")
            except Exception as error:  # noqa: BLE001 - reported to the operator, then exit 1
                print(f"FAILED: the SDK did not become ready: {error}", file=sys.stderr)
                return 1
            print(
                f"The user opened the panel: page tools ready after {ready['bootMs']} ms of boot "
                f"({ready['mode']})",
                flush=True,
            )
            # The SDK asks the user before each action by default (SPEC P1); here the user
            # grants full access in the panel, with a real click, as a person would.
            page.get_by_role("radio", name="Full access", exact=True).click()
            page.get_by_role("radio", name="Full access", exact=True).and_(
                page.locator("[aria-checked=true]")
            ).wait_for()
            print("The user granted full access in the Mao Embed panel\n", flush=True)
            print(f"{'#':>4} {'tool':<14} {'target':<34} {'outcome':<22} {'time':>10}", flush=True)
            try:
                def on_drop() -> None:
                    _print_page_diagnostics(
                        errors, [line for line in console if "[mao-embed]" in line]
                    )
                    _print_session_trail(db_path)

                ScriptedAgent(agent, session["sessionId"], log, on_drop).run()
            except DemoFailure as failure:
                print(f"\nFAILED: {failure}", file=sys.stderr)
                _print_page_diagnostics(errors, console)
                return 1
            rows = read_claims_table(page)
            print("\nFinal page state: submitted claims table", flush=True)
            for row in rows:
                print("  | " + " | ".join(row) + " |", flush=True)
            if errors:
                print(f"Page errors: {errors}", file=sys.stderr)
            if rows != [EXPECTED_ROW]:
                print(
                    f"\nFAILED: the page shows {rows}, expected [{EXPECTED_ROW}]", file=sys.stderr
                )
                return 1
            print(
                f"\nOK: the page shows the submitted claim ({log.count} tool steps, "
                f"{time.monotonic() - began:.1f} s).",
                flush=True,
            )
            return 0
        finally:
            browser.close()
            agent.close()


if __name__ == "__main__":
    sys.exit(main())
