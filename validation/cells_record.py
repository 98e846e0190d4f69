"""What a study's cells were, kept beside its data, so that rounds run at different times agree.

validation/data/<study>/expanded.json.gz holds the first recorded round's expanded.json (every
cell with every profile resolved; canonical JSON, gzip without a timestamp, a few kB). A later
round is compared with it value by value, before it runs (the scenario as squall expands it
now) and after (the run's own expanded.json): a value that differs means the cells changed and
the rounds must not be merged, and so does a cell one side has and the other not. A key inside a
cell that only one side has is a field a newer or older squall adds, not a change of the cells;
it is noted, not refused. So a squall that grows a field keeps the
rounds comparable, which a digest of the file's bytes would not.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

RECORD = "expanded.json.gz"
Leaves = dict[str, Any]


def canonical(expanded: dict[str, Any]) -> bytes:
    return json.dumps(expanded, sort_keys=True, separators=(",", ":")).encode()


def store(data_dir: Path, expanded: dict[str, Any]) -> Path:
    path = data_dir / RECORD
    path.write_bytes(gzip.compress(canonical(expanded), compresslevel=9, mtime=0))
    return path


def recorded(data_dir: Path) -> dict[str, Any] | None:
    path = data_dir / RECORD
    if not path.exists():
        return None
    try:
        return json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, EOFError, ValueError) as e:     # gzip.BadGzipFile is an OSError
        raise SystemExit(f"validation.full: {path} is damaged ({e}); restore it from git") from None


def leaves(value: Any, path: str = "") -> Leaves:
    """Every scalar with its path; cells are keyed by their id, so their order does not matter."""
    if isinstance(value, dict):
        out: Leaves = {}
        for key, item in value.items():
            out |= leaves(item, f"{path}.{key}" if path else str(key))
        return out
    if isinstance(value, list):
        if value and all(isinstance(item, dict) and "cell" in item for item in value):
            return leaves({item["cell"]: item for item in value}, path)
        out = {f"{path}.#": len(value)}
        for i, item in enumerate(value):
            out |= leaves(item, f"{path}[{i}]")
        return out
    return {path: value}


def _cells(expanded: dict[str, Any] | list[Any]) -> list[Any]:
    """expanded.json's cells: {"cells": [...]}, or the list itself."""
    return expanded.get("cells", []) if isinstance(expanded, dict) else expanded


def _keeping(expanded: dict[str, Any] | list[Any], ids: set[str]) -> dict[str, Any] | list[Any]:
    """The same expansion with only the cells in `ids`."""
    cells = [c for c in _cells(expanded) if isinstance(c, dict) and c.get("cell") in ids]
    return {**expanded, "cells": cells} if isinstance(expanded, dict) else cells


def compare(committed: dict[str, Any], now: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(what differs: cells only one side has or has twice, values of the cells both have;
    keys inside those cells that only one side has), each as readable lines."""
    then_ids, now_ids = ([c.get("cell") for c in _cells(e) if isinstance(c, dict)] for e in (committed, now))
    changed = [f"cell {c}: only {'then' if c in then_ids else 'now'}" for c in sorted(set(then_ids) ^ set(now_ids))]
    changed += [f"cell {c}: {n} times {when}" for when, ids in (("then", then_ids), ("now", now_ids))
                for c in sorted(set(ids)) if (n := ids.count(c)) > 1]
    both = set(then_ids) & set(now_ids)
    old, new = leaves(_keeping(committed, both)), leaves(_keeping(now, both))
    changed += [f"{k}: {old[k]!r} then, {new[k]!r} now" for k in sorted(old.keys() & new.keys()) if old[k] != new[k]]
    one_side = [f"{k} ({'only then' if k in old else 'only now'})" for k in sorted(old.keys() ^ new.keys())]
    return changed, one_side


def check(data_dir: Path, now: dict[str, Any], what: str) -> list[str]:
    """Refuses (SystemExit) cells that differ from the recorded ones; returns notes on keys only
    one side has. Nothing recorded yet: nothing to compare, no notes."""
    committed = recorded(data_dir)
    if committed is None:
        return []
    changed, one_side = compare(committed, now)
    if changed:
        shown = "\n  ".join(changed[:10]) + (f"\n  … {len(changed) - 10} more" if len(changed) > 10 else "")
        raise SystemExit(f"validation.full: {what} has cells other than the rounds in {data_dir} "
                         f"({data_dir / RECORD}):\n  {shown}\nthe scenario or a profile it uses changed; "
                         "start the study again in a new data directory rather than mix them")
    if not one_side:
        return []
    return [f"validation.full: {what}: {len(one_side)} field(s) only one of it and {data_dir / RECORD} has "
            f"(another squall version; the cells' values agree), e.g. {one_side[0]}"]
