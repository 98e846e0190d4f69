"""Why a replication is `degraded` and what to do about it, as `squall run` and the report say
it. A replication beyond a tolerance (testbed/run/instruments.py) keeps in its status.json
details["degraded"] its cause (which flow's programs waited how long for a CPU, and the limit;
or which capture's timing error was beyond the tolerance) and the scenario's tolerance key;
the reason beside it is the cause and `busy_advice`. One text of the remedy here, so that the
replication's reason, the end of `squall run` and the report say the same."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

DETAILS_KEY = "degraded"
BUSY = "the machine was too busy for it"


@dataclass(frozen=True)
class Degraded:
    cause: str                  # what waited, how long, and the limit
    tolerance_key: str | None   # cpu_wait_tolerance | timing_tolerance; None: an older status.json


def busy_advice(keys: Iterable[str | None]) -> str:
    """What to do about replications degraded by a busy machine (CPU wait, timing error)."""
    named = [k for k in dict.fromkeys(keys) if k]
    raise_key = (f", or, where this is acceptable, raise the scenario's {' or '.join(named)}"
                 if named else ", or, where this is acceptable, raise the scenario's "
                 "cpu_wait_tolerance or timing_tolerance")
    return ("run fewer lanes at once (a smaller `squall run --parallel N`) or beside less other "
            "work, see how many lanes this machine keeps within its tolerances with `squall "
            f"calibrate`{raise_key}; `squall run --resume RUN --redo-degraded` runs them again")


def details_of(cause: str, tolerance_key: str) -> dict[str, str]:
    """status.json's details entry of a degraded replication."""
    return {"cause": cause, "tolerance_key": tolerance_key}


def reason_of(cause: str, tolerance_key: str) -> str:
    """status.json's reason of a degraded replication: its cause and the remedy."""
    return f"{cause}: {BUSY}; {busy_advice([tolerance_key])}"


def degraded_of(reason: str, details: Mapping[str, Any] | None) -> Degraded:
    """A degraded replication's cause, from its status.json (an older one without
    details["degraded"]: its whole reason)."""
    entry = (details or {}).get(DETAILS_KEY)
    if isinstance(entry, dict) and isinstance(entry.get("cause"), str):
        key = entry.get("tolerance_key")
        return Degraded(entry["cause"], key if isinstance(key, str) else None)
    return Degraded(reason, None)
