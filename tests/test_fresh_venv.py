"""A fresh virtual environment can use squall as README "Install" says, without the network:
`python -m venv --system-site-packages`, the locked dependencies (here: the environment the
tests run in, which tests/test_packaging.py holds to requirements.lock, added by a .pth file in
place of `pip install --require-hashes -r requirements.lock`), then squall itself:

- from a checkout (`pip install --no-deps -e .`, as scripts/install-deps does): the console
  script loads a scenario, answers --version and compares runs;
- from a wheel (`pip wheel .`): the analysis commands work (squall compare), and loading a
  scenario says that the testbed runs from a checkout only (testbed/paths.py), instead of
  looking for profiles in site-packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from support_compare import write_run
from testbed.paths import bin_dir

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("testbed", "analysis", "bench", "validation")


def _checkout_copy(target: Path) -> Path:
    """The files of a checkout that `pip install` and `squall show` read (no build/, no runs)."""
    target.mkdir()
    shutil.copy(REPO / "pyproject.toml", target)
    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = {"__pycache__"} | ({"out", "data"} if Path(directory) == REPO / "validation"
                                     else set())
        return skipped & set(names)

    for name in (*PACKAGES, "scenarios"):
        shutil.copytree(REPO / name, target / name, ignore=ignore)
    return target


def _env() -> dict[str, str]:
    # nothing of the tests' own environment: no PYTHONPATH to this worktree
    keep = ("PATH", "HOME", "LANG", "TMPDIR")
    return {k: os.environ[k] for k in keep if k in os.environ} | {"SQUALL_BIN_DIR": str(bin_dir())}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=cwd, env=_env())


def _venv(path: Path) -> Path:
    r = _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(path)],
             path.parent)
    assert r.returncode == 0, r.stderr
    site = next(path.glob("lib/python3*/site-packages"))
    (site / "locked-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return path / "bin"


def _pip(bin: Path, *args: str) -> None:
    r = _run([str(bin / "python"), "-m", "pip", *args, "--no-deps", "--no-index",
              "--no-build-isolation", "--disable-pip-version-check", "-q"], bin.parent)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("runs")
    return tuple(write_run(base / name, "web", {"c": ({}, {"web.response_time_s": values})})
                 for name, values in (("a", [4.0, 4.1, 4.2, 4.3]), ("b", [3.0, 3.1, 3.2, 3.3])))


def test_a_fresh_venv_runs_squall_from_a_checkout(tmp_path: Path, runs) -> None:
    src = _checkout_copy(tmp_path / "squall")
    bin = _venv(tmp_path / "venv")
    _pip(bin, "install", "-e", str(src))
    where = _run([str(bin / "python"), "-c", "import analysis, testbed; print(analysis.__file__, "
                  "testbed.__file__)"], tmp_path)
    assert where.stdout.split() == [str(src / "analysis" / "__init__.py"),
                                    str(src / "testbed" / "__init__.py")], where
    version = _run([str(bin / "squall"), "--version"], tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("squall (squall) 0.1.0")
    shown = _run([str(bin / "squall"), "show", str(src / "scenarios" / "demo.toml")], tmp_path)
    assert shown.returncode == 0 and shown.stdout.startswith("scenario demo: 8 cells"), shown.stderr
    compared = _run([str(bin / "squall"), "compare", *map(str, runs), "--no-plots",
                     "--out", str(tmp_path / "out")], tmp_path)
    assert compared.returncode == 0, compared.stderr
    assert "B lower" in (tmp_path / "out" / "compare.md").read_text()


def test_a_wheel_analyses_and_says_the_testbed_needs_a_checkout(tmp_path: Path, runs) -> None:
    src = _checkout_copy(tmp_path / "squall")
    bin = _venv(tmp_path / "venv")
    _pip(bin, "wheel", "-w", str(tmp_path / "wheels"), str(src))
    wheel = next((tmp_path / "wheels").glob("squall-*.whl"))
    _pip(bin, "install", str(wheel))
    version = _run([str(bin / "squall"), "--version"], tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("squall (squall) 0.1.0"), version
    shown = _run([str(bin / "squall"), "show", str(REPO / "scenarios" / "demo.toml")], tmp_path)
    assert shown.returncode == 2 and "runs from a checkout only" in shown.stderr, shown
    assert "site-packages" in shown.stderr          # where it looked, named
    compared = _run([str(bin / "squall"), "compare", *map(str, runs), "--out",
                     str(tmp_path / "out")], tmp_path)
    assert compared.returncode == 0, compared.stderr
    assert (tmp_path / "out" / "compare.html").stat().st_size > 1000
