"""`make bench`: runs every registered benchmark (see bench/__init__.py).

    python -m bench.run                  # all of them, results in bench/results/
    python -m bench.run emulator         # only some
    python -m bench.run --list
"""
from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

import bench

RESULTS_DIR = Path(__file__).resolve().parent / "results"
NOT_BENCHMARKS = {"run"}


@dataclass(frozen=True)
class Benchmark:
    name: str
    run: Callable[[Path], dict]
    summary: Callable[[dict], list[str]] | None
    description: str
    result_file: str        # in the results directory: the module's RESULT_FILE, else <name>.json


def registry() -> dict[str, Benchmark]:
    """Every bench/<name>.py with a run(results_dir) function, by name."""
    found = {}
    for info in sorted(pkgutil.iter_modules(bench.__path__), key=lambda m: m.name):
        if info.name in NOT_BENCHMARKS or info.ispkg:
            continue
        module = importlib.import_module(f"bench.{info.name}")
        if callable(getattr(module, "run", None)):
            found[info.name] = Benchmark(info.name, module.run, getattr(module, "summary", None),
                                         _first_line(module), getattr(module, "RESULT_FILE", f"{info.name}.json"))
    return found


def _first_line(module: ModuleType) -> str:
    return (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else ""


def default_summary(numbers: dict) -> list[str]:
    return [f"{k}: {v}" for k, v in numbers.items() if not isinstance(v, (dict, list))]


def run_all(selected: list[Benchmark], results_dir: Path) -> dict[str, str]:
    """Runs each benchmark; a failing one is reported and the others still run."""
    status = {}
    for b in selected:
        print(f"== bench {b.name}: {b.description}", flush=True)
        started = time.monotonic()
        try:
            numbers = b.run(results_dir)
        except Exception:
            traceback.print_exc()
            status[b.name] = "failed"
            print(f"== bench {b.name}: FAILED after {time.monotonic() - started:.0f} s", flush=True)
            continue
        status[b.name] = "ok"
        for line in (b.summary or default_summary)(numbers):
            print(f"   {line}")
        print(f"== bench {b.name}: done in {time.monotonic() - started:.0f} s "
              f"({results_dir / b.result_file})", flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.run", description="Runs squall's benchmarks.")
    p.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    p.add_argument("--results", type=Path, default=RESULTS_DIR, help=f"results directory (default {RESULTS_DIR})")
    p.add_argument("--list", action="store_true", help="list the registered benchmarks and exit")
    args = p.parse_args(argv)
    available = registry()
    if args.list:
        for b in available.values():
            print(f"{b.name:12} {b.description}")
        return 0
    unknown = [n for n in args.names if n not in available]
    if unknown:
        print(f"bench: unknown benchmark {', '.join(unknown)}; registered: {', '.join(available)}", file=sys.stderr)
        return 2
    args.results.mkdir(parents=True, exist_ok=True)
    status = run_all([available[n] for n in (args.names or available)], args.results)
    print(json.dumps(status))
    return 0 if all(s == "ok" for s in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
