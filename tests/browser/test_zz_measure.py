"""Throwaway: action timings on the input-model page (not committed)."""
import statistics

import pytest
from frameworks import AgentView, fixture_body


@pytest.fixture
def view(reusable_pages) -> AgentView:
    return AgentView(
        reusable_pages.open("input-model", fixture_body("input_model.html"), title="Input model")
    )


def test_measure(view):
    rows = {}
    for tool, label, role, extra in [
        ("page_click", "Counted", "textbox", {}),
        ("page_hover", "Tools", "button", {}),
        ("page_hover", "Invoice 1", "link", {}),
        ("page_click", "Context file", "button", {"clickCount": 2}),
    ]:
        for _ in range(5):
            v = AgentView(view.embedded)
            r = v.do(tool, label, role, **extra)
            step = r["result"]["steps"][0]
            t = step["outcome"].get("timing", {})
            rows.setdefault(f"{tool} {label} {extra}", []).append(
                (step["durationMs"], t.get("checksMs"), t.get("actionMs"), t.get("settleMs"))
            )
    for key, values in rows.items():
        med = [statistics.median(v[i] for v in values) for i in range(4)]
        print("MEASURE", key, "total/checks/action/settle median ms:", med)
