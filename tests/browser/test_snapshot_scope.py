"""Snapshot scope in real Chromium (SPEC S6): same-origin iframes (nested), open shadow roots
with slots, cross-origin iframes and closed shadow roots as placeholders, the SDK host."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_helpers import ref
from mao_embed.testing import PageServer

INNER = """<!doctype html><html><body style="margin:0">
<label>Card holder <input id="holder" name="holder"></label>
<iframe src="/frame-deep.html" title="Deep" style="border:0;width:300px;height:80px"></iframe>
</body></html>"""
DEEP = """<!doctype html><html><body style="margin:0"><button
  onclick="this.textContent='Deep clicked'">Deep button</button></body></html>"""


@pytest.fixture(scope="module")
def other_origin() -> Iterator[PageServer]:
    server = PageServer().start()
    server.add("/pay.html", "<!doctype html><button>Pay now</button>")
    yield server
    server.stop()


def _frames_page(mao_pages: PageServer) -> str:
    mao_pages.add("/frame-inner.html", INNER)
    mao_pages.add("/frame-deep.html", DEEP)
    return (
        '<div style="height:40px">Top</div>'
        '<iframe src="/frame-inner.html" title="Payment details" '
        'style="position:absolute;left:100px;top:200px;width:400px;height:200px;border:5px solid '
        'black;padding:10px"></iframe>'
    )


def test_elements_in_nested_same_origin_iframes_are_listed_with_top_viewport_rects(
    mao_embed, mao_pages
):
    embedded = mao_embed(_frames_page(mao_pages))
    embedded.page.wait_for_function(
        "() => document.querySelector('iframe').contentDocument?.querySelector('iframe')"
        "?.contentDocument?.querySelector('button')"
    )
    snapshot = embedded.inspect()
    holder = embedded.find(snapshot, label="Card holder")
    deep = embedded.find(snapshot, label="Deep button")
    assert holder["frame"].startswith("frame 1") and "Payment details" in holder["frame"]
    assert deep["frame"] != holder["frame"] and deep["frame"] != "main"
    # The inner frame's content box starts at 100 + 5 (border) + 10 (padding).
    expected_x = embedded.page.evaluate(
        "() => { const f = document.querySelector('iframe'); const r = f.getBoundingClientRect();"
        " const i = f.contentDocument.querySelector('#holder').getBoundingClientRect(); return r.x "
        "+ 15 + i.x; }"
    )
    assert abs(holder["rect"]["x"] - expected_x) < 1
    assert holder["rect"]["y"] > 200


def test_a_button_in_a_nested_iframe_can_be_clicked_through_its_ref(mao_embed, mao_pages):
    embedded = mao_embed(_frames_page(mao_pages))
    embedded.page.wait_for_function(
        "() => document.querySelector('iframe').contentDocument?.querySelector('iframe')"
        "?.contentDocument?.querySelector('button')"
    )
    snapshot = embedded.inspect()
    result = embedded.call("page_click", **ref(snapshot, "Deep button"))
    assert result["success"], result
    text = embedded.page.evaluate(
        "() => document.querySelector('iframe').contentDocument.querySelector('iframe')"
        ".contentDocument.querySelector('button').textContent"
    )
    assert text == "Deep clicked"


def test_cross_origin_iframe_is_an_opaque_placeholder_that_refuses_actions(mao_embed, other_origin):
    embedded = mao_embed(
        f'<iframe src="{other_origin.origin}/pay.html" title="Checkout"></iframe><button>'
        f"Local</button>"
    )
    snapshot = embedded.inspect()
    placeholder = embedded.find(snapshot, label="Checkout")
    assert placeholder["kind"] == "opaque" and placeholder["opaque"] == "cross_origin_frame"
    assert "Pay now" not in str(snapshot)
    result = embedded.call("page_click", **ref(snapshot, "Checkout"))
    assert result["success"] is False
    assert result["error"]["code"] == "cross_origin_frame"


SHADOW = """
<div id="host"></div>
<script>
const root = document.getElementById('host').attachShadow({mode: 'open'});
root.innerHTML = '<label>Inside <input id="in-shadow"></label>'
  + '<nav><slot name="b"></slot><slot name="a"></slot></nav>';
</script>
"""


def test_open_shadow_root_fields_are_listed_and_slots_follow_assignment_order(mao_embed):
    body = SHADOW.replace(
        '<div id="host"></div>',
        '<div id="host"><a href="#a" slot="a">Alpha</a><a href="#b" slot="b">Beta</a></div>',
    )
    embedded = mao_embed(body)
    snapshot = embedded.inspect(format="text")
    labels = [e["label"] for e in snapshot["elements"]]
    assert "Inside" in labels
    # Composed order: the slot named "b" comes first in the shadow tree.
    assert labels.index("Beta") < labels.index("Alpha")
    filled = embedded.call("page_fill", **ref(snapshot, "Inside"), value="shadow value")
    assert filled["success"], filled
    assert (
        embedded.page.evaluate(
            "() => document.getElementById('host').shadowRoot.getElementById('in-shadow').value"
        )
        == "shadow value"
    )


CLOSED = """
<script>
customElements.define('secure-pad', class extends HTMLElement {
  constructor() { super(); const r = this.attachShadow({mode: 'closed'});
    r.innerHTML = '<button style="width:120px;height:30px">Secret</button>'; }
});
</script>
<secure-pad aria-label="PIN pad"></secure-pad>
<button>Visible</button>
"""


def test_detectable_closed_shadow_host_is_a_placeholder_that_refuses_actions(mao_embed):
    embedded = mao_embed(CLOSED)
    snapshot = embedded.inspect()
    pad = embedded.find(snapshot, label="PIN pad")
    assert pad["opaque"] == "closed_shadow_root"
    assert "Secret" not in str(snapshot["elements"])
    result = embedded.call("page_click", **ref(snapshot, "PIN pad"))
    assert result["error"]["code"] == "closed_shadow_root"


def test_sdk_host_never_appears_and_ignored_subtrees_are_left_out(mao_embed):
    embedded = mao_embed(
        "<button>Keep</button><div data-mao-ignore><button>Internal admin</button></div>"
        '<label>Notes <input data-mao-private value="secret note"></label>'
    )
    snapshot = embedded.inspect(format="text")
    labels = {e["label"] for e in snapshot["elements"]}
    assert labels == {"Keep", "Notes"}
    notes = embedded.find(snapshot, label="Notes")
    assert notes.get("value") is None
    assert "secret note" not in snapshot["text"] and "Internal admin" not in snapshot["text"]
    assert "Mao Embed" not in snapshot["text"]
