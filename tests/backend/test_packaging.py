"""Installing from a clean clone (SPEC E5): a built wheel and an editable install each give a
`mao-embed serve --demo` that serves the loader, Pyodide and the demo.

One temporary venv for both: the wheel first, then an editable install of a second clean
clone over it (pip removes the wheel's files). The venv never gets hatchling, so the editable
install's asset build at its first `serve` is checked without a build backend. Downloads come from
the pip and npm caches and, through MAO_EMBED_ASSET_CACHE, this checkout's asset cache.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.packaging


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


def _clone(target: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(target)], check=True)
    assert not (target / "backend" / "mao_embed" / "_sdk").exists()
    assert not (target / "loader_js" / "node_modules").exists()
    return target


def _serve_and_check(venv: Path, env: dict[str, str]) -> None:
    """Start `mao-embed serve --demo` from the venv and fetch what a page and a user fetch."""
    port = _free_port()
    server = subprocess.Popen(
        [str(venv / "bin" / "mao-embed"), "serve", "--demo", "--port", str(port)],
        env=env, cwd=venv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600  # an editable install builds the assets first
        while True:
            if server.poll() is not None:
                pytest.fail(f"serve exited with {server.returncode}:\n{server.stdout.read()}")
            try:
                status, loader = _get(f"{base}/sdk/mao-chat.js")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("serve did not answer within 600 s")
                time.sleep(0.5)
        # read after serve answered: an editable install builds its assets on the first serve
        build_id = subprocess.run(
            [str(venv / "bin" / "python"), "-c",
             "import mao_embed.assets as a; print(a.current_build_id())"],
            check=True, capture_output=True, text=True, env=env, cwd=venv,
        ).stdout.strip()
        assert status == 200 and build_id and build_id in loader.decode()
        status, wasm = _get(f"{base}/sdk/{build_id}/pyodide.asm.wasm")
        assert status == 200 and wasm[:4] == b"\0asm"
        status, lock = _get(f"{base}/sdk/{build_id}/pyodide-lock.json")
        assert status == 200 and "mao-embed-page" in json.loads(lock)["packages"]
        status, demo = _get(f"{base}/demo/")
        assert status == 200 and b"mao-chat.js" in demo
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.skipif(sys.platform != "linux", reason="needs npm and a POSIX venv layout")
def test_wheel_and_editable_install_from_a_clean_clone_serve_the_demo(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        # the real caches, so nothing already downloaded is fetched again
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip"),
        "npm_config_cache": os.environ.get("npm_config_cache") or str(Path.home() / ".npm"),
        "npm_config_prefer_offline": "true",
        "MAO_EMBED_ASSET_CACHE": str(REPO / "build" / "asset-cache"),
        # The memory snapshot is start-up work with its own tests; leaving it out keeps two
        # asset builds cheap.
        "MAO_EMBED_SNAPSHOT": "off",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]

    wheel_clone = _clone(tmp_path / "wheel-clone")
    dist = tmp_path / "dist"
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "wheel", "--quiet", "--no-deps",
         "-w", str(dist), str(wheel_clone)],
        check=True, env=env,
    )
    (wheel,) = dist.glob("mao_embed-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("mao_embed/_sdk/manifest.json"))
    builds = {
        n.split("/")[2] for n in names if n.startswith("mao_embed/_sdk/") and n.count("/") > 2
    }
    assert builds == {manifest["buildId"]}, "the wheel ships exactly the current build"
    subprocess.run([*pip, str(wheel)], check=True, env=env)
    _serve_and_check(venv, env)

    editable_clone = _clone(tmp_path / "editable-clone")
    subprocess.run([*pip, "-e", str(editable_clone)], check=True, env=env)
    probe = subprocess.run([str(venv / "bin" / "python"), "-c", "import hatchling"], env=env)
    assert probe.returncode != 0, "hatchling must stay a build-time dependency"
    # The first serve builds the assets in the checkout, browser wheel included.
    assert not (editable_clone / "backend" / "mao_embed" / "_sdk").exists()
    _serve_and_check(venv, env)
