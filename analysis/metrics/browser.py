"""A browser flow's request log (testbed/browser/driver.py: `<flow>.browser.log`, JSON with the
page's `summary` and one record per request), reduced to the run values `<flow>.page_load_s`
(navigation start -> load event, from the document's Navigation Timing), `.dom_content_loaded_s`,
`.first_lookup_s`, `.first_query_s`, `.query_to_load_s` (the browser's first DNS query -> the load
event), `.requests`, `.failed`, `.bytes` (what the browser received, headers included), `.hosts`,
`.dns_lookups`, `.dns_queries`, `.connections` and `.last_byte_s` (the last response's end, from
navigation start); docs/browser.md."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analysis.join.flows import FlowSpec

VALUES = ("page_load_s", "dom_content_loaded_s", "first_lookup_s", "first_query_s", "query_to_load_s", "requests",
          "failed", "bytes", "hosts", "dns_lookups", "dns_queries", "connections", "last_byte_s")


def log_path(directory: Path, flow: str) -> Path:
    return directory / f"{flow}.browser.log"


def browser_values(directory: Path, specs: list[FlowSpec] | None, warnings: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for spec in specs or []:
        if spec.kind != "browser":
            continue
        path = log_path(directory, spec.name)
        try:
            summary = json.loads(path.read_text())["summary"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            warnings.append(f"{path}: no browser request log with a summary ({e}); flow {spec.name}'s page "
                            "values are left out")
            continue
        for key in VALUES:
            value = summary.get(key) if isinstance(summary, dict) else None
            values[f"{spec.name}.{key}"] = float(value) if isinstance(value, (int, float)) else None
    return values
