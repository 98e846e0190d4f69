"""A run made with --cells/--replications is analysed as what it set out to do: the cells it
did not select are not its missing replications (meta.json records the selection)."""
from __future__ import annotations

import json
from pathlib import Path

from analysis.results.layout import read_layout


def make_run(root: Path, run_options: dict | None) -> Path:
    root.mkdir()
    (root / "scenario.toml").write_text('name = "sel"\nseed = 1\nreplications = 30\nlink = "e0"\n')
    (root / "expanded.json").write_text(json.dumps({"cells": [{"cell": "link-e0"}, {"cell": "link-r2"}]}))
    testbed = {"backend": "namespaces"} | ({"run": run_options} if run_options else {})
    (root / "meta.json").write_text(json.dumps({"testbed": testbed}))
    rep = root / "cells" / "link-e0" / "rep-01"
    rep.mkdir(parents=True)
    (rep / "status.json").write_text(json.dumps({"status": "ok", "reason": ""}))
    return root


def test_unselected_cells_and_replications_are_not_missing(tmp_path):
    layout = read_layout(make_run(tmp_path / "run", {"cells": "link-e0", "replications": 2}))
    assert [c.cell for c in layout.cells] == ["link-e0"]
    assert [(r.cell, r.rep, r.status) for r in layout.replications] == \
        [("link-e0", 1, "ok"), ("link-e0", 2, "missing")]


def test_a_selection_of_several_globs_keeps_each_cell_they_match(tmp_path):
    layout = read_layout(make_run(tmp_path / "run", {"cells": "link-x*,link-r2", "replications": 1}))
    # link-r2 is selected by the second glob: missing; link-e0 by neither, its result is kept as found
    assert [(r.cell, r.status) for r in layout.replications] == [("link-r2", "missing"), ("link-e0", "ok")]


def test_without_a_recorded_selection_every_cell_and_replication_counts(tmp_path):
    layout = read_layout(make_run(tmp_path / "run", None))
    assert [c.cell for c in layout.cells] == ["link-e0", "link-r2"]
    assert sum(r.status == "missing" for r in layout.replications) == 29 + 30


def test_a_replication_cut_short_is_named_as_such_not_as_never_run(tmp_path):
    root = make_run(tmp_path / "run", {"cells": "link-e0", "replications": 3})
    (root / "cells" / "link-e0" / "rep-02.partial").mkdir()
    reasons = {r.rep: (r.status, r.reason) for r in read_layout(root).replications}
    assert reasons[2] == ("missing", "not finished: rep-02.partial exists (running now, or cut short; "
                                     "--resume redoes it)")
    assert reasons[3] == ("missing", "never run")


def test_a_run_from_a_later_replication_misses_only_what_it_selected(tmp_path):
    root = make_run(tmp_path / "run", {"cells": "link-e0", "replications": 4, "first_replication": 3})
    (root / "cells" / "link-e0" / "rep-01").rename(root / "cells" / "link-e0" / "rep-03")
    layout = read_layout(root)
    assert [(r.rep, r.status) for r in layout.replications] == [(3, "ok"), (4, "missing")]


def test_the_run_facts_count_the_replications_a_later_sitting_selected(tmp_path):
    from analysis.report.describe import run_facts

    def replications_row(run_options: dict) -> str:
        table = run_facts(tmp_path, {"replications": 10}, {"testbed": {"run": run_options}})
        return dict((row[0], row[1]) for row in table.rows)["replications per cell"]

    assert replications_row({"replications": 4, "first_replication": 3}) == "2 (replications 3..4)"
    assert replications_row({"replications": 4}) == "4"
    assert replications_row({}) == "10"
