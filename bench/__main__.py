"""``python -m bench [NAME ...] [--runs N]``: run benchmarks, write bench/results/*.json."""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from . import BENCHMARKS
from .runner import (
    RESULT_FORMAT,
    RESULTS_DIR,
    RunContext,
    Stopwatch,
    environment_info,
    eprint,
    now_iso,
    servers,
    update_index,
    write_json,
)


def _modules(names: list[str]) -> list[ModuleType]:
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHMARKS)}")
    return [importlib.import_module(BENCHMARKS[n]) for n in names]


def main(argv: list[str] | None = None) -> int:
    modules = _modules(list(BENCHMARKS))
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"benchmarks to run (default: all: {', '.join(BENCHMARKS)})",
    )
    parser.add_argument(
        "--runs", type=int, default=7, help="measured runs per benchmark (default 7)"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="extra runs first, recorded but not counted (default 1)",
    )
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=RESULTS_DIR,
        help="where the JSON goes (default bench/results)",
    )
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    for module in modules:
        if hasattr(module, "add_arguments"):
            module.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.list:
        for module in modules:
            print(f"{module.NAME:12} {module.DESCRIPTION}")
        return 0
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be >= 1 and --warmup >= 0")
    selected = _modules(args.names or list(BENCHMARKS))

    from playwright.sync_api import sync_playwright

    clock = Stopwatch()
    environment = environment_info()
    tables = []
    profiles = Path(tempfile.mkdtemp(prefix="mao-bench-profiles-"))
    try:
        with servers() as srv, sync_playwright() as playwright:
            for module in selected:
                eprint(f"[bench] {module.NAME}: {module.DESCRIPTION}")
                ctx = RunContext(
                    runs=args.runs,
                    warmup=args.warmup,
                    servers=srv,
                    playwright=playwright,
                    profiles_dir=profiles,
                    options=vars(args),
                    log=eprint,
                )
                started_at = now_iso()
                watch = Stopwatch()
                body = module.run(ctx)
                result = {
                    "format": RESULT_FORMAT,
                    "benchmark": module.NAME,
                    "description": module.DESCRIPTION,
                    "startedAt": started_at,
                    "durationS": round(watch.elapsed(), 1),
                    "buildId": srv.build_id,
                    "environment": environment,
                    **body,
                }
                path = args.results_dir / f"{module.NAME}.json"
                write_json(path, result)
                headline = module.headline(result) if hasattr(module, "headline") else {}
                index = update_index(args.results_dir, module.NAME, result, headline)
                eprint(f"[bench] {module.NAME}: {result['durationS']} s, wrote {path} and {index}")
                tables.append(module.summary_table(result))
    finally:
        shutil.rmtree(profiles, ignore_errors=True)
    print()
    print("\n\n".join(tables))
    print(f"\ntotal {clock.elapsed():.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
