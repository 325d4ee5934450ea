"""The authorization center's pure logic on CPython (SPEC P1-P4, U2): risk, grant
keys and their validation, levels, and what counts as the user's answer to a card."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from mao_page.errors import ToolFailure
from mao_page.protocol import (
    ClickAction,
    ErrorCode,
    FillAction,
    InspectOptions,
    KeyboardAction,
    PageToolRequest,
    ToolName,
)
from mao_page.snapshot.store import ElementEntry
from mao_page.supervision.authorization import (
    ACTIONS,
    AuthorizationCenter,
    Decision,
    GrantKey,
    GrantStore,
    HostPolicy,
    Level,
    OptionsError,
    decode_grant,
    encode_grant,
    parse_host_policy,
)
from mao_page.supervision.risk import RiskReason, Target, classify
from mao_page.supervision.supervisor import CARD_ARM_S, MASK, Supervisor

from .page_rows import scanned

PAGE = "https://shop.example"

# -- risk (SPEC P4) -------------------------------------------------------------------------


def button(label: str, **fields: Any) -> Target:
    return Target(**{"role": "button", "tag": "button", "type": "button", "label": label, **fields})


@pytest.mark.parametrize(
    "label", ["Delete", "Remove item", "删除", "移除", "清空购物车", "Cancel my subscription"]
)
def test_destructive_wording_is_high_risk_in_english_and_chinese(label):
    assert classify("click", button(label), page_origin=PAGE).reasons == (RiskReason.DESTRUCTIVE,)


@pytest.mark.parametrize(
    "label", ["Pay now", "Payment", "Transfer", "支付", "转账", "立即购买", "Checkout"]
)
def test_payment_wording_is_high_risk_in_english_and_chinese(label):
    assert RiskReason.PAYMENT in classify("click", button(label), page_origin=PAGE).reasons


def test_submit_order_in_chinese_is_a_submission_and_a_payment():
    risk = classify(
        "click",
        button("提交订单", type="submit", in_form=True, form_action=PAGE + "/orders"),
        page_origin=PAGE,
    )
    assert risk.reasons == (RiskReason.SUBMIT, RiskReason.PAYMENT)


@pytest.mark.parametrize(
    "label", ["Count me", "Display", "PayPal help", "Next page", "Undelete? no: Show details"]
)
def test_ordinary_buttons_are_low_risk(label):
    assert not classify("click", button(label), page_origin=PAGE).high


def test_a_button_without_type_inside_a_form_submits_it():
    # <button> defaults to type=submit: the element's `type` property, not the attribute.
    assert classify(
        "click", button("Save", type="submit", in_form=True), page_origin=PAGE
    ).reasons == (RiskReason.SUBMIT,)
    assert not classify(
        "click", button("Save", type="submit", in_form=False), page_origin=PAGE
    ).high


def test_a_form_posting_to_another_origin_is_named():
    risk = classify(
        "click",
        button("Save", type="submit", in_form=True, form_action="https://collector.example/x"),
        page_origin=PAGE,
    )
    assert risk.reasons == (RiskReason.SUBMIT, RiskReason.CROSS_ORIGIN_FORM)
    assert risk.form_origin == "https://collector.example"


def test_enter_in_a_form_text_field_submits_it():
    field = Target(role="textbox", tag="input", type="text", label="Search", in_form=True)
    assert classify("keyboard", field, page_origin=PAGE, key="Enter").reasons == (
        RiskReason.SUBMIT,
    )
    assert not classify("keyboard", field, page_origin=PAGE, key="Tab").high


def test_enter_or_space_on_a_focused_control_is_rated_as_a_click_on_it():  # SPEC P4
    # The executor activates a focused button on Enter or Space, which is a click on it.
    order = button("Place order", type="submit", in_form=True)
    assert classify("keyboard", order, page_origin=PAGE, key="Enter") == classify(
        "click", order, page_origin=PAGE
    )
    assert classify("keyboard", order, page_origin=PAGE, key="Enter").reasons == (
        RiskReason.SUBMIT,
        RiskReason.PAYMENT,
    )
    assert classify("keyboard", button("Delete"), page_origin=PAGE, key="Space").reasons == (
        RiskReason.DESTRUCTIVE,
    )
    assert not classify("keyboard", button("Delete"), page_origin=PAGE, key="Tab").high


def test_typed_text_with_a_newline_in_a_form_field_submits_it():  # SPEC P4
    field = Target(role="textbox", tag="input", type="text", label="Search", in_form=True)
    assert classify("keyboard", field, page_origin=PAGE, text="shoes\n").reasons == (
        RiskReason.SUBMIT,
    )
    assert not classify("keyboard", field, page_origin=PAGE, text="red shoes").high


def test_sensitive_fields_are_high_risk_to_fill():
    password = Target(
        role="textbox", tag="input", type="password", label="Password", sensitive=True
    )
    assert classify("fill", password, page_origin=PAGE).reasons == (RiskReason.SENSITIVE,)


def test_reading_and_scrolling_are_low_risk():
    for action in ("observe", "wait", "scroll"):
        assert not classify(action, button("Delete"), page_origin=PAGE).high


# -- grant keys and stored grants (SPEC P3) --------------------------------------------------


KEY = GrantKey.of(
    server_url="https://mao.example/",
    user_id="u1",
    origin=PAGE,
    agent_id="a1",
    actions=ACTIONS,
    policy_version="1",
)


@pytest.mark.parametrize("field, value", [
    ("server_url", "https://other.example"), ("user_id", "u2"), ("origin", "https://evil.example"),
    ("agent_id", "a2"), ("scope", ("click",)), ("policy_version", "2"),
])
def test_each_key_field_isolates_grants(field, value):
    other = replace(KEY, **{field: value})
    assert other.storage_key() != KEY.storage_key()
    # A record written for one key is not valid under another, even when copied across.
    assert decode_grant(other, encode_grant(KEY, 1000)) is None


def test_storage_key_is_bounded_and_does_not_spell_out_the_user():
    key = KEY.storage_key()
    assert key.startswith("mao-embed.grant.") and len(key) == len("mao-embed.grant.") + 32
    assert "u1" not in key


def test_a_stored_grant_round_trips_and_holds_only_its_key_fields():
    raw = encode_grant(KEY, 1234.0)
    assert decode_grant(KEY, raw) == 1234.0
    record = json.loads(raw)
    assert set(record) == {
        "v",
        "level",
        "serverUrl",
        "user",
        "origin",
        "agentId",
        "scope",
        "policyVersion",
        "grantedAt",
    }


@pytest.mark.parametrize("tamper", [
    lambda r: {**r, "v": 99},
    lambda r: {**r, "level": "task"},
    lambda r: {**r, "token": "secret"},
    lambda r: {k: v for k, v in r.items() if k != "grantedAt"},
    lambda r: {**r, "grantedAt": "yesterday"},
    lambda r: {**r, "scope": ["click"]},
])
def test_invalid_stored_grants_are_ignored(tamper):
    record = tamper(json.loads(encode_grant(KEY, 1000)))
    assert decode_grant(KEY, json.dumps(record)) is None


@pytest.mark.parametrize("raw", ["", "not json", "[]", "null", '{"v": 1}'])
def test_garbage_in_storage_is_ignored(raw):
    assert decode_grant(KEY, raw) is None


class DictStorage:
    def __init__(self) -> None:
        self.items: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self.items.get(key)

    def set(self, key: str, value: str) -> None:
        self.items[key] = value

    def remove(self, key: str) -> None:
        self.items.pop(key, None)


def test_an_invalid_record_is_removed_on_read():
    storage = DictStorage()
    storage.set(KEY.storage_key(), '{"v": 1, "level": "full"}')
    assert GrantStore(storage, KEY).read() is False
    assert storage.items == {}


# -- levels (SPEC P1, P2) -----------------------------------------------------------------------


def center(
    storage: DictStorage | None = None,
    policy: HostPolicy | None = None,
    changes: list | None = None,
) -> AuthorizationCenter:
    sink = changes if changes is not None else []
    return AuthorizationCenter(
        GrantStore(storage or DictStorage(), KEY), policy or HostPolicy(), on_change=sink.append
    )


def test_default_level_is_per_action_and_every_acting_step_is_confirmed():
    c = center()
    assert c.level is Level.PER_ACTION
    assert c.decide("click", task_id="t1") is Decision.CONFIRM
    assert c.decide("observe", task_id="t1") is Decision.ALLOW


def test_host_cannot_raise_the_initial_level():
    assert center(policy=parse_host_policy({"level": "full"})).level is Level.PER_ACTION
    assert center(policy=parse_host_policy({"level": "task"})).level is Level.PER_ACTION


def test_host_can_lower_a_stored_full_grant_for_this_page_load():
    storage = DictStorage()
    center(storage).grant(Level.FULL, task_id=None)
    assert center(storage).level is Level.FULL
    assert center(storage, parse_host_policy({"level": "per_action"})).level is Level.PER_ACTION
    assert GrantStore(storage, KEY).read()  # lowered, not revoked


def test_host_scope_narrowing_denies_other_actions():
    c = center(policy=parse_host_policy({"actions": ["scroll", "observe"]}))
    assert c.decide("click", task_id="t1") is Decision.DENY
    assert c.decide("scroll", task_id="t1") is Decision.CONFIRM


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"level": "root"}, "level"),
        ({"actions": ["click", "eval"]}, "unknown actions"),
        ({"actions": "click"}, "list"),
        ({"scope": []}, "unknown keys"),
        ({"confirmationTimeoutMs": 5}, "confirmationTimeoutMs"),
        ([], "object"),
    ],
)
def test_malformed_host_options_are_errors_not_ignored(raw, message):
    with pytest.raises(OptionsError, match=message):
        parse_host_policy(raw)


def test_full_is_persisted_and_revoke_clears_it():
    storage = DictStorage()
    changes: list = []
    c = center(storage, changes=changes)
    c.grant(Level.FULL, task_id=None)
    assert c.decide("click", task_id=None) is Decision.ALLOW
    assert len(storage.items) == 1
    c.revoke()
    assert storage.items == {} and c.level is Level.PER_ACTION
    assert [(ch.previous, ch.level, ch.reason) for ch in changes] == [
        (Level.PER_ACTION, Level.FULL, "user"), (Level.FULL, Level.PER_ACTION, "revoked")]


def test_full_revoked_in_another_tab_takes_effect_at_the_next_decision():
    storage = DictStorage()
    c = center(storage)
    c.grant(Level.FULL, task_id=None)
    storage.items.clear()
    assert c.decide("click", task_id=None) is Decision.CONFIRM
    assert c.level is Level.PER_ACTION


def test_task_grant_ends_with_its_task():
    c = center()
    c.grant(Level.TASK, task_id="t1")
    assert c.decide("click", task_id="t1") is Decision.ALLOW
    assert c.decide("click", task_id="t2") is Decision.CONFIRM
    assert c.level is Level.PER_ACTION


def test_downgrading_from_full_removes_the_stored_grant():
    storage = DictStorage()
    c = center(storage)
    c.grant(Level.FULL, task_id=None)
    c.grant(Level.TASK, task_id="t1")
    assert storage.items == {}


def test_agent_asking_for_confirmation_gets_it_even_under_full():
    c = center()
    c.grant(Level.FULL, task_id=None)
    assert c.decide("click", task_id=None, require_confirmation=True) is Decision.CONFIRM


# -- confirmation cards: only trusted input with the card's nonce answers (SPEC U2) -----------


class RecordingUi:
    locale = "en"

    def __init__(self) -> None:
        self.cards: list[dict[str, Any]] = []
        self.closed: list[str] = []
        self.status = ""

    def set_status(self, state: str, text: str) -> None:
        self.status = state

    def set_level(self, level: str, actions: list[str]) -> None: ...
    def show_card(self, card: dict[str, Any]) -> None:
        self.cards.append(card)

    def close_card(self, nonce: str) -> None:
        self.closed.append(nonce)

    def log(self, entry: dict[str, Any]) -> None: ...
    def chat(self, role: str, text: str) -> None: ...
    def show_error(self, text: str) -> None: ...
    def highlight(self, handle: Any, label: str, sticky: bool) -> None: ...
    def clear_highlight(self) -> None: ...


def make_supervisor(
    policy: HostPolicy | None = None, describe_focus: Any = lambda: None
) -> tuple[Supervisor, RecordingUi, list]:
    ui = RecordingUi()
    audit: list = []
    holder: dict[str, Supervisor] = {}
    c = AuthorizationCenter(GrantStore(DictStorage(), KEY), policy or HostPolicy(),
                            on_change=lambda change: holder["s"].on_level_change(change))
    supervisor = Supervisor(
        center=c,
        ui=ui,
        page_origin=PAGE,
        describe_target=lambda e: Target(role=e.role, label=e.label, sensitive=e.sensitive),
        audit=audit.append,
        arm_takeover=lambda armed: None,
        send_chat=lambda t, m: True,
        cancel_running=lambda reason: None,
        describe_focus=describe_focus,
    )
    holder["s"] = supervisor
    return supervisor, ui, audit


ENTRY = ElementEntry(
    element_id="e1",
    handle=None,
    element=scanned(
        tag="input", kind="form-control", role="textbox", type="password", label="Password",
        sensitive=True,
    ),
)
REQUEST = PageToolRequest(request_id="r1", session_id="s1", tool=ToolName.FILL, snapshot_id="s1",
                          actions=[FillAction(element_id="e1", value="hunter2")])


async def answer_first_card(supervisor: Supervisor, ui: RecordingUi, answers) -> None:
    """As the user: wait for the first card, let it arm, then send ``answers(nonce)``."""
    while not ui.cards:
        await asyncio.sleep(0.01)
    await asyncio.sleep(CARD_ARM_S + 0.05)
    for kind, detail in answers(ui.cards[0]["nonce"]):
        supervisor.on_ui(kind, detail)


def decision(choice: str):
    return lambda nonce: [("card", {"nonce": nonce, "decision": choice, "trusted": True})]


async def run_card(
    answers,
    request: PageToolRequest = REQUEST,
    entry: ElementEntry | None = ENTRY,
    describe_focus: Any = lambda: None,
) -> tuple[ToolFailure | None, RecordingUi, list]:
    supervisor, ui, audit = make_supervisor(describe_focus=describe_focus)
    assert supervisor.begin_request(request) is None

    helper = asyncio.ensure_future(answer_first_card(supervisor, ui, answers))
    try:
        await asyncio.wait_for(supervisor.authorize(request.actions[0], entry), 2)
        failure = None
    except ToolFailure as error:
        failure = error
    except TimeoutError:
        failure = ToolFailure(ErrorCode.TIMEOUT, "test: no answer counted")
    await helper
    return failure, ui, audit


def test_allow_once_with_the_cards_nonce_and_trusted_input_approves():
    failure, ui, audit = asyncio.run(
        run_card(lambda nonce: [("card", {"nonce": nonce, "decision": "once", "trusted": True})])
    )
    assert failure is None
    assert [e.decision for e in audit if e.kind == "confirmation"] == ["allowed_once"]


def test_untrusted_input_approves_nothing():
    failure, _, _ = asyncio.run(
        run_card(lambda nonce: [("card", {"nonce": nonce, "decision": "once", "trusted": False})])
    )
    assert failure is not None and failure.code is ErrorCode.TIMEOUT


def test_a_wrong_nonce_approves_nothing():
    failure, _, _ = asyncio.run(
        run_card(
            lambda nonce: [("card", {"nonce": nonce + "x", "decision": "once", "trusted": True})]
        )
    )
    assert failure is not None and failure.code is ErrorCode.TIMEOUT


def test_deny_ends_as_user_rejected():
    failure, _, audit = asyncio.run(
        run_card(lambda nonce: [("card", {"nonce": nonce, "decision": "deny", "trusted": True})])
    )
    assert failure is not None and failure.code is ErrorCode.USER_REJECTED
    assert [e.decision for e in audit if e.kind == "confirmation"] == ["denied"]


def test_a_sensitive_value_is_masked_on_the_card():
    _, ui, _ = asyncio.run(
        run_card(lambda nonce: [("card", {"nonce": nonce, "decision": "deny", "trusted": True})])
    )
    card = ui.cards[0]
    assert card["value"] == MASK and "hunter2" not in json.dumps(card)
    assert card["risk"] == "high"


def deny(nonce: str) -> list[tuple[str, dict[str, Any]]]:
    return [("card", {"nonce": nonce, "decision": "deny", "trusted": True})]


def keyboard_request(**fields: Any) -> PageToolRequest:
    return PageToolRequest(
        request_id="r3", session_id="s1", tool=ToolName.KEYBOARD, actions=[KeyboardAction(**fields)]
    )


SEARCH_FIELD = Target(role="textbox", tag="input", type="text", label="Search", in_form=True)


def test_keys_without_a_ref_are_rated_and_shown_on_the_focused_element():  # SPEC P4, U2
    # Enter in a focused form field submits the form: the card says so, as for a submit button.
    failure, ui, audit = asyncio.run(run_card(deny, keyboard_request(key="Enter"), None,
                                              describe_focus=lambda: ("handle", SEARCH_FIELD)))
    assert failure is not None and failure.code is ErrorCode.USER_REJECTED
    card = ui.cards[0]
    assert card["risk"] == "high" and "submits a form" in card["riskText"]
    assert card["target"] == "textbox \u201cSearch\u201d"
    assert [(e.target, e.risk) for e in audit if e.kind == "confirmation"] == [("Search", "high")]


def test_keys_typed_into_a_focused_sensitive_field_are_masked_on_the_card():  # SPEC P5
    password = Target(
        role="textbox", tag="input", type="password", label="Password", sensitive=True
    )
    _, ui, _ = asyncio.run(
        run_card(
            deny,
            keyboard_request(text="hunter2"),
            None,
            describe_focus=lambda: ("handle", password),
        )
    )
    assert ui.cards[0]["value"] == MASK and "hunter2" not in json.dumps(ui.cards[0])


def test_keys_with_nothing_focused_are_low_risk_on_the_page():
    _, ui, _ = asyncio.run(run_card(deny, keyboard_request(key="Enter"), None))
    assert ui.cards[0]["risk"] == "low" and ui.cards[0]["target"] == "the page"


INSPECT_UNMASKED = PageToolRequest(request_id="r4", session_id="s1", tool=ToolName.INSPECT,
                                   inspect=InspectOptions(mask_sensitive=False))


def test_sensitive_values_are_released_only_under_task_or_full():  # SPEC P5
    async def scenario() -> list[bool]:
        supervisor, ui, _ = make_supervisor()
        supervisor.begin_request(INSPECT_UNMASKED)
        released = [await supervisor.release_sensitive_values(INSPECT_UNMASKED)]
        for kind, detail in [
            ("level", {"level": "task"}),
            ("level", {"level": "full"}),
            ("revoke", {}),
        ]:
            supervisor.on_ui(kind, {**detail, "trusted": True})
            released.append(await supervisor.release_sensitive_values(INSPECT_UNMASKED))
        assert ui.cards == []  # never a card without requireConfirmation
        return released

    assert asyncio.run(scenario()) == [False, True, True, False]


# SPEC P5, U2
def test_an_agent_asking_for_confirmation_gets_sensitive_values_only_after_the_user_allows():
    async def scenario() -> ErrorCode:
        supervisor, ui, _ = make_supervisor()
        supervisor.on_ui("level", {"level": "full", "trusted": True})
        request = INSPECT_UNMASKED.model_copy(update={"require_confirmation": True})
        supervisor.begin_request(request)

        helper = asyncio.ensure_future(answer_first_card(supervisor, ui, decision("deny")))
        with pytest.raises(ToolFailure) as caught:
            await supervisor.release_sensitive_values(request)
        await helper
        assert "sensitive fields" in ui.cards[0]["action"]
        return caught.value.code

    assert asyncio.run(scenario()) is ErrorCode.USER_REJECTED


def test_a_pending_card_times_out_as_confirmation_timeout():
    async def scenario() -> ToolFailure:
        supervisor, ui, audit = make_supervisor(parse_host_policy({"confirmationTimeoutMs": 1000}))
        supervisor.begin_request(REQUEST)
        with pytest.raises(ToolFailure) as caught:
            await supervisor.authorize(REQUEST.actions[0], ENTRY)
        assert ui.closed == [ui.cards[0]["nonce"]]
        return caught.value

    assert asyncio.run(scenario()).code is ErrorCode.CONFIRMATION_TIMEOUT


def test_allow_for_this_task_grants_task_until_the_task_ends():
    async def scenario() -> None:
        supervisor, ui, _ = make_supervisor()
        supervisor.begin_request(REQUEST)

        helper = asyncio.ensure_future(answer_first_card(supervisor, ui, decision("task")))
        await supervisor.authorize(REQUEST.actions[0], ENTRY)
        await helper
        assert supervisor.center.level is Level.TASK
        plain = ENTRY._replace(element=ENTRY.element._replace(sensitive=False))
        await supervisor.authorize(ClickAction(element_id="e1"), plain)
        assert len(ui.cards) == 1  # no second card
        supervisor.stop()
        assert supervisor.center.level is Level.PER_ACTION

    asyncio.run(scenario())


def test_untrusted_level_changes_do_nothing():
    supervisor, _, _ = make_supervisor()
    supervisor.on_ui("level", {"level": "full", "trusted": False})
    assert supervisor.center.level is Level.PER_ACTION
    supervisor.on_ui("level", {"level": "full", "trusted": True})
    assert supervisor.center.level is Level.FULL


def test_after_stop_requests_are_refused_until_the_user_resumes():
    supervisor, _, _ = make_supervisor()
    supervisor.on_ui("stop", {"trusted": True})
    refusal = supervisor.begin_request(REQUEST)
    assert refusal is not None and refusal.error.code is ErrorCode.USER_STOPPED
    supervisor.on_ui("resume", {"trusted": True})
    assert supervisor.begin_request(REQUEST) is None


def test_takeover_pauses_only_a_running_task():
    supervisor, _, audit = make_supervisor()
    supervisor.on_takeover()
    assert supervisor.state == "idle"
    supervisor.begin_request(REQUEST)
    supervisor.on_takeover()
    refusal = supervisor.begin_request(REQUEST)
    assert refusal is not None and refusal.error.code is ErrorCode.USER_TAKEOVER
    assert [e.kind for e in audit][-1] == "takeover"
