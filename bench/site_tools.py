"""Site tools: a read-only WebMCP tool's round trip vs ``page_observe``'s on the same page.

One Chromium page with the SDK, booted, on the page server (cross-origin, as on a real site);
its script registers ``order_status``, a read-only tool answering a small JSON object at once.
Within each run, alternately, ``CALLS`` times each, through the agent HTTP API (the wall time
of the POST, from the agent's side):

* **site tool**: ``POST /api/sessions/{id}/site-tools/order_status`` — the backend, the page's
  runtime (schema check, authorization: read-only, no card), the loader's registry, the
  tool's ``execute``, the answer;
* **page_observe** (the anchor, goal <= 1.2x): ``POST .../tools/page_observe``, the cheapest
  page tool, on the same page, same session.

Reported: the medians of each run's median, their ratio, and the median of the per-run ratios.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from .runner import RunContext, describe, fmt_ratio, table

NAME = "site_tools"
DESCRIPTION = "a read-only site tool's round trip vs page_observe's, same page (HTTP API)"
GOAL_RATIO = 1.2
CALLS = 20

BODY = """
<main><h1>Orders</h1>
<table id="orders"><tbody></tbody></table>
<form><label>Order <input name="order"></label><button type="button">Look up</button></form>
</main>
<script>
const rows = document.querySelector("#orders tbody");
for (let i = 0; i < 200; i++) {
  const row = rows.insertRow();
  row.insertCell().textContent = "Order " + i;
  row.insertCell().textContent = i % 3 ? "shipped" : "pending";
}
window.addEventListener("load", () => {
  document.modelContext.registerTool({
    name: "order_status", description: "Look up an order's status",
    inputSchema: {type: "object", properties: {order: {type: "string"}}, required: ["order"]},
    annotations: {readOnlyHint: true},
    execute: ({order}) => ({order, status: "shipped"}),
  });
});
</script>
"""


def _timed(call: Any) -> float:
    began = time.perf_counter()
    answer = call()
    elapsed = (time.perf_counter() - began) * 1000
    if not answer.get("success"):
        raise RuntimeError(f"bench call failed: {answer}")
    return elapsed


def run(ctx: RunContext) -> dict[str, Any]:
    from mao_embed.testing import AgentClient, embed_snippet, page_html

    srv = ctx.servers
    agent = AgentClient(srv.backend.url)
    token = srv.backend.issue_token("bench-site", "bench-agent", origin=srv.pages.origin)
    snippet = embed_snippet(srv.backend.url, agent_id="bench-agent", user_id="bench-site",
                            token=token)
    url = srv.pages.add("/bench-site-tools.html", page_html(BODY, snippet))
    browser = ctx.cold_browser()
    try:
        page = browser.new_page()
        known = {s["sessionId"] for s in agent.sessions()}
        page.goto(url)
        page.evaluate("() => MaoChat.boot()")
        session = agent.wait_for_session(url=url, exclude=known)["sessionId"]
        deadline = time.monotonic() + 30
        while not agent.site_tools(session):
            if time.monotonic() > deadline:
                raise RuntimeError("the page's site tool was never listed")
            time.sleep(0.05)
        site_runs: list[float] = []
        observe_runs: list[float] = []
        ratios: list[float] = []
        for n in range(ctx.warmup + ctx.runs):
            site: list[float] = []
            observe: list[float] = []
            for _ in range(CALLS):
                site.append(_timed(lambda: agent.call_site_tool(
                    session, "order_status", {"order": "42"})))
                observe.append(_timed(lambda: agent.call(session, "page_observe", {})))
            if n >= ctx.warmup:
                site_runs.append(statistics.median(site))
                observe_runs.append(statistics.median(observe))
                ratios.append(site_runs[-1] / observe_runs[-1])
            ctx.log(f"[bench] site_tools: run {n + 1}/{ctx.warmup + ctx.runs}")
    finally:
        ctx.close_browser(browser)
        agent.close()
    site_median = statistics.median(site_runs)
    observe_median = statistics.median(observe_runs)
    return {
        "callsPerRun": CALLS,
        "stats": {"siteToolMs": describe(site_runs), "observeMs": describe(observe_runs)},
        "siteOverObserve": site_median / observe_median,
        "siteOverObservePerRun": statistics.median(ratios),
        "goalRatio": GOAL_RATIO,
    }


def headline(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "siteToolMedianMs": result["stats"]["siteToolMs"]["median"],
        "observeMedianMs": result["stats"]["observeMs"]["median"],
        "siteOverObserve": round(result["siteOverObserve"], 2),
        "siteOverObservePerRun": round(result["siteOverObservePerRun"], 2),
    }


def summary_table(result: dict[str, Any]) -> str:
    s = result["stats"]
    return "site_tools (HTTP round trip, median of per-run medians)\n" + table(
        ["site tool", "page_observe", "site / observe", "per run", "goal"],
        [[
            f'{s["siteToolMs"]["median"]:.1f} ms',
            f'{s["observeMs"]["median"]:.1f} ms',
            fmt_ratio(result["siteOverObserve"]),
            fmt_ratio(result["siteOverObservePerRun"]),
            f"<= {GOAL_RATIO}x",
        ]],
    )
