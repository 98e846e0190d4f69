"""The analysis' parts are layers along its pipeline (analysis/README.md, docs/architecture.md):
each imports only the parts before it, and `testbed/run/` reaches the analysis through its few
entry points only. Imports are read from the source as in test_python_imports.py."""
from __future__ import annotations

from test_python_imports import graph, modules

PARTS = ("results", "read", "join", "metrics", "aggregate", "report", "compare")
TOP = {"analysis", "analysis.__main__", "analysis.cli", "analysis.errors", "analysis.gc_pause"}
PRIMITIVES = {"analysis.errors", "analysis.gc_pause"}       # what a part may import from the top
# what testbed/run/ may import: the results directory's format, the captures read back beside
# the log (the instrument checks), the run's report
RUN_ENTRY_POINTS = ("analysis.results.", "analysis.metrics.capture_vs_log", "analysis.report.run_report")


def part(module: str) -> str | None:
    names = module.split(".")
    return names[1] if len(names) > 2 and names[1] in PARTS else None


def test_every_analysis_module_is_in_a_part_or_at_the_top() -> None:
    loose = [m for m in modules() if m.startswith("analysis") and part(m) is None and m not in TOP
             and not m.startswith(("analysis.fuzz", *(f"analysis.{p}" for p in PARTS)))]
    assert loose == []


def arrows_back_up(g: dict[str, set[str]]) -> list[str]:
    """Imports of a part's module that reach a later part, or the top beyond its primitives."""
    wrong = []
    for module, targets in g.items():
        mine = part(module)
        if mine is None:
            continue
        for target in targets:
            theirs = part(target)
            if theirs is not None and PARTS.index(theirs) > PARTS.index(mine):
                wrong.append(f"{module} -> {target}")
            elif theirs is None and target.startswith("analysis") and target not in PRIMITIVES:
                wrong.append(f"{module} -> {target}")
    return sorted(wrong)


def test_no_part_imports_a_later_part_or_the_top_beyond_its_primitives() -> None:
    assert arrows_back_up(graph()) == []


def test_the_runner_uses_the_analysis_through_its_entry_points_only() -> None:
    used = {t for m, targets in graph().items() if m.startswith("testbed.run.")
            for t in targets if t.startswith("analysis")}
    assert used and all(t.startswith(RUN_ENTRY_POINTS) for t in used), sorted(used)


def test_the_check_sees_an_arrow_back_up() -> None:
    g = {"analysis.read.pcap": {"analysis.report.plots", "analysis.errors"},
         "analysis.metrics.tcp": {"analysis.read.pcap", "analysis.cli"},
         "analysis.report.plots": {"analysis.metrics.tcp"}}
    assert arrows_back_up(g) == ["analysis.metrics.tcp -> analysis.cli",
                                 "analysis.read.pcap -> analysis.report.plots"]
