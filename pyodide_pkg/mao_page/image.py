"""The booted-runtime image: what the build's memory snapshot holds, and what a page restored
from it must redo before anything runs (docs/startup.md).

Imports nothing heavy at module level: a page restored from a snapshot that holds the standard
library only imports this before pydantic.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil
import random
import sys

FULL = "full"
SITE = "/site-packages/"


def prepare_image(scope: str, modules: list[str] | None = None) -> list[str]:
    """Bring the interpreter to the state the snapshot captures (run in Node by
    ``mao-embed build-assets``), garbage collected, and return the names of the modules loaded.

    ``full``: every module of this package imported and every protocol validator built.
    Otherwise: only ``modules`` (the standard library the full boot uses). Nothing here may
    hold a JavaScript object: the snapshot cannot carry one into the page."""
    if scope == FULL:
        package = importlib.import_module(__package__ or "mao_page")
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(module.name)
        from . import protocol

        pending: list[type] = [protocol.WireModel]
        while pending:
            model = pending.pop()
            pending.extend(model.__subclasses__())
            if not model.__pydantic_complete__:  # type: ignore[attr-defined]
                model.model_rebuild(force=True)  # type: ignore[attr-defined]
        protocol.client_message_adapter()
        protocol.server_message_adapter()
        protocol.action_adapter()
    else:
        for name in modules or ():
            importlib.import_module(name)
    gc.collect()
    return sorted(sys.modules)


def standard_library_modules() -> list[str]:
    """Standard-library modules loaded now (after a full boot): what a ``stdlib`` image holds."""
    names = []
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None) or ""
        if name != "__main__" and SITE not in origin:
            names.append(name)
    return sorted(names)


def boot_imports(module: str) -> list[str]:
    """Import ``module`` and return the site-packages modules that loaded, in the order each
    finished loading (so each comes after the modules it imports): what a page restored from a
    ``stdlib`` image imports, one step at a time. Every import, the statement and
    ``importlib.import_module`` alike, goes through ``_find_and_load``; it is wrapped here."""
    import importlib._bootstrap as bootstrap

    original = bootstrap._find_and_load  # type: ignore[attr-defined]
    finished: list[str] = []

    def find_and_load(name, import_):  # type: ignore[no-untyped-def]
        loaded = original(name, import_)
        finished.append(name)
        return loaded

    bootstrap._find_and_load = find_and_load  # type: ignore[attr-defined]
    try:
        importlib.import_module(module)
    finally:
        bootstrap._find_and_load = original  # type: ignore[attr-defined]
    return site_modules(list(dict.fromkeys(finished)))


def site_modules(names: list[str]) -> list[str]:
    """The modules among ``names`` (loaded now) whose files are in site-packages, in order."""
    files = {name: getattr(sys.modules.get(name), "__file__", None) or "" for name in names}
    return [name for name, file in files.items() if SITE in file]


def compile_modules(names: list[str]) -> list[str]:
    """Byte-compile the pure-Python modules among ``names`` next to their sources (unchecked
    hash-based .pyc, valid whatever the file times) and return the .pyc paths relative to
    site-packages: a page then loads them instead of compiling the sources again."""
    import py_compile
    from importlib.util import cache_from_source

    written = []
    for name in site_modules(names):
        source = sys.modules[name].__file__
        if not source.endswith(".py"):
            continue
        target = py_compile.compile(
            source,
            cfile=cache_from_source(source),
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        written.append(target.split(SITE, 1)[1])
    return written


def after_restore() -> None:
    """Make a runtime restored from the snapshot this page's own, before anything runs in it.

    Every ``random.Random`` in the heap (the module's own, and any a module seeded at import,
    like the snapshot ids) was seeded in the build process and would give every page the same
    sequence: each is seeded again from the browser's entropy. ``secrets`` and ``os.urandom``
    ask the browser each time and need nothing. Import caches are dropped because the
    site-packages files were written anew."""
    for obj in gc.get_objects():
        if isinstance(obj, random.Random):
            obj.seed()
    importlib.invalidate_caches()
