"""Wheel build hook: build the SDK assets and ship exactly the current build in the wheel.

The asset build lives in ``backend/mao_embed/assets.py`` and is loaded from its file, not
imported as a package: the build environment holds only the build requirements, and the
package's own dependencies (pydantic, starlette, ...) are not installed there. ``assets.py``
needs only the standard library, ``npm`` on the PATH and ``pip`` (a build requirement) to
fetch its pinned inputs.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ASSETS_MODULE = Path(__file__).resolve().parent / "backend" / "mao_embed" / "assets.py"


def _load_assets():
    spec = importlib.util.spec_from_file_location("_mao_embed_build_assets", ASSETS_MODULE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is made
    spec.loader.exec_module(module)
    return module


class SdkAssetsHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return  # the sdist ships the build inputs; its wheel build runs this hook
        if version == "editable":
            # An editable install runs from the checkout, where `mao-embed serve` builds the
            # assets (and rebuilds them after a change) with no build backend installed.
            return
        built = _load_assets().build()
        # Only the current build: a working checkout keeps older builds for pages still
        # loading them, and those must not end up in the wheel.
        sdk = built.sdk_dir
        include = build_data.setdefault("force_include", {})
        include[str(sdk / built.build_id)] = f"mao_embed/_sdk/{built.build_id}"
        for path in sdk.iterdir():
            if path.is_file() and not path.name.startswith("."):
                include[str(path)] = f"mao_embed/_sdk/{path.name}"
