"""Where squall's own files are: the repository the package runs from, and its built programs.

squall's testbed runs from a checkout only: the scenarios' profiles (scenarios/profiles/) and
the C programs (build/bin/, `make build`) are files of the repository, not of the Python
package, so a squall installed from a wheel can analyse, report and compare runs (the
analysis reads files only; `squall analyze` needs the C readers: $SQUALL_BIN_DIR) but not load
a scenario or run one: those say so (CHECKOUT_ONLY) instead of looking in site-packages."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PROFILE_DIR = REPO_ROOT / "scenarios" / "profiles"
PAGES_DIR = REPO_ROOT / "scenarios" / "pages"          # the browser flow's shipped pages (HAR)
CHECKOUT_ONLY = ("squall's testbed runs from a checkout only (git clone, `scripts/install-deps`, "
                 "`make build`: README \"Packaging\"); this squall is installed without the "
                 "repository's scenarios/profiles and C programs")


def is_checkout() -> bool:
    return (REPO_ROOT / "pyproject.toml").is_file() and PROFILE_DIR.is_dir()


def require_profiles() -> None:
    """Before a scenario is loaded: the profiles it may name are there."""
    if not PROFILE_DIR.is_dir():
        raise FileNotFoundError(f"{PROFILE_DIR} is missing: {CHECKOUT_ONLY}")


def bin_dir() -> Path:
    """Where the C programs are: $SQUALL_BIN_DIR, else the repository's build/bin."""
    return Path(os.environ.get("SQUALL_BIN_DIR", REPO_ROOT / "build" / "bin"))


def program_path(name: str) -> Path:
    path = bin_dir() / name
    if not os.access(path, os.X_OK):
        if not is_checkout() and "SQUALL_BIN_DIR" not in os.environ:
            raise FileNotFoundError(f"{name}: {CHECKOUT_ONLY} (or set SQUALL_BIN_DIR to a "
                                    "directory of the built programs)")
        raise FileNotFoundError(f"{path} is missing or not executable; build it with `make build`")
    return path
