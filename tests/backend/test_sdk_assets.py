"""SDK assets under /sdk/ (SPEC E3): types, caching, CORS, precompression, containment."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from backend_fakes import PAGE_ORIGIN
from mao_embed.app import create_app
from mao_embed.config import ServerConfig
from mao_embed.sdk_files import _safe_relative_path
from starlette.testclient import TestClient

BUILD = "b-0123abcd"


@pytest.fixture(scope="module")
def assets_config(tmp_path_factory: pytest.TempPathFactory) -> ServerConfig:
    base = tmp_path_factory.mktemp("assets")
    (base / "sdk").mkdir()
    return ServerConfig(
        secret="s",
        allowed_origins=(PAGE_ORIGIN,),
        db_path=None,
        sdk_dir=base / "sdk",
        demo_dir=base / "demo",
    )


@pytest.fixture(scope="module")
def sdk_dir(assets_config: ServerConfig) -> Path:
    root = assets_config.sdk_dir
    (root / "mao-chat.js").write_text("window.MaoChat = {};\n")
    build = root / BUILD
    (build / "wheels").mkdir(parents=True)
    files = {
        "pyodide.asm.wasm": b"\0asm\1\0\0\0",
        "pyodide.mjs": b"export default 1;\n",
        "pyodide.js.map": b"{}",
        "pyodide-lock.json": b"{}",
        "python_stdlib.zip": b"PK\5\6" + b"\0" * 18,
        "wheels/mao_page-0.1.0-py3-none-any.whl": b"PK\5\6" + b"\0" * 18,
        "site-packages.tar": b"\0" * 1024,
        "dylibs/pkg/_ext.cpython-314-wasm32-emscripten.so": b"\0asm\1\0\0\0",
        "snapshot.bin": b"\0snp" + b"\0" * 60,
        "snapshot.json": b"{}",
    }
    for name, content in files.items():
        (build / name).parent.mkdir(parents=True, exist_ok=True)
        (build / name).write_bytes(content)
    (build / "pyodide.asm.wasm.br").write_bytes(b"brotli-bytes")
    (build / "pyodide.asm.wasm.gz").write_bytes(gzip.compress(files["pyodide.asm.wasm"]))
    (root.parent / "secret.txt").write_text("outside the asset root")
    return root


@pytest.fixture(scope="module")
def client(assets_config: ServerConfig, sdk_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(assets_config)) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("mao-chat.js", "text/javascript"),
        (f"{BUILD}/pyodide.asm.wasm", "application/wasm"),
        (f"{BUILD}/pyodide.mjs", "text/javascript"),
        (f"{BUILD}/pyodide.js.map", "application/json"),
        (f"{BUILD}/pyodide-lock.json", "application/json"),
        (f"{BUILD}/python_stdlib.zip", "application/zip"),
        (f"{BUILD}/wheels/mao_page-0.1.0-py3-none-any.whl", "application/octet-stream"),
        # The runtime image (docs/startup.md): compileStreaming refuses a library not typed wasm.
        (f"{BUILD}/dylibs/pkg/_ext.cpython-314-wasm32-emscripten.so", "application/wasm"),
        (f"{BUILD}/site-packages.tar", "application/x-tar"),
        (f"{BUILD}/snapshot.bin", "application/octet-stream"),
        (f"{BUILD}/snapshot.json", "application/json"),
    ],
)
def test_assets_are_served_with_their_media_type(
    client: TestClient, path: str, media_type: str
) -> None:
    answer = client.get(f"/sdk/{path}", headers={"Accept-Encoding": "identity"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].split(";")[0] == media_type


def test_loader_is_revalidated_on_every_load(client: TestClient) -> None:
    answer = client.get("/sdk/mao-chat.js")
    assert answer.headers["cache-control"] == "no-cache"
    again = client.get("/sdk/mao-chat.js", headers={"If-None-Match": answer.headers["etag"]})
    assert again.status_code == 304


def test_versioned_assets_are_cached_forever(client: TestClient) -> None:
    answer = client.get(f"/sdk/{BUILD}/pyodide.mjs")
    assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"


def test_precompressed_brotli_is_preferred_when_accepted(client: TestClient) -> None:
    headers = {"Accept-Encoding": "gzip, br"}
    with client.stream("GET", f"/sdk/{BUILD}/pyodide.asm.wasm", headers=headers) as answer:
        raw = b"".join(answer.iter_raw())
    assert answer.headers["content-encoding"] == "br"
    assert answer.headers["content-type"] == "application/wasm"
    assert "Accept-Encoding" in answer.headers["vary"]
    assert raw == b"brotli-bytes"


def test_precompressed_gzip_is_used_when_brotli_is_not_accepted(client: TestClient) -> None:
    answer = client.get(
        f"/sdk/{BUILD}/pyodide.asm.wasm", headers={"Accept-Encoding": "gzip, br;q=0"}
    )
    assert answer.headers["content-encoding"] == "gzip"
    assert answer.content == b"\0asm\1\0\0\0"


def test_uncompressed_file_is_served_when_no_encoding_is_accepted(client: TestClient) -> None:
    answer = client.get(f"/sdk/{BUILD}/pyodide.asm.wasm", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in answer.headers
    assert answer.content == b"\0asm\1\0\0\0"
    assert "Accept-Encoding" in answer.headers["vary"]


def test_allowed_origin_gets_cors_headers(client: TestClient) -> None:
    answer = client.get(f"/sdk/{BUILD}/pyodide.mjs", headers={"Origin": PAGE_ORIGIN})
    assert answer.headers["access-control-allow-origin"] == PAGE_ORIGIN
    assert "Origin" in answer.headers["vary"]
    assert answer.headers["cross-origin-resource-policy"] == "cross-origin"


def test_other_origin_gets_no_cors_headers(client: TestClient) -> None:
    answer = client.get(f"/sdk/{BUILD}/pyodide.mjs", headers={"Origin": "https://evil.example"})
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers


def test_preflight_is_answered_for_allowed_origins_only(client: TestClient) -> None:
    headers = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "range"}
    allowed = client.options(
        f"/sdk/{BUILD}/pyodide.asm.wasm", headers={**headers, "Origin": PAGE_ORIGIN}
    )
    refused = client.options(
        f"/sdk/{BUILD}/pyodide.asm.wasm", headers={**headers, "Origin": "https://evil.example"}
    )
    assert allowed.status_code == 204
    assert allowed.headers["access-control-allow-origin"] == PAGE_ORIGIN
    assert "GET" in allowed.headers["access-control-allow-methods"]
    assert allowed.headers["access-control-allow-headers"] == "range"
    assert "access-control-allow-origin" not in refused.headers


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "%2e%2e/secret.txt",
        f"{BUILD}/..%2f..%2fsecret.txt",
        "..%5csecret.txt",
        ".hidden",
        f"{BUILD}//pyodide.mjs",
        "missing.js",
        "",
    ],
)
def test_paths_outside_the_asset_root_are_not_served(client: TestClient, path: str) -> None:
    answer = client.get(f"/sdk/{path}")
    assert answer.status_code == 404
    assert b"outside the asset root" not in answer.content


def test_missing_asset_directory_answers_404(base_config: ServerConfig, tmp_path: Path) -> None:
    config = replace(base_config, sdk_dir=tmp_path / "not-built")
    with TestClient(create_app(config)) as client:
        assert client.get("/sdk/mao-chat.js").status_code == 404


def test_demo_pages_are_served_only_in_demo_mode(base_config: ServerConfig) -> None:
    base_config.demo_dir.mkdir()
    (base_config.demo_dir / "index.html").write_text("<h1>demo</h1>")
    with TestClient(create_app(base_config)) as client:
        assert client.get("/demo/").status_code == 404
        assert client.get("/", follow_redirects=False).status_code == 200
    with TestClient(create_app(replace(base_config, demo=True))) as client:
        assert client.get("/demo/").text == "<h1>demo</h1>"
        index = client.get("/", follow_redirects=False)
        assert index.status_code in (302, 307) and index.headers["location"] == "/demo/"
        bare = client.get("/demo", follow_redirects=False)
        assert bare.status_code == 307 and bare.headers["location"] == "/demo/"


@pytest.mark.parametrize("raw", ["..", "a/../b", "./a", "a//b", "a\\b", "a\0b", ".env", ""])
def test_path_segments_that_could_escape_are_rejected(raw: str) -> None:
    assert _safe_relative_path(raw) is None


def test_ordinary_nested_paths_are_accepted() -> None:
    assert _safe_relative_path(f"{BUILD}/wheels/x.whl") == (BUILD, "wheels", "x.whl")


def test_the_build_ships_a_runtime_image_of_its_own_build() -> None:
    # SPEC E3: the memory snapshot the loader restores sits in the build's immutable directory,
    # names that build, and comes with what it needs (docs/startup.md).
    import json
    import os
    import shutil

    from mao_embed.assets import SNAPSHOT_ENV, ensure_built

    if shutil.which("node") is None or os.environ.get(SNAPSHOT_ENV) == "off":
        pytest.skip("the build makes the image only with node and without MAO_EMBED_SNAPSHOT=off")
    built = ensure_built()
    versioned = built.sdk_dir / built.build_id
    meta = json.loads((versioned / "snapshot.json").read_text())
    assert meta["buildId"] == built.build_id
    assert meta["bytes"] == (versioned / "snapshot.bin").stat().st_size
    assert (versioned / "snapshot.bin.br").is_file() and (
        versioned / "site-packages.tar.br"
    ).is_file()
    assert meta["dylibs"] and all((versioned / "dylibs" / lib).is_file() for lib in meta["dylibs"])
    assert not any(name.endswith(".so") for name in _tar_names(versioned / "site-packages.tar"))


def _tar_names(path: Path) -> list[str]:
    import tarfile

    with tarfile.open(path) as archive:
        return archive.getnames()


def test_the_build_ships_byte_code_for_what_the_page_imports_after_restoring() -> None:
    # SPEC E3 (docs/startup.md): after a standard-library image the page imports the modules
    # snapshot.json lists, in that order; each pure-Python one comes with its .pyc, so the page
    # does not compile it; the standard library is the same archive with its files stored.
    import json
    import os
    import shutil
    import zipfile

    from mao_embed.assets import SNAPSHOT_ENV, STDLIB_FILE, ensure_built

    if shutil.which("node") is None or os.environ.get(SNAPSHOT_ENV, "stdlib") != "stdlib":
        pytest.skip("only a stdlib image (the default, built with node) has an import list")
    built = ensure_built()
    versioned = built.sdk_dir / built.build_id
    meta = json.loads((versioned / "snapshot.json").read_text())
    names = set(_tar_names(versioned / "site-packages.tar"))
    assert "mao_page.protocol" in meta["imports"] and "pydantic.main" in meta["imports"]
    # Each module finishes loading after the modules it imports (a package after its own).
    order = meta["imports"]
    assert order.index("pydantic_core.core_schema") < order.index("pydantic_core")
    for module in ("mao_page.protocol", "pydantic.main", "pydantic_core.core_schema"):
        path = module.replace(".", "/")
        source = f"{path}.py" if f"{path}.py" in names else f"{path}/__init__.py"
        folder, _, stem = source.rpartition("/")
        assert source in names and f"{folder}/__pycache__/{stem[:-3]}.cpython-314.pyc" in names
    packed = zipfile.ZipFile(versioned / "python_stdlib.zip")
    stored = zipfile.ZipFile(versioned / STDLIB_FILE)
    with packed, stored:
        assert [i.filename for i in stored.infolist()] == [i.filename for i in packed.infolist()]
        assert {i.compress_type for i in stored.infolist()} == {zipfile.ZIP_STORED}
        assert stored.read("typing.py") == packed.read("typing.py")
    wire = (versioned / f"{STDLIB_FILE}.br").stat().st_size
    assert wire < (versioned / "python_stdlib.zip").stat().st_size
