"""docs/architecture.md's table of the Python parts against the real import graph.

The table names each part by its folder (`testbed/router/`, `analysis/`) or, for a lone module,
its file (`testbed/cli.py`); a module belongs to the longest part its path starts with, so
moving modules inside a part (or into sub-packages of it) never touches the table. Every
import of one part from another must be one the table's "may import" column allows, every
allowance must still be used, and the floors must hold: a part imports only parts on lower
floors. Imports are read as tests/test_python_imports.py reads them (ast; `TYPE_CHECKING`
imports, which never run, left out).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from test_python_imports import ROOT, imports, modules

DOC = ROOT / "docs" / "architecture.md"
HEADER = ("part", "floor", "its one job", "may import")
# Two parts on one floor that import each other. Issue 28's router work unties this one
# (router/'s plan then takes nothing from scenario/); remove it here and give router/ a
# floor below scenario/ in the table then.
KNOTS_STILL_TO_UNTIE: set[frozenset[str]] = set()
_NAME = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Part:
    name: str                   # folder with a trailing slash, or a module's file
    floor: int
    may_import: frozenset[str]


def read_table(text: str) -> dict[str, Part]:
    """The rows of the table whose header is HEADER; raises ValueError naming the bad row."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if tuple(_cells(line)) == HEADER), None)
    if start is None:
        raise ValueError(f"{DOC.name}: no table with the columns {' | '.join(HEADER)}")
    parts: dict[str, Part] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        name, floor, _job, may = _cells(line)
        names = _NAME.findall(name)
        if len(names) != 1 or not floor.isdigit():
            raise ValueError(f"{DOC.name}: row {line[:60]!r}: expected one `part` and a floor number")
        allowed = frozenset(_NAME.findall(may))
        if not allowed and may != "—":
            raise ValueError(f"{DOC.name}: {names[0]}: may import: expected `parts` or —, got {may!r}")
        parts[names[0]] = Part(names[0], int(floor), allowed)
    return parts


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def part_of(path: Path, parts: dict[str, Part]) -> str | None:
    """The longest part that the file's path (relative to the repository) starts with."""
    rel = path.relative_to(ROOT).as_posix()
    found = [p for p in parts if rel == p or (p.endswith("/") and rel.startswith(p))]
    return max(found, key=len, default=None)


def part_arrows(parts: dict[str, Part]) -> tuple[dict[tuple[str, str], list[str]], list[str]]:
    """{(importing part, imported part): ["module -> module", ...]} and the modules of no part."""
    mods = modules()
    part_of_module = {name: part_of(path, parts) for name, path in mods.items()}
    arrows: dict[tuple[str, str], list[str]] = {}
    for name, path in mods.items():
        for target, _ in imports(path, set(mods)):
            a, b = part_of_module[name], part_of_module[target]
            if a is not None and b is not None and a != b:
                arrows.setdefault((a, b), []).append(f"{name} -> {target}")
    return arrows, sorted(name for name, part in part_of_module.items() if part is None)


def disallowed(parts: dict[str, Part], arrows: dict[tuple[str, str], list[str]]) -> list[str]:
    return [f"{imp} ({a} -> {b}): docs/architecture.md does not allow `{a}` to import `{b}` "
            f"(its may import: {', '.join(sorted(parts[a].may_import)) or '—'})"
            for (a, b), found in sorted(arrows.items()) if b not in parts[a].may_import for imp in found]


def unused(parts: dict[str, Part], arrows: dict[tuple[str, str], list[str]]) -> list[str]:
    return [f"docs/architecture.md: `{p.name}` may import `{b}`, but no module of it does"
            for p in parts.values() for b in sorted(p.may_import) if (p.name, b) not in arrows]


def floor_problems(parts: dict[str, Part]) -> list[str]:
    problems = []
    for p in parts.values():
        for b in sorted(p.may_import):
            other = parts.get(b)
            if other is None:
                problems.append(f"docs/architecture.md: `{p.name}` may import `{b}`, which is no part of the table")
            elif other.floor > p.floor or (other.floor == p.floor
                                           and frozenset({p.name, b}) not in KNOTS_STILL_TO_UNTIE):
                problems.append(f"docs/architecture.md: `{p.name}` (floor {p.floor}) may import `{b}` "
                                f"(floor {other.floor}): an arrow may only run down to a lower floor")
    return problems


def missing_parts(parts: dict[str, Part]) -> list[str]:
    """Parts that do not exist, and package folders beside listed parts that the table leaves out."""
    problems = [f"docs/architecture.md lists `{p}`, which does not exist" for p in parts
                if not ((ROOT / p).is_dir() if p.endswith("/") else (ROOT / p).is_file())]
    for p in parts:
        folder = ROOT / p
        subs = {f"{p}{d.name}/" for d in folder.glob("*/") if (d / "__init__.py").is_file()} if folder.is_dir() else set()
        if subs & set(parts):
            problems += [f"docs/architecture.md: `{s}` is a package beside listed parts of `{p}` but not in the table"
                         for s in sorted(subs - set(parts))]
    return problems


@pytest.fixture(scope="module")
def parts() -> dict[str, Part]:
    return read_table(DOC.read_text())


def test_every_part_the_doc_lists_exists_and_every_package_of_a_split_folder_is_listed(parts) -> None:
    problems = missing_parts(parts)
    assert not problems, "\n".join(problems)


def test_every_import_between_parts_is_one_the_doc_allows(parts) -> None:
    arrows, homeless = part_arrows(parts)
    assert not homeless, f"modules in no part of docs/architecture.md's table: {', '.join(homeless)}"
    problems = disallowed(parts, arrows)
    assert not problems, "\n".join(problems)


def test_every_allowance_of_the_doc_is_still_used(parts) -> None:
    problems = unused(parts, part_arrows(parts)[0])
    assert not problems, "\n".join(problems)


def test_the_parts_form_floors_with_no_arrow_back_up(parts) -> None:
    problems = floor_problems(parts)
    assert not problems, "\n".join(problems)
    for knot in KNOTS_STILL_TO_UNTIE:        # a knot untied is taken out of KNOTS_STILL_TO_UNTIE
        a, b = sorted(knot)
        assert b in parts[a].may_import and a in parts[b].may_import, f"{a} and {b} no longer a knot"


def test_the_check_names_the_module_and_the_import_the_doc_does_not_allow() -> None:
    doc = ("| part | floor | its one job | may import |\n|---|---|---|---|\n"
           "| `low/` | 1 | below | — |\n| `high/` | 2 | above | `low/` |\n")
    parts = read_table(doc)
    arrows = {("low/", "high/"): ["low.x -> high.y"], ("high/", "low/"): ["high.y -> low.x"]}
    assert disallowed(parts, arrows) == [
        "low.x -> high.y (low/ -> high/): docs/architecture.md does not allow `low/` to import `high/` "
        "(its may import: —)"]
    assert missing_parts(parts) == ["docs/architecture.md lists `low/`, which does not exist",
                                    "docs/architecture.md lists `high/`, which does not exist"]
    upward = read_table(doc.replace("| `low/` | 1 | below | — |", "| `low/` | 1 | below | `high/` |"))
    assert floor_problems(upward) == ["docs/architecture.md: `low/` (floor 1) may import `high/` (floor 2): "
                                      "an arrow may only run down to a lower floor"]
    assert unused(parts, {}) == ["docs/architecture.md: `high/` may import `low/`, but no module of it does"]
