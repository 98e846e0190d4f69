"""No C source depends on itself in a circle, within a component or across components.

A *unit* is a source with its header (`foo.c` and `foo.h` in one directory). Two graphs
of units are checked:

- the include graph, from the `#include "..."` lines of every `.c` and `.h` below a
  directory with a `module.mk` (no build needed);
- the link graph of the built programs (`make build`): unit A needs unit B when A's object
  uses a symbol B's object defines. It also sees circles that a header declaring the
  functions of several sources hides from the include graph (config_file.c and
  config_trace.c needed each other that way through config.h and config_keys.h).
"""
from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OBJECTS = ROOT / "build" / "obj"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# Known link circles, each with why it is left: the test fails when a new one appears
# and when one of these is gone (then remove it here).
KNOWN_LINK_CIRCLES: dict[frozenset[str], str] = {}

Graph = dict[str, set[str]]


def unit_of(path: Path, root: Path) -> str:
    return path.relative_to(root).with_suffix("").as_posix()


def c_files(root: Path) -> list[Path]:
    """Every .c and .h of the components (the directories with a module.mk)."""
    return sorted(p for mk in root.glob("*/module.mk") for ext in ("c", "h")
                  for p in mk.parent.rglob(f"*.{ext}"))


def resolve(name: str, including: Path, headers_by_name: dict[str, list[Path]], root: Path) -> Path | None:
    """The header an #include "name" means: next to the including file, else the one
    header of that name in the tree (a component's own first); None if not in the tree."""
    beside = (including.parent / name).resolve()
    if beside.is_file():
        return beside
    found = headers_by_name.get(Path(name).name, [])
    component = including.relative_to(root).parts[0]
    own = [h for h in found if h.relative_to(root).parts[0] == component] or found
    assert len(own) <= 1, f"{including}: #include \"{name}\" could mean any of {own}"
    return own[0] if own else None


def include_graph(root: Path) -> Graph:
    files = [p.resolve() for p in c_files(root)]
    headers_by_name: dict[str, list[Path]] = defaultdict(list)
    for f in files:
        if f.suffix == ".h":
            headers_by_name[f.name].append(f)
    graph: Graph = defaultdict(set)
    for f in files:
        for name in INCLUDE.findall(f.read_text(errors="replace")):
            header = resolve(name, f, headers_by_name, root)
            if header is not None and unit_of(header, root) != unit_of(f, root):
                graph[unit_of(f, root)].add(unit_of(header, root))
    return graph


def symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(defined, used) global symbols of an object file."""
    out = subprocess.run(["nm", "-g", str(obj)], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for fields in (line.split() for line in out.splitlines()):
        if len(fields) == 3 and fields[1] in "TDRBCV":
            defined.add(fields[2])
        elif len(fields) == 2 and fields[0] == "U":
            used.add(fields[1])
    return defined, used


def link_graph(objects: Path, root: Path) -> Graph:
    """Units of the objects below `objects` whose source is still in the tree (an object
    left from a renamed source is not part of any program)."""
    table = {}
    for obj in sorted(objects.rglob("*.o")):
        source = root / obj.relative_to(objects).with_suffix(".c")
        if source.is_file():
            table[unit_of(source, root)] = symbols(obj)
    owner = {name: unit for unit, (defined, _) in table.items() for name in defined}
    graph: Graph = defaultdict(set)
    for unit, (_, used) in table.items():
        graph[unit] |= {owner[name] for name in used if name in owner and owner[name] != unit}
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                on_stack.discard(w)
                component.append(w)
            on_stack.discard(v)
            if component:
                found.append(sorted([v, *component]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def component(root: Path, files: dict[str, str]) -> Path:
    """A component "comp" below root with the given files (name: text)."""
    (root / "comp").mkdir()
    (root / "comp" / "module.mk").write_text("")
    for name, text in files.items():
        (root / "comp" / name).write_text(text)
    return root / "comp"


def test_the_include_graph_shows_a_circle_through_three_units_and_no_other(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    component(root, {"a.c": '#include "b.h"\n', "b.c": '#include "c.h"\n', "c.h": '#include "a.h"\n',
                     "a.h": "", "b.h": "", "d.c": '#include "a.h"\n'})
    assert circles(include_graph(root)) == [["comp/a", "comp/b", "comp/c"]]


def test_the_link_graph_shows_two_sources_that_call_each_other(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    comp = component(root, {"a.c": "void b(void);\nvoid a(void) { b(); }\n",
                            "b.c": "void a(void);\nvoid b(void) { a(); }\n",
                            "c.c": "void a(void);\nvoid c(void) { a(); }\n"})
    objects = root / "obj" / "comp"
    objects.mkdir(parents=True)
    for name in ("a", "b", "c"):
        subprocess.run(["cc", "-c", "-o", str(objects / f"{name}.o"), str(comp / f"{name}.c")], check=True)
    assert circles(link_graph(root / "obj", root)) == [["comp/a", "comp/b"]]


def test_no_include_circle_in_any_component() -> None:
    graph = include_graph(ROOT)
    # The graph is real: headers found beside the includer, by a relative path, by name.
    assert "emulator/src/model/router_queue" in graph["emulator/src/model/router_red"]
    assert "npa/src/tun" in graph["bench/naive_relay"]
    assert "emulator/src/model/link_model" in graph["emulator/src/emu_state"]
    assert circles(graph) == [], "include circles (units that include each other's headers)"


def test_no_link_circle_but_the_known_ones() -> None:
    assert any(OBJECTS.rglob("*.o")), f"no objects in {OBJECTS}; run `make build` first"
    graph = link_graph(OBJECTS, ROOT)
    assert "emulator/src/config/config_text" in graph["emulator/src/config/config_trace"]
    found = {frozenset(c) for c in circles(graph)}
    assert found - KNOWN_LINK_CIRCLES.keys() == set(), "new link circles"
    assert KNOWN_LINK_CIRCLES.keys() - found == set(), "known circles that are gone: drop them from the list"
