"""Sensitive-field detection (SPEC P5): by input type, autocomplete token or label text.

Only fields carry values worth masking, so only fields are checked (buttons and links named
"Password reset" are not sensitive). The label text is lower-cased once and searched with one
pattern: the phrases anywhere, the few short English words only as whole words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..dom import facts as F

_SENSITIVE_AUTOCOMPLETE = re.compile(
    r"(^|\s)(cc-[a-z-]+|one-time-code|current-password|new-password)(\s|$)"
)
_SUBSTRINGS = (
    "password",
    "passcode",
    "passwort",
    "one-time",
    "one time",
    "verification code",
    "security code",
    "card number",
    "credit card",
    "debit card",
    "social security",
    "expiry",
    "expiration date",
    "security answer",
    "密码",
    "口令",
    "验证码",
    "校验码",
    "动态码",
    "短信码",
    "银行卡",
    "信用卡",
    "卡号",
    "安全码",
    "有效期",
    "身份证",
    "证件号",
)
_WORDS = ("pin", "otp", "cvv", "cvc", "cvv2", "iban", "ssn", "exp date", "expiry date")
_SENSITIVE_TEXT = re.compile(
    "|".join(map(re.escape, _SUBSTRINGS)) + r"|\b(?:" + "|".join(map(re.escape, _WORDS)) + r")\b"
)
# Only these, editable elements and passwords can be sensitive.
FIELD_TAGS = frozenset({"input", "textarea", "select"})
# Inputs whose label names a choice or an action, not a value typed in: a payment-method radio
# "Credit card" or a "Pay by card" submit button holds nothing to mask.
_CHOICE_INPUTS = frozenset({"checkbox", "radio", "submit", "reset", "button", "image"})


def is_sensitive(row: Sequence[Any], label: str) -> bool:
    return is_sensitive_field(
        label,
        row[F.IS_PASSWORD],
        row[F.TAG],
        row[F.CONTENTEDITABLE],
        row[F.AUTOCOMPLETE],
        row[F.NAME],
        row[F.ID],
        row[F.PLACEHOLDER],
        row[F.TYPE],
    )


def is_sensitive_field(
    label: str,
    is_password: int,
    tag: str,
    editable: bool,
    autocomplete: str,
    name: str,
    element_id: str,
    placeholder: str,
    input_type: str = "",
) -> bool:
    """``is_sensitive`` from the facts it reads (a scan has them from the columns, not a row)."""
    if is_password:
        return True
    if tag not in FIELD_TAGS and not editable or tag == "input" and input_type in _CHOICE_INPUTS:
        return False
    if autocomplete and _SENSITIVE_AUTOCOMPLETE.search(autocomplete):
        return True
    text = " ".join(filter(None, (label, name, element_id, placeholder))).lower()
    return bool(_SENSITIVE_TEXT.search(text))


def is_sensitive_name(text: str) -> bool:
    """Whether a parameter's name or description names a sensitive value (a site tool's
    argument shown on a card is masked then, as a sensitive field's value is)."""
    return bool(_SENSITIVE_TEXT.search(text.lower()))
