"""Labels of controls that have no accessible name (SPEC S3 "then nearby text"), role-less
sliders (S1), and choices that are not sensitive (P5), in real Chromium: plain HTML custom
controls, Ant Design 5 and Element Plus 2 form rows (libraries from npm at pinned versions,
frameworks.py). Each case checks the label and where it came from (``nameFrom``, absent for
an accessible name)."""

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
    # A focusable thumb on a rail is a slider (SPEC S1).
    handle = _element(snapshot, "Brightness")
    assert (handle["role"], handle["nameFrom"]) == ("slider", "nearby")
    tags = _element(snapshot, "Select tags", "combobox")
    assert tags["nameFrom"] == "inner"
    # The inner field is named by its placeholder (HTML-AAM), not by the row's plain text.
    inner = _element(snapshot, "Select tags", "textbox")
    assert "nameFrom" not in inner and inner["placeholder"] == "Select tags"
    assert "nameFrom" not in _element(snapshot, "Quantity", "spinbutton")
    # The label reaches the click: the page's own handler ran.
    assert view.call("page_click", "Subscribe to newsletter")["success"]
    assert view.embedded.page.get_attribute("#toggle", "data-on") == "true"


ROWS = """
<style>
  .row { display: flex; gap: 12px; align-items: center; margin: 6px 0; width: 520px; }
  .switch { position: relative; display: inline-block; width: 40px; height: 20px; }
  .switch input { opacity: 0; width: 0; height: 0; }
  .knob { position: absolute; cursor: pointer; inset: 0; background: #ccc; border-radius: 10px; }
  .switch input:checked + .knob { background: #36c; }
  .rail { position: relative; width: 200px; height: 6px; background: #ddd; cursor: pointer; }
  .thumb { position: absolute; top: -5px; left: 0; width: 16px; height: 16px; margin-left: -8px;
    border-radius: 8px; background: #36c; cursor: grab; }
</style>
<section><h3>Find an order</h3><div><input id="order" placeholder="Order number"></div></section>
<section><h3>Coupons</h3><div><input id="coupon" title="Coupon code"></div></section>
<form id="settings" onsubmit="return false">
  <div class="row"><span>Email alerts</span><label class="switch"><input id="alerts"
    type="checkbox" role="switch"><span class="knob"></span></label></div>
  <div class="row"><label>Dark mode</label><div><label class="switch"><input id="dark"
    type="checkbox" role="switch"><span class="knob"></span></label></div></div>
  <div class="row"><label>Remember me</label><div><label class="switch"><input id="remember"
    type="checkbox"><span class="knob"></span></label></div></div>
  <div class="row"><div>Volume</div><div><div class="rail" id="rail"><div class="thumb"
    id="thumb"></div></div></div></div>
</form>
<script>
  // A slider of divs: the thumb sits at the value's place; a press on the rail moves it there.
  const state = { volume: 20 };
  const rail = document.getElementById('rail');
  const show = () => { document.getElementById('thumb').style.left = state.volume + '%'; };
  rail.addEventListener('pointerdown', (event) => {
    const box = rail.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
    state.volume = Math.round(fraction * 100);
    show();
  });
  const checked = (id) => document.getElementById(id).checked;
  window.__state = () => ({ volume: state.volume, alerts: checked('alerts'),
    dark: checked('dark'), remember: checked('remember') });
  window.__mount = () => {
    state.volume = 20; show();
    for (const id of ['alerts', 'dark', 'remember']) document.getElementById(id).checked = false;
  };
</script>
"""


def test_a_placeholder_or_title_names_a_field_before_the_heading_above_it(
    reusable_pages,
):  # SPEC S3
    view = AgentView(reusable_pages.open("names-rows", ROWS, title="Form rows"))
    order = _element(view.snapshot, "Order number", "textbox")
    assert "nameFrom" not in order and order["placeholder"] == "Order number"
    coupon = _element(view.snapshot, "Coupon code", "textbox")
    assert "nameFrom" not in coupon
    assert not [e for e in view.snapshot["elements"] if e["label"] in ("Find an order", "Coupons")]
    result = view.call("page_fill", "Order number", "textbox", value="A-1001")
    assert result["success"], failure(result)
    assert view.embedded.page.input_value("#order") == "A-1001"


def test_css_switches_and_a_checkbox_in_form_rows_take_their_rows_labels(
    reusable_pages,
):  # SPEC S3
    view = AgentView(reusable_pages.open("names-rows", ROWS, title="Form rows"))
    named = {
        (e["role"], e["label"], e.get("nameFrom"))
        for e in view.snapshot["elements"]
        if e["role"] in ("switch", "checkbox")
    }
    assert named == {
        ("switch", "Email alerts", "nearby"),
        ("switch", "Dark mode", "nearby"),
        ("checkbox", "Remember me", "nearby"),
    }, named
    for label, role in (
        ("Email alerts", "switch"),
        ("Dark mode", "switch"),
        ("Remember me", "checkbox"),
    ):
        result = view.call("page_check", label, role)
        assert result["success"], failure(result)
    assert view.state() == {"volume": 20, "alerts": True, "dark": True, "remember": True}


def test_a_roleless_slider_of_divs_is_listed_as_a_slider_and_can_be_set(
    reusable_pages,
):  # SPEC S1, S3
    view = AgentView(reusable_pages.open("names-rows", ROWS, title="Form rows"))
    slider = _element(view.snapshot, "Volume", "slider")
    assert slider["nameFrom"] == "nearby"
    assert '- slider "Volume"' in view.embedded.inspect(format="text")["text"]
    result = view.call("page_fill", "Volume", "slider", value="60")
    assert result["success"], failure(result)
    assert abs(view.state()["volume"] - 60) <= 1


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
