"""A replication's flows from its `workloads.json` (testbed/run/replication.py writes it; one
entry per flow with its `kind`, `port` and the generators' JSON summaries, workloads/README.md),
and which flow a connection or UDP stream belongs to: the flow whose summaries name its client
(source) endpoint, else the flow whose port is its server's (destination's)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Endpoint = tuple[str, int]
KINDS_OF = {"tcp": ("http", "bulk"), "udp": ("udp",)}


@dataclass(frozen=True)
class Flow:
    name: str
    kind: str                       # http | bulk | udp (command flows are not cross-checked)
    port: int | None
    own_ends: frozenset[str]        # "addr:port" of its clients / senders, as the summaries say
    client_host: str | None         # the HTTP client's host, `mobile` or `fixed`


def _summaries(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [s for item in value for s in _summaries(item)]
    if not isinstance(value, dict):
        return []
    return [value] if "tool" in value else [s for item in value.values() for s in _summaries(item)]


def _own_ends(summaries: list[dict[str, Any]]) -> frozenset[str]:
    ends = {str(s["local"]) for s in summaries if "local" in s and s.get("mode") != "recv"}
    for s in summaries:
        for conn in s.get("connections") or []:
            if isinstance(conn, dict):
                ends |= {str(conn[k]) for k in ("local", "peer") if k in conn}
    return frozenset(ends)


def read_flows(rep_dir: Path) -> list[Flow]:
    """The flows; [] without a readable workloads.json (nothing is then cross-checked by flow)."""
    try:
        data = json.loads((rep_dir / "workloads.json").read_text())
    except (OSError, ValueError):
        return []
    flows = []
    for name, entry in data.items() if isinstance(data, dict) else []:
        if not isinstance(entry, dict):
            continue
        port = entry.get("port")
        client = entry.get("client")
        flows.append(Flow(str(name), str(entry.get("kind")), port if isinstance(port, int) else None,
                          _own_ends(_summaries(entry)),
                          client.get("host") if isinstance(client, dict) else None))
    return flows


def _text(end: Endpoint) -> str:
    return f"[{end[0]}]:{end[1]}" if ":" in end[0] else f"{end[0]}:{end[1]}"


def flow_of(flows: list[Flow], proto: str, client: Endpoint, server: Endpoint) -> Flow | None:
    candidates = [f for f in flows if f.kind in KINDS_OF[proto]]
    return (next((f for f in candidates if _text(client) in f.own_ends), None)
            or next((f for f in candidates if f.port == server[1]), None))
