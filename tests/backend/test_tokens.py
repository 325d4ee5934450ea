"""SDK tokens (SPEC B5): signed, bound to user/agent/origin, expiring, tamper-evident."""

from __future__ import annotations

import base64
import json

import pytest
from mao_embed.security.tokens import TokenError, TokenRejection, issue_token, verify_token
from mao_page.protocol import ErrorCode

SECRET = "s3cret"


def test_issued_token_verifies_to_its_claims() -> None:
    token = issue_token(
        SECRET, user_id="u1", agent_id="a1", origin="https://shop.example", now=1000
    )
    claims = verify_token(SECRET, token, now=1001)
    assert (claims.user_id, claims.agent_id, claims.origin) == ("u1", "a1", "https://shop.example")
    assert claims.expires_at == 1000 + 3600


def test_token_without_origin_has_no_origin_claim() -> None:
    claims = verify_token(SECRET, issue_token(SECRET, user_id="u1", agent_id="a1"))
    assert claims.origin is None


def test_expired_token_is_refused_as_expired() -> None:
    token = issue_token(SECRET, user_id="u1", agent_id="a1", ttl_s=10, now=1000)
    with pytest.raises(TokenError) as refused:
        verify_token(SECRET, token, now=1010)
    assert refused.value.reason is TokenRejection.EXPIRED
    assert refused.value.code is ErrorCode.UNAUTHORIZED


def test_token_signed_with_another_secret_is_refused_as_bad_signature() -> None:
    token = issue_token("other", user_id="u1", agent_id="a1")
    with pytest.raises(TokenError) as refused:
        verify_token(SECRET, token)
    assert refused.value.reason is TokenRejection.BAD_SIGNATURE


def test_token_with_edited_claims_is_refused_as_bad_signature() -> None:
    prefix, body, signature = issue_token(SECRET, user_id="u1", agent_id="a1").split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["sub"] = "admin"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    with pytest.raises(TokenError) as refused:
        verify_token(SECRET, f"{prefix}.{forged}.{signature}")
    assert refused.value.reason is TokenRejection.BAD_SIGNATURE


@pytest.mark.parametrize("garbage", ["", "abc", "mao1.x", "jwt.a.b", "mao1.a.b.c", "mao1.é.é"])
def test_garbage_is_refused_as_malformed(garbage: str) -> None:
    with pytest.raises(TokenError) as refused:
        verify_token(SECRET, garbage)
    assert refused.value.reason is TokenRejection.MALFORMED


def test_refusal_messages_never_contain_the_token() -> None:
    token = issue_token("other", user_id="u1", agent_id="a1")
    with pytest.raises(TokenError) as refused:
        verify_token(SECRET, token)
    assert token not in str(refused.value)
    assert token.split(".")[2] not in refused.value.message


def test_a_token_binds_its_origin_as_browsers_write_it() -> None:  # SPEC B5
    token = issue_token("s", user_id="u", agent_id="a", origin="https://Shop.Example:443/")
    assert verify_token("s", token).origin == "https://shop.example"
    with pytest.raises(ValueError, match="origin"):
        issue_token("s", user_id="u", agent_id="a", origin="shop.example")
