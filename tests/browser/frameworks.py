"""Real UI frameworks for the executor tests, installed from the npm registry at test time.

Pinned exact versions go into ``<repo>/build/test-node`` (gitignored) once per session and
are served to the test pages by the page server under ``/vendor/...``. Nothing here is
committed or served by the product; it only lets the tests drive the frameworks' own
builds (UMD / global bundles, no bundler, no JSX).
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mao_embed.pytest_plugin import EmbeddedPage
from mao_embed.testing import embed_snippet, page_html, renderer_crashes, with_open_panel

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
    # The widget matrix (tests/browser/widgets): React-side and old-page libraries.
    "@mui/material": "5.18.0",  # the last major that ships a UMD build (v6 dropped it)
    "tdesign-react": "1.18.2",
    "jquery": "3.7.1",
    "bootstrap": "5.3.8",
    "select2": "4.1.0",
    # The widget matrix (tests/browser/widgets): Vue-side libraries.
    "ant-design-vue": "4.2.6",
    "tdesign-vue-next": "1.20.8",
    "vuetify": "3.13.5",
    "element-ui": "2.15.14",
    # Vue 2 beside Vue 3 under another name (an npm alias): Element UI 2 needs it.
    "vue2": "npm:vue@2.7.16",
    # Drag between lists (SPEC A7): HTML5 drag and drop, and its pointer-driven fallback.
    "sortablejs": "1.15.6",
}

# dayjs's UMD plugins, which Ant Design Vue's global build expects as ``dayjs_plugin_*``.
_DAYJS_PLUGINS = (
    "advancedFormat",
    "customParseFormat",
    "localeData",
    "quarterOfYear",
    "weekOfYear",
    "weekYear",
    "weekday",
)


def pinned_version(package: str) -> str:
    """The pinned version itself (an alias ``npm:vue@2.7.16`` pins 2.7.16)."""
    return PINNED[package].rpartition("@")[2]


@dataclass(frozen=True, slots=True)
class VendorFile:
    package: str
    path: str  # inside the package
    content_type: str

    @property
    def url_path(self) -> str:
        return f"/vendor/{self.package}@{pinned_version(self.package)}/{self.path}"


_JS = "text/javascript; charset=utf-8"
_CSS = "text/css; charset=utf-8"


def _js(package: str, path: str) -> VendorFile:
    return VendorFile(package, path, _JS)


def _css(package: str, path: str) -> VendorFile:
    return VendorFile(package, path, _CSS)


# React and ReactDOM; Vue 3 with its template compiler (the pages write templates, no build
# step). The component libraries expect them as globals, loaded before them.
_REACT = (
    _js("react", "umd/react.production.min.js"),
    _js("react-dom", "umd/react-dom.production.min.js"),
)
_VUE = (_js("vue", "dist/vue.global.prod.js"),)

# Global builds, in the order a page loads them: each library after the globals it needs.
VENDOR: dict[str, tuple[VendorFile, ...]] = {
    "react": _REACT,
    "vue": _VUE,
    "antd": (
        *_REACT,
        _js("dayjs", "dayjs.min.js"),
        _css("antd", "dist/reset.css"),
        _js("antd", "dist/antd.min.js"),
    ),
    "element-plus": (
        *_VUE,
        _css("element-plus", "dist/index.css"),
        _js("element-plus", "dist/index.full.min.js"),
    ),
    # MaterialUI global; styles come from its bundled emotion at run time.
    "mui": (*_REACT, _js("@mui/material", "umd/material-ui.production.min.js")),
    # TDesign global (dayjs is bundled).
    "tdesign-react": (
        *_REACT,
        _css("tdesign-react", "dist/tdesign.min.css"),
        _js("tdesign-react", "dist/tdesign.min.js"),
    ),
    # An old-style page: Bootstrap 5 (Popper bundled) and jQuery with the Select2 plugin.
    "bootstrap-select2": (
        _css("bootstrap", "dist/css/bootstrap.min.css"),
        _css("select2", "dist/css/select2.min.css"),
        _js("jquery", "dist/jquery.min.js"),
        _js("bootstrap", "dist/js/bootstrap.bundle.min.js"),
        _js("select2", "dist/js/select2.full.min.js"),
    ),
    "ant-design-vue": (
        *_VUE,
        _js("dayjs", "dayjs.min.js"),
        *(_js("dayjs", f"plugin/{name}.js") for name in _DAYJS_PLUGINS),
        _css("ant-design-vue", "dist/reset.css"),
        _js("ant-design-vue", "dist/antd.min.js"),
    ),
    "tdesign-vue-next": (
        *_VUE,
        _css("tdesign-vue-next", "dist/tdesign.min.css"),
        _js("tdesign-vue-next", "dist/tdesign.min.js"),
    ),
    "vuetify": (
        *_VUE,
        _css("vuetify", "dist/vuetify.min.css"),
        _js("vuetify", "dist/vuetify.min.js"),
    ),
    "sortablejs": (_js("sortablejs", "Sortable.min.js"),),
    # Vue 2.7's full build (with the template compiler) as the global ``Vue``.
    "element-ui": (
        _js("vue2", "dist/vue.min.js"),
        _css("element-ui", "lib/theme-chalk/index.css"),
        _js("element-ui", "lib/index.js"),
    ),
}


def _installed_version(package: str) -> str | None:
    manifest = NODE_PREFIX / "node_modules" / package / "package.json"
    if not manifest.is_file():
        return None
    return json.loads(manifest.read_text()).get("version")


def _missing() -> list[str]:
    return [name for name in PINNED if _installed_version(name) != pinned_version(name)]


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
                # Legacy peer resolution: Vue 2 and Vue 3 stacks side by side cannot satisfy
                # each other's peers, and the pages load global builds, never npm's tree.
                [
                    npm,
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--ignore-scripts",
                    "--legacy-peer-deps",
                    "--prefix",
                    str(NODE_PREFIX),
                    *specs,
                ],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if completed.returncode != 0 or _missing():
                pytest.fail(
                    f"npm install of {specs} failed:\n{completed.stdout}\n{completed.stderr}"
                )
    return NODE_PREFIX / "node_modules"


def serve_vendor(pages, framework: str) -> str:
    """Add the framework's files to the page server; returns the ``<head>`` tags loading them."""
    node_modules = ensure_installed()
    tags = []
    for item in VENDOR[framework]:
        if item.url_path not in pages.pages:
            source = node_modules / item.package / item.path
            pages.add(
                item.url_path, source.read_text(encoding="utf-8"), content_type=item.content_type
            )
        if item.content_type == _CSS:
            tags.append(f'<link rel="stylesheet" href="{item.url_path}">')
        else:
            tags.append(f'<script src="{item.url_path}"></script>')
    return "\n".join(tags)


def fixture_body(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


class ReusablePages:
    """One embedded page per fixture for a whole test module, remounted for every test.

    Booting Pyodide is the slow part of opening an embedded page (10-20 s on a loaded CI
    machine), while mounting a fresh app takes milliseconds. Each fixture page defines
    ``window.__mount()``, which throws away the app and its state and mounts a new one, so
    tests stay independent: fresh framework state, fresh DOM, and each test takes its own
    snapshot. A page that navigated or closed is replaced by a freshly booted one.
    """

    _counter = itertools.count(1)

    def __init__(self, browser: Any, pages: Any, backend: Any, agent: Any) -> None:
        self._browser = browser
        self._pages = pages
        self._backend = backend
        self._agent = agent
        self._context: Any = None
        self._open: dict[str, EmbeddedPage] = {}

    def open(
        self, key: str, body: str, *, head: str = "", title: str = "Test page"
    ) -> EmbeddedPage:
        embedded = self._open.get(key)
        if embedded is not None and renderer_crashes.crashed(embedded.page):
            embedded.page.close()  # a crashed renderer answers nothing; boot a fresh page
        if embedded is None or embedded.page.is_closed() or embedded.page.url != embedded.url:
            embedded = self._open[key] = self._embed(key, body, head=head, title=title)
        embedded.page.evaluate("() => window.__mount()")
        # The user is looking at this page. Another page of the context may have been opened
        # later and be in front; a background page gets animation frames at ~1 Hz, which is a
        # scenario of its own (covered()), not an accident of test order.
        embedded.page.bring_to_front()
        return embedded

    @contextlib.contextmanager
    def covered(self, *, window_focused: bool = True) -> Iterator[None]:
        """Another tab in front of the pages, as when the user switched tabs mid-task.

        ``window_focused=False`` also takes system focus from the pages' window (the user is
        typing in another application): Playwright normally emulates focus for every page;
        without it Chromium moves ``activeElement`` on ``focus()`` but fires no focus events."""
        cover = self._context.new_page()
        sessions = []
        try:
            cover.bring_to_front()
            if not window_focused:
                for embedded in self._open.values():
                    session = self._context.new_cdp_session(embedded.page)
                    session.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
                    sessions.append(session)
            yield
        finally:
            for session in sessions:
                session.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
                session.detach()
            cover.close()

    def _embed(self, key: str, body: str, *, head: str, title: str) -> EmbeddedPage:
        # The same steps as the plugin's ``mao_embed``, in a context that outlives one test.
        if self._context is None:
            self._context = self._browser.new_context(viewport={"width": 1280, "height": 800})
            renderer_crashes.watch(self._context)
        user_id, agent_id = "test-user", "test-agent"
        token = self._backend.issue_token(user_id, agent_id, origin=self._pages.origin)
        snippet = embed_snippet(
            self._backend.url, agent_id=agent_id, user_id=user_id, token=token,
            extra=with_open_panel(None),
        )
        url = self._pages.add(
            f"/reusable-{key}-{next(self._counter)}.html",
            page_html(body, snippet, title=title, head=head),
        )
        known = {s["sessionId"] for s in self._agent.sessions()}
        page = self._context.new_page()
        page.goto(url)
        page.evaluate("() => MaoChat.boot()")
        session = self._agent.wait_for_session(url=url, exclude=known)
        embedded = EmbeddedPage(page, url, session["sessionId"], self._agent, self._backend)
        # As the plugin's mao_embed does: the user grants full access in the panel, so the
        # actions under test run without a confirmation card each (SPEC P1).
        embedded.grant("full")
        return embedded

    def close(self) -> None:
        if self._context is not None:
            self._context.close()


class AgentView:
    """One test page seen by the agent: a snapshot, refs by accessible name and role, and the
    page's own state (``window.__state()``, kept by the page's listeners or framework)."""

    def __init__(self, embedded: EmbeddedPage) -> None:
        self.embedded = embedded
        self.snapshot = embedded.inspect()

    def ref(self, label: str, role: str | None = None) -> dict[str, str]:
        element = self.embedded.find(self.snapshot, label=label, role=role)
        return {"snapshotId": self.snapshot["snapshotId"], "elementId": element["elementId"]}

    def step(self, action: str, label: str, role: str | None = None, **args: Any) -> dict[str, Any]:
        """One step of an ``actions`` batch on the element with that name and role."""
        return {"action": action, **self.ref(label, role), **args}

    def call(self, tool: str, label: str, role: str | None = None, **args: Any) -> dict[str, Any]:
        return self.embedded.call(tool, **self.ref(label, role), **args)

    def do(self, tool: str, label: str, role: str | None = None, **args: Any) -> dict[str, Any]:
        """Act and require success; the result is returned for outcome checks."""
        result = self.call(tool, label, role, **args)
        assert result["success"], failure(result)
        return result

    def batch(self, tool: str, *steps: dict[str, Any]) -> dict[str, Any]:
        return self.embedded.call(tool, actions=list(steps))

    def state(self) -> dict[str, Any]:
        return self.embedded.page.evaluate("() => window.__state()")


def failure(result: dict[str, Any]) -> str:
    """A failed tool result in one readable line, for assertion messages."""
    error = result.get("error") or {}
    steps = (result.get("result") or {}).get("steps") or []
    failed = [s for s in steps if not s.get("success")]
    return (
        f"{error.get('code')}: {error.get('message')} (stoppedAt={result.get('stoppedAt')}, "
        f"details={error.get('details')}, failed steps={failed})"
    )
