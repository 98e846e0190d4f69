"""Where squall's own files are: the repository the package runs from."""
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PROFILE_DIR = REPO_ROOT / "scenarios" / "profiles"
