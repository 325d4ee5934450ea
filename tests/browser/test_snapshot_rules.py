"""Snapshot rules in real Chromium, one fixture page per rule (tests/browser/snapshot_pages.py):
labels and states (S2, S3), sensitive fields (P5), custom controls and collapse (S1),
visibility and the viewport (S4), the text form (S7, S8)."""

from __future__ import annotations

import re

from browser_helpers import ref
from snapshot_pages import CUSTOM_CONTROLS, FORMS, SENSITIVE, STRUCTURE, VISIBILITY


def _by_label(snapshot):
    return {e["label"]: e for e in snapshot["elements"]}


def test_form_fields_are_named_by_the_accessible_name_rules(mao_embed):  # SPEC S3
    snapshot = mao_embed(FORMS).inspect()
    labels = _by_label(snapshot)
    for expected in (
        "Email address",
        "Full name",
        "City",
        "Postal code",
        "Phone number",
        "Coupon code",
        "Basic",
        "Pro",
        "Country",
        "Notes",
        "I accept the terms",
        "Age",
        "Create account",
        "Reset",
        "Later",
    ):
        assert expected in labels, (expected, sorted(labels))
    assert (
        labels["Coupon code"]["role"] == "textbox"
    )  # named through a display:none aria-labelledby target


def test_form_states_and_ownership_are_reported(mao_embed):  # SPEC S2
    snapshot = mao_embed(FORMS).inspect()
    labels = _by_label(snapshot)
    assert (
        labels["Email address"]["required"] is True and labels["Email address"]["type"] == "email"
    )
    assert labels["Full name"]["value"] == "Ada"
    assert labels["Basic"]["checked"] is True and labels["Pro"]["checked"] is False
    assert labels["Country"]["value"] == "fr" and [
        o["label"] for o in labels["Country"]["options"]
    ] == ["China", "France"]
    assert labels["Notes"]["readonly"] is True
    assert labels["Age"]["invalid"] is True
    assert labels["Later"]["disabled"] is True
    form = labels["Email address"]["form"]
    assert form["formId"] == "signup" and form["formName"] == "signup" and form["method"] == "post"
    assert form["action"].endswith("/signup")


def test_sensitive_values_are_masked_including_chinese_labels(mao_embed):  # SPEC P5
    snapshot = mao_embed(SENSITIVE).inspect(format="text")
    labels = _by_label(snapshot)
    for name in (
        "Password",
        "密码",
        "验证码",
        "银行卡号",
        "身份证",
        "One-time code",
        "Card expiry",
    ):
        assert labels[name]["sensitive"] is True, name
        assert labels[name].get("value") is None, name
    assert labels["Nickname"]["sensitive"] is False and labels["Nickname"]["value"] == "ada"
    for secret in (
        "hunter2",
        "abc123",
        "842913",
        "6222020200112233",
        "110101199003077777",
        "123456",
        "12/29",
    ):
        assert secret not in snapshot["text"]


def test_custom_checkbox_behind_a_label_is_listed_and_can_be_clicked(mao_embed):  # SPEC S1
    embedded = mao_embed(CUSTOM_CONTROLS)
    snapshot = embedded.inspect()
    labels = _by_label(snapshot)
    for name in ("Remember me", "Newsletter"):
        assert labels[name]["role"] == "checkbox" and labels[name]["checked"] is False, labels[name]
    result = embedded.call("page_click", **ref(snapshot, "Newsletter"))
    assert result["success"], result
    assert embedded.page.is_checked("#news")


def test_custom_widgets_wrappers_and_states(mao_embed):  # SPEC S1, S2
    snapshot = mao_embed(CUSTOM_CONTROLS).inspect()
    labels = _by_label(snapshot)
    assert labels["Dark mode"]["role"] == "checkbox" and labels["Dark mode"]["checked"] is True
    assert (
        labels["Notifications"]["role"] == "switch" and labels["Notifications"]["checked"] is False
    )
    assert labels["Open report"]["role"] == "generic"  # cursor:pointer div, named by its text
    assert "Inner save" in labels and not any(
        e["label"] == "Inner save" and e["role"] == "generic" for e in snapshot["elements"]
    )
    assert labels["Focusable card"]["kind"] == "other"
    assert labels["Comment"]["role"] == "textbox"
    assert labels["More options"]["expanded"] is False
    assert labels["Bold"]["pressed"] is True
    assert labels["Menu"]["expanded"] is False
    assert labels["General"]["selected"] is True and labels["Advanced"]["selected"] is False
    assert labels["Help"]["role"] == "link"
    assert labels["Close dialog"]["role"] == "button"


def test_hidden_clipped_and_offscreen_elements(mao_embed):  # SPEC S4
    embedded = mao_embed(VISIBILITY)
    default = {e["label"] for e in embedded.inspect()["elements"]}
    assert default == {"Shown"}
    wide = _by_label(embedded.inspect(includeOffscreen=True))
    assert set(wide) == {"Shown", "Scrolled inside", "Below the fold"}
    assert (
        wide["Below the fold"]["inViewport"] is False
        and wide["Scrolled inside"]["inViewport"] is False
    )


def test_text_form_indents_structure_and_gives_context(mao_embed):  # SPEC S7
    snapshot = mao_embed(STRUCTURE).inspect(format="text")
    text = snapshot["text"]
    lines = text.splitlines()
    assert re.search(
        r'^  - navigation "Main":\n    - list:\n      - link "Home" \[ref=e\w+\]$', text, re.M
    ), text
    assert '- heading "Orders" [level=1]' in text
    assert '- text: "You have 2 open orders."' in text
    assert any(re.fullmatch(r'\s+- text: "#1001 \| 12.50"', line) for line in lines), text
    assert any(re.fullmatch(r'\s+- dialog "Confirm":', line) for line in lines), text
    refs = re.findall(r"\[ref=(\w+)\]", text)
    assert sorted(refs) == sorted(e["elementId"] for e in snapshot["elements"])


def test_text_form_budget_drops_off_viewport_text_first_and_says_so(mao_embed):  # SPEC S7
    rows = "".join(f"<p>Paragraph number {i} with some words in it</p>" for i in range(200))
    snapshot = mao_embed(
        "<button>Top action</button>" + rows + "<button>Bottom action</button>"
    ).inspect(format="text", includeOffscreen=True, maxTokens=300)
    text = snapshot["text"]
    match = re.search(r"\[truncated: (\d+) nodes\]$", text)
    assert match and int(match.group(1)) == snapshot["truncated"] > 0
    assert '"Top action"' in text and '"Bottom action"' in text  # elements kept, text dropped
    assert "Paragraph number 199" not in text
