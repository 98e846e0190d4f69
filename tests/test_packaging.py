"""Packaging: pyproject.toml declares what squall needs to run and, as the `test` extra, what only the
tests need; requirements.lock pins all of it with hashes, and the environment holds exactly that
(no root needed)."""
from __future__ import annotations

import re
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent


def locked() -> dict[str, tuple[str, list[str]]]:
    """requirements.lock: name -> (version, hashes)."""
    found: dict[str, tuple[str, list[str]]] = {}
    name = None
    for line in (REPO / "requirements.lock").read_text().splitlines():
        entry = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
        if entry:
            name = canonicalize_name(entry[1])
            found[name] = (entry[2], [])
        elif name and (digest := re.search(r"--hash=sha256:([0-9a-f]{64})", line)):
            found[name][1].append(digest[1])
    return found


def declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]


def test_every_declared_dependency_is_locked_at_a_version_it_accepts() -> None:
    lock = locked()
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{name} is declared in pyproject.toml but not in requirements.lock: run pip-compile"
        assert requirement.specifier.contains(lock[name][0]), (requirement, lock[name][0])


def test_every_locked_package_has_hashes_and_is_what_the_environment_holds() -> None:
    lock = locked()
    assert {"numpy", "matplotlib", "scapy", "pytest", "hypothesis", "setuptools"} <= set(lock)
    for name, (pinned, hashes) in lock.items():
        assert hashes, f"{name} has no hash: install-deps installs with --require-hashes"
        try:
            installed = version(name)
        except PackageNotFoundError:
            raise AssertionError(f"{name}=={pinned} is locked but not installed: run scripts/install-deps")
        assert installed == pinned, f"{name}: {installed} installed, {pinned} locked"


def test_test_tools_are_not_runtime_dependencies() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    assert not runtime & {"pytest", "hypothesis", "tomli-w"}
    script = (REPO / "scripts" / "install-deps").read_text()
    assert "--require-hashes -r requirements.lock" in script
