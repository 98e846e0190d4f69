"""Benchmarks, run by `make bench` (python -m bench.run).

The registry is the package itself: every module `bench/<name>.py` that defines

    def run(results_dir: Path) -> dict

is a benchmark. `run` measures, writes `<results_dir>/<name>.json` (or the file its module's
`RESULT_FILE` names, e.g. model-cost.json) and returns its
numbers; it may also define `summary(numbers: dict) -> list[str]` for the lines
printed at the end. `python -m bench.run --list` shows what is registered.
"""
