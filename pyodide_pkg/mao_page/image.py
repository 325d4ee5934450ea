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
        if name != "__main__" and "site-packages" not in origin:
            names.append(name)
    return sorted(names)


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
