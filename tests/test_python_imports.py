"""The Python packages' import graph (docs/architecture.md): no module imports itself through a
circle and no module is imported only for its side effects. Which part may import which (so
also that `analysis` never imports `testbed`) is the doc's table: tests/test_architecture_doc.py.

Imports are read from the source (ast), top-level and inside functions alike, except those under
`if TYPE_CHECKING:` (annotations only, never executed).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Every top-level package of the repository (tests/ is no package): a new one is read too.
PACKAGES = tuple(sorted(p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name != "tests"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports(path: Path, known: set[str]) -> list[tuple[str, ast.stmt]]:
    """(imported module of ours, the statement) for every import statement of the file."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, node) for a in node.names if a.name in known]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in known:
                    found.append((sub, node))          # from package import module
                elif node.module in known:
                    found.append((node.module, node))
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: {target for target, _ in imports(path, set(mods))} - {name} for name, path in mods.items()}


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_through_a_circle() -> None:
    # Package __init__ modules are empty, so importing a submodule never runs a sibling.
    assert circles(graph()) == []


def test_no_import_is_there_only_for_its_side_effects() -> None:
    mods = modules()
    for name, path in mods.items():
        text = path.read_text()
        for target, node in imports(path, set(mods)):
            line = ast.get_source_segment(text, node) or ""
            assert "registers" not in line and "noqa: F401" not in line, f"{name}: {line}"


def test_the_check_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
