"""`squall compare`: the statistics by their definitions, pairs of runs and of cells, a known
effect found with its interval (synthetic and on the studies' exported runs), no effect
between A and A, and an answer (exit 0) that says so when there are too few replications."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest

from analysis.compare.adjust import holm
from analysis.compare.effect import effect
from analysis.compare.rank_test import mann_whitney_p
from support_compare import run_from_study, write_run
from testbed.cli import main as squall

STUDY = Path(__file__).resolve().parent.parent / "validation" / "data" / "iip-http"


def _brute_force_p(a: list[float], b: list[float]) -> float:
    """Two-sided exact p from every split of the pooled values (the test's definition:
    U = the pairs (x of B, y of A) with y < x)."""
    pooled, n = [*a, *b], len(b)
    observed = sum(1 for x in b for y in a if y < x)
    splits = [sum(1 for x in bs for y in pooled if y not in bs and y < x)
              for bs in itertools.combinations(pooled, n)]
    below = sum(s <= observed for s in splits) / len(splits)
    above = sum(s >= observed for s in splits) / len(splits)
    return min(1.0, 2 * min(below, above))


def test_mann_whitney_exact_agrees_with_every_split() -> None:
    rng = np.random.default_rng(7)
    for m, n in ((3, 3), (4, 5), (6, 4)):
        a, b = list(rng.normal(0, 1, m)), list(rng.normal(0.8, 1, n))
        assert mann_whitney_p(a, b) == pytest.approx(_brute_force_p(a, b))
    assert mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert mann_whitney_p([1, 2], []) is None


def test_mann_whitney_normal_approximation_with_ties() -> None:
    a, b = [1, 1, 2, 2, 3] * 14, [2, 3, 3, 4, 4] * 14          # 140 values: normal, ties
    ranks = {v: r for v, r in zip(*np.unique(np.array(a + b), return_index=True))}
    pooled = sorted(a + b)
    mid = {v: (pooled.index(v) + 1 + len(pooled) - pooled[::-1].index(v)) / 2 for v in ranks}
    u = sum(mid[x] for x in b) - 70 * 71 / 2
    t = np.array([pooled.count(v) for v in ranks])
    sigma = math.sqrt(70 * 70 / 12 * (141 - (t ** 3 - t).sum() / (140 * 139)))
    z = (abs(u - 70 * 70 / 2) - 0.5) / sigma
    assert mann_whitney_p(a, b) == pytest.approx(math.erfc(z / math.sqrt(2)))


def test_holm_by_hand() -> None:
    assert holm([0.01, None, 0.04, 0.03]) == pytest.approx([0.03, None, 0.06, 0.06])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])


def test_bootstrap_interval_is_seeded_and_needs_three_a_side() -> None:
    a, b = [10.0, 11, 12, 13, 14], [20.0, 21, 22, 23, 24]
    first, again = effect(a, b), effect(list(reversed(a)), b)
    assert first == again                       # depends on the values only
    assert first.difference == 10 and first.ratio == pytest.approx(22 / 12)
    assert first.difference_low <= 10 <= first.difference_high
    assert 6 <= first.difference_low and first.difference_high <= 14   # resampled medians' range
    tiny = effect([1.0, 2.0], [3.0, 4.0, 5.0])
    assert tiny.difference == 2.5 and not tiny.has_interval and tiny.ratio_low is None


def _normal_run(root: Path, name: str, means: dict[str, float], n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    return write_run(root, name, {
        f"link-{link}": ({"link": link}, {"web.response_time_s": list(rng.normal(mean, 0.3, n)),
                                          "web.retransmissions": list(rng.poisson(3, n))})
        for link, mean in means.items()}, description=f"{name} runs",
        meta={"title": f"try {seed}", "squall_revision": f"{seed}abc",
              "scenario_sha256": f"{seed}" * 64})


def _effects(markdown: str) -> dict[tuple[str, str], list[str]]:
    section = markdown.split("## Effects")[1].split("\n## ")[0]
    rows = [[c.strip() for c in line.strip("|").split(" | ")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| compared")]
    return {(r[0], r[1]): r for r in rows}


def test_two_runs_find_a_known_effect_with_its_interval(tmp_path: Path, capsys) -> None:
    a = _normal_run(tmp_path / "a-1", "web", {"e0": 10.0, "r2": 20.0}, 10, 1)
    b = _normal_run(tmp_path / "b-1", "web", {"e0": 8.0, "r2": 20.0}, 10, 2)
    assert squall(["compare", str(a), str(b), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "compare.md").read_text()
    assert md.rstrip() in capsys.readouterr().out           # also printed
    rows = _effects(md)
    e0 = rows[("link-e0", "web.response_time_s")]
    assert e0[2] == "s" and e0[3] == e0[4] == "10"
    low, high = map(float, re.findall(r"-?\d+\.\d+", e0[8]))
    assert low < -1.4 and high < -1.4 and low < float(e0[7]) < high     # about −2 s
    assert float(e0[12]) < 0.05 and e0[13] == "B lower"
    assert rows[("link-r2", "web.response_time_s")][13] == "no difference shown"
    # the default metrics only: retransmissions only when asked for
    assert not any(m == "web.retransmissions" for _, m in rows)
    assert "Holm" in md and "2000 resamples" in md
    runs = md.split("## Runs")[1].split("\n## ")[0]
    assert "| web | a-1 | web runs | try 1 | – | 1abc | " + "1" * 64 + " |" in runs
    assert (tmp_path / "out" / "plots" / "compare_web.response_time_s.png").stat().st_size > 5000
    assert (tmp_path / "out" / "compare.html").read_text().count("data:image/png;base64") == 1


def test_a_against_a_finds_no_effect(tmp_path: Path, capsys) -> None:
    a = _normal_run(tmp_path / "a-1", "web", {"e0": 10.0, "r2": 20.0}, 8, 1)
    b = _normal_run(tmp_path / "a-2", "web", {"e0": 10.0, "r2": 20.0}, 8, 3)
    assert squall(["compare", str(a), str(b), "--metric", "web.*", "--no-plots"]) == 0
    md = (a / "summary" / "compare-vs-a-2" / "compare.md").read_text()
    rows = _effects(md)
    assert len(rows) == 4                       # 2 cells × 2 metrics
    assert all(r[13] == "no difference shown" for r in rows.values()), rows
    assert "0 with a difference shown" in md
    assert squall(["compare", str(a), str(a), "--no-plots", "--out", str(tmp_path / "same")]) == 0
    same = _effects((tmp_path / "same" / "compare.md").read_text())
    assert all(r[7] == "0.000" and r[11] == "1" for r in same.values())


def test_too_few_replications_still_answer_and_say_so(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", "web", {"c": ({}, {"web.response_time_s": [10.0, None, 11.0]})})
    b = write_run(tmp_path / "b", "web", {"c": ({}, {"web.response_time_s": [5.0, 6.0]})})
    assert squall(["compare", str(a), str(b), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "compare.md").read_text()
    row = _effects(md)[("c", "web.response_time_s")]
    assert row[3:5] == ["2", "2"]               # the failed replication is not a value
    assert row[7] == "-5.000" and row[8] == "–"
    assert row[13].startswith("too few replications for an interval (n = 2 and 2")
    assert "1 of them have too few replications for an interval" in md


def test_two_sets_of_cells_of_one_run_pair_by_their_other_labels(tmp_path: Path) -> None:
    cells = {f"tcp-{tcp}_link-{link}": ({"tcp": tcp, "link": link},
                                        {"bulk.elapsed_s": [base + k * 0.01 for k in range(5)]})
             for tcp, shift in (("baseline", 0.0), ("iw4", -1.0))
             for link, base in (("e0", 5.0 + shift), ("r2", 9.0 + shift))}
    run = write_run(tmp_path / "run", "bulk", cells)
    out = tmp_path / "out"
    assert squall(["compare", str(run), "--cells", "tcp-baseline_*", "--vs", "tcp-iw4_*",
                   "--out", str(out)]) == 0
    rows = _effects((out / "compare.md").read_text())
    assert set(rows) == {("tcp-iw4_link-e0 vs tcp-baseline_link-e0", "bulk.elapsed_s"),
                         ("tcp-iw4_link-r2 vs tcp-baseline_link-r2", "bulk.elapsed_s")}
    assert all(r[7] == "-1.000" and r[13] == "B lower" for r in rows.values())
    # overlapping sides and a missing side are refused with what to do
    assert squall(["compare", str(run), "--cells", "tcp-*", "--vs", "tcp-iw4_*"]) == 2
    assert squall(["compare", str(run), "--cells", "nothing*", "--vs", "tcp-iw4_*"]) == 2
    assert squall(["compare", str(run)]) == 2


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_from_study(tmp_path_factory.mktemp("study") / "iip-http-full", STUDY)


def test_the_studys_iw4_effect_on_e0_with_its_interval(study: Path, tmp_path: Path) -> None:
    """validation/report.md: IIP e0 HTTP 1.1 s+2s, iw4-frto 4 s vs baseline 4.43 s (the study:
    4.9 vs 5.5 s); squall's own 10 replications each."""
    out = tmp_path / "out"
    assert squall(["compare", str(study), "--cells", "link-e0_tcp-baseline_workload-s+2s_*",
                   "--vs", "link-e0_tcp-iw4-frto_workload-s+2s_*",
                   "--metric", "web.response_time_s", "--out", str(out)]) == 0
    rows = _effects((out / "compare.md").read_text())
    assert len(rows) == 2                       # HTTP 1.0 and 1.1, each with its own baseline
    row = rows[("link-e0_tcp-iw4-frto_workload-s+2s_http-1.1 vs "
                "link-e0_tcp-baseline_workload-s+2s_http-1.1", "web.response_time_s")]
    assert row[3:5] == ["10", "10"]
    assert float(row[5]) == pytest.approx(4.433, abs=0.001)
    assert float(row[6]) == pytest.approx(4.001, abs=0.001)
    low, high = map(float, re.findall(r"-?\d+\.\d+", row[8]))
    assert -0.434 <= low < high <= -0.431
    assert float(row[12]) < 0.001 and row[13] == "B lower"


def test_the_study_against_itself_finds_no_effect(study: Path, tmp_path: Path) -> None:
    assert squall(["compare", str(study), str(study), "--cells", "link-r2_*", "--no-plots",
                   "--out", str(tmp_path / "out")]) == 0
    rows = _effects((tmp_path / "out" / "compare.md").read_text())
    assert len(rows) >= 20
    assert all(r[13] == "no difference shown" for r in rows.values())


def test_two_runs_of_the_study_one_variant_each(tmp_path: Path) -> None:
    """Two runs that set the TCP variant once (baseline, iw4-frto): their cells of the same name
    are paired; on e0 the study's IW4 effect, on every page size and HTTP version."""
    base = run_from_study(tmp_path / "baseline", STUDY, ("tcp", "baseline"))
    iw4 = run_from_study(tmp_path / "iw4", STUDY, ("tcp", "iw4-frto"))
    out = tmp_path / "out"
    assert squall(["compare", str(base), str(iw4), "--cells", "*link-e0_*", "--no-plots",
                   "--out", str(out)]) == 0
    rows = _effects((out / "compare.md").read_text())
    assert len(rows) == 6                                  # 3 pages x 2 HTTP versions
    row = rows[("http-1.1_link-e0_workload-s+2s", "web.response_time_s")]
    assert float(row[5]) == pytest.approx(4.433, abs=0.001)
    assert float(row[6]) == pytest.approx(4.001, abs=0.001) and row[13] == "B lower"


def test_three_runs_each_against_the_first(tmp_path: Path) -> None:
    """RUN_A RUN_B RUN_C: B and C each against A, every row naming its B run, Holm over all."""
    a = _normal_run(tmp_path / "a-1", "web", {"e0": 10.0}, 8, 1)
    b = _normal_run(tmp_path / "b-1", "web", {"e0": 8.0}, 8, 2)
    c = _normal_run(tmp_path / "c-1", "web", {"e0": 10.0}, 8, 3)
    assert squall(["compare", str(a), str(b), str(c), "--out", str(tmp_path / "out")]) == 0
    rows = _effects((tmp_path / "out" / "compare.md").read_text())
    assert rows[("b-1: link-e0", "web.response_time_s")][13] == "B lower"
    assert rows[("c-1: link-e0", "web.response_time_s")][13] == "no difference shown"
    assert "squall compare: b-1, c-1 against a-1" in (tmp_path / "out" / "compare.md").read_text()
