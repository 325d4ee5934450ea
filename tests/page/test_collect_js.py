"""collect.js mirrors a few of the scanner's Python tables to decide, in the page, which rows a
viewport-limited walk must keep (SPEC S1, S4). A copy that drifts from Python would drop the
rows an element's name depends on; these tests hold the copies equal."""

from __future__ import annotations

import re
from pathlib import Path

from mao_page.dom.roles import WIDGET_ROLES
from mao_page.snapshot import scanner

COLLECT_JS = Path(__file__).resolve().parents[2] / "loader_js" / "primitives" / "collect.js"


def _js_string_set(name: str) -> set[str]:
    source = COLLECT_JS.read_text(encoding="utf-8")
    match = re.search(rf"const {name} = new Set\(\[(.*?)\]\)", source, re.S)
    assert match, f"{name} not found in {COLLECT_JS}"
    return set(re.findall(r'"([^"]+)"', match.group(1)))


def test_widget_roles_in_the_page_walk_are_the_scanners() -> None:  # SPEC S1
    assert _js_string_set("WIDGET_ROLE_NAMES") == set(WIDGET_ROLES)


def test_listable_tags_in_the_page_walk_cover_the_scanners_native_controls() -> None:  # SPEC S1, S4
    # mayBeListed keeps every element the scanner may list by its tag alone (is_interactive's
    # native controls, every <input> but type=hidden, frames for their placeholders); a tag
    # missing here would leave an in-viewport control's subtree (its name) unread.
    listable = _js_string_set("LISTABLE_TAGS")
    assert scanner._NATIVE_INTERACTIVE | {"input", "iframe", "frame"} <= listable
