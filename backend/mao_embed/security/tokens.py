"""SDK connection tokens: HMAC-SHA256 signed claims binding user, agent and origin (SPEC B5).

A token is ``mao1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(secret, "mao1." + claims))>``.
The page sends it in its first message, never in the URL, so it does not end up in access
logs. Tokens are credentials: nothing here logs or echoes one, and error messages never
include the token text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import string
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mao_page.protocol import ErrorCode

from mao_embed.config import canonical_origin

_PREFIX = "mao1"
# Tolerated clock difference between the host that issued a token and the one verifying it.
CLOCK_SKEW_S = 60
DEFAULT_TTL_S = 3600
MAX_TTL_S = 30 * 24 * 3600
_B64URL_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")


class TokenRejection(StrEnum):
    EXPIRED = "expired"
    BAD_SIGNATURE = "bad_signature"
    MALFORMED = "malformed"


class TokenError(Exception):
    """A token that must not open a session. ``code`` is always ``unauthorized``."""

    code = ErrorCode.UNAUTHORIZED

    def __init__(self, reason: TokenRejection, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class TokenClaims:
    user_id: str
    agent_id: str
    origin: str | None
    issued_at: int
    expires_at: int


def issue_token(
    secret: str,
    *,
    user_id: str,
    agent_id: str,
    origin: str | None = None,
    ttl_s: int = DEFAULT_TTL_S,
    now: float | None = None,
) -> str:
    if not secret:
        raise ValueError("a signing secret is required")
    if not user_id or not agent_id:
        raise ValueError("user_id and agent_id are required")
    if not 1 <= ttl_s <= MAX_TTL_S:
        raise ValueError(f"ttl must be between 1 and {MAX_TTL_S} seconds")
    issued = int(time.time() if now is None else now)
    claims: dict[str, Any] = {"sub": user_id, "agt": agent_id, "iat": issued, "exp": issued + ttl_s}
    if origin:
        # As browsers write it (config.canonical_origin), or the token could never match.
        claims["org"] = canonical_origin(origin)
    body = _b64encode(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    signed = f"{_PREFIX}.{body}"
    return f"{signed}.{_b64encode(_sign(secret, signed))}"


def verify_token(secret: str, token: str, *, now: float | None = None) -> TokenClaims:
    """Return the claims of a genuine, unexpired token; raise ``TokenError`` otherwise.

    The signature is checked before the claims are parsed, so nothing an attacker wrote is
    interpreted until it is known to be ours.
    """
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != _PREFIX:
        raise TokenError(TokenRejection.MALFORMED, "token is not a Mao Embed token")
    signed = f"{parts[0]}.{parts[1]}"
    try:
        signature = _b64decode(parts[2])
    except ValueError:
        raise TokenError(TokenRejection.MALFORMED, "token signature is not base64url") from None
    # Constant-time comparison so the signature cannot be guessed byte by byte from timing.
    if not hmac.compare_digest(signature, _sign(secret, signed)):
        raise TokenError(TokenRejection.BAD_SIGNATURE, "token signature does not match")
    try:
        raw = json.loads(_b64decode(parts[1]))
        claims = TokenClaims(
            user_id=_require_str(raw, "sub"),
            agent_id=_require_str(raw, "agt"),
            origin=raw.get("org") if isinstance(raw.get("org"), str) else None,
            issued_at=_require_int(raw, "iat"),
            expires_at=_require_int(raw, "exp"),
        )
    except (KeyError, ValueError, TypeError, AttributeError):
        raise TokenError(TokenRejection.MALFORMED, "token claims are unreadable") from None
    current = time.time() if now is None else now
    if current >= claims.expires_at:
        raise TokenError(TokenRejection.EXPIRED, "token has expired")
    if claims.issued_at > current + CLOCK_SKEW_S:
        raise TokenError(TokenRejection.MALFORMED, "token is issued in the future")
    return claims


def _sign(secret: str, message: str) -> bytes:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).digest()


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not text or not set(text) <= _B64URL_ALPHABET:
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise ValueError("not base64url") from error


def _require_str(raw: dict[str, Any], key: str) -> str:
    value = raw[key]
    if not isinstance(value, str) or not value:
        raise ValueError(key)
    return value


def _require_int(raw: dict[str, Any], key: str) -> int:
    value = raw[key]
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(key)
    return value
