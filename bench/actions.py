"""Per-action latency: click, hover, fill, and select on a portal combobox; and per widget
kind on a real component library (Ant Design 5, the widget matrix's page, tests/browser/widgets).

The same page, the same browser run: our tools (timed in the page by the executor and split
into checks / action / settle) versus Playwright performing the same action through CDP
(timed from Python, so it includes its round trips). Playwright does not wait for the page to
settle; ours does by design (SPEC A4: 250 ms minimum, 500 ms quiet window), so the ratio
that compares like with like is checks + action versus Playwright; the settle time is shown
on its own.

Widget kinds: each kind is one tool call of ours (``page_select`` / ``page_fill`` on a fresh
snapshot's ref, checks + action from the step's ``timing``, the final settle excluded)
against Playwright's idiomatic locator flow for the same widget (open, scroll or type, click;
what a test author writes for that library), on the same page in the same run, the app
remounted before each measured call.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from .runner import REPO_DIR, RunContext, describe, fmt_ms, fmt_ratio, table

NAME = "actions"
DESCRIPTION = (
    "click / hover / fill / portal-combobox select, and antd widget kinds: ours (checks, "
    "action, settle) vs Playwright"
)

PAGE_BODY = """
<main>
  <h1>Orders</h1>
  <button type="button" id="btn"
    onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Refresh</button>
  <label>Customer <input id="customer"></label>
  <label id="city-label">City</label>
  <div role="combobox" id="city" tabindex="0" aria-labelledby="city-label" aria-expanded="false"
       aria-controls="city-list" aria-haspopup="listbox"
         style="display:inline-block;min-width:160px;border:1px solid #888;padding:4px">Choose</div>
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
    list.style.cssText = "position:absolute;left:20px;top:200px;background:#fff;"
      + "border:1px solid #888;margin:0;padding:0;list-style:none";
    for (const name of ["Beijing", "Hangzhou", "Shanghai", "Shenzhen"]) {
      const li = document.createElement("li");
      li.setAttribute("role", "option"); li.textContent = name; li.style.padding = "4px 8px";
      li.addEventListener("click", () => { box.textContent = name;
        box.setAttribute("aria-expanded", "false"); list.remove(); });
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
        result = agent.call(
            session, "page_fill", {**_ref(snapshot, "Customer"), "value": f"Customer {n}"}
        )
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


# Widget kinds on the antd matrix page: (kind, our tool, target label, role, arguments).
WIDGETS: tuple[tuple[str, str, str, str | None, dict[str, Any]], ...] = (
    ("select", "page_select", "City", "combobox", {"values": ["Berlin"]}),
    ("select-multiple", "page_select", "Tags", "combobox", {"values": ["Red", "Blue"]}),
    ("select-search", "page_select", "Country", "combobox", {"values": ["Zimbabwe"]}),
    ("select-virtual-far", "page_select", "Currency", "combobox", {"values": ["USD"]}),
    ("cascader", "page_select", "Region", "combobox", {"values": ["Zhejiang", "Hangzhou"]}),
    ("tree-select", "page_select", "Department", "combobox", {"values": ["Backend"]}),
    ("date", "page_fill", "Start date", None, {"value": "2024-05-17"}),
    ("slider", "page_fill", "Volume", "slider", {"value": "30"}),
)


def _antd_option(page: Any, label: str) -> Any:
    return page.locator(".ant-select-dropdown:visible").get_by_text(label, exact=True)


def _playwright_widget(page: Any, kind: str) -> None:
    """What a Playwright test of an antd form writes for each widget."""
    if kind == "select":
        page.get_by_label("City").click()
        _antd_option(page, "Berlin").click()
    elif kind == "select-multiple":
        page.get_by_label("Tags").click()
        _antd_option(page, "Red").click()
        _antd_option(page, "Blue").click()
        page.keyboard.press("Escape")
    elif kind == "select-search":
        page.get_by_label("Country").fill("Zimbabwe")
        _antd_option(page, "Zimbabwe").click()
    elif kind == "select-virtual-far":
        page.get_by_label("Currency").click()
        option = _antd_option(page, "USD")
        page.locator(".ant-select-dropdown:visible .rc-virtual-list-holder").hover()
        while not option.is_visible():
            page.mouse.wheel(0, 200)
        option.click()
    elif kind == "cascader":
        page.get_by_label("Region").click()
        page.locator(".ant-cascader-menu-item", has_text="Zhejiang").click()
        page.locator(".ant-cascader-menu-item", has_text="Hangzhou").click()
    elif kind == "tree-select":
        page.get_by_label("Department").click()
        page.locator(".ant-select-tree-treenode", has_text="Engineering").locator(
            ".ant-select-tree-switcher"
        ).click()
        page.locator(".ant-select-tree-title", has_text="Backend").click()
    elif kind == "date":
        page.get_by_label("Start date").fill("2024-05-17")
        page.get_by_label("Start date").press("Enter")
    elif kind == "slider":
        handle = page.get_by_role("slider")
        for _ in range(30):
            handle.press("ArrowRight")


def _ours_widget(agent: Any, session: str, kind: str) -> dict[str, float]:
    _, tool, label, role, args = next(w for w in WIDGETS if w[0] == kind)
    snapshot = agent.call(session, "page_inspect", {"includeOffscreen": True})["result"]
    [element] = [
        e
        for e in snapshot["elements"]
        if e["label"] == label and (role is None or e["role"] == role)
    ]
    ref = {"snapshotId": snapshot["snapshotId"], "elementId": element["elementId"]}
    result = agent.call(session, tool, {**ref, **args})
    if not result.get("success"):
        raise RuntimeError(f"{kind} failed: {result.get('error')}")
    timing = result["result"]["steps"][0]["outcome"].get("timing", {})
    return {
        "checksAndAction": timing.get("checksMs", 0.0) + timing.get("actionMs", 0.0),
        "settle": timing.get("settleMs", 0.0),
    }


def _widget_page(ctx: RunContext) -> str:
    """The antd matrix page on the page server, its npm packages installed at their pins."""
    import sys

    widgets_dir = REPO_DIR / "tests" / "browser" / "widgets"
    sys.path[:0] = [str(widgets_dir.parent), str(widgets_dir)]
    from frameworks import serve_vendor  # type: ignore[import-not-found]
    from mao_embed.testing import embed_snippet, page_html

    srv = ctx.servers
    token = srv.backend.issue_token("bench-widgets", "bench-agent", origin=srv.pages.origin)
    body = (widgets_dir / "pages" / "antd.html").read_text(encoding="utf-8")
    snippet = embed_snippet(
        srv.backend.url, agent_id="bench-agent", user_id="bench-widgets", token=token
    )
    return srv.pages.add(
        "/bench-widgets.html", page_html(body, snippet, head=serve_vendor(srv.pages, "antd"))
    )


def _widget_kinds(ctx: RunContext, browser: Any, agent: Any) -> dict[str, Any]:
    url = _widget_page(ctx)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    known = {s["sessionId"] for s in agent.sessions()}
    page.goto(url)
    page.evaluate("() => MaoChat.boot()")
    session = agent.wait_for_session(url=url, exclude=known)["sessionId"]
    page.get_by_role("radio", name="Full access", exact=True).click()
    samples: dict[str, dict[str, list[float]]] = {
        kind: {"checksAndAction": [], "settle": [], "playwright": []} for kind, *_ in WIDGETS
    }
    for n in range(ctx.warmup + ctx.runs):  # ours first: Playwright's real input pauses a task
        for kind, *_ in WIDGETS:
            page.evaluate("() => window.__mount()")
            ours = _ours_widget(agent, session, kind)
            if n >= ctx.warmup:
                samples[kind]["checksAndAction"].append(ours["checksAndAction"])
                samples[kind]["settle"].append(ours["settle"])
        ctx.log(f"[bench] actions: widget kinds, ours, run {n + 1}/{ctx.warmup + ctx.runs}")
    for n in range(ctx.warmup + ctx.runs):
        for kind, *_ in WIDGETS:
            page.evaluate("() => window.__mount()")
            began = time.perf_counter()
            _playwright_widget(page, kind)
            if n >= ctx.warmup:
                samples[kind]["playwright"].append((time.perf_counter() - began) * 1000)
    page.close()
    summary = {}
    for kind, bucket in samples.items():
        stats = {name: describe(values) for name, values in bucket.items()}
        pw = statistics.median(bucket["playwright"])
        stats["ratioChecksAndActionVsPlaywright"] = (
            statistics.median(bucket["checksAndAction"]) / pw if pw else None
        )
        summary[kind] = stats
    return {"summary": summary, "samples": samples}


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
        page_html(
            PAGE_BODY,
            embed_snippet(
                srv.backend.url, agent_id="bench-agent", user_id="bench-actions", token=token
            ),
        ),
    )
    agent = AgentClient(srv.backend.url)
    browser = ctx.playwright.chromium.launch(
        executable_path=chromium_path(), args=list(CHROMIUM_ARGS)
    )
    samples: dict[str, dict[str, list[float]]] = {
        a: {
            "ours": [],
            "checks": [],
            "act": [],
            "settle": [],
            "checksAndAction": [],
            "playwright": [],
        }
        for a in ACTIONS
    }
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        known = {s["sessionId"] for s in agent.sessions()}
        page.goto(url)
        page.evaluate("() => MaoChat.boot()")
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
        page.close()
        widgets = _widget_kinds(ctx, browser, agent)
    finally:
        browser.close()
        agent.close()
    summary = {}
    for action, bucket in samples.items():
        stats = {name: describe(values) for name, values in bucket.items()}
        pw = statistics.median(bucket["playwright"])
        stats["ratioChecksAndActionVsPlaywright"] = (
            statistics.median(bucket["checksAndAction"]) / pw if pw else None
        )
        stats["ratioTotalVsPlaywright"] = statistics.median(bucket["ours"]) / pw if pw else None
        summary[action] = stats
    return {"runs": ctx.runs, "summary": summary, "samples": samples, "widgets": widgets}


def headline(result: dict[str, Any]) -> dict[str, Any]:
    widgets = {
        f"widget:{kind}": {
            "checksAndActionMs": stats["checksAndAction"]["median"],
            "playwrightMs": stats["playwright"]["median"],
            "ratioChecksAndActionVsPlaywright": stats["ratioChecksAndActionVsPlaywright"],
        }
        for kind, stats in result.get("widgets", {}).get("summary", {}).items()
    }
    return widgets | {
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
        rows.append(
            [
                action,
                fmt_ms(stats["checks"]["median"]),
                fmt_ms(stats["act"]["median"]),
                fmt_ms(stats["settle"]["median"]),
                fmt_ms(stats["ours"]["median"]),
                fmt_ms(stats["playwright"]["median"]),
                fmt_ratio(stats["ratioChecksAndActionVsPlaywright"]),
            ]
        )
    text = "Per-action latency (medians)\n" + table(
        ["action", "checks", "action", "settle", "ours total", "Playwright", "checks+action / PW"],
        rows,
    )
    widget_rows = [
        [
            kind,
            fmt_ms(stats["checksAndAction"]["median"]),
            fmt_ms(stats["settle"]["median"]),
            fmt_ms(stats["playwright"]["median"]),
            fmt_ratio(stats["ratioChecksAndActionVsPlaywright"]),
        ]
        for kind, stats in result.get("widgets", {}).get("summary", {}).items()
    ]
    if widget_rows:
        text += (
            "\n\nPer widget kind on Ant Design 5 (medians; ours settle excluded from the ratio)\n"
            + table(
                ["widget", "ours checks+action", "ours settle", "Playwright", "ours / PW"],
                widget_rows,
            )
        )
    return text
