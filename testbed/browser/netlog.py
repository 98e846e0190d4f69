"""The browser's own account of its DNS look-ups: Chromium's NetLog (`--log-net-log`, JSON written
when the browser closes), reduced to the names it looked up over DNS (one host resolver job each;
a name answered from its cache has none) and the queries its resolver sent (one transaction
attempt each, a retry included). DevTools' per-request timing shows a look-up only on the request
that opened a connection, and none for a connection Chromium opened ahead of the request, so the
NetLog is the record the capture is compared with (docs/browser.md). Only what began after a given
moment is counted (a warm load's own look-ups, not its priming load's): NetLog's times are ms of
the browser's monotonic clock, `timeTickOffset` (a constant of the file) makes them epoch ms."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Lookups:
    names: tuple[str, ...]      # looked up over DNS, in order
    queries: int                # DNS queries sent (each type, each retry)
    first_query_ms: float | None = None     # when the first was sent: the browser's monotonic clock
                                            # (DevTools' event timestamps', in ms)


def lookups(path: Path, since_epoch_ms: float | None = None) -> Lookups:
    """The look-ups of a NetLog file that began at `since_epoch_ms` or later (None: all);
    ValueError when it is not a NetLog."""
    try:
        log = json.loads(Path(path).read_text())
        offset = float(log["constants"].get("timeTickOffset", 0))
        types = {number: name for name, number in log["constants"]["logEventTypes"].items()}
        begin, end = (log["constants"]["logEventPhase"][p] for p in ("PHASE_BEGIN", "PHASE_END"))
        events = log["events"]
    except (OSError, KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: not a Chromium NetLog ({e})") from None
    names: list[str] = []
    queries = 0
    first: float | None = None
    for event in events:
        if since_epoch_ms is not None and float(event.get("time", 0)) + offset < since_epoch_ms:
            continue
        kind = types.get(event.get("type"))
        if kind == "HOST_RESOLVER_MANAGER_JOB" and event.get("phase") == begin:
            host = str((event.get("params") or {}).get("host", ""))
            names.append(urlsplit(host).hostname or host)
        elif kind == "DNS_TRANSACTION_ATTEMPT" and event.get("phase") != end:    # a single event, or a begin
            queries += 1
            first = float(event.get("time", 0)) if first is None else first
    return Lookups(tuple(names), queries, first)
