"""Sensitive-field detection (SPEC P5): by input type, autocomplete token or label text."""

from __future__ import annotations

import re
from typing import Any

from . import facts as F

_SENSITIVE_AUTOCOMPLETE = re.compile(
    r"(^|\s)(cc-[a-z-]+|one-time-code|current-password|new-password)(\s|$)"
)
_SENSITIVE_LABEL = re.compile(
    r"password|passcode|passwort|\bpin\b|\botp\b|one[- ]time|verification code|security code"
    r"|\bcvv\b|\bcvc\b|card number|credit card|debit card|\biban\b|\bssn\b|social security"
    r"|expiry|expiration date|\bexp(iry)? date|security answer"
    r"|密码|口令|验证码|校验码|动态码|短信码|银行卡|信用卡|卡号|安全码|有效期|身份证|证件号|支付密码",
    re.IGNORECASE,
)


def is_sensitive(row: list[Any], label: str) -> bool:
    if row[F.IS_PASSWORD]:
        return True
    if _SENSITIVE_AUTOCOMPLETE.search(row[F.AUTOCOMPLETE] or ""):
        return True
    text = " ".join(filter(None, (label, row[F.NAME], row[F.ID], row[F.PLACEHOLDER])))
    return bool(_SENSITIVE_LABEL.search(text))
