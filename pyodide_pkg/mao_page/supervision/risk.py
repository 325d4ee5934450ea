"""Risk of one page action (SPEC P4).

High risk: submitting a form (a submit button, Enter in a form field), destructive or payment
wording on the target (English and Chinese), sensitive fields (SPEC P5), and forms that post
to another origin. A key that activates a control (Enter on a button or link, Space on a
button) is rated as a click on it; ``page_keyboard`` without a ref is rated on the element
that has focus, which is where the keys go. The words are matched on what the user sees (the
accessible name and the visible text), never on class names or ids, which are the page's
internals and change without notice.

Risk does not decide on its own: under ``per_action`` every acting step is confirmed and the
card shows the risk; ``task`` and ``full`` run high-risk steps too, with the same validity
checks and verification as any other step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit


class RiskReason(StrEnum):
    SUBMIT = "submit"
    DESTRUCTIVE = "destructive"
    PAYMENT = "payment"
    SENSITIVE = "sensitive"
    CROSS_ORIGIN_FORM = "cross_origin_form"


@dataclass(frozen=True, slots=True)
class Target:
    """What the risk rules read about the element an action targets."""

    role: str = ""
    tag: str = ""
    type: str = ""  # the element's `type` property: "submit" for a <button> without one
    label: str = ""
    text: str = ""
    sensitive: bool = False
    in_form: bool = False
    form_action: str = ""  # resolved URL of the owning form's action ("" when none)


@dataclass(frozen=True, slots=True)
class Risk:
    reasons: tuple[RiskReason, ...] = ()
    form_origin: str = ""  # the other origin a cross-origin form posts to

    @property
    def high(self) -> bool:
        return bool(self.reasons)

    @property
    def level(self) -> str:
        return "high" if self.reasons else "low"


LOW = Risk()

# Word boundaries for English so "Payment" matches "pay"-words but "PayPal" and "display" do
# not; Chinese has no word boundaries, the phrases are matched as they are.
_DESTRUCTIVE = re.compile(
    r"\b(delete|deleting|remove|removing|erase|destroy|discard|purge|wipe|clear all|empty (the "
    r")?(trash|cart|bin)"
    r"|close (my )?account|cancel (my "
    r")?(account|subscription|order)|unsubscribe|revoke|terminate|deactivate)\b"
    r"|删除|移除|清空|销毁|注销|撤销|作废|解绑|取消订单|取消订阅",
    re.IGNORECASE,
)
_PAYMENT = re.compile(
    r"\b(pay|pay now|payment|purchase|buy|buy now|checkout|check out|place (the )?order|submit "
    r"order|confirm order"
    r"|transfer|send money|wire|withdraw|refund|donate|subscribe|top up|recharge)\b"
    r"|支付|付款|转账|汇款|提现|充值|购买|下单|提交订单|确认订单|结算|退款|打款",
    re.IGNORECASE,
)
_SUBMIT_WORDS = re.compile(r"\b(submit|send|confirm)\b|提交|确认提交|发送", re.IGNORECASE)
_CLICKED_CONTROL_TAGS = frozenset({"button", "input"})
_SUBMIT_TYPES = frozenset({"submit", "image"})
# What Enter and Space activate: natively (actions/keyboard.py) or, on ARIA widgets, through the
# page's own key handlers, which run on the keys as they would on a real press.
_ENTER_ACTIVATES_TAGS = frozenset({"button", "a", "summary"})
_ENTER_ACTIVATES_ROLES = frozenset({"button", "link", "menuitem", "tab", "option"})
_SPACE_ACTIVATES_INPUTS = frozenset({"checkbox", "radio", "button", "submit", "reset"})
_SPACE_ACTIVATES_ROLES = frozenset(
    {"button", "checkbox", "switch", "radio", "menuitem", "tab", "option"}
)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}".lower()


def _is_submit_control(target: Target) -> bool:
    return target.tag in _CLICKED_CONTROL_TAGS and target.type in _SUBMIT_TYPES and target.in_form


def _pressed(key: str, text: str) -> frozenset[str]:
    """The keys among Enter and Space that a ``keyboard`` action presses: its ``key`` (the
    last part of a combo such as ``Shift+Enter``), or the newlines and spaces of its ``text``
    (each types as that key, keyboard.text_keys)."""
    if key:
        last = key.split("+")[-1]
        return frozenset(
            {"Enter"}
            if last in ("Enter", "Return")
            else {" "}
            if last in (" ", "Space", "Spacebar")
            else set()
        )
    return frozenset(
        ({"Enter"} if "\n" in text or "\r" in text else set()) | ({" "} if " " in text else set())
    )


def _activated_by(target: Target, pressed: frozenset[str]) -> bool:
    if "Enter" in pressed and (
        target.tag in _ENTER_ACTIVATES_TAGS or target.role in _ENTER_ACTIVATES_ROLES
    ):
        return True
    if " " in pressed and (
        target.tag in ("button", "summary")
        or (target.tag == "input" and target.type in _SPACE_ACTIVATES_INPUTS)
        or target.role in _SPACE_ACTIVATES_ROLES
    ):
        return True
    return False


def classify(
    action: str, target: Target | None, *, page_origin: str, key: str = "", text: str = ""
) -> Risk:
    """The risk of running ``action`` on ``target`` (None for page-level actions).

    ``key`` and ``text`` are those of a ``keyboard`` action: Enter in a text field of a form
    submits it (HTML implicit submission); Enter or Space on a control activates it, which is
    rated as a click on that control.
    """
    if target is None or action in ("observe", "wait", "scroll"):
        return LOW
    if action == "keyboard":
        pressed = _pressed(key, text)
        if _activated_by(target, pressed):
            return classify("click", target, page_origin=page_origin)
    reasons: list[RiskReason] = []
    words = f"{target.label} {target.text}"
    submits = False
    if action == "click":
        submits = _is_submit_control(target) or (
            target.role == "button" and bool(_SUBMIT_WORDS.search(words))
        )
        if _DESTRUCTIVE.search(words):
            reasons.append(RiskReason.DESTRUCTIVE)
        if _PAYMENT.search(words):
            reasons.append(RiskReason.PAYMENT)
    elif action == "keyboard":
        # Enter in an <input> of a form may submit it (implicit submission, act.js
        # submitImplicitly); rated on the key, before knowing whether this form submits.
        submits = target.in_form and "Enter" in pressed and target.tag == "input"
    if submits:
        reasons.insert(0, RiskReason.SUBMIT)
    if target.sensitive and action in (
        "fill",
        "select",
        "keyboard",
        "focus",
        "click",
        "check",
        "uncheck",
    ):
        reasons.append(RiskReason.SENSITIVE)
    form_origin = ""
    if submits and target.form_action:
        other = _origin(target.form_action)
        if other and other != page_origin.lower():
            reasons.append(RiskReason.CROSS_ORIGIN_FORM)
            form_origin = other
    return Risk(tuple(dict.fromkeys(reasons)), form_origin)


def _words_of_name(name: str) -> str:
    """``deleteAccount``, ``delete_account``, ``delete-account.v2`` -> ``delete account ...``:
    a tool name read as the words the rules match."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return re.sub(r"[_.\-]+", " ", spaced)


def classify_site_tool(
    name: str, description: str, *, page_origin: str, autosubmit: bool = False,
    form_action: str = "",
) -> Risk:
    """The risk of running a site tool (SPEC B8, P4), from what the page says it does: its name
    and description rated like a control's label (destructive, payment, submit wording), and
    for a form that submits itself, a submission (to another origin, too)."""
    words = f"{_words_of_name(name)} {description}"
    reasons: list[RiskReason] = []
    submits = autosubmit or bool(_SUBMIT_WORDS.search(words))
    if submits:
        reasons.append(RiskReason.SUBMIT)
    if _DESTRUCTIVE.search(words):
        reasons.append(RiskReason.DESTRUCTIVE)
    if _PAYMENT.search(words):
        reasons.append(RiskReason.PAYMENT)
    form_origin = ""
    if autosubmit and form_action:
        other = _origin(form_action)
        if other and other != page_origin.lower():
            reasons.append(RiskReason.CROSS_ORIGIN_FORM)
            form_origin = other
    return Risk(tuple(reasons), form_origin)
