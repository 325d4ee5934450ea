"""Per-action latency: click, hover, fill, and select on a portal combobox (issue 4).

The same page, the same browser run: our tools (timed in the page by the executor and split
into checks / action / settle) versus Playwright performing the same action through CDP
(timed from Python, so it includes its round trips). Playwright does not wait for the page to
settle; ours does by design (seed 000 §4: 250 ms minimum, 500 ms quiet window), so the ratio
that compares like with like is checks + action versus Playwright; the settle time is shown
on its own.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from .runner import RunContext, describe, fmt_ms, fmt_ratio, table

NAME = "actions"
DESCRIPTION = "click / hover / fill / portal-combobox select: ours (checks, action, settle) vs Playwright"

PAGE_BODY = """
<main>
  <h1>Orders</h1>
  <button type="button" id="btn" onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Refresh</button>
  <label>Customer <input id="customer"></label>
  <label id="city-label">City</label>
  <div role="combobox" id="city" tabindex="0" aria-labelledby="city-label" aria-expanded="false"
       aria-controls="city-list" aria-haspopup="listbox" style="display:inline-block;min-width:160px;border:1px solid #888;padding:4px">Choose</div>
</main>
<script>
  // A combobox whose listbox renders in a body-level portal, as component libraries do.
  const box = document.getElementById("city");
  box.addEventListener("click", () => {
    const open = box.getAttribute("aria-expanded") === "true";
    document.getElementById("city-list")?.remove();
    if (open) { box.setAttribute("aria-expanded", "false"); return; }
    const list = document.createElement("ul");
    list.id = "city-list"; list.setAttribute("role", "listbox");
    list.style.cssText = "position:absolute;left:20px;top:200px;background:#fff;border:1px solid #888;margin:0;padding:0;list-style:none";
    for (const name of ["Beijing", "Hangzhou", "Shanghai", "Shenzhen"]) {
      const li = document.createElement("li");
      li.setAttribute("role", "option"); li.textContent = name; li.style.padding = "4px 8px";
      li.addEventListener("click", () => { box.textContent = name; box.setAttribute("aria-expanded", "false"); list.remove(); });
      list.appendChild(li);
    }
    document.body.appendChild(list);
    box.setAttribute("aria-expanded", "true");
  });
</script>
"""

ACTIONS = ("click", "hover", "fill", "select")


def _ref(snapshot: dict[str, Any], label: str) -> dict[str, str]:
    [element] = [e for e in snapshot["elements"] if e["label"] == label]
    return {"snapshotId": snapshot["snapshotId"], "elementId": element["elementId"]}


def _ours(agent: Any, session: str, action: str, n: int) -> dict[str, float]:
    snapshot = agent.call(session, "page_inspect")["result"]
    if action == "click":
        result = agent.call(session, "page_click", _ref(snapshot, "Refresh"))
    elif action == "hover":
        result = agent.call(session, "page_hover", _ref(snapshot, "Customer"))
    elif action == "fill":
        result = agent.call(session, "page_fill", {**_ref(snapshot, "Customer"), "value": f"Customer {n}"})
    else:
        city = ["Beijing", "Hangzhou", "Shanghai", "Shenzhen"][n % 4]
        result = agent.call(session, "page_select", {**_ref(snapshot, "City"), "values": [city]})
    if not result.get("success"):
        raise RuntimeError(f"{action} failed: {result.get('error')}")
    step = result["result"]["steps"][0]
    timing = step["outcome"].get("timing", {})
    return {
        "totalMs": step["durationMs"],
        "checksMs": timing.get("checksMs", 0.0),
        "actionMs": timing.get("actionMs", 0.0),
        "settleMs": timing.get("settleMs", 0.0),
    }


def _playwright(page: Any, action: str, n: int) -> float:
    began = time.perf_counter()
    if action == "click":
        page.click("#btn")
    elif action == "hover":
        page.hover("#customer")
    elif action == "fill":
        page.fill("#customer", f"Customer {n}")
    else:
        city = ["Beijing", "Hangzhou", "Shanghai", "Shenzhen"][n % 4]
        page.click("#city")
        page.click(f"#city-list [role=option]:text-is('{city}')")
    return (time.perf_counter() - began) * 1000


def run(ctx: RunContext) -> dict[str, Any]:
    from mao_embed.testing import (
        CHROMIUM_ARGS,
        AgentClient,
        chromium_path,
        embed_snippet,
        page_html,
    )

    srv = ctx.servers
    token = srv.backend.issue_token("bench-actions", "bench-agent", origin=srv.pages.origin)
    url = srv.pages.add(
        "/bench-actions.html",
        page_html(PAGE_BODY, embed_snippet(srv.backend.url, agent_id="bench-agent", user_id="bench-actions", token=token)),
    )
    agent = AgentClient(srv.backend.url)
    browser = ctx.playwright.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS))
    samples: dict[str, dict[str, list[float]]] = {a: {"ours": [], "checks": [], "act": [], "settle": [], "checksAndAction": [], "playwright": []} for a in ACTIONS}
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        known = {s["sessionId"] for s in agent.sessions()}
        page.goto(url)
        page.evaluate("() => MaoChat.ready")
        session = agent.wait_for_session(url=url, exclude=known)["sessionId"]
        # Act as the user: grant full access in the panel (per_action would put a confirmation
        # card before every measured action).
        page.get_by_role("radio", name="Full access", exact=True).click()
        page.wait_for_function("() => true")
        # All of ours first: Playwright's input is real user input, which pauses an SDK task
        # (takeover, SPEC U3), so the two must not interleave.
        for n in range(ctx.warmup + ctx.runs):
            for action in ACTIONS:
                ours = _ours(agent, session, action, n)
                if n < ctx.warmup:
                    continue
                bucket = samples[action]
                bucket["ours"].append(ours["totalMs"])
                bucket["checks"].append(ours["checksMs"])
                bucket["act"].append(ours["actionMs"])
                bucket["settle"].append(ours["settleMs"])
                bucket["checksAndAction"].append(ours["checksMs"] + ours["actionMs"])
            ctx.log(f"[bench] actions: ours, run {n + 1}/{ctx.warmup + ctx.runs}")
        for n in range(ctx.warmup + ctx.runs):
            for action in ACTIONS:
                theirs = _playwright(page, action, n)
                if n >= ctx.warmup:
                    samples[action]["playwright"].append(theirs)
    finally:
        browser.close()
        agent.close()
    summary = {}
    for action, bucket in samples.items():
        stats = {name: describe(values) for name, values in bucket.items()}
        pw = statistics.median(bucket["playwright"])
        stats["ratioChecksAndActionVsPlaywright"] = statistics.median(bucket["checksAndAction"]) / pw if pw else None
        stats["ratioTotalVsPlaywright"] = statistics.median(bucket["ours"]) / pw if pw else None
        summary[action] = stats
    return {"runs": ctx.runs, "summary": summary, "samples": samples}


def headline(result: dict[str, Any]) -> dict[str, Any]:
    return {
        action: {
            "checksAndActionMs": stats["checksAndAction"]["median"],
            "settleMs": stats["settle"]["median"],
            "playwrightMs": stats["playwright"]["median"],
            "ratioChecksAndActionVsPlaywright": stats["ratioChecksAndActionVsPlaywright"],
        }
        for action, stats in result["summary"].items()
    }


def summary_table(result: dict[str, Any]) -> str:
    rows = []
    for action, stats in result["summary"].items():
        rows.append([
            action,
            fmt_ms(stats["checks"]["median"]),
            fmt_ms(stats["act"]["median"]),
            fmt_ms(stats["settle"]["median"]),
            fmt_ms(stats["ours"]["median"]),
            fmt_ms(stats["playwright"]["median"]),
            fmt_ratio(stats["ratioChecksAndActionVsPlaywright"]),
        ])
    return "Per-action latency (medians)\n" + table(
        ["action", "checks", "action", "settle", "ours total", "Playwright", "checks+action / PW"], rows
    )
