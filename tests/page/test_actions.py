"""The action modules' own decisions against a fake page (SPEC A1, A2, A5, A6): the batch
runner's order and stop rules, actionability answers and the typed error each maps to, and
the strategies' refusals. No browser: what a real page does with our events is proven in
tests/browser; here, what our code decides to do and report."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, get_args

import pytest
from mao_page.actions import DISPATCH, BatchRunner
from mao_page.actions import check as check_module
from mao_page.actions import fill as fill_module
from mao_page.actions import keyboard as keyboard_module
from mao_page.actions import options as options_module
from mao_page.actions import select as select_module
from mao_page.actions.actionability import (
    Blocker,
    ensure_actionable,
    failure,
    hit_blocker,
    state_blocker,
)
from mao_page.actions.keys import parse_key
from mao_page.bridge.page import HitTest, Outcome, Submission
from mao_page.errors import ToolFailure
from mao_page.protocol import (
    ErrorCode,
    FillAction,
    PageAction,
    PageToolRequest,
    SelectAction,
)

from .fake_page import FAST, Element, FakeInspector, FakePage, context, element
from .page_rows import fact_row


def runner(page: FakePage, elements: list[Element]) -> tuple[BatchRunner, FakeInspector]:
    inspector = FakeInspector(page, elements)
    return BatchRunner(page, inspector, FAST), inspector  # type: ignore[arg-type]


def request(*actions: dict[str, Any]) -> PageToolRequest:
    return PageToolRequest.model_validate(
        {
            "request_id": "r1",
            "session_id": "s1",
            "tool": "page_click",
            "snapshot_id": "snap-1",
            "actions": list(actions),
        }
    )


def acts(page: FakePage, kind: str) -> list[tuple[Any, ...]]:
    return [a for a in page.acts if a[0] == kind]


# -- the batch runner (SPEC A5) ----------------------------------------------------------------


def test_every_action_of_the_protocol_has_a_handler() -> None:
    # The dispatch table is keyed by the protocol's action classes: a new action model without
    # a handler, or a handler for a model the protocol no longer has, fails here.
    union = get_args(get_args(PageAction)[0])
    assert set(DISPATCH) == set(union)


async def test_steps_run_in_order_and_each_is_reported() -> None:
    page = FakePage()
    save, name = element("save"), element("name", "input", type="text")
    batch, _ = runner(page, [save, name])
    result = await batch.run_actions(
        request(
            {"action": "fill", "elementId": "name", "value": "Ada"},
            {"action": "click", "elementId": "save"},
        )
    )
    assert result.success is True and result.stopped_at is None
    assert [a[0] for a in page.acts if a[0] in ("fill", "click")] == ["fill", "click"]
    steps = result.result["steps"]
    assert [(s["index"], s["action"], s["success"]) for s in steps] == [
        (0, "fill", True),
        (1, "click", True),
    ]
    assert set(steps[1]["outcome"]["timing"]) == {"checksMs", "actionMs", "settleMs"}


async def test_the_batch_stops_at_the_first_failure_and_runs_nothing_after_it() -> None:
    page = FakePage()
    off, save = element("off", disabled=True), element("save")
    batch, _ = runner(page, [off, save])
    result = await batch.run_actions(
        request(
            {"action": "click", "elementId": "off"},
            {"action": "click", "elementId": "save"},
        )
    )
    assert result.success is False and result.stopped_at == 0
    assert result.error is not None and result.error.code is ErrorCode.NOT_ENABLED
    assert len(result.result["steps"]) == 1
    assert acts(page, "click") == []


async def test_the_batch_stops_when_a_step_navigated() -> None:
    page = FakePage()
    go, save = element("go", "a"), element("save")
    batch, _ = runner(page, [go, save])

    def navigate() -> None:
        page.navigations += 1
        page.url = "https://app.example/next"

    page.on_click["go"] = navigate
    result = await batch.run_actions(
        request(
            {"action": "click", "elementId": "go"},
            {"action": "click", "elementId": "save"},
        )
    )
    assert result.error is not None and result.error.code is ErrorCode.NAVIGATED
    assert result.stopped_at == 1
    assert [a[1] for a in acts(page, "click")] == ["go"]
    assert result.result["changes"]["navigated"] is True


async def test_the_batch_stops_when_most_elements_it_was_planned_on_went_away() -> None:
    page = FakePage()
    items = [element(f"b{i}") for i in range(8)]
    batch, inspector = runner(page, items)
    page.on_click["b0"] = lambda: setattr(inspector, "listed", [])
    result = await batch.run_actions(
        request(
            {"action": "click", "elementId": "b0"},
            {"action": "click", "elementId": "b1"},
        )
    )
    assert result.error is not None and result.error.code is ErrorCode.STRUCTURE_CHANGED
    assert result.stopped_at == 1
    assert "8 of the 8" in result.error.message


async def test_a_dialog_opening_stops_the_batch() -> None:
    page = FakePage()
    open_, save = element("open"), element("save")
    batch, _ = runner(page, [open_, save])
    page.on_click["open"] = lambda: page.messages.append(["dialog", "Are you sure?"])
    result = await batch.run_actions(
        request(
            {"action": "click", "elementId": "open"},
            {"action": "click", "elementId": "save"},
        )
    )
    assert result.error is not None and result.error.code is ErrorCode.STRUCTURE_CHANGED
    assert "dialog" in result.error.message


async def test_a_stale_ref_fails_its_step_with_stale_ref() -> None:
    page = FakePage()
    gone = element("gone")
    gone.connected = False
    batch, _ = runner(page, [gone])
    result = await batch.run_actions(request({"action": "click", "elementId": "gone"}))
    assert result.error is not None and result.error.code is ErrorCode.STALE_REF
    assert acts(page, "click") == []


async def test_authorization_runs_before_the_act_and_a_refusal_leaves_the_page_alone() -> None:
    page = FakePage()
    save = element("save")
    seen: list[str] = []

    async def refuse(action: Any, entry: Any) -> None:
        seen.append(entry.element_id)
        raise ToolFailure(ErrorCode.PERMISSION_DENIED, "not on this page")

    inspector = FakeInspector(page, [save])
    batch = BatchRunner(page, inspector, FAST, authorize=refuse)  # type: ignore[arg-type]
    result = await batch.run_actions(request({"action": "click", "elementId": "save"}))
    assert seen == ["save"]
    assert result.error is not None and result.error.code is ErrorCode.PERMISSION_DENIED
    assert page.acts == []


# -- actionability (SPEC A2) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("columns", "rendered", "editable", "expected"),
    [
        ({}, True, False, None),
        ({}, False, False, Blocker.NOT_VISIBLE),
        ({"disabled": True}, True, False, Blocker.NOT_ENABLED),
        ({"aria_disabled": "true"}, True, False, Blocker.NOT_ENABLED),
        ({"readonly": True}, True, True, Blocker.NOT_EDITABLE),
        ({"aria_readonly": "true"}, True, True, Blocker.NOT_EDITABLE),
        ({"readonly": True}, True, False, None),  # read-only does not stop a click
    ],
    ids=[
        "ok",
        "hidden",
        "disabled",
        "aria-disabled",
        "readonly",
        "aria-readonly",
        "readonly-click",
    ],
)
def test_state_checks_answer_one_blocker(
    columns: dict[str, Any], rendered: bool, editable: bool, expected: Blocker | None
) -> None:
    assert state_blocker(fact_row("input", **columns), rendered, editable=editable) is expected


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (Outcome.DONE, None),
        (Outcome.COVERED, Blocker.OBSCURED),
        (Outcome.COVERED_BY_SDK, Blocker.OBSCURED),
        (Outcome.OUTSIDE_VIEWPORT, Blocker.OUTSIDE_VIEWPORT),
        (Outcome.NOT_CONNECTED, Blocker.NOT_CONNECTED),
    ],
)
def test_hit_test_outcomes_map_to_blockers(outcome: Outcome, expected: Blocker | None) -> None:
    assert hit_blocker(HitTest(outcome)) is expected


@pytest.mark.parametrize(
    ("blocker", "code"),
    [
        (Blocker.NOT_CONNECTED, ErrorCode.STALE_REF),
        (Blocker.NOT_VISIBLE, ErrorCode.NOT_VISIBLE),
        (Blocker.NOT_ENABLED, ErrorCode.NOT_ENABLED),
        (Blocker.NOT_EDITABLE, ErrorCode.NOT_EDITABLE),
        (Blocker.NOT_STABLE, ErrorCode.NOT_STABLE),
        (Blocker.OUTSIDE_VIEWPORT, ErrorCode.OBSCURED),
        (Blocker.OBSCURED, ErrorCode.OBSCURED),
    ],
)
def test_each_blocker_is_one_typed_error_naming_the_element(
    blocker: Blocker, code: ErrorCode
) -> None:
    error = failure(blocker, element("save", label="Save").target())
    assert error.code is code
    assert error.element_id == "save"
    assert "Save" in error.message


async def test_the_hit_test_is_retried_while_something_passes_over_the_element() -> None:
    page = FakePage()
    save = element("save")
    covered = HitTest(Outcome.COVERED, 5, 5, "<div#toast>")
    save.hits = [covered, covered, HitTest(Outcome.DONE, 7.0, 9.0, "<button>")]
    ctx, acting = context(page, FakeInspector(page, [save]))
    point = await ensure_actionable(ctx, save.target())
    assert point is not None and (point.x, point.y) == (7.0, 9.0)
    assert len(acts(page, "hit_test")) == 3
    assert acting == ["save"]


async def test_an_element_that_stays_covered_is_obscured_naming_what_covers_it() -> None:
    page = FakePage()
    save = element("save")
    save.hits = [HitTest(Outcome.COVERED, 5, 5, "<div#overlay>")]
    ctx, acting = context(page, FakeInspector(page, [save]))
    with pytest.raises(ToolFailure) as raised:
        await ensure_actionable(ctx, save.target())
    assert raised.value.code is ErrorCode.OBSCURED
    assert raised.value.details == {"coveredBy": "<div#overlay>"}
    assert acting == []  # no highlight for an element not acted on


async def test_the_panel_moves_aside_from_a_target_it_covers_and_the_step_says_so() -> None:
    # SPEC U4: our own panel never makes an action fail as obscured.
    page = FakePage()
    save = element("save")
    save.hits = [
        HitTest(Outcome.COVERED_BY_SDK, 5, 5, "the Mao Embed panel"),
        HitTest(Outcome.DONE, 5.0, 5.0, "<button>"),
    ]
    batch, _ = runner(page, [save])
    result = await batch.run_actions(request({"action": "click", "elementId": "save"}))
    assert result.success, result.error
    step = result.result["steps"][0]
    assert step["outcome"]["panelMovedAside"] == "bottom-left"
    assert acts(page, "move_panel_aside") == [("move_panel_aside", "save")]
    assert acts(page, "click") == [("click", "save", 5.0, 5.0)]


async def test_a_panel_with_nowhere_to_go_leaves_the_target_obscured() -> None:  # SPEC U4
    page = FakePage()
    page.panel_places = []
    save = element("save")
    save.hits = [HitTest(Outcome.COVERED_BY_SDK, 5, 5, "the Mao Embed panel")]
    ctx, _ = context(page, FakeInspector(page, [save]))
    with pytest.raises(ToolFailure) as raised:
        await ensure_actionable(ctx, save.target())
    assert raised.value.details == {"coveredBy": "the Mao Embed panel"}
    assert ctx.step.panel_moved_to == ""


async def test_an_element_that_keeps_moving_is_not_stable() -> None:
    page = FakePage()
    slider = element("slider")
    slider.boxes = [(float(i), 0.0, 10.0, 10.0) for i in range(20)]
    ctx, _ = context(page, FakeInspector(page, [slider]))
    with pytest.raises(ToolFailure) as raised:
        await ensure_actionable(ctx, slider.target())
    assert raised.value.code is ErrorCode.NOT_STABLE
    assert acts(page, "hit_test") == []


async def test_no_hit_test_for_actions_that_do_not_point() -> None:
    page = FakePage()
    field = element("name", "input")
    field.hits = [HitTest(Outcome.COVERED, 0, 0, "<div>")]
    ctx, acting = context(page, FakeInspector(page, [field]))
    assert await ensure_actionable(ctx, field.target(), hit=False) is None
    assert acts(page, "hit_test") == [] and acting == ["name"]


# -- strategies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "index"),
    [("m", 1), ("Large", 2), ("  large ", 2), ("LARGE\u00a0", 2), ("Huge", None), ("", None)],
)
def test_options_are_found_by_value_then_label_then_folded_label(
    wanted: str, index: int | None
) -> None:  # SPEC A1
    facts = [
        ["Small", "s", False, True, False],
        ["Medium", "m", False, True, False],
        ["Large", "l", False, True, False],
    ]
    assert options_module.find_option(facts, wanted).index == index


def test_an_earlier_rule_decides_and_two_matches_under_it_are_ambiguous() -> None:  # SPEC A1
    facts = [["Other", "x"], ["other", "y"], ["OTHER ", "z"], ["x", "w"]]
    # The value "x" wins over the label "x"; the exact label over the folded ones.
    assert options_module.find_option(facts, "x").index == 0
    assert options_module.find_option(facts, "other").index == 1
    loose = options_module.find_option(facts, "oTher")
    assert loose.index is None and loose.ambiguous and loose.matches == (0, 1, 2)


async def test_an_ambiguous_native_option_is_refused_listing_the_matches() -> None:  # SPEC A1
    page = FakePage()
    size = element(
        "size",
        "select",
        options=[
            ["s", "Small", True, False],
            ["s2", "small", False, False],
            ["l", "Large", False, False],
        ],
    )
    ctx, _ = context(page, FakeInspector(page, [size]))
    with pytest.raises(ToolFailure) as raised:
        await select_module.run(
            ctx, SelectAction(element_id="size", values=["SMALL"]), size.target()
        )
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert raised.value.details == {
        "matches": ["Small", "small"],
        "options": ["Small", "small", "Large"],
    }
    assert acts(page, "select_native") == []


# SPEC A1, A6
async def test_a_disabled_native_option_is_not_enabled_and_nothing_is_chosen() -> None:
    page = FakePage()
    size = element(
        "size", "select", options=[["s", "Small", True, False], ["l", "Large", False, True]]
    )
    ctx, _ = context(page, FakeInspector(page, [size]))
    with pytest.raises(ToolFailure) as raised:
        await select_module.run(
            ctx, SelectAction(element_id="size", values=["Large"]), size.target()
        )
    assert raised.value.code is ErrorCode.NOT_ENABLED
    assert acts(page, "select_native") == []


async def test_a_missing_native_option_is_not_found_listing_the_options() -> None:
    page = FakePage()
    size = element(
        "size", "select", options=[["s", "Small", True, False], ["l", "Large", False, False]]
    )
    ctx, _ = context(page, FakeInspector(page, [size]))
    with pytest.raises(ToolFailure) as raised:
        await select_module.run(
            ctx, SelectAction(element_id="size", values=["Gigantic"]), size.target()
        )
    assert raised.value.code is ErrorCode.NOT_FOUND
    assert raised.value.details == {"options": ["Small", "Large"]}


async def test_two_values_for_a_single_select_are_refused_before_acting() -> None:
    page = FakePage()
    size = element(
        "size", "select", options=[["s", "Small", True, False], ["l", "Large", False, False]]
    )
    ctx, _ = context(page, FakeInspector(page, [size]))
    with pytest.raises(ToolFailure) as raised:
        await select_module.run(
            ctx, SelectAction(element_id="size", values=["s", "l"]), size.target()
        )
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert page.acts == []


async def test_select_on_something_that_is_no_select_is_unsupported() -> None:
    page = FakePage()
    save = element("save")
    ctx, _ = context(page, FakeInspector(page, [save]))
    with pytest.raises(ToolFailure) as raised:
        await select_module.run(ctx, SelectAction(element_id="save", values=["x"]), save.target())
    assert raised.value.code is ErrorCode.UNSUPPORTED


async def test_checking_a_checked_box_changes_nothing() -> None:
    page = FakePage()
    gift = element("gift", "input", type="checkbox", checked=1)
    ctx, _ = context(page, FakeInspector(page, [gift]))
    assert await check_module.set_checked(ctx, gift.target(), True) == {
        "changed": False,
        "checked": True,
    }
    assert acts(page, "click") == []


async def test_unchecking_a_radio_is_refused() -> None:
    page = FakePage()
    express = element("express", "input", type="radio", checked=1)
    ctx, _ = context(page, FakeInspector(page, [express]))
    with pytest.raises(ToolFailure) as raised:
        await check_module.set_checked(ctx, express.target(), False)
    assert raised.value.code is ErrorCode.INVALID_REQUEST


async def test_a_click_that_did_not_check_the_box_is_a_verification_failure() -> None:
    page = FakePage()  # the fake's click changes nothing, like a page that ignores it
    gift = element("gift", "input", type="checkbox", checked=0)
    ctx, _ = context(page, FakeInspector(page, [gift]))
    with pytest.raises(ToolFailure) as raised:
        await check_module.set_checked(ctx, gift.target(), True)
    assert raised.value.code is ErrorCode.VERIFICATION_FAILED
    assert len(acts(page, "click")) == 1


@pytest.mark.parametrize(
    ("input_type", "value"), [("date", "17/05/2024"), ("number", "twelve"), ("color", "red")]
)
async def test_a_value_in_the_wrong_format_is_refused_and_nothing_is_filled(
    input_type: str, value: str
) -> None:
    page = FakePage()
    field = element("field", "input", type=input_type)
    ctx, _ = context(page, FakeInspector(page, [field]))
    with pytest.raises(ToolFailure) as raised:
        await fill_module.run(ctx, FillAction(element_id="field", value=value), field.target())
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert page.acts == []


async def test_a_value_the_page_reverted_is_a_verification_failure() -> None:
    page = FakePage()
    field = element("name", "input", type="text")
    page.fill = lambda handle, value: ""  # type: ignore[method-assign]  # the page throws it away
    ctx, _ = context(page, FakeInspector(page, [field]))
    with pytest.raises(ToolFailure) as raised:
        await fill_module.run(ctx, FillAction(element_id="name", value="Ada"), field.target())
    assert raised.value.code is ErrorCode.VERIFICATION_FAILED
    assert raised.value.details is not None and raised.value.details["status"] == "reverted"


@pytest.mark.parametrize(
    ("input_type", "asked", "shown", "same"),
    [
        ("number", "1280.5", "1280.50", True),
        ("number", "1280.5", "1280", False),
        ("text", "1280.5", "1,280.50", True),
        ("text", "1280.5", "1.280,5", True),
        ("text", "1280", "$ 1 280", True),
        ("text", "1280.5", "12805", False),  # the decimal mark dropped: ten times the amount
        ("text", "123", "12", False),  # cut to a maxlength of 2
        ("text", "0012", "12", False),  # a code's leading zeros count
        ("text", "spring24", "SPRING24", True),
        ("tel", "5551234567", "(555) 123-4567", True),
        ("text", "Ada", "Grace", False),
        ("email", "Ada@Example.com", "ada@example.com", True),
        ("time", "08:30", "08:30:00", True),
        ("time", "08:30", "08:31", False),
        ("datetime-local", "2024-05-17T08:30:00", "2024-05-17T08:30", True),
        ("color", "#FFAA00", "#ffaa00", True),
        ("date", "2024-05-17", "2024-05-18", False),
        ("text", "2024-05-17", "17/05/2024", True),  # a picker's own display format
        ("text", "2024-05-17", "May 17, 2024", True),
        ("text", "2024-05-17", "2024/05/18", False),
        ("text", "14:30", "2:30 PM", True),
        ("text", "14:30", "2:30 AM", False),
    ],
)
def test_a_value_shown_differently_is_the_same_value_only_when_its_type_says_so(
    input_type: str, asked: str, shown: str, same: bool
) -> None:  # SPEC A3
    field = element("field", "input", type=input_type)
    assert fill_module.same_value(field.row, asked, shown) is same


# SPEC A3, P5
async def test_a_value_the_page_cut_short_is_a_verification_failure_not_reformatted() -> None:
    page = FakePage()
    field = element("code", "input", type="text")
    page.fill = lambda handle, value: setattr(handle, "value", value[:2]) or handle.value  # type: ignore[method-assign]
    ctx, _ = context(page, FakeInspector(page, [field]))
    with pytest.raises(ToolFailure) as raised:
        await fill_module.run(ctx, FillAction(element_id="code", value="AB-123"), field.target())
    assert raised.value.code is ErrorCode.VERIFICATION_FAILED
    assert raised.value.details is not None and raised.value.details["status"] == "changed"
    assert raised.value.details["value"] == "AB"


# SPEC A3, A6
async def test_a_value_longer_than_the_fields_maxlength_is_refused_before_acting() -> None:
    # A user's typing would stop at two characters; the setter would store all three.
    page = FakePage()
    field = element("code", "input", type="text")
    field.max_length = 2
    ctx, _ = context(page, FakeInspector(page, [field]))
    with pytest.raises(ToolFailure) as raised:
        await fill_module.run(ctx, FillAction(element_id="code", value="abc"), field.target())
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert raised.value.details is not None and raised.value.details["maxLength"] == 2
    assert [a for a in page.acts if a[0] in ("fill", "focus")] == []
    outcome = await fill_module.run(ctx, FillAction(element_id="code", value="ab"), field.target())
    assert outcome["status"] == "applied"


async def test_a_number_the_page_shows_with_grouping_is_reformatted() -> None:  # SPEC A3
    page = FakePage()
    field = element("amount", "input", type="text")
    page.fill = lambda handle, value: setattr(handle, "value", "1,280.50") or handle.value  # type: ignore[method-assign]
    ctx, _ = context(page, FakeInspector(page, [field]))
    outcome = await fill_module.run(
        ctx, FillAction(element_id="amount", value="1280.5"), field.target()
    )
    assert (outcome["status"], outcome["value"]) == ("reformatted", "1,280.50")


@pytest.mark.parametrize(
    ("key", "tag", "columns", "act"),
    [
        ("Enter", "textarea", {}, ("insert_text", "\n")),
        ("Enter", "button", {}, ("activate",)),
        (" ", "input", {"type": "checkbox"}, ("activate",)),
        ("a", "input", {"type": "text"}, ("insert_text", "a")),
        ("Backspace", "input", {"type": "text"}, ("delete_text", False)),
    ],
    ids=["enter-textarea", "enter-button", "space-checkbox", "char-text", "backspace-text"],
)
async def test_default_actions_of_keys(
    key: str, tag: str, columns: dict[str, Any], act: tuple[Any, ...]
) -> None:
    page = FakePage()
    focused = element("f", tag, **columns)
    ctx, _ = context(page, FakeInspector(page, [focused]))
    emulated: list[str] = []
    await keyboard_module.press(ctx, focused, parse_key(key), emulated)
    performed = [a for a in page.acts if a[0] == act[0]]
    assert performed == [(act[0], "f", *act[1:])]
    assert [a[1] for a in page.acts if a[0] == "key"] == [
        "keydown",
        *(["keypress"] if len(key) == 1 or key == "Enter" else []),
        "keyup",
    ]
    assert emulated


async def test_a_shortcut_is_the_pages_and_types_nothing() -> None:
    page = FakePage()
    field = element("f", "input", type="text")
    ctx, _ = context(page, FakeInspector(page, [field]))
    emulated: list[str] = []
    await keyboard_module.press(ctx, field, parse_key("Control+s"), emulated)
    assert acts(page, "insert_text") == [] and emulated == []
    assert [a[1:] for a in page.acts if a[0] == "key"] == [
        ("keydown", "Control"),
        ("keydown", "s"),
        ("keyup", "s"),
        ("keyup", "Control"),
    ]


# -- what a click changed (SPEC A4: "nothing happened" is a result, never a silent success) ----


async def test_a_click_that_changes_nothing_says_effect_none() -> None:
    page = FakePage()
    noop = element("noop")
    batch, _ = runner(page, [noop])
    result = await batch.run_actions(request({"action": "click", "elementId": "noop"}))
    assert result.success is True
    assert result.result["steps"][0]["outcome"]["effect"] == "none"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ("mutations", ["dom"]),
        ("url", ["url"]),
        ("navigation", ["navigation"]),
        ("values", ["values"]),
        ("scroll", ["scroll"]),
        ("focus", ["focus"]),
        ("dialog", ["dialog"]),
    ],
)
async def test_a_click_that_changed_something_names_it(change: str, named: list[str]) -> None:
    page = FakePage()
    button, other = element("button"), element("other", "input")
    batch, _ = runner(page, [button, other])

    def act() -> None:
        if change == "mutations":
            page.mutations += 3
        elif change == "url":
            page.url += "?step=2"
        elif change == "navigation":
            page.navigations += 1
        elif change == "values":
            page.values += 1
        elif change == "scroll":
            page.scroll = (0.0, 400.0)
        elif change == "focus":
            page.focused = other

    page.on_click["button"] = act
    if change == "dialog":
        page.intercept_dialogs = lambda: SimpleNamespace(restore=lambda: [["alert", "Saved"]])  # type: ignore[method-assign]
    result = await batch.run_actions(request({"action": "click", "elementId": "button"}))
    outcome = result.result["steps"][0]["outcome"]
    assert outcome["effect"] == "changed"
    assert outcome["effects"] == named


async def test_focus_moving_to_the_clicked_element_itself_is_no_effect() -> None:
    page = FakePage()
    button = element("button")
    page.on_click["button"] = lambda: setattr(page, "focused", button)
    batch, _ = runner(page, [button])
    result = await batch.run_actions(request({"action": "click", "elementId": "button"}))
    assert result.result["steps"][0]["outcome"]["effect"] == "none"


async def test_hover_points_at_a_disabled_control_too_and_reports_what_opened() -> None:
    # A disabled button can still show a tooltip; a hover is no click, so disabled is no refusal.
    page = FakePage()
    off = element("off", disabled=True)
    page.on_hover["off"] = lambda: setattr(page, "mutations", page.mutations + 1)
    batch, _ = runner(page, [off])
    result = await batch.run_actions(request({"action": "hover", "elementId": "off"}))
    assert result.success is True
    assert [a[0] for a in page.acts if a[0] in ("hover", "click")] == ["hover"]
    assert result.result["steps"][0]["outcome"]["effects"] == ["dom"]


async def test_hover_waits_for_a_menu_that_opens_after_the_pointer_rests() -> None:
    # SPEC A6, P5: a hover menu with an open delay (Vuetify: 300 ms) changes the page after
    # the settle saw it quiet; the answer reports that change, not "none".
    page = FakePage()
    more = element("more")

    async def open_later() -> None:
        await asyncio.sleep(0.4)
        page.mutations += 1

    page.on_hover["more"] = lambda: asyncio.ensure_future(open_later())
    batch, _ = runner(page, [more])
    result = await batch.run_actions(request({"action": "hover", "elementId": "more"}))
    outcome = result.result["steps"][0]["outcome"]
    assert outcome["effect"] == "changed" and outcome["effects"] == ["dom"]
    assert outcome["settle"]["waitedMs"] >= 400


async def test_a_hover_that_changes_nothing_says_none() -> None:
    page = FakePage()
    batch, _ = runner(page, [element("plain")])
    result = await batch.run_actions(request({"action": "hover", "elementId": "plain"}))
    assert result.success is True
    assert result.result["steps"][0]["outcome"]["effect"] == "none"


async def test_hover_on_a_covered_element_is_obscured() -> None:
    page = FakePage()
    trigger = element("trigger")
    trigger.hits = [HitTest(Outcome.COVERED, 1, 1, "<div#mask>")]
    batch, _ = runner(page, [trigger])
    result = await batch.run_actions(request({"action": "hover", "elementId": "trigger"}))
    assert result.error is not None and result.error.code is ErrorCode.OBSCURED
    assert acts(page, "hover") == []


# -- keyboard default actions where a real press has them ----------------------------------------


def key_log(page: FakePage) -> list[Any]:
    """Key events and default actions in the order they happened."""
    return [
        a[1] if a[0] == "key" else a[0]
        for a in page.acts
        if a[0] in ("key", "activate", "submit_implicitly")
    ]


async def test_space_activates_on_keyup_like_a_real_press() -> None:
    page = FakePage()
    button = element("b")
    ctx, _ = context(page, FakeInspector(page, [button]))
    await keyboard_module.press(ctx, button, parse_key("Space"), [])
    assert key_log(page) == ["keydown", "keypress", "keyup", "activate"]


async def test_space_is_not_activated_when_the_page_cancels_keyup() -> None:
    page = FakePage()
    page.cancelled_keys = {"keyup"}
    box = element("c", "input", type="checkbox")
    ctx, _ = context(page, FakeInspector(page, [box]))
    await keyboard_module.press(ctx, box, parse_key("Space"), [])
    assert "activate" not in key_log(page)


async def test_enter_on_a_link_follows_it_on_keydown_without_a_keypress() -> None:
    page = FakePage()
    link = element("l", "a", href="#next")
    ctx, _ = context(page, FakeInspector(page, [link]))
    emulated: list[str] = []
    await keyboard_module.press(ctx, link, parse_key("Enter"), emulated)
    assert key_log(page) == ["keydown", "activate", "keyup"]
    assert emulated == ["followLink"]


@pytest.mark.parametrize("key", ["Enter", "Space"])
async def test_keys_on_an_element_with_only_a_role_have_no_default_action(key: str) -> None:
    # A div with role=button does nothing on a real Enter or Space; the page's key handlers,
    # which get our key events, are what make such widgets work.
    page = FakePage()
    widget = element("w", "div", role="button", tabindex="0")
    ctx, _ = context(page, FakeInspector(page, [widget]))
    emulated: list[str] = []
    await keyboard_module.press(ctx, widget, parse_key(key), emulated)
    assert "activate" not in key_log(page) and emulated == []


async def test_space_on_a_link_does_not_follow_it() -> None:
    page = FakePage()
    link = element("l", "a", href="#next")
    ctx, _ = context(page, FakeInspector(page, [link]))
    await keyboard_module.press(ctx, link, parse_key("Space"), [])
    assert "activate" not in key_log(page)


@pytest.mark.parametrize(
    ("submission", "note"),
    [
        (Submission.SUBMITTED, ["submitForm"]),
        (Submission.CLICKED_DEFAULT, ["clickDefaultButton"]),
        (Submission.TOO_MANY_FIELDS, ["noSubmit(severalFields)"]),
        (Submission.DEFAULT_DISABLED, ["noSubmit(defaultButtonDisabled)"]),
        (Submission.NONE, []),
    ],
)
async def test_enter_in_a_field_reports_what_implicit_submission_did(
    submission: Submission, note: list[str]
) -> None:
    page = FakePage()
    page.submission = submission
    field = element("f", "input", type="text")
    ctx, _ = context(page, FakeInspector(page, [field]))
    emulated: list[str] = []
    await keyboard_module.press(ctx, field, parse_key("Enter"), emulated)
    assert key_log(page) == ["keydown", "keypress", "submit_implicitly", "keyup"]
    assert emulated == note


async def test_a_cancelled_keypress_does_not_submit() -> None:
    page = FakePage()
    page.cancelled_keys = {"keypress"}
    field = element("f", "input", type="text")
    ctx, _ = context(page, FakeInspector(page, [field]))
    await keyboard_module.press(ctx, field, parse_key("Enter"), [])
    assert "submit_implicitly" not in key_log(page)
