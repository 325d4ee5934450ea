"""Configuration resolution (CONTRACT "Operator"): serve and token agree with zero setup."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from mao_embed.config import (
    ServerConfig,
    canonical_origin,
    default_db_path,
    load_config,
    resolve_origins,
    resolve_secret,
)


def test_secret_flag_wins_over_environment(tmp_path: Path) -> None:
    env = {"MAO_EMBED_SECRET": "from-env", "XDG_CONFIG_HOME": str(tmp_path)}
    assert resolve_secret("from-flag", env) == "from-flag"
    assert resolve_secret(None, env) == "from-env"


def test_secret_file_is_created_once_with_owner_only_permissions(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    first = resolve_secret(None, env)
    second = resolve_secret(None, env)
    secret_file = tmp_path / "mao-embed" / "secret"
    assert first == second and len(first) >= 32
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600


def test_origins_merge_flags_and_environment_without_duplicates() -> None:
    env = {"MAO_EMBED_ORIGINS": "https://b.example, https://a.example/"}
    assert resolve_origins(["https://a.example"], env) == ("https://a.example", "https://b.example")


@pytest.mark.parametrize(
    ("entry", "canonical"),
    [
        ("https://shop.example", "https://shop.example"),
        (" https://Shop.Example/ ", "https://shop.example"),
        ("HTTPS://shop.example:443", "https://shop.example"),
        ("http://shop.example:80", "http://shop.example"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("https://shop.example:80", "https://shop.example:80"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("https://商店.example", "https://xn--czrs0t.example"),
        # UTS #46 non-transitional, as browsers (not Python's IDNA 2003 codec: fass.de).
        ("https://faß.de", "https://xn--fa-hia.de"),
        ("https://ςaς.gr", "https://xn--a-xmbb.gr"),
        ("https://xn--fa-hia.de", "https://xn--fa-hia.de"),
        ("http://[0:0:0:0:0:0:0:1]", "http://[::1]"),
        ("http://[2001:DB8::0:1]:8080", "http://[2001:db8::1]:8080"),
        ("http://[::FFFF:1.2.3.4]", "http://[::ffff:102:304]"),
        ("http://1.2.3.4.", "http://1.2.3.4"),
        ("https://shop.example.", "https://shop.example."),
        ("http://my_host.internal:8000", "http://my_host.internal:8000"),
    ],
)
def test_allowlist_entries_take_the_form_browsers_send(entry: str, canonical: str) -> None:
    # SPEC B5: matching stays exact; an entry is written as a browser serializes the origin,
    # so "https://Shop.Example:443/" admits the page whose Origin is "https://shop.example".
    assert canonical_origin(entry) == canonical
    assert ServerConfig(secret="s", allowed_origins=(entry,)).allowed_origins == (canonical,)


@pytest.mark.parametrize(
    "entry",
    [
        "shop.example",  # no scheme: no browser sends this
        "*",
        "null",
        "https://*.shop.example",
        "https://shop.example/checkout",
        "https://shop.example?x=1",
        "https://shop.example#top",
        "https://user@shop.example",
        "ftp://shop.example",
        "https://shop.example:99999",
        "https://shop.example:http",
        "https://",
        "",
        "https://a\u200db.example",  # a joiner: an invalid URL to browsers
        "https://xn--a.example",  # not valid punycode
        "http://[fe80::1%25eth0]",  # zone ids are not part of origins
        "http://127.1",  # browsers read 127.0.0.1: written otherwise, it would match nothing
        "http://0x7f.0.0.1",
        "http://010.0.0.1",
        "http://[::g]",
    ],
)
def test_allowlist_entries_that_can_match_no_page_are_refused(entry: str) -> None:
    with pytest.raises(ValueError, match="origin"):
        canonical_origin(entry)
    with pytest.raises(ValueError):
        resolve_origins([], {"MAO_EMBED_ORIGINS": f"https://ok.example,{entry or '/'}"})


def test_state_files_honour_xdg_state_home(tmp_path: Path) -> None:
    assert default_db_path({"XDG_STATE_HOME": str(tmp_path)}) == tmp_path / "mao-embed" / "audit.db"


def test_load_config_reads_api_key_from_environment(tmp_path: Path) -> None:
    env = {
        "MAO_EMBED_API_KEY": "k",
        "XDG_CONFIG_HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path),
    }
    config = load_config(environ=env)
    assert config.api_key == "k"
    assert config.db_path == tmp_path / "mao-embed" / "audit.db"


def test_config_refuses_an_empty_secret() -> None:
    with pytest.raises(ValueError):
        ServerConfig(secret="")


def test_config_repr_hides_secrets() -> None:
    text = repr(ServerConfig(secret="very-secret", api_key="very-key"))
    assert "very-secret" not in text and "very-key" not in text
