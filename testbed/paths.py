"""Where squall's own files are: the repository the package runs from, and its built programs."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PROFILE_DIR = REPO_ROOT / "scenarios" / "profiles"


def bin_dir() -> Path:
    """Where the C programs are: $SQUALL_BIN_DIR, else the repository's build/bin."""
    return Path(os.environ.get("SQUALL_BIN_DIR", REPO_ROOT / "build" / "bin"))


def program_path(name: str) -> Path:
    path = bin_dir() / name
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{path} is missing or not executable; build it with `make build`")
    return path
