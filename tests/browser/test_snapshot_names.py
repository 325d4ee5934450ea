"""Labels of controls that have no accessible name (SPEC S3 "then nearby text"), and choices
that are not sensitive (P5), in real Chromium: plain HTML custom controls, Ant Design 5 and
Element Plus 2 form rows (libraries from npm at pinned versions, frameworks.py). Each case
checks the label and where it came from (``nameFrom``, absent for an accessible name)."""

from __future__ import annotations

from frameworks import AgentView, failure, fixture_body, serve_vendor

PLAIN = """
<style>
  .row { display: flex; gap: 12px; align-items: center; margin: 8px 0; width: 520px; }
  .toggle { cursor: pointer; width: 36px; height: 18px; border-radius: 9px; background: #bbb;
    position: relative; }
  .toggle[data-on="true"] { background: #36c; }
  .knob { position: absolute; top: 2px; left: 2px; width: 14px; height: 14px; border-radius: 7px;
    background: #fff; }
  .track { position: relative; width: 200px; height: 4px; background: #ccc; }
  .handle { position: absolute; top: -6px; left: 40px; width: 16px; height: 16px;
    border-radius: 8px; background: #36c; }
  .number { display: inline-flex; align-items: stretch; }
  .steps { display: inline-flex; flex-direction: column; }
  .steps span { cursor: pointer; width: 18px; height: 12px; background: #eee; display: block; }
  .tagbox { border: 1px solid #999; padding: 2px; width: 240px; }
</style>
<form id="prefs" onsubmit="return false">
  <div class="row"><span>Subscribe to newsletter</span><div><div class="toggle" id="toggle"
    data-on="false"><span class="knob"></span></div></div></div>
  <div class="row"><span>Brightness</span><div><div class="track"><div class="handle"
    tabindex="0"></div></div></div></div>
  <div class="row"><label for="qty">Quantity</label>
    <div class="number"><input id="qty" type="number" value="2" style="width:60px">
      <span class="steps"><span id="up"><svg width="8" height="8"></svg></span><span id="down"><svg
        width="8" height="8"></svg></span></span></div></div>
  <div class="row"><span>Labels</span><div class="tagbox" role="combobox" aria-expanded="false"
    tabindex="0"><input placeholder="Select tags" style="border:0"></div></div>
  <div class="row" role="radiogroup" aria-label="Payment method">
    <label><input type="radio" name="pay" value="card" checked> Credit card</label>
    <label><input type="radio" name="pay" value="bank"> Bank transfer</label></div>
  <div class="row"><label>Card number <input autocomplete="cc-number"
    value="4242424242424242"></label></div>
</form>
<script>
  window.__mount = () => {
    document.getElementById('toggle').dataset.on = 'false';
    document.getElementById('qty').value = '2';
  };
  document.getElementById('toggle').addEventListener('click', (event) => {
    const el = event.currentTarget;
    el.dataset.on = el.dataset.on === 'true' ? 'false' : 'true';
  });
  const step = (by) => () => { const q = document.getElementById('qty');
    q.value = String(Number(q.value) + by); };
  document.getElementById('up').addEventListener('click', step(1));
  document.getElementById('down').addEventListener('click', step(-1));
</script>
"""


def _element(snapshot, label, role=None):
    found = [
        e
        for e in snapshot["elements"]
        if e["label"] == label and (role is None or e["role"] == role)
    ]
    assert len(found) == 1, (
        label,
        role,
        [(e["role"], e["label"], e.get("nameFrom")) for e in snapshot["elements"]],
    )
    return found[0]


def test_plain_custom_controls_take_the_label_of_their_form_row(reusable_pages):  # SPEC S3
    view = AgentView(reusable_pages.open("names-plain", PLAIN, title="Plain names"))
    snapshot = view.snapshot
    toggle = _element(snapshot, "Subscribe to newsletter")
    assert (toggle["role"], toggle["nameFrom"]) == ("generic", "nearby")
    handle = _element(snapshot, "Brightness")
    assert (handle["role"], handle["nameFrom"]) == ("generic", "nearby")
    tags = _element(snapshot, "Select tags", "combobox")
    assert tags["nameFrom"] == "inner"
    # The inner field is named by its placeholder only: it takes the row's label, and keeps
    # the placeholder as such.
    inner = _element(snapshot, "Labels", "textbox")
    assert (inner["nameFrom"], inner["placeholder"]) == ("nearby", "Select tags")
    assert "nameFrom" not in _element(snapshot, "Quantity", "spinbutton")
    # The label reaches the click: the page's own handler ran.
    assert view.call("page_click", "Subscribe to newsletter")["success"]
    assert view.embedded.page.get_attribute("#toggle", "data-on") == "true"


def test_nameless_steppers_of_a_number_field_are_named_increase_and_decrease(
    reusable_pages,
):  # SPEC S3
    view = AgentView(reusable_pages.open("names-plain", PLAIN, title="Plain names"))
    up = _element(view.snapshot, "Increase Quantity")
    assert up["nameFrom"] == "stepper"
    assert _element(view.snapshot, "Decrease Quantity")["nameFrom"] == "stepper"
    result = view.call("page_click", "Increase Quantity")
    assert result["success"], failure(result)
    assert view.embedded.page.input_value("#qty") == "3"


def test_a_payment_choice_is_not_sensitive_but_the_card_number_is(reusable_pages):  # SPEC P5
    view = AgentView(reusable_pages.open("names-plain", PLAIN, title="Plain names"))
    snapshot = view.embedded.inspect(format="text")
    card = _element(snapshot, "Credit card", "radio")
    assert card["sensitive"] is False and card["checked"] is True
    number = _element(snapshot, "Card number")
    assert number["sensitive"] is True and number.get("value") is None
    assert "4242424242424242" not in snapshot["text"]
    assert '- radio "Credit card" [checked] [ref=' in snapshot["text"]


def _library(reusable_pages, mao_pages, framework: str, file: str) -> AgentView:
    embedded = reusable_pages.open(
        file, fixture_body(file), head=serve_vendor(mao_pages, framework), title=framework
    )
    return AgentView(embedded)


def test_antd_switch_and_tags_select_in_form_items_take_their_labels(
    reusable_pages, mao_pages
):  # SPEC S3
    view = _library(reusable_pages, mao_pages, "antd", "antd_names.html")
    switch = _element(view.snapshot, "Subscribe to newsletter", "switch")
    assert switch["nameFrom"] == "nearby" and switch["checked"] is False
    tags = [e for e in view.snapshot["elements"] if e["role"] == "combobox"]
    assert [(e["label"], e.get("nameFrom")) for e in tags] in (
        [("Select tags", "nearby")],
        [("Labels", "nearby")],
    ), tags
    choice = _element(view.snapshot, "Credit card", "radio")
    assert choice["sensitive"] is False
    assert _element(view.snapshot, "Card number")["sensitive"] is True
    result = view.call("page_click", "Subscribe to newsletter", "switch")
    assert result["success"], failure(result)
    assert view.state()["subscribed"] is True


def test_element_plus_form_item_labels_stay_accessible_names(reusable_pages, mao_pages):  # SPEC S3
    # Element Plus ties an el-form-item's label to its switch and slider itself (an accessible
    # name): the fallback must leave those alone.
    view = _library(reusable_pages, mao_pages, "element-plus", "element_plus_names.html")
    listed = [(e["role"], e["label"], e.get("nameFrom")) for e in view.snapshot["elements"]]
    assert ("switch", "Subscribe to newsletter", None) in listed and (
        "slider",
        "Volume",
        None,
    ) in listed, listed
    result = view.call("page_click", "Subscribe to newsletter", "switch")
    assert result["success"], failure(result)
    assert view.state()["subscribed"] is True
