"""The default page_inspect reads only what the viewport needs (SPEC S4; collect.js
``viewportKeep``), yet every element it lists must come out exactly as from a full walk.

Each test mounts a fixture page built to hit one way a viewport-limited walk can go wrong,
then compares the default inspect's elements with the ``includeOffscreen`` inspect's
elements filtered to ``inViewport``: label, role, kind, states, text, value, description,
form, frame, rect, and which elements are listed at all (the S1 wrapper collapse). Each also
checks that the fixture really reaches its edge case (the element and name it is about).
"""

from __future__ import annotations

from typing import Any

from mao_embed.pytest_plugin import EmbeddedPage

# One booted page for the module (frameworks.ReusablePages); each test puts its fixture in.
MOUNT = """<div id="fixture"></div>
<script>window.__mount = () => {
  document.getElementById('fixture').replaceChildren(); window.scrollTo(0, 0); };</script>"""

SHOW = """async ([html, setup]) => {
  // setHTMLUnsafe parses declarative shadow roots (<template shadowrootmode>).
  document.getElementById('fixture').setHTMLUnsafe(html);
  const loaded = (frame) => new Promise((resolve) => {
    const doc = frame.contentDocument;
    if (doc && doc.readyState === 'complete' && doc.URL !== 'about:blank') resolve();
    else frame.addEventListener('load', resolve, { once: true });
  });
  const frames = async (doc) => {
    for (const frame of doc.querySelectorAll('iframe')) { await loaded(frame);
      await frames(frame.contentDocument); }
  };
  await frames(document);
  if (setup) new Function(setup)();
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
}"""


def _show(reusable_pages, html: str, setup: str = "") -> EmbeddedPage:
    embedded = reusable_pages.open("viewport", MOUNT, title="Viewport inspect")
    embedded.page.evaluate(SHOW, [html, setup])
    return embedded


def _compared(element: dict[str, Any]) -> dict[str, Any]:
    # "new" compares with the snapshot before: the second of two inspects never has it.
    return {key: value for key, value in element.items() if key not in ("elementId", "new")}


def agreeing_elements(embedded: EmbeddedPage) -> list[dict[str, Any]]:
    """The default inspect's elements, after checking they are exactly the in-viewport
    elements of an includeOffscreen inspect (SPEC S4) in the same order. A first snapshot
    settles what counts as appeared (SPEC S9), so both compare with the same painted page."""
    embedded.inspect()
    default = embedded.inspect()
    full = embedded.inspect(includeOffscreen=True)
    seen = [_compared(e) for e in default["elements"]]
    wanted = [_compared(e) for e in full["elements"] if e["inViewport"]]
    if seen != wanted:
        extra = [e for e in seen if e not in wanted]
        missing = [e for e in wanted if e not in seen]
        raise AssertionError(
            "default inspect disagrees with includeOffscreen filtered to inViewport\n"
            f"only in default: {extra}\nonly in includeOffscreen: {missing}"
        )
    assert all(e["inViewport"] for e in default["elements"])
    return default["elements"]


# Columns side by side, each taller than the viewport (1280 x 800): what a column starts
# with sits in the viewport, what it ends with 1,500 px below.
COLUMNS = "<div style='display:flex;gap:12px;align-items:flex-start'>{}</div>"
SPACER = "<div style='height:1500px'></div>"

WRAPPERS = COLUMNS.format(
    # One real control, off-screen below: the wrapper collapses into it (full walk), so
    # neither is listed by default.
    f"<div style='cursor:pointer;width:180px'>Tall card <span>with details</span>{SPACER}"
    "<button type='button'>Open card</button></div>"
    # Two real controls, one in view: no collapse, the wrapper is listed.
    f"<div style='cursor:pointer;width:180px'><button type='button'>Near action</button>{SPACER}"
    "<button type='button'>Far action</button></div>"
    # The file-input pattern: the real control is positioned far off to the left.
    "<div style='cursor:pointer;position:relative;width:180px'>Upload receipt"
    "<input type='file' style='position:absolute;left:-9999px'></div>"
    # A focusable wrapper whose one control is scrolled out of a scroll container.
    "<div tabindex='0' style='width:180px;overflow-x:auto'>Scroller card"
    "<div style='width:2400px;display:flex;justify-content:flex-end'><button type='button'>Hidden "
    "right</button></div></div>"
)


def test_wrapper_collapse_counts_controls_outside_the_viewport(reusable_pages):
    """SPEC S1, S4: "a clickable container wrapping one real control collapses into that
    control" is decided over all the wrapper's controls, in view or not."""
    elements = agreeing_elements(_show(reusable_pages, WRAPPERS))
    labels = [e["label"] for e in elements]
    assert not any(
        "Tall card" in label or "Upload receipt" in label or "Scroller card" in label
        for label in labels
    ), labels
    assert any(e["role"] == "generic" and e["label"].startswith("Near action") for e in elements), (
        labels
    )
    assert "Near action" in labels and "Open card" not in labels


def test_wrapper_collapse_when_the_page_is_scrolled_past_the_control(reusable_pages):
    """SPEC S1, S4: scrolled down, the wrapper is in view and its only control above it."""
    html = COLUMNS.format(
        f"<div style='cursor:pointer;width:240px'><button type='button'>Top control</button>"
        f"{SPACER}<span>Bottom of card</span></div>"
        f"<div style='cursor:pointer;width:240px'><button type='button'>First of two</button>"
        f"{SPACER}"
        "<button type='button'>Second of two</button></div>"
    )
    elements = agreeing_elements(_show(reusable_pages, html, "window.scrollTo(0, 1200)"))
    labels = [e["label"] for e in elements]
    assert "Second of two" in labels and not any("Bottom of card" in label for label in labels), (
        labels
    )
    assert any(e["role"] == "generic" and "Second of two" in e["label"] for e in elements), labels


NEARBY = COLUMNS.format(
    "".join(
        f"<div style='width:150px'><span>{text}</span><div style='height:1100px'></div>"
        f"{control}</div>"
        for text, control in (
            (
                "Remove the draft",
                "<button type='button'><svg width='16' height='16'><rect width='16' height='16'/>"
                "</svg></button>",
            ),
            (
                "Open the map",
                "<a href='#map'><img width='16' height='16' src='data:image/gif;base64,"
                "R0lGODlhAQABAAAAACw='></a>",
            ),
            (
                "Pin this note",
                "<div role='button' tabindex='0' style='width:20px;height:20px;background:#ccc'>"
                "</div>",
            ),
            (
                "Dark mode",
                "<div role='switch' aria-checked='true' tabindex='0' style='width:30px;height:16px;"
                "background:#ccc'></div>",
            ),
            (
                "Your comment",
                "<div contenteditable='true' style='height:24px;border:1px solid'></div>",
            ),
            (
                "Zoom level",
                "<div style='cursor:pointer;width:20px;height:20px;background:#ccc'></div>",
            ),
        )
    )
    # A field whose closest preceding siblings are hidden error messages (three of them):
    # the nearby text is the one before those, above the viewport.
    + "<div style='width:150px'><span>Amount due</span><div style='height:1100px'></div>"
    "<span hidden>Required</span><span style='display:none'>Too big</span><span "
    "style='visibility:hidden'>Too small</span>"
    "<input name='amount'></div>"
    # The text is nested one level down in the sibling (no text node of its own).
     + "<div style='width:150px'><div><b>Quantity</b></div><div style='height:1100px'></div><input "
    "type='number' name='qty'></div>"
)


def test_nearby_text_above_the_viewport_names_any_kind_of_element(reusable_pages):
    """SPEC S3, S4: the nearby-text fallback of buttons, links, ARIA widgets, editable regions,
    pointer elements and fields reads the preceding sibling even when it is above the
    viewport, skipping hidden siblings as the full walk does."""
    elements = agreeing_elements(_show(reusable_pages, NEARBY, "window.scrollTo(0, 1000)"))
    by_role = {(e["role"], e["label"]) for e in elements}
    for pair in (
        ("button", "Remove the draft"),
        ("link", "Open the map"),
        ("button", "Pin this note"),
        ("switch", "Dark mode"),
        ("textbox", "Your comment"),
        ("generic", "Zoom level"),
        ("textbox", "Amount due"),
        ("spinbutton", "Quantity"),
    ):
        assert pair in by_role, (pair, sorted(by_role))


NAME_SOURCES = (
    "<form id='claim' action='/claims' method='post' aria-label='Claim'><h2 id='claim-title'>"
    "Expense claim</h2>"
    "<p id='claim-help'>Amounts in euros, receipts required.</p>"
    "<label for='far-amount'>Claimed amount</label>"
    "<input type='checkbox' id='agree' style='display:none'></form>"
    "<div id='far-owner' role='listbox' aria-label='Drafts' aria-owns='owned-option'></div>"
    f"{SPACER}"
    "<div id='bottom'>"
    "<input id='far-amount' form='claim' name='amount'>"
    "<input aria-labelledby='claim-title' aria-describedby='claim-help' form='claim' name='title'>"
    "<label for='agree' style='display:inline-block;padding:2px;border:1px solid'>I agree to the "
    "policy</label>"
    "<a href='#settings'><svg width='16' height='16'></svg><span style='position:absolute;"
    "left:-10000px'>Open settings</span></a>"
    "<button type='button'><svg width='16' height='16'></svg><span style='position:absolute;"
    "top:-5000px'>Close panel</span></button>"
    "<button type='button'>Save <span id='owned-option' role='option'>draft</span></button>"
    "</div>"
)


def test_names_descriptions_and_forms_from_outside_the_viewport(reusable_pages):
    """SPEC S2, S3, S4: labels, aria-labelledby / -describedby targets, the form owner
    (form="id"), the hidden input behind a custom checkbox, screen-reader text positioned
    off-screen inside a control, and an aria-owns owner elsewhere on the page."""
    elements = agreeing_elements(
        _show(reusable_pages, NAME_SOURCES, "document.getElementById('bottom').scrollIntoView()")
    )
    by_label = {e["label"]: e for e in elements}
    assert (
        by_label["Claimed amount"]["form"]["formId"] == "claim"
        and by_label["Claimed amount"]["form"]["method"] == "post"
    )
    assert by_label["Expense claim"]["description"] == "Amounts in euros, receipts required."
    assert by_label["I agree to the policy"]["role"] == "checkbox"
    assert (
        by_label["Open settings"]["role"] == "link" and by_label["Close panel"]["role"] == "button"
    )
    assert "Save" in by_label and "Save draft" not in by_label  # the option is owned elsewhere


SHADOW = (
    "<div id='host' style='display:block'><template shadowrootmode='open'>"
    "<style>.tall{height:1500px}</style>"
    "<label for='inner-code'>Discount code</label><div class='tall'></div>"
    "<input id='inner-code'>"
    "<div style='cursor:pointer'><span>Shadow card</span><div class='tall'></div><button "
    "type='button'>Shadow only</button></div>"
    "<span>Shadow nearby</span><div class='tall'></div><button id='icon' type='button'><svg "
    "width='16' height='16'></svg></button>"
    "<slot></slot>"
    "</template><button type='button'>Slotted button</button></div>"
)


def test_open_shadow_roots_with_name_sources_above_the_viewport(reusable_pages):
    """SPEC S3, S4, S6: inside an open shadow root, a label[for] above the viewport, a wrapper
    whose only control is below it, nearby text above it, and slotted light content."""
    embedded = _show(
        reusable_pages,
        SHADOW,
        "document.getElementById('host').shadowRoot.getElementById('inner-code').scrollIntoView()",
    )
    elements = agreeing_elements(embedded)
    labels = [e["label"] for e in elements]
    assert "Discount code" in labels and not any("Shadow card" in label for label in labels), labels
    embedded.page.evaluate(
        "() => document.getElementById('host').shadowRoot.getElementById('icon').scrollIntoView()"
    )
    elements = agreeing_elements(embedded)
    labels = [e["label"] for e in elements]
    assert "Shadow nearby" in labels and "Slotted button" in labels, labels


def test_frames_partly_in_view_keep_their_numbers_and_names(reusable_pages, mao_pages):
    """SPEC S2, S4, S6: a frame above the viewport (with a frame nested in it) still counts in
    the frame numbers, and a frame partly in view lists what shows of it, named from
    labels above the top viewport and above its own scrolled viewport."""
    mao_pages.add(
        "/viewport-nested.html", "<!doctype html><html><body><button>Nested</button></body></html>"
    )
    mao_pages.add(
        "/viewport-outer.html",
        "<!doctype html><html><body><button>Outer</button><iframe src='/viewport-nested.html' "
        "title='Nested frame'></iframe></body></html>",
    )
    mao_pages.add(
        "/viewport-form.html",
        "<!doctype html><html><body style='margin:0'>"
        "<label for='memo'>Memo for the payment</label><div style='height:600px'></div>"
        "<input id='memo'><div style='height:40px'></div>"
        "<span>Card number</span><div style='height:40px'></div><input name='card' "
        "inputmode='numeric'>"
        "<div style='height:2000px'></div><button>Frame bottom</button></body></html>",
    )
    html = (
        "<iframe src='/viewport-outer.html' title='Outer frame' style='width:400px;height:200px'>"
        "</iframe>"
        "<div style='height:1600px'></div>"
        "<iframe id='pay' src='/viewport-form.html' title='Payment' style='width:600px;"
        "height:700px'></iframe>"
        "<div style='height:1500px'></div>"
    )
    setup = (
        "const pay = document.getElementById('pay'); pay.contentWindow.scrollTo(0, 560);"
        "window.scrollTo(0, pay.getBoundingClientRect().top + window.scrollY - 500);"
    )
    elements = agreeing_elements(_show(reusable_pages, html, setup))
    memo = [e for e in elements if e["label"] == "Memo for the payment"]
    assert memo and memo[0]["frame"] == "frame 3: Payment", elements
    assert any(e["label"] == "Card number" for e in elements), [e["label"] for e in elements]
    assert not any(e["label"] in ("Outer", "Nested", "Frame bottom") for e in elements)


FIELD_ROWS = COLUMNS.format(
    # A form row whose label is above the viewport and whose switch is in it: the row is
    # small, so both walks read all of it.
    "<div style='width:200px'><span>Subscribe to newsletter</span><div style='height:1100px'></div>"
    "<div><div id='small' role='switch' tabindex='0' style='width:30px;height:16px;"
    "background:#ccc'></div></div></div>"
    # A row in the viewport holding over 60 elements, most of them empty (the viewport walk
    # keeps none of those): not a field container, in either walk.
    "<div style='width:200px'><div style='height:1000px'></div><div><span>Not this label</span>"
    "<div>" + "<i></i>" * 70 + "</div>"
    "<div><div id='big' role='switch' tabindex='0' style='width:30px;height:16px;background:#ccc'>"
    "</div></div></div></div>"
)


def test_field_container_labels_agree_when_the_label_is_above_the_viewport(reusable_pages):
    """SPEC S3, S4: the container-label fallback reads a small form row whole in both walks,
    and refuses a big one in both, however much of it the viewport walk holds."""
    elements = agreeing_elements(_show(reusable_pages, FIELD_ROWS, "window.scrollTo(0, 1000)"))
    switches = [(e["label"], e.get("nameFrom")) for e in elements if e["role"] == "switch"]
    assert switches == [("Subscribe to newsletter", "nearby"), ("", None)], switches
