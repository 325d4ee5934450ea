"""``mao_embed.tokens.issue_token`` as the README documented it before the backend's layout
grouped the security code in ``mao_embed.security``; the business servers that mint SDK
tokens import it from here."""

from mao_embed.security.tokens import (
    CLOCK_SKEW_S,
    DEFAULT_TTL_S,
    MAX_TTL_S,
    TokenClaims,
    TokenError,
    TokenRejection,
    issue_token,
    verify_token,
)

__all__ = [
    "CLOCK_SKEW_S",
    "DEFAULT_TTL_S",
    "MAX_TTL_S",
    "TokenClaims",
    "TokenError",
    "TokenRejection",
    "issue_token",
    "verify_token",
]
