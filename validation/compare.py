"""The join of the reference rows with squall's values, one row per key both have.

`ratio` = ours / reference for quantities (times, throughputs, drop counts); None when the
reference is 0. Percentages (Saarto's response time differences) are signed, so a ratio means
nothing: they get `difference` = ours − reference in percentage points instead.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .bias import SignedBias, signed_bias, signed_log
from .measures import Measurements
from .reference import Key, RefRow


@dataclass(frozen=True)
class Comparison:
    key: Key
    table: str
    unit: str
    reference: float
    ours: float
    ratio: float | None
    difference: float | None


@dataclass(frozen=True)
class Coverage:
    compared: int
    reference_rows: int            # with a value in the source
    not_run: int                   # reference rows whose cell squall did not run (or could not measure)
    pending: int = 0               # of those, rows whose cells ran only with a fitted parameter


def compare_row(ref: RefRow, ours: float) -> Comparison:
    assert ref.value is not None
    if ref.unit == "%":
        return Comparison(ref.key, ref.table, ref.unit, ref.value, ours, None, ours - ref.value)
    ratio = None if ref.value == 0 else ours / ref.value
    return Comparison(ref.key, ref.table, ref.unit, ref.value, ours, ratio, None)


def join(reference: list[RefRow], ours: Measurements | dict[Key, float | None]
         ) -> tuple[list[Comparison], Coverage]:
    """The main comparison (a Measurements' values), or a sensitivity variant's (its dict)."""
    values = ours.values if isinstance(ours, Measurements) else ours
    rows = []
    with_value = [r for r in reference if r.value is not None]
    for ref in with_value:
        value = values.get(ref.key)
        if value is not None:
            rows.append(compare_row(ref, value))
    rows.sort(key=lambda c: (c.key.study, table_order(c.table), c.key))
    return rows, Coverage(len(rows), len(with_value), len(with_value) - len(rows))


def table_order(table: str) -> tuple[int, str]:
    return (int(table), "") if table.isdigit() else (10**6, table)


# Metric families of the report's agreement table: (family, metrics, is a count, target for
# the median |ln ratio|). Counts (drops, retransmissions) are often 0 in the tables, so their
# ratio is taken of (value + 1): 0 against 0 agrees, 1 against 0 is a factor 2.
FAMILIES = (
    ("response and elapsed times", ("Time", "response_time", "Elapsed_min", "Elapsed_perc25",
                                    "Elapsed_median", "Elapsed_perc75", "Elapsed_max", "Elapsed_avg"),
     False, 0.15),
    ("throughputs", ("Med_thro", "Min_thro", "Max_thro", "Med_th_m", "Slowest_th_i", "Fastest_th_i"),
     False, 0.25),
    ("congestion drops", ("Drops_c",), True, math.log(1.5)),
    ("error drops", ("Drops_e",), True, math.log(1.5)),
    ("Σ maximum drops", ("Sum_max_drops",), True, None),
    ("retransmissions", ("Rext_pkts",), True, None),
    ("jitter", ("Jitter_min", "Jitter_max"), False, None),
    ("response time differences (%)", ("response_time_diff",), False, None),
)


@dataclass(frozen=True)
class Agreement:
    family: str
    reference_values: int          # in the tables, with a number, not marked corrupt
    compared: int
    median_abs_ln: float | None    # of squall / reference ((x + 1) for counts)
    within_20: float | None        # share of the compared values within ±20 %
    within_50: float | None
    median_abs_difference: float | None   # percentage points, for the differences family
    target: float | None           # for median_abs_ln
    bias: SignedBias | None = None   # of ln(squall / reference)

    @property
    def coverage(self) -> float:
        return self.compared / self.reference_values if self.reference_values else 0.0

    @property
    def met(self) -> bool | None:
        if self.target is None or self.median_abs_ln is None:
            return None
        return self.median_abs_ln <= self.target


def _family_of(metric: str) -> str | None:
    name = metric.split(".")[-1]
    return next((family for family, metrics, _, _ in FAMILIES if name in metrics), None)


def _ratio(c: Comparison, count: bool) -> float | None:
    """0 for a value of 0 against a positive reference (a transfer unfinished at the deadline,
    analysis/metrics/censoring.py): as far off as can be."""
    if count:
        return (c.ours + 1) / (c.reference + 1) if c.ours >= 0 and c.reference >= 0 else None
    return c.ratio if c.ratio is not None and c.ratio >= 0 else None


# Statistics over a cell's replications whose expected value does not depend on how many there
# are: a minimum, maximum or quartile of 2 replications is not one of the reference's 20.
CENTRAL = ("Time", "response_time", "Elapsed_median", "Elapsed_avg", "Med_thro", "Med_th_m",
           "Slowest_th_i", "Fastest_th_i")


def _is_central(metric: str) -> bool:
    return metric.split(".")[-1] in CENTRAL


def _agreement(family: str, refs: list[RefRow], mine: list[Comparison], count: bool,
               target: float | None) -> Agreement:
    ratios = [r for c in mine if (r := _ratio(c, count)) is not None]
    signed = [signed_log(r) for r in ratios]
    logs = [abs(x) for x in signed]
    share = (lambda low, high: sum(low <= r <= high for r in ratios) / len(ratios)) if ratios else None
    return Agreement(family, len(refs), len(mine), statistics.median(logs) if logs else None,
                     share(0.8, 1.2) if share else None, share(0.5, 1.5) if share else None, None, target,
                     signed_bias(signed))


STUDIES = ("iip", "saarto")


def agreement(reference: list[RefRow], rows: list[Comparison], study: str | None = None
              ) -> list[Agreement]:
    """Per metric family (of one study, or of all): how much of the tables squall covers and
    how close it comes; for the times and throughputs also their medians and means alone
    (CENTRAL), which few replications estimate without the bias of an extreme over them."""
    if study is not None:
        reference = [r for r in reference if r.key.study == study]
        rows = [c for c in rows if c.key.study == study]
    out = []
    for family, _, count, target in FAMILIES:
        refs = [r for r in reference if r.value is not None and _family_of(r.key.metric) == family]
        mine = [c for c in rows if _family_of(c.key.metric) == family]
        if not refs:
            continue
        if family.startswith("response time differences"):
            diffs = [abs(c.difference) for c in mine if c.difference is not None]
            out.append(Agreement(family, len(refs), len(mine), None, None, None,
                                 statistics.median(diffs) if diffs else None, None))
            continue
        out.append(_agreement(family, refs, mine, count, target))
        central = [r for r in refs if _is_central(r.key.metric)]
        if 0 < len(central) < len(refs):
            out.append(_agreement(f"{family}: medians and means only", central,
                                  [c for c in mine if _is_central(c.key.metric)], count, None))
    return out
