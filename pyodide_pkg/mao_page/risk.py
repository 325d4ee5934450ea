"""Risk of one page action (SPEC P4, seed 004 §3.3).

High risk: submitting a form (a submit button, Enter in a form field), destructive or payment
wording on the target (English and Chinese), sensitive fields (SPEC P5), and forms that post
to another origin. The words are matched on what the user sees (the accessible name and the
visible text), never on class names or ids (STYLE "not to copy").

Risk does not decide on its own: under ``per_action`` every acting step is confirmed and the
card shows the risk; ``task`` and ``full`` run high-risk steps too, with the same validity
checks and verification as any other step (seed 004 §3.3).
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
    r"\b(delete|deleting|remove|removing|erase|destroy|discard|purge|wipe|clear all|empty (the )?(trash|cart|bin)"
    r"|close (my )?account|cancel (my )?(account|subscription|order)|unsubscribe|revoke|terminate|deactivate)\b"
    r"|删除|移除|清空|销毁|注销|撤销|作废|解绑|取消订单|取消订阅",
    re.IGNORECASE,
)
_PAYMENT = re.compile(
    r"\b(pay|pay now|payment|purchase|buy|buy now|checkout|check out|place (the )?order|submit order|confirm order"
    r"|transfer|send money|wire|withdraw|refund|donate|subscribe|top up|recharge)\b"
    r"|支付|付款|转账|汇款|提现|充值|购买|下单|提交订单|确认订单|结算|退款|打款",
    re.IGNORECASE,
)
_SUBMIT_WORDS = re.compile(r"\b(submit|send|confirm)\b|提交|确认提交|发送", re.IGNORECASE)
_CLICKED_CONTROL_TAGS = frozenset({"button", "input"})
_SUBMIT_TYPES = frozenset({"submit", "image"})
_TEXT_ENTRY_TYPES = frozenset({"", "text", "email", "search", "tel", "url", "password", "number", "date", "time",
                               "datetime-local", "month", "week"})


def _origin(url: str) -> str:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}".lower()


def _is_submit_control(target: Target) -> bool:
    return target.tag in _CLICKED_CONTROL_TAGS and target.type in _SUBMIT_TYPES and target.in_form


def classify(action: str, target: Target | None, *, page_origin: str, key: str = "") -> Risk:
    """The risk of running ``action`` on ``target`` (None for page-level actions).

    ``key`` is the key of a ``keyboard`` action (e.g. ``Enter``): Enter in a text field of a
    form submits it (HTML implicit submission).
    """
    if target is None or action in ("observe", "wait", "scroll"):
        return LOW
    reasons: list[RiskReason] = []
    words = f"{target.label} {target.text}"
    submits = False
    if action == "click":
        submits = _is_submit_control(target) or (target.role == "button" and bool(_SUBMIT_WORDS.search(words)))
        if _DESTRUCTIVE.search(words):
            reasons.append(RiskReason.DESTRUCTIVE)
        if _PAYMENT.search(words):
            reasons.append(RiskReason.PAYMENT)
    elif action == "keyboard":
        submits = target.in_form and key.split("+")[-1] == "Enter" and target.tag == "input" and target.type in _TEXT_ENTRY_TYPES
    if submits:
        reasons.insert(0, RiskReason.SUBMIT)
    if target.sensitive and action in ("fill", "select", "keyboard", "focus", "click", "check", "uncheck"):
        reasons.append(RiskReason.SENSITIVE)
    form_origin = ""
    if submits and target.form_action:
        other = _origin(target.form_action)
        if other and other != page_origin.lower():
            reasons.append(RiskReason.CROSS_ORIGIN_FORM)
            form_origin = other
    return Risk(tuple(dict.fromkeys(reasons)), form_origin)
