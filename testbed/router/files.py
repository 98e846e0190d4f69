"""The files the router leaves in a replication's directory, each complete or absent."""
from __future__ import annotations

import os
from pathlib import Path

BATCH_FILE = "router.tc"                  # what was applied (or, emulator engine, what ran)
SAMPLES_FILE = "router-queue.tsv"         # the tc engine's queue samples
STATS_FILE = "tc-stats.json"              # the tc engine's final statistics
EMULATOR_STATS_FILE = "router-stats.json"  # the emulator engine's per-class counters
EMULATOR_LOG_FILE = "emulator.log"        # LinkSession's log, in the same replication directory
PARTIAL = ".partial"


def write_complete(path: Path, text: str) -> None:
    """Writes text to path so that path is either absent or complete."""
    partial = path.with_name(path.name + PARTIAL)
    partial.write_text(text)
    os.replace(partial, path)
