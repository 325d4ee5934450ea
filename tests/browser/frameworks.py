"""Real UI frameworks for the executor tests, installed from the npm registry at test time.

Pinned exact versions go into ``<repo>/build/test-node`` (gitignored) once per session and
are served to the test pages by the page server under ``/vendor/...``. Nothing here is
committed or served by the product; it only lets the tests drive the frameworks' own
builds (UMD / global bundles, no bundler, no JSX).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_PREFIX = REPO / "build" / "test-node"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Exact versions: a test run must never pick up a new release by itself.
PINNED = {
    "react": "18.3.1",
    "react-dom": "18.3.1",
    "vue": "3.5.13",
    "dayjs": "1.11.13",
    "antd": "5.29.3",
    "element-plus": "2.11.8",
}


@dataclass(frozen=True, slots=True)
class VendorFile:
    package: str
    path: str  # inside the package
    content_type: str

    @property
    def url_path(self) -> str:
        return f"/vendor/{self.package}@{PINNED[self.package]}/{self.path}"


_JS = "text/javascript; charset=utf-8"
_CSS = "text/css; charset=utf-8"

# Global builds: React and ReactDOM, Vue (with the template compiler), antd (needs React,
# ReactDOM and dayjs as globals), Element Plus (needs Vue).
VENDOR: dict[str, tuple[VendorFile, ...]] = {
    "react": (
        VendorFile("react", "umd/react.production.min.js", _JS),
        VendorFile("react-dom", "umd/react-dom.production.min.js", _JS),
    ),
    "vue": (VendorFile("vue", "dist/vue.global.prod.js", _JS),),
    "antd": (
        VendorFile("react", "umd/react.production.min.js", _JS),
        VendorFile("react-dom", "umd/react-dom.production.min.js", _JS),
        VendorFile("dayjs", "dayjs.min.js", _JS),
        VendorFile("antd", "dist/reset.css", _CSS),
        VendorFile("antd", "dist/antd.min.js", _JS),
    ),
    "element-plus": (
        VendorFile("vue", "dist/vue.global.prod.js", _JS),
        VendorFile("element-plus", "dist/index.css", _CSS),
        VendorFile("element-plus", "dist/index.full.min.js", _JS),
    ),
}


def _installed_version(package: str) -> str | None:
    manifest = NODE_PREFIX / "node_modules" / package / "package.json"
    if not manifest.is_file():
        return None
    return json.loads(manifest.read_text()).get("version")


def _missing() -> list[str]:
    return [name for name, version in PINNED.items() if _installed_version(name) != version]


def ensure_installed() -> Path:
    """Install the pinned packages unless they are already there; returns node_modules.

    Skips the calling test when npm is not available; fails with npm's output when the
    install itself fails (a broken install must not pass as a skip).
    """
    if not _missing():
        return NODE_PREFIX / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed; the real-framework tests need it")
    NODE_PREFIX.mkdir(parents=True, exist_ok=True)
    # Another pytest process (xdist, a second engineer) may be installing at the same time.
    with open(NODE_PREFIX / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _missing():
            specs = [f"{name}@{version}" for name, version in PINNED.items()]
            completed = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", str(NODE_PREFIX), *specs],
                capture_output=True, text=True, timeout=600, check=False,
            )
            if completed.returncode != 0 or _missing():
                pytest.fail(f"npm install of {specs} failed:\n{completed.stdout}\n{completed.stderr}")
    return NODE_PREFIX / "node_modules"


def serve_vendor(pages, framework: str) -> str:
    """Add the framework's files to the page server; returns the ``<head>`` tags loading them."""
    node_modules = ensure_installed()
    tags = []
    for item in VENDOR[framework]:
        if item.url_path not in pages.pages:
            source = node_modules / item.package / item.path
            pages.add(item.url_path, source.read_text(encoding="utf-8"), content_type=item.content_type)
        if item.content_type == _CSS:
            tags.append(f'<link rel="stylesheet" href="{item.url_path}">')
        else:
            tags.append(f'<script src="{item.url_path}"></script>')
    return "\n".join(tags)


def fixture_body(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")
