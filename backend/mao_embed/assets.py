"""Assemble the browser runtime the backend serves under ``/sdk/`` (SPEC E3).

One build step, offline apart from the package registries:

* Pyodide's core runtime from the npm registry, pinned with integrity in
  ``loader_js/package-lock.json`` (``npm ci``).
* pydantic and its dependencies as wheels for Pyodide's platform from PyPI, pinned by
  hash in ``assets/pyodide-wheels.txt`` (``pip download --require-hashes``).
* The DOM-to-image library for ``page_screenshot`` (``@zumer/snapdom``, ESM build), from the
  same npm lock; the page imports it lazily on the first screenshot, never at start-up.
* Our own pure-Python wheel, written from ``pyodide_pkg/`` (no build backend needed).
* A Pyodide lock file we write ourselves: Pyodide's bundled lock lists older pydantic
  versions, and ``pyodide-lock`` does not know the ``pyemscripten_2026_0`` tag the pinned
  wheels carry.
* The loader ``mao-chat.js`` with the DOM primitives (``loader_js/primitives/*.js``),
  stamped with the build id; before them, the tables they share with the page's Python
  (fact columns, widget roles, text rules), generated from it (``mao_page/dom/jstables.py``).
* The booted-runtime image (docs/startup.md): the wheels unpacked into ``site-packages.tar``,
  their dynamic libraries under ``dylibs/``, and a memory snapshot of Pyodide after our
  packages were imported (``snapshot.bin`` + ``snapshot.json``), made by running Pyodide in
  Node (``loader_js/make-snapshot.mjs``). Without ``node`` the build leaves the image out
  and says so; the loader then starts Python from scratch.

Layout of the output (``backend/mao_embed/_sdk/``)::

    mao-chat.js                 unversioned entry point, served with no-cache
    <build-id>/pyodide.mjs ...  everything else, immutable, with .br/.gz siblings
    <build-id>/snapdom.mjs      screenshot library, imported on the first page_screenshot
    <build-id>/wheels/*.whl
    <build-id>/pyodide-lock.json
    <build-id>/site-packages.tar, dylibs/..., snapshot.bin, snapshot.json   runtime image
    manifest.json               {"buildId": ..., "files": {...}}

The build id is a hash of every input, so a changed wheel or loader changes every
versioned URL and long-lived caching stays correct.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

try:  # brotli is a declared dependency; gzip alone still works without it.
    import brotli
except ImportError:  # pragma: no cover - exercised only on broken installs
    brotli = None

PACKAGE_DIR = Path(__file__).resolve().parent
SDK_DIR = PACKAGE_DIR / "_sdk"
REPO_DIR = PACKAGE_DIR.parent.parent
LOADER_DIR = REPO_DIR / "loader_js"
BROWSER_PKG_DIR = REPO_DIR / "pyodide_pkg"
WHEEL_REQUIREMENTS = REPO_DIR / "assets" / "pyodide-wheels.txt"
# Downloaded inputs (the pinned Pyodide wheels); MAO_EMBED_ASSET_CACHE points a clean clone
# (a wheel build, the packaging test) at a cache another checkout already filled.
CACHE_DIR = Path(os.environ.get("MAO_EMBED_ASSET_CACHE") or REPO_DIR / "build" / "asset-cache")

PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
# npm package, file inside it, name served in the versioned directory. The name is fixed:
# loader_js/primitives/screenshot.js imports it relative to the loader.
SCREENSHOT_LIBRARY = ("@zumer/snapdom", "dist/snapdom.mjs", "snapdom.mjs")
NPM_PACKAGES = ("pyodide", SCREENSHOT_LIBRARY[0])
PYODIDE_PLATFORM = "pyemscripten_2026_0_wasm32"
PYODIDE_PYTHON = "3.14"
BROWSER_PACKAGE = "mao-embed-page"
COMPRESSIBLE = (".wasm", ".mjs", ".js", ".json", ".zip", ".tar", ".so", ".bin")
DYLIB_SUFFIX = ".so"
SNAPSHOT_SCRIPT = LOADER_DIR / "make-snapshot.mjs"
# What the memory snapshot holds (docs/startup.md): "full" (our packages imported, validators
# built), "stdlib" (the standard library a full boot uses; smaller), or "off" (no snapshot: the
# loader boots Python from scratch, as on a machine without node).
SNAPSHOT_ENV = "MAO_EMBED_SNAPSHOT"
SNAPSHOT_SCOPES = ("full", "stdlib", "off")
# "stdlib" by default: a full snapshot is ~6.5 MB brotli (the heap holds ~17 MB of live data
# once pydantic is imported) and puts the cold download ~70% over the runtime without it; the
# standard-library one keeps it within ~30% (bench/README.md "startup").
DEFAULT_SNAPSHOT_SCOPE = "stdlib"
# The snapshot is most of a cold download; the slower, larger-window brotli saves ~9% of it.
SNAPSHOT_BROTLI = {"quality": 10, "lgwin": 24}
# Pyodide's standard library repacked with stored (not deflated) files, served brotli-compressed
# as a whole: 1.6 MB on the wire instead of 2.5 (loader_js/runtime-image.js STDLIB). Compressing
# it takes a minute, so the result is kept in the asset cache, keyed by the source archive.
STDLIB_FILE = "stdlib.zip"
STDLIB_BROTLI = {"quality": 10, "lgwin": 24}
BUILD_PLACEHOLDER = "__MAO_BUILD_ID__"


@dataclass(frozen=True, slots=True)
class BuiltAssets:
    build_id: str
    sdk_dir: Path


def source_checkout() -> bool:
    """True when running from the repository (the build inputs are present)."""
    return (LOADER_DIR / "package-lock.json").is_file() and BROWSER_PKG_DIR.is_dir()


def sdk_dir() -> Path:
    return SDK_DIR


def current_build_id() -> str | None:
    manifest = SDK_DIR / "manifest.json"
    if not manifest.is_file():
        return None
    return json.loads(manifest.read_text())["buildId"]


def _run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=cwd, check=True, env=env)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _ensure_pyodide() -> Path:
    package = LOADER_DIR / "node_modules" / "pyodide"
    lock = json.loads((LOADER_DIR / "package-lock.json").read_text())

    def installed_as_locked(name: str) -> bool:
        wanted = lock["packages"][f"node_modules/{name}"]["version"]
        installed = LOADER_DIR / "node_modules" / name / "package.json"
        return installed.is_file() and json.loads(installed.read_text())["version"] == wanted

    if not all(installed_as_locked(name) for name in NPM_PACKAGES):
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("npm is needed to fetch the pinned Pyodide runtime (Node 20 + npm)")
        _run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=LOADER_DIR)
    return package


def _download_wheels() -> list[Path]:
    target = CACHE_DIR / "wheels"
    target.mkdir(parents=True, exist_ok=True)
    pinned = {}
    for line in WHEEL_REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            spec, _, digest = line.partition(" --hash=sha256:")
            pinned[spec.strip()] = digest.strip()
    have = {_sha256(p): p for p in target.glob("*.whl")}
    if not all(d in have for d in pinned.values()):
        # --platform both for the compiled pydantic-core and "any" for the pure wheels;
        # --require-hashes makes pip refuse anything that is not exactly what we pinned.
        _run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                "--only-binary=:all:", "--require-hashes",
                "--platform", PYODIDE_PLATFORM, "--platform", "any",
                "--python-version", PYODIDE_PYTHON, "--implementation", "cp",
                "-r", str(WHEEL_REQUIREMENTS), "-d", str(target),
            ]
        )
        have = {_sha256(p): p for p in target.glob("*.whl")}
    missing = [spec for spec, digest in pinned.items() if digest not in have]
    if missing:
        raise SystemExit(f"pinned wheels not downloaded: {missing}")
    return [have[d] for d in pinned.values()]


def _build_browser_wheel(out_dir: Path) -> Path:
    """The pure-Python browser wheel, written here rather than by a build backend.

    The asset build runs in places where no backend is importable: ``serve`` in an editable
    install (hatchling is a build-time dependency only) and the wheel build hook itself. A
    wheel of one pure package is a zip with three metadata files (PEP 427), written with fixed
    timestamps so the same sources give the same bytes.
    """
    import base64
    import tomllib

    project = tomllib.loads((BROWSER_PKG_DIR / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    dist_info = f"{name.replace('-', '_')}-{version}.dist-info"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project['requires-python']}",
        *(f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])),
    ]
    files: dict[str, bytes] = {}
    for path in sorted((BROWSER_PKG_DIR / "mao_page").rglob("*.py")):
        if "__pycache__" not in path.parts:
            files[path.relative_to(BROWSER_PKG_DIR).as_posix()] = path.read_bytes()
    files[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    files[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: mao-embed build-assets\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    record = []
    for arcname, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for arcname, data in files.items():
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    _assert_browser_only(wheel)
    return wheel


def _assert_browser_only(wheel: Path) -> None:
    """The browser wheel contains only the browser package: the backend's code has no business
    in a page, and a stray top-level module would be importable there."""
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    unexpected = {t for t in tops if t != "mao_page" and not t.endswith(".dist-info")}
    if unexpected:
        raise SystemExit(f"browser wheel contains non-browser code: {sorted(unexpected)}")


def _wheel_metadata(wheel: Path) -> tuple[str, str, list[str], list[str]]:
    """Name, version, import names and dependency names of a wheel, from its own metadata."""
    with zipfile.ZipFile(wheel) as archive:
        meta_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(meta_name).decode()
        tops = sorted(
            {
                n.split("/", 1)[0].removesuffix(".py")
                for n in archive.namelist()
                if not n.split("/", 1)[0].endswith((".dist-info", ".data"))
            }
        )
    name = version = ""
    depends: list[str] = []
    for line in metadata.splitlines():
        if line.startswith("Name: "):
            name = line[6:].strip()
        elif line.startswith("Version: "):
            version = line[9:].strip()
        elif line.startswith("Requires-Dist: ") and "extra ==" not in line:
            requirement = line[15:].split(";", 1)[0]
            dep = requirement.replace("(", " ").split()[0]
            for sep in "<>=!~[":
                dep = dep.split(sep, 1)[0]
            depends.append(_normalize(dep))
        elif line == "":
            break
    return _normalize(name), version, tops, depends


def _normalize(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _write_lock(pyodide_dir: Path, wheels: list[Path], out: Path) -> dict:
    bundled = json.loads((pyodide_dir / "pyodide-lock.json").read_text())
    packages = {}
    for wheel in wheels:
        name, version, imports, depends = _wheel_metadata(wheel)
        packages[name] = {
            "name": name,
            "version": version,
            "file_name": f"wheels/{wheel.name}",
            "install_dir": "site",
            "sha256": _sha256(wheel),
            "package_type": "package",
            "imports": imports,
            "depends": depends,
            "unvendored_tests": False,
            "shared_library": False,
        }
    known = set(packages)
    for name, entry in packages.items():
        unknown = [d for d in entry["depends"] if d not in known]
        if unknown:
            raise SystemExit(f"{name} depends on {unknown}, which no pinned wheel provides")
    lock = {"info": bundled["info"], "packages": packages}
    out.write_text(json.dumps(lock, indent=1, sort_keys=True))
    return lock


def _precompress(directory: Path) -> None:
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.suffix not in COMPRESSIBLE:
            continue
        if path.with_name(path.name + ".br").exists():
            continue  # compressed already (taken from the asset cache)
        data = path.read_bytes()
        gz = gzip.compress(data, compresslevel=9, mtime=0)
        if len(gz) < len(data) * 0.95:
            path.with_name(path.name + ".gz").write_bytes(gz)
        if brotli is not None:
            if path.name == "snapshot.bin":
                br = brotli.compress(data, **SNAPSHOT_BROTLI)
            else:
                # q11 takes minutes on the 9.6 MB runtime wasm; up to ~6 MB it takes seconds.
                br = brotli.compress(data, quality=11 if len(data) < 6_000_000 else 9)
            if len(br) < len(data) * 0.95:
                path.with_name(path.name + ".br").write_bytes(br)


def _write_stdlib(pyodide_dir: Path, versioned: Path) -> None:
    """``stdlib.zip`` and its compressed siblings: python_stdlib.zip with every file stored."""
    source = pyodide_dir / "python_stdlib.zip"
    cached = CACHE_DIR / "stdlib" / f"{_sha256(source)[:16]}-{STDLIB_FILE}"
    siblings = [cached, *(cached.with_name(cached.name + suffix) for suffix in (".br", ".gz"))]
    if not all(p.is_file() for p in siblings):
        buffer = io.BytesIO()
        with zipfile.ZipFile(source) as packed, zipfile.ZipFile(buffer, "w") as stored:
            for info in packed.infolist():
                data = packed.read(info)
                info.compress_type = zipfile.ZIP_STORED
                stored.writestr(info, data)
        data = buffer.getvalue()
        cached.parent.mkdir(parents=True, exist_ok=True)
        br = brotli.compress(data, **STDLIB_BROTLI) if brotli is not None else None
        gz = gzip.compress(data, compresslevel=9, mtime=0)
        for path, body in zip(siblings, (data, br, gz), strict=True):
            if body is not None:
                path.with_name(path.name + ".tmp").write_bytes(body)
                path.with_name(path.name + ".tmp").replace(path)
    for path in siblings:
        if path.is_file():
            shutil.copyfile(path, versioned / path.name.split("-", 1)[1])


def _loader_files() -> list[Path]:
    """The loader's hand-written sources, in the order they are joined: the DOM primitives
    (common.js first), then the rest of the loader (``LOADER_PARTS``)."""
    primitives = sorted(
        p for p in (LOADER_DIR / "primitives").glob("*.js") if p.name != "common.js"
    )
    return [
        LOADER_DIR / "primitives" / "common.js", *primitives,
        *(LOADER_DIR / name for name in LOADER_PARTS),
    ]


# After the primitives, in this order: the runtime image, the connection to the backend, the
# tab's identity across its pages, the boot, the site tools' registry, the worker's host
# (remote.js, worker-host.js), and the loader proper (mao-chat.js, which uses them all).
LOADER_PARTS = (
    "runtime-image.js", "transport.js", "tab.js", "boot.js", "site-tools.js", "remote.js",
    "worker-host.js", "mao-chat.js",
)
# The runtime's Web Worker (/sdk/<build>/mao-worker.js, a module): the same boot, the other end
# of remote.js, and its entry point.
WORKER_PARTS = ("runtime-image.js", "boot.js", "remote.js", "worker.js")
WORKER_FILE = "mao-worker.js"


def generated_tables() -> str:
    """The JS the primitives share with the page's Python (``mao_page.dom.jstables``), made from
    this checkout's sources. A child interpreter runs it: the build must read these sources,
    never a ``mao_page`` installed elsewhere; without ``site`` (``-S``), so the modules it
    reads keep to the standard library, all a wheel build's environment is sure to have."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from mao_page.dom import jstables; "
        "sys.stdout.write(jstables.source())"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(BROWSER_PKG_DIR)],
        check=True, capture_output=True, text=True,
    )
    return done.stdout


def primitives_source(tables: str | None = None) -> str:
    """The generated tables and the DOM primitives, joined (also what tests load into a page
    to run the primitives on their own)."""
    tables = generated_tables() if tables is None else tables
    parts = [f for f in _loader_files() if f.parent.name == "primitives"]
    return "// --- generated by mao_page/dom/jstables.py\n" + tables + "\n" + "\n".join(
        f"// --- primitives/{p.name}\n" + p.read_text() for p in parts
    )


def _loader_source(tables: str) -> str:
    """The served loader: the generated tables, the DOM primitives, then the loader proper."""
    rest = "\n".join(
        f"// --- {name}\n" + (LOADER_DIR / name).read_text() for name in LOADER_PARTS
    )
    # One closure around all, so the primitives are reachable only through the loader
    # and never as a page global a script could replace.
    return (
        "/* Mao Embed loader. Built by `mao-embed build-assets`; sources in loader_js/. */\n"
        + "(() => {\n"
        + primitives_source(tables)
        + "\n"
        + rest
        + "\n})();\n"
    )


def _worker_source() -> str:
    """The worker's module: no closure needed, a module's top level is its own scope."""
    head = "/* Mao Embed runtime worker. Built by `mao-embed build-assets`; sources: loader_js/ */"
    return head + "\n" + "\n".join(
        f"// --- {name}\n" + (LOADER_DIR / name).read_text() for name in WORKER_PARTS
    )


def _inputs_digest(pyodide_dir: Path, wheels: list[Path], browser_wheel_sources: str) -> str:
    # The generated tables are a function of the browser sources, already in the digest.
    digest = hashlib.sha256()
    digest.update((LOADER_DIR / "package-lock.json").read_bytes())
    for wheel in wheels:
        digest.update(_sha256(wheel).encode())
    digest.update(browser_wheel_sources.encode())
    for path in [*_loader_files(), LOADER_DIR / "worker.js"]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(SNAPSHOT_SCRIPT.read_bytes())
    digest.update(_snapshot_scope().encode())
    return digest.hexdigest()[:16]


def _browser_sources_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(BROWSER_PKG_DIR.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".toml"):
            digest.update(str(path.relative_to(BROWSER_PKG_DIR)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def build(force: bool = False) -> BuiltAssets:
    pyodide_dir = _ensure_pyodide()
    wheels = _download_wheels()
    build_id = _inputs_digest(pyodide_dir, wheels, _browser_sources_digest())
    if not force and current_build_id() == build_id and (SDK_DIR / build_id).is_dir():
        return BuiltAssets(build_id, SDK_DIR)

    with tempfile.TemporaryDirectory(prefix="mao-sdk-") as tmp:
        staging = Path(tmp) / "_sdk"
        versioned = staging / build_id
        (versioned / "wheels").mkdir(parents=True)
        for name in PYODIDE_FILES:
            shutil.copy2(pyodide_dir / name, versioned / name)
        library, library_file, served_name = SCREENSHOT_LIBRARY
        shutil.copy2(LOADER_DIR / "node_modules" / library / library_file, versioned / served_name)
        browser_wheel = _build_browser_wheel(Path(tmp) / "browser-wheel")
        served_wheels = []
        for wheel in [*wheels, browser_wheel]:
            shutil.copy2(wheel, versioned / "wheels" / wheel.name)
            served_wheels.append(versioned / "wheels" / wheel.name)
        _write_lock(pyodide_dir, served_wheels, versioned / "pyodide-lock.json")
        _write_stdlib(pyodide_dir, versioned)
        _write_runtime_image(pyodide_dir, served_wheels, versioned, build_id)
        loader = _loader_source(generated_tables()).replace(BUILD_PLACEHOLDER, build_id)
        (staging / "mao-chat.js").write_text(loader)
        (versioned / WORKER_FILE).write_text(_worker_source())
        _precompress(versioned)
        _precompress_file(staging / "mao-chat.js")
        files = {
            str(p.relative_to(staging)): p.stat().st_size
            for p in sorted(staging.rglob("*"))
            if p.is_file() and p.suffix not in (".gz", ".br")
        }
        (staging / "manifest.json").write_text(
            json.dumps(
                {"buildId": build_id, "browserPackage": BROWSER_PACKAGE, "files": files}, indent=1
            )
        )
        _publish(staging, build_id)
    print(f"SDK assets built (build {build_id}) in {SDK_DIR}", file=sys.stderr)
    return BuiltAssets(build_id, SDK_DIR)


def _snapshot_scope() -> str:
    scope = os.environ.get(SNAPSHOT_ENV, DEFAULT_SNAPSHOT_SCOPE)
    if scope not in SNAPSHOT_SCOPES:
        raise SystemExit(
            f"{SNAPSHOT_ENV} must be one of {', '.join(SNAPSHOT_SCOPES)}, not {scope!r}"
        )
    return scope


def _write_runtime_image(
    pyodide_dir: Path, wheels: list[Path], versioned: Path, build_id: str
) -> None:
    """site-packages.tar, dylibs/ and the memory snapshot of the booted runtime.

    The wheels' files go into one archive the loader writes into Pyodide's file system before
    the interpreter starts; dynamic libraries are served apart (``application/wasm``), so the
    page compiles them while they download. Both are what the snapshot was taken with.
    """
    scope = _snapshot_scope()
    if scope == "off":
        print(f"{SNAPSHOT_ENV}=off: building without the memory snapshot", file=sys.stderr)
        return
    node = shutil.which("node")
    if node is None:
        print(
            "node not found: building without the memory snapshot; pages start Python from "
            "scratch (slower start-up, same behaviour)",
            file=sys.stderr,
        )
        return
    dylibs: list[str] = []
    tar_path = versioned / "site-packages.tar"
    with tarfile.open(tar_path, "w", format=tarfile.USTAR_FORMAT) as archive:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as source:
                for info in sorted(source.infolist(), key=lambda i: i.filename):
                    if info.is_dir():
                        continue
                    data = source.read(info)
                    if info.filename.endswith(DYLIB_SUFFIX):
                        target = versioned / "dylibs" / info.filename
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(data)
                        dylibs.append(info.filename)
                        continue
                    entry = tarfile.TarInfo(info.filename)
                    entry.size = len(data)
                    entry.mode = 0o644
                    archive.addfile(entry, io.BytesIO(data))
    env = {
        **os.environ,
        "MAO_BUILD_ID": build_id,
    }  # recorded in snapshot.json; the loader checks it
    command = [
        node,
        str(SNAPSHOT_SCRIPT),
        str(pyodide_dir),
        str(versioned),
        str(tar_path),
        json.dumps(dylibs),
    ]
    try:
        if scope == "stdlib":
            # A first boot finds what the image holds (the standard library the boot uses) and
            # what the page imports after restoring it; those modules' byte code goes into the
            # archive, so the page does not compile them.
            with tempfile.TemporaryDirectory(prefix="mao-pyc-") as pyc_dir:
                listed = subprocess.run(
                    [*command, "list", pyc_dir], check=True, stdout=subprocess.PIPE, text=True,
                    env=env,
                )
                record = json.loads(listed.stdout.strip().splitlines()[-1])
                with tarfile.open(tar_path, "a", format=tarfile.USTAR_FORMAT) as archive:
                    for rel in record["pyc"]:
                        data = (Path(pyc_dir) / rel).read_bytes()
                        entry = tarfile.TarInfo(rel)
                        entry.size = len(data)
                        entry.mode = 0o644
                        archive.addfile(entry, io.BytesIO(data))
            kept = {"stdlib": record["stdlib"], "imports": record["imports"]}
            _run([*command, scope, json.dumps(kept)], env=env)
        else:
            _run([*command, scope], env=env)
    except subprocess.CalledProcessError as error:
        raise SystemExit(
            f"making the memory snapshot failed ({error}); the log above says why. "
            f"Set {SNAPSHOT_ENV}=off to build without it."
        ) from error


KEEP_BUILDS = 3


def _publish(staging: Path, build_id: str) -> None:
    """Put a build in place without breaking pages that are loading the previous one.

    The versioned directory goes in first (under a temporary name, then renamed), the
    unversioned loader and manifest are swapped in with atomic renames, and only builds older
    than the last few are removed: a page (or a test run) that fetched the old loader a
    moment ago still finds every file it references.
    """
    SDK_DIR.mkdir(parents=True, exist_ok=True)
    target = SDK_DIR / build_id
    if not target.is_dir():
        incoming = SDK_DIR / f".incoming-{build_id}-{os.getpid()}"
        shutil.copytree(staging / build_id, incoming)
        try:
            incoming.rename(target)
        except OSError:  # another process published the same build first: same content
            shutil.rmtree(incoming, ignore_errors=True)
    for name in ("mao-chat.js", "mao-chat.js.gz", "mao-chat.js.br", "manifest.json"):
        source = staging / name
        if source.is_file():
            temporary = SDK_DIR / f".{name}.{os.getpid()}"
            shutil.copy2(source, temporary)
            os.replace(temporary, SDK_DIR / name)
    builds = sorted(
        (
            d
            for d in SDK_DIR.iterdir()
            if d.is_dir() and not d.name.startswith(".") and d.name != build_id
        ),
        key=lambda d: d.stat().st_mtime,
    )
    for old in builds[: max(0, len(builds) - (KEEP_BUILDS - 1))]:
        shutil.rmtree(old, ignore_errors=True)


def _precompress_file(path: Path) -> None:
    data = path.read_bytes()
    path.with_name(path.name + ".gz").write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    if brotli is not None:
        path.with_name(path.name + ".br").write_bytes(brotli.compress(data, quality=11))


def ensure_built() -> BuiltAssets:
    """Build when sources changed; cheap when up to date. Used by serve, demo and tests.

    An installed wheel carries its assets and no build inputs: use them as they are."""
    if current_build_id() and (
        not source_checkout() or os.environ.get("MAO_EMBED_SKIP_BUILD") == "1"
    ):
        return BuiltAssets(current_build_id() or "", SDK_DIR)
    return build()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mao-embed build-assets", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    args = parser.parse_args(argv)
    built = build(force=args.force)
    print(built.build_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
