"""Aggregation across replications and the Jain fairness index."""

from __future__ import annotations

import pytest

from analysis.aggregate.statistics import jain_index, percentile, sum_of_maxima, summarize


def test_summary_uses_linear_interpolation_between_ranks() -> None:
    s = summarize([4.0, 1.0, 3.0, 2.0, 10.0])
    assert (s.n, s.failed, s.min, s.max) == (5, 0, 1.0, 10.0)
    assert (s.p25, s.median, s.p75) == (2.0, 3.0, 4.0)
    assert s.mean == 4.0
    even = summarize([1.0, 2.0, 3.0, 4.0])
    assert (even.p25, even.median, even.p75) == (1.75, 2.5, 3.25)


def test_failed_replications_are_counted_not_dropped() -> None:
    s = summarize([5.0, None, 7.0], failed=2)
    assert (s.n, s.failed, s.median) == (2, 3, 6.0)
    nothing = summarize([None], failed=0)
    assert (nothing.n, nothing.failed, nothing.median) == (0, 1, None)


def test_percentile_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_jain_index() -> None:
    assert jain_index([5.0, 5.0, 5.0]) == 1.0
    assert jain_index([1.0, 0.0, 0.0, 0.0]) == 0.25          # k/n with k = 1 served
    assert jain_index([6.0, 6.0, 0.0]) == pytest.approx(2 / 3)
    assert jain_index([]) is None and jain_index([0.0, 0.0]) is None


def test_sum_of_maximum_drops_over_classes() -> None:
    drops = {"main": [0, 2, 1], "inline1": [3, None, 0], "inline2": [None]}
    assert sum_of_maxima(drops) == 5
