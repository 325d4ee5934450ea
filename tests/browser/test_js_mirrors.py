"""The rules the JS primitives share with the page's Python, run on both sides on the same
inputs and held equal: Python in CPython, the primitives in Chromium, loaded on their own
with the tables the asset build generates from the Python (mao_page/dom/jstables.py).

White space: names keep NBSP (ASCII whitespace only collapses, as in Chromium's names and the
WPT accname cases); matching what an agent asked for treats every space alike (SPEC S3, A1).
The fact-row layout is facts.py's in the page and across the column transport (SPEC S1).
A cross-origin frame is reported, never an error (SPEC S6). Option matching folds the same
way in the page as in Python (SPEC A1).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mao_embed import assets
from mao_embed.testing import PageServer
from mao_page.dom import facts as F
from mao_page.dom import textrules
from mao_page.dom.roles import ITEM_CONTAINER_ROLES, ITEM_CONTAINER_ROWS, WIDGET_ROLES

EXPOSE = """
window.__mao = {
  MaoDom, squash, squashAny, fold, sameOriginDocument, FACT, FACT_COLUMNS,
  tables: { WIDGET_ROLES: [...WIDGET_ROLES], NO_TEXT_TAGS: [...NO_TEXT_TAGS],
            INLINE_DISPLAYS: [...INLINE_DISPLAYS], ITEM_CONTAINER_ROLES: [...ITEM_CONTAINER_ROLES],
            ITEM_CONTAINER_ROWS },
};
"""

# Every kind of space on either side of the rules, case mappings that differ between
# languages' naive implementations, and characters that look like spaces but are not.
TEXTS = [
    "", " ", "  a  ", "a\u00a0b", "\u00a0a\u00a0", "a \u00a0 b", "a\t\n\r\fb", "a\vb",
    "Jan\u00a01", "x\u2003y\u3000z", "a\u200bb", "a\u0085b", "a\u001cb", "a\ufeffb",
    "a\u2028b\u2029c", "\u202fnarrow\u205f", "\u1680ogham", "İSTANBUL", "ΟΔΟΣ", "Straße",
    "ǅemal", "ÀÉÎÕÜ", "Ｆｕｌｌ", "  Two   words\n", *textrules.ANY_WHITESPACE,
]


@pytest.fixture(scope="module")
def other_origin() -> Iterator[PageServer]:
    server = PageServer().start()
    server.add("/frame.html", "<!doctype html><p>Another origin</p>")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def page(mao_browser, mao_pages) -> Iterator[Any]:
    # A script file, as the loader is (screenshot.js reads document.currentScript.src).
    script = "(() => {\n" + assets.primitives_source() + EXPOSE + "\n})();"
    mao_pages.add("/mirrors.js", script, {"content-type": "text/javascript; charset=utf-8"})
    mao_pages.add(
        "/mirrors.html",
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<script src='/mirrors.js'></script></head><body></body></html>",
    )
    context = mao_browser.new_context(viewport={"width": 1000, "height": 800})
    page = context.new_page()
    page.goto(f"{mao_pages.origin}/mirrors.html")
    yield page
    context.close()


def _as_lists(cell: Any) -> Any:
    """A decoded cell as JSON has it (tuples as lists)."""
    return [_as_lists(c) for c in cell] if isinstance(cell, (list, tuple)) else cell


def _set_body(page: Any, html: str) -> None:
    page.evaluate("(html) => { document.body.innerHTML = html; }", html)


def test_the_generated_tables_are_the_python_definitions(page) -> None:  # SPEC S1
    tables = page.evaluate("() => window.__mao.tables")
    assert set(tables["WIDGET_ROLES"]) == WIDGET_ROLES
    assert set(tables["ITEM_CONTAINER_ROLES"]) == ITEM_CONTAINER_ROLES  # SPEC S9
    assert tables["ITEM_CONTAINER_ROWS"] == ITEM_CONTAINER_ROWS
    assert set(tables["NO_TEXT_TAGS"]) == textrules.NO_TEXT_TAGS
    assert set(tables["INLINE_DISPLAYS"]) == textrules.INLINE_DISPLAYS
    layout = page.evaluate("() => [window.__mao.FACT, window.__mao.FACT_COLUMNS]")
    assert layout[1] == F.COLUMNS
    assert {name: getattr(F, name) for name in layout[0]} == layout[0]


def test_white_space_rules_agree_on_every_kind_of_space(page) -> None:  # SPEC S3, A1
    ours = page.evaluate(
        """(texts) => {
          const m = window.__mao;
          return texts.map((t) => [m.squash(t), m.squashAny(t), m.fold(t)]);
        }""",
        TEXTS,
    )
    python = [[textrules.squash(t), textrules.squash_any(t), textrules.fold(t)] for t in TEXTS]
    assert ours == python
    # Names keep NBSP; matching does not; neither takes a zero-width space for a space.
    assert textrules.squash(" Jan\u00a01 ") == "Jan\u00a01"
    assert textrules.fold(" Jan\u00a01 ") == "jan 1"
    assert textrules.squash_any("a\u200bb") == "a\u200bb"


def test_text_facts_keep_nbsp_as_chromium_names_do(page) -> None:  # SPEC S3
    _set_body(
        page,
        "<button id='b'>Save\u00a0 now\n  please</button>"
        "<select id='s'><option id='o'>Jan\u00a0 1</option>"
        "<option>  Two\n words </option></select>",
    )
    row = page.evaluate("() => window.__mao.MaoDom.rowOf(document.getElementById('b'))")
    select = page.evaluate("() => window.__mao.MaoDom.rowOf(document.getElementById('s'))")
    shown = "Save\u00a0 now\n  please"
    assert row[F.OWN_TEXT] == textrules.squash(shown) == "Save\u00a0 now please"
    assert [o[1] for o in select[F.OPTIONS]] == ["Jan\u00a0 1", "Two words"]
    # Chromium's own accessible names of the same elements.
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("Accessibility.enable")
        names = []
        for element_id in ("b", "o"):
            expression = f"document.getElementById('{element_id}')"
            handle = cdp.send("Runtime.evaluate", {"expression": expression})
            nodes = cdp.send(
                "Accessibility.getPartialAXTree",
                {"objectId": handle["result"]["objectId"], "fetchRelatives": False},
            )["nodes"]
            names.append(nodes[0]["name"]["value"])
    finally:
        cdp.detach()
    assert names == [row[F.OWN_TEXT], select[F.OPTIONS][0][1]]


def test_fact_columns_are_where_facts_py_says_across_both_transports(page) -> None:  # SPEC S1
    _set_body(
        page,
        "<form id='f'><label for='n'>Name</label>"
        "<input id='n' name='who' title='Your name' placeholder='Ada' aria-label='Full name' "
        "aria-describedby='hint' autocomplete='given-name' required value='Grace'>"
        "<span id='hint' role='note'>As on your card</span>"
        "<img alt='' src='data:,'>"
        "<select id='s'><option value='a' selected>A</option></select></form>",
    )
    row = page.evaluate("() => window.__mao.MaoDom.rowOf(document.getElementById('n'))")
    assert len(row) == F.COLUMNS
    expected = {
        F.TAG: "input", F.ID: "n", F.NAME: "who", F.TITLE: "Your name", F.PLACEHOLDER: "Ada",
        F.ARIA_LABEL: "Full name", F.ARIA_DESCRIBEDBY: "hint", F.AUTOCOMPLETE: "given-name",
        F.REQUIRED: True, F.VALUE: "Grace", F.VALUE_ATTR: "Grace", F.CHECKED: -1, F.OPTIONS: 0,
        F.ALT: None, F.FRAME: "", F.DISABLED: False,
    }
    assert {column: row[column] for column in expected} == expected
    # The column transport decodes (facts.rows_from_columns) to the rows the walk made.
    walk = page.evaluate(
        """() => {
          const b64 = (bytes) => {
            let s = "";
            for (const b of bytes) s += String.fromCharCode(b);
            return btoa(s);
          };
          const raw = (t) => b64(new Uint8Array(t.buffer, t.byteOffset, t.byteLength));
          const dom = window.__mao.MaoDom;
          const c = dom.collectDocumentColumns(document, null, false, false).columns;
          return {
            count: c.count, ints: raw(c.ints), floats: raw(c.floats), strings: b64(c.strings),
            stringCount: c.stringCount, stringIndex: raw(c.stringIndex), json: b64(c.json),
            rows: b64(c.rowsJson()),
          };
        }"""
    )
    keys = ("ints", "floats", "strings", "stringIndex", "json", "rows")
    raw = {k: base64.b64decode(walk[k]) for k in keys}
    built = F.rows_from_columns(
        walk["count"], raw["ints"], raw["floats"], raw["strings"].decode(), walk["stringCount"],
        raw["stringIndex"], json.loads(raw["json"]),
    )
    assert built is not None
    rows, _scopes, _frames = built
    json_rows = json.loads(raw["rows"])[0]
    assert [_as_lists(r) for r in rows] == json_rows
    tags = [r[F.TAG] for r in rows]
    assert "input" in tags and rows[tags.index("input")][F.ARIA_LABEL] == "Full name"


def test_a_cross_origin_frame_is_reported_never_thrown(page, other_origin) -> None:  # SPEC S6
    page.evaluate(
        """(src) => new Promise((done) => {
          document.body.innerHTML =
            "<iframe id='x'></iframe><iframe id='same' srcdoc='<p>Here</p>'></iframe>";
          const frame = document.getElementById('x');
          frame.onload = () => done();
          frame.src = src;
        })""",
        f"{other_origin.origin}/frame.html",
    )
    page.wait_for_function(
        "() => document.getElementById('same').contentDocument?.body?.textContent === 'Here'"
    )
    found = page.evaluate(
        """() => {
          const m = window.__mao;
          const x = document.getElementById('x');
          const same = document.getElementById('same');
          x.focus();
          const walk = m.MaoDom.collectDocument(document, null, null);
          return {
            cross: m.sameOriginDocument(x), same: !!m.sameOriginDocument(same),
            rows: walk.facts.filter((r) => r[m.FACT.TAG] === 'iframe')
              .map((r) => r[m.FACT.FRAME]),
            frames: walk.frames.length,
            active: m.MaoDom.deepActiveElement(document, null).localName,
          };
        }"""
    )
    assert found == {
        "cross": None, "same": True, "rows": ["cross", "same"], "frames": 2, "active": "iframe",
    }


OPTION_TEXTS = [
    "Jan\u00a01", "jan 1 ", "JAN\u2003 1", "Jan1", "Straße", "STRASSE", "İstanbul", "ΟΔΟΣ",
]
WANTED = ["jan 1", "Jan\u00a01", "straße", "strasse", "i̇stanbul", "οδος", "nothing"]


def test_option_matching_in_the_page_folds_as_python_does(page) -> None:  # SPEC A1
    _set_body(page, "".join(f"<div id='o{i}'>{t}</div>" for i, t in enumerate(OPTION_TEXTS)))
    in_page = page.evaluate(
        """(wanted) => wanted.map((w) =>
          window.__mao.MaoDom.choicesIn([document.body], w, null, null).map((n) => n.id))""",
        WANTED,
    )
    # innerText is the text as rendered; these have no layout-dependent white space.
    fold = textrules.fold
    python = [[f"o{i}" for i, t in enumerate(OPTION_TEXTS) if fold(t) == fold(w)] for w in WANTED]
    assert in_page == python
    assert python[0] == ["o0", "o1", "o2"]  # which one is for the caller to decide (ambiguous)
