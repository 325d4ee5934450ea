"""Resume after navigation against a fresh start-up, on a warm cache (SPEC B7).

One Chromium process with a warmed HTTP and code cache (a first page booted and closed). Each
run, alternating:

* **fresh**: a new tab opens the page (``goto`` to commit); the agent polls ``GET
  /api/sessions`` (10 ms) for the new session and calls ``page_inspect``, which boots the
  runtime. Time: from ``goto`` to the answer.
* **resume**: the same tab loads a second page of the site (``goto`` to commit); the agent
  calls ``page_inspect`` at once with the sessionId it already had: the call waits for the
  next page to resume the session and boots its runtime. Time: from ``goto`` to the answer.

Both include the boot on first use (the call triggers it) and the page's own load; the
difference is the session's registration and discovery. The goal (issue "journeys"): resume ≤
1.2 × fresh.
"""

from __future__ import annotations

import time
from typing import Any

from .runner import RunContext, describe, table

NAME = "tab_resume"
DESCRIPTION = "resume after navigation vs a fresh start-up (warm), goto -> first page_inspect"

_BODY = (
    "<form><label>City <input name=city></label><button>Save</button></form>"
    + "".join(f"<p>row {i} <a href='#r{i}'>link {i}</a></p>" for i in range(30))
)


def run(ctx: RunContext) -> dict[str, Any]:
    from mao_embed.testing import AgentClient, embed_snippet, page_html

    backend, pages = ctx.servers.backend, ctx.servers.pages
    agent = AgentClient(backend.url)
    token = backend.issue_token("bench-user", "bench-agent", origin=pages.origin)
    snippet = embed_snippet(
        backend.url, agent_id="bench-agent", user_id="bench-user", token=token
    )
    first = pages.add("/tab-first.html", page_html(_BODY, snippet, title="First"))
    second = pages.add("/tab-second.html", page_html(_BODY, snippet, title="Second"))
    fresh: list[float] = []
    resumed: list[float] = []
    context = ctx.cold_browser()
    try:
        warm = context.new_page()
        warm.goto(first)
        warm.evaluate("() => MaoChat.boot()")
        warm.close()
        for _ in range(ctx.warmup + ctx.runs):
            known = {s["sessionId"] for s in agent.sessions()}
            page = context.new_page()
            started = time.perf_counter()
            page.goto(first, wait_until="commit")
            session_id = _new_session(agent, known)
            answer = agent.call(session_id, "page_inspect")
            fresh_ms = (time.perf_counter() - started) * 1000
            assert answer["success"], answer
            started = time.perf_counter()
            page.goto(second, wait_until="commit")
            answer = agent.call(session_id, "page_inspect")
            resume_ms = (time.perf_counter() - started) * 1000
            assert answer["success"] and answer["result"]["title"] == "Second", answer
            page.close()
            fresh.append(fresh_ms)
            resumed.append(resume_ms)
    finally:
        ctx.close_browser(context)
        agent.close()
    fresh, resumed = fresh[ctx.warmup:], resumed[ctx.warmup:]
    ratio = [r / f for r, f in zip(resumed, fresh, strict=True)]
    return {"freshMs": describe(fresh), "resumeMs": describe(resumed), "ratio": describe(ratio)}


def _new_session(agent: Any, known: set[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for session in agent.sessions():
            if session["sessionId"] not in known:
                return str(session["sessionId"])
        time.sleep(0.01)
    raise TimeoutError("the fresh page's session was not listed within 60 s")


def summary_table(result: dict[str, Any]) -> str:
    rows = [
        [label, f"{result[key]['median']:.0f}", f"{result[key]['p90']:.0f}"]
        for label, key in (("fresh start-up, ms", "freshMs"), ("resume, ms", "resumeMs"))
    ]
    rows.append(["resume / fresh", f"{result['ratio']['median']:.2f}",
                 f"{result['ratio']['p90']:.2f}"])
    return table(["goto -> first page_inspect", "median", "p90"], rows)


def headline(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "freshMs": result["freshMs"]["median"],
        "resumeMs": result["resumeMs"]["median"],
        "ratio": result["ratio"]["median"],
    }
