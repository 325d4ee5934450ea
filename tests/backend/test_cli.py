"""The mao-embed command (CONTRACT "Operator")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mao_embed.cli import main
from mao_embed.config import load_config
from mao_embed.security.tokens import verify_token


def test_token_prints_one_token_signed_with_the_given_secret(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        main(
            [
                "token",
                "--user",
                "u1",
                "--agent",
                "a1",
                "--origin",
                "https://shop.example",
                "--secret",
                "s",
            ]
        )
        == 0
    )
    token = capsys.readouterr().out.strip()
    claims = verify_token("s", token)
    assert (claims.user_id, claims.agent_id, claims.origin) == ("u1", "a1", "https://shop.example")


def test_token_and_serve_agree_on_the_secret_without_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("MAO_EMBED_SECRET", raising=False)
    main(["token", "--user", "u1", "--agent", "a1", "--ttl", "60"])
    token = capsys.readouterr().out.strip()
    serve_config = load_config(db_path=tmp_path / "a.db")
    claims = verify_token(serve_config.secret, token)
    assert claims.expires_at - claims.issued_at == 60


def test_token_refuses_a_nonsensical_ttl() -> None:
    with pytest.raises(SystemExit):
        main(["token", "--user", "u1", "--agent", "a1", "--ttl", "0", "--secret", "s"])


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        (["--allow-origin", "shop.example"], ""),
        (["--allow-origin", "https://shop.example/cart"], ""),
        ([], "https://ok.example,*"),
    ],
)
def test_serve_refuses_an_origin_that_can_match_no_page(
    flags: list[str], env: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # SPEC B5: an allowlist entry no browser can send would refuse every handshake silently.
    monkeypatch.setenv("MAO_EMBED_ORIGINS", env)
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", "0", *flags])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--allow-origin / MAO_EMBED_ORIGINS" in err and "origin" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("flags", "env"), [(["--redis", "http://127.0.0.1:6379"], ""), ([], "127.0.0.1:6379")]
)
def test_serve_refuses_a_redis_setting_that_is_not_a_redis_url(
    flags: list[str], env: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # SPEC B6 / CONTRACT: --redis redis://HOST:PORT/DB or env MAO_EMBED_REDIS_URL.
    monkeypatch.setenv("MAO_EMBED_REDIS_URL", env)
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", "0", *flags])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--redis / MAO_EMBED_REDIS_URL" in err and "redis://HOST:PORT/DB" in err
    assert "Traceback" not in err


def test_a_single_process_never_loads_the_redis_client(tmp_path: Path) -> None:
    # SPEC B6: without --redis nothing changes, not even an import.
    code = (
        "import sys; from mao_embed.app import create_app; from mao_embed.config import "
        "ServerConfig; create_app(ServerConfig(secret='s', db_path=None)); "
        "assert not [m for m in sys.modules if m == 'redis' or m.startswith('redis.')], 'redis'"
    )
    env = {k: v for k, v in os.environ.items() if k != "MAO_EMBED_REDIS_URL"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=tmp_path)


def test_token_origin_is_written_as_browsers_send_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "token",
                "--user",
                "u",
                "--agent",
                "a",
                "--origin",
                "https://Shop.Example:443/",
                "--secret",
                "s",
            ]
        )
        == 0
    )
    assert verify_token("s", capsys.readouterr().out.strip()).origin == "https://shop.example"
    with pytest.raises(SystemExit) as exited:
        main(["token", "--user", "u", "--agent", "a", "--origin", "shop.example", "--secret", "s"])
    assert exited.value.code == 2
    assert "--origin: origin 'shop.example'" in capsys.readouterr().err


def test_serve_runs_the_backend_with_demo_origins(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "MAO_EMBED_ORIGINS": "https://shop.example",
    }
    env.pop("MAO_EMBED_API_KEY", None)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mao_embed.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--demo",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        # From a checkout, serve may first rebuild the SDK assets and say so; skip to the
        # announcement line.
        line = process.stderr.readline()
        while line and "serving on" not in line:
            line = process.stderr.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert url, line
        deadline = time.monotonic() + 10
        while True:
            try:
                health = httpx.get(f"{url.group(0)}/healthz")
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert health.json()["status"] == "ok"
        assert "https://shop.example" in line
        assert (tmp_path / "state" / "mao-embed" / "audit.db").exists()
    finally:
        process.terminate()
        process.wait(timeout=10)
