"""The JS primitives read the tables they share with the page's Python from the module the
asset build generates (mao_page/dom/jstables.py), not from copies; collect.js still mirrors a few
of the scanner's rules to decide, in the page, which rows a viewport-limited walk must keep
(SPEC S1, S4). tests/browser/test_js_mirrors.py runs the generated tables in Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mao_page.dom import facts as F
from mao_page.dom import jstables, textrules
from mao_page.dom.roles import ITEM_CONTAINER_ROLES, ITEM_CONTAINER_ROWS, WIDGET_ROLES
from mao_page.snapshot import scanner

PRIMITIVES = Path(__file__).resolve().parents[2] / "loader_js" / "primitives"
COLLECT_JS = PRIMITIVES / "collect.js"


def _js_string_set(name: str) -> set[str]:
    source = COLLECT_JS.read_text(encoding="utf-8")
    match = re.search(rf"const {name} = new Set\(\[(.*?)\]\)", source, re.S)
    assert match, f"{name} not found in {COLLECT_JS}"
    return set(re.findall(r'"([^"]+)"', match.group(1)))


def _generated(name: str) -> str:
    match = re.search(rf"^const {name} = (.*);$", jstables.source(), re.M)
    assert match, f"{name} not generated"
    return match.group(1)


def test_the_generated_tables_hold_the_python_definitions() -> None:  # SPEC S1
    assert set(json.loads(_generated("WIDGET_ROLES").removeprefix("new Set(")[:-1])) == WIDGET_ROLES
    containers = json.loads(_generated("ITEM_CONTAINER_ROLES").removeprefix("new Set(")[:-1])
    assert set(containers) == ITEM_CONTAINER_ROLES  # SPEC S9
    assert int(_generated("ITEM_CONTAINER_ROWS")) == ITEM_CONTAINER_ROWS
    no_text = json.loads(_generated("NO_TEXT_TAGS").removeprefix("new Set(")[:-1])
    assert set(no_text) == textrules.NO_TEXT_TAGS
    assert json.loads(_generated("FACT_INT_COLUMNS")) == list(F.INT_COLUMNS + F.BOOL_COLUMNS)
    assert json.loads(_generated("FACT_STRING_COLUMNS")) == list(F.STRING_COLUMNS)
    assert f"OPTIONS: {F.OPTIONS}," in _generated("FACT")


def test_no_primitive_keeps_its_own_copy_of_a_generated_table() -> None:  # SPEC S1
    for path in PRIMITIVES.glob("*.js"):
        source = path.read_text(encoding="utf-8")
        # A fact cell by number, or a column list of numbers, instead of FACT.<NAME>.
        assert not re.search(r"\brow\[\d", source), path.name
        assert not re.search(r"const \w*COLUMNS?\w* = \[\s*\d", source), path.name
        for name in (
            "WIDGET_ROLES", "NO_TEXT_TAGS", "INLINE_DISPLAYS", "FACT", "ASCII_SPACE_RUN",
            "FIELD_CONTAINER_LEVELS", "FIELD_CONTAINER_ROWS", "ITEM_CONTAINER_ROLES",
            "ITEM_CONTAINER_ROWS",
        ):
            assert not re.search(rf"\bconst {name} =", source), (path.name, name)


def test_listable_tags_in_the_page_walk_cover_the_scanners_native_controls() -> None:  # SPEC S1, S4
    # mayBeListed keeps every element the scanner may list by its tag alone (is_interactive's
    # native controls, every <input> but type=hidden, frames for their placeholders); a tag
    # missing here would leave an in-viewport control's subtree (its name) unread.
    listable = _js_string_set("LISTABLE_TAGS")
    assert scanner._NATIVE_INTERACTIVE | {"input", "iframe", "frame"} <= listable
