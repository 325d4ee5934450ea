"""Stale refs in real Chromium (SPEC R1-R3): after a React-style re-render, an attribute or
name change, an SPA route change and a reload, an old ref is refused with ``stale_ref`` and
nothing is done to any element; page versions move with mutations and navigations."""

from __future__ import annotations

from browser_helpers import ref

APP = """
<div id="app"><button id="buy"
  onclick="window.clicks = (window.clicks || 0) + 1">Buy now</button></div>
<script>window.clicks = 0;</script>
"""


def _clicks(page) -> int:
    return page.evaluate("() => window.clicks || 0")


def test_react_style_rerender_makes_the_ref_stale_and_suggests_without_acting(mao_embed):
    embedded = mao_embed(APP)
    snapshot = embedded.inspect()
    old = ref(snapshot, "Buy now")
    embedded.page.evaluate(
        "() => { const app = document.getElementById('app'); app.replaceChildren(); "
        'app.insertAdjacentHTML(\'beforeend\', \'<button id="buy" onclick="window.clicks++">Buy '
        "now</button>'); }"
    )
    result = embedded.call("page_click", **old)
    assert result["success"] is False and result["error"]["code"] == "stale_ref"
    assert _clicks(embedded.page) == 0
    suggestion = result["error"]["details"]["suggestion"]
    assert suggestion["elementId"] != old["elementId"] and suggestion["label"] == "Buy now"
    assert _clicks(embedded.page) == 0  # the suggestion is only offered


def test_changed_aria_label_makes_the_ref_stale(mao_embed):
    embedded = mao_embed(APP)
    old = ref(embedded.inspect(), "Buy now")
    embedded.page.evaluate(
        "() => document.getElementById('buy').setAttribute('aria-label', 'Delete account')"
    )
    result = embedded.call("page_click", **old)
    assert result["error"]["code"] == "stale_ref"
    assert _clicks(embedded.page) == 0


def test_changed_text_name_on_the_same_node_makes_the_ref_stale(mao_embed):
    # A framework reusing the node for a different button: same element, new name.
    embedded = mao_embed(APP)
    old = ref(embedded.inspect(), "Buy now")
    embedded.page.evaluate("() => { document.getElementById('buy').textContent = 'Cancel order'; }")
    result = embedded.call("page_click", **old)
    assert result["error"]["code"] == "stale_ref"
    assert "name" in result["error"]["details"]["reason"]
    assert _clicks(embedded.page) == 0


def test_unchanged_element_still_resolves_after_unrelated_mutations(mao_embed):
    embedded = mao_embed(APP + "<p id='log'></p>")
    snapshot = embedded.inspect()
    embedded.page.evaluate("() => { document.getElementById('log').textContent = 'tick'; }")
    result = embedded.call("page_click", **ref(snapshot, "Buy now"))
    assert result["success"], result
    assert _clicks(embedded.page) == 1
    assert embedded.inspect()["pageVersion"] != snapshot["pageVersion"]  # the mutation moved it


def test_spa_route_change_makes_refs_stale(mao_embed):
    embedded = mao_embed(APP)
    snapshot = embedded.inspect()
    embedded.page.evaluate("() => history.pushState({}, '', '#/checkout')")
    result = embedded.call("page_click", **ref(snapshot, "Buy now"))
    assert result["error"]["code"] == "stale_ref"
    assert _clicks(embedded.page) == 0
    assert embedded.inspect()["pageVersion"] != snapshot["pageVersion"]


def test_reload_makes_refs_stale(mao_embed, mao_agent):
    embedded = mao_embed(APP)
    snapshot = embedded.inspect()
    old = ref(snapshot, "Buy now")
    known = {s["sessionId"] for s in mao_agent.sessions()} - {embedded.session_id}
    embedded.page.reload()
    embedded.page.evaluate("() => MaoChat.boot()")
    session = mao_agent.wait_for_session(url=embedded.url, exclude=known)
    result = mao_agent.call(session["sessionId"], "page_click", old)
    assert result["success"] is False and result["error"]["code"] == "stale_ref"
    # SPEC B7: the tab kept its session; the ref is from its previous document.
    assert session["sessionId"] == embedded.session_id
    assert result["error"]["details"]["reason"] == "navigated"
    assert _clicks(embedded.page) == 0


SCOPES = """
<p id="top">Top</p>
<iframe id="frame" srcdoc="<p id=inner>Inner</p><div id=host></div>"></iframe>
<script>
customElements.define('x-card', class extends HTMLElement { connectedCallback() {
  if (!this.shadowRoot) {
    this.attachShadow({mode: 'open'}).innerHTML = '<p>Shadow text</p><button>Open</button>';
  } } });
</script>
<x-card id="card"></x-card>
"""


def _settled_version(embedded) -> str:
    # Two inspections with nothing happening in between must agree (nothing counts twice).
    first = embedded.inspect()["pageVersion"]
    assert embedded.inspect()["pageVersion"] == first
    return first


def _frame_ready(page) -> None:
    page.wait_for_function(
        "() => document.getElementById('frame').contentDocument?.getElementById('inner')"
    )


def test_page_version_moves_with_mutations_inside_an_open_shadow_root(mao_embed):
    embedded = mao_embed(SCOPES)
    _frame_ready(embedded.page)
    before = _settled_version(embedded)
    embedded.page.evaluate(
        "() => { document.getElementById('card').shadowRoot.querySelector('p').textContent = "
        "'Changed'; }"
    )
    assert embedded.inspect()["pageVersion"] != before


def test_page_version_moves_with_mutations_inside_a_same_origin_frame(mao_embed):
    embedded = mao_embed(SCOPES)
    _frame_ready(embedded.page)
    before = _settled_version(embedded)
    embedded.page.evaluate(
        "() => { document.getElementById('frame').contentDocument"
        ".getElementById('inner').setAttribute('title', 'x'); }"
    )
    assert embedded.inspect()["pageVersion"] != before


def test_page_version_moves_inside_shadow_roots_and_frames_that_appear_later(mao_embed):
    # Added after start: a custom element (its shadow root), a frame, a shadow root inside
    # the frame, and a frame that navigates to a new document.
    embedded = mao_embed(SCOPES)
    page = embedded.page
    _frame_ready(page)
    page.evaluate(
        "() => document.body.insertAdjacentHTML('beforeend', '<x-card id=late></x-card>')"
    )
    before = _settled_version(embedded)
    page.evaluate(
        "() => { document.getElementById('late').shadowRoot.querySelector('p').textContent = "
        "'Late'; }"
    )
    after_shadow = embedded.inspect()["pageVersion"]
    assert after_shadow != before
    page.evaluate(
        "() => { const host = "
        "document.getElementById('frame').contentDocument.getElementById('host');"
        " host.attachShadow({mode: 'open'}).innerHTML = '<span>in frame</span>'; }"
    )
    before = _settled_version(embedded)  # the walk adopts a root attached without a mutation
    page.evaluate(
        "() => { document.getElementById('frame').contentDocument"
        ".getElementById('host').shadowRoot.firstChild.textContent = 'x'; }"
    )
    assert embedded.inspect()["pageVersion"] != before
    page.evaluate(
        "() => new Promise((done) => { const f = document.getElementById('frame');"
        " f.addEventListener('load', done, {once: true}); f.srcdoc = '<p id=inner>Reloaded</p>'; })"
    )
    before = _settled_version(embedded)
    page.evaluate(
        "() => { document.getElementById('frame').contentDocument"
        ".getElementById('inner').textContent = 'Edited'; }"
    )
    assert embedded.inspect()["pageVersion"] != before
