"""Who may connect: SDK connection tokens (``tokens``) and the business-page origin allowlist
(``origins``); docs/security.md."""

from mao_embed.security.tokens import TokenError, issue_token, verify_token

__all__ = ["TokenError", "issue_token", "verify_token"]
