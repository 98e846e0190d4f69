"""Everything the report says about squall's cells beside the tables, computed in one place."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from analysis.aggregate.run_analysis import CellResult

from .compare import STUDIES, Agreement, Comparison, Coverage, agreement, join
from .conclusions import Verdict, category, cells_read, check_all, reference_lookup
from .distributions import Spread, spreads
from .measures import Measurements, measure
from .protocol import FITTED_WORKLOADS, Sensitivity
from .reference import Key, load_reference
from .stability import Stability, stability


@dataclass
class Outcome:
    verdicts: list[Verdict]
    rows: list[Comparison]
    coverage: Coverage
    agreements: list[Agreement]
    per_study: dict[str, list[Agreement]] = field(default_factory=dict)
    variants: list[tuple[Sensitivity, list[Agreement]]] = field(default_factory=list)
    stability: list[Stability] = field(default_factory=list)
    spreads: list[Spread] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)     # per study, set by --from-data
    # title -> the verdict with the fitted cells' values, for a conclusion they alone measure
    sensitivity_verdicts: dict[str, Verdict] = field(default_factory=dict)
    # the committed results of validation/explanations/reproducibility/ (set by --from-data)
    reproducibility: list[dict] = field(default_factory=list)
    # reference key -> the sensitivity variants' comparisons of it
    variant_rows: dict[Key, list[tuple[Sensitivity, Comparison]]] = field(default_factory=dict)


def compare_cells(studies: Iterable[tuple[str, list[CellResult]]]) -> Outcome:
    """(reference study, cells) pairs -> the verdicts, the joined rows, coverage, agreement,
    the sensitivity variants' agreement, the verdicts' stability and the bimodal cells."""
    studies = list(studies)
    reference = load_reference()
    measured = measure(studies)
    rows, coverage = join(reference, measured)
    fitted = {k for v in FITTED_WORKLOADS.values() for k in measured.variants.get(v, {})}
    pending = sum(r.value is not None and r.key in fitted and r.key not in measured.values for r in reference)
    joined = [(variant, join(reference, values)[0]) for variant, values in measured.variants.items()]
    variants = [(variant, [a for a in agreement(reference, compared) if a.compared]) for variant, compared in joined]
    variant_rows: dict[Key, list[tuple[Sensitivity, Comparison]]] = {}
    for variant, compared in joined:
        for c in compared:
            variant_rows.setdefault(c.key, []).append((variant, c))
    read = cells_read(reference, measured)
    lookup = reference_lookup(reference)
    verdicts = check_all(reference, measured)
    return Outcome(verdicts, rows, replace(coverage, pending=pending),
                   agreement(reference, rows),
                   {s: agreement(reference, rows, s) for s in STUDIES},
                   [(v, a) for v, a in variants if a],
                   stability(reference, studies),
                   spreads(studies, {k: lookup(k) for k in _time_keys(read)}, read),
                   sensitivity_verdicts=_fitted_verdicts(reference, measured, verdicts),
                   variant_rows=variant_rows)


def _fitted_verdicts(reference: list, measured: Measurements, verdicts: list[Verdict]) -> dict[str, Verdict]:
    """The conclusions that only cells run with a fitted parameter measure, checked on those."""
    fitted = {k: v for variant in set(FITTED_WORKLOADS.values()) for k, v in measured.variants.get(variant, {}).items()}
    if not fitted:
        return {}
    with_fitted = check_all(reference, Measurements({**measured.values, **fitted}, measured.series,
                                                    measured.replications))
    return {v.title: w for v, w in zip(verdicts, with_fitted)
            if category(c.ours_holds for c in v.cases) == "not measured"
            and category(c.ours_holds for c in w.cases) != "not measured"}


def _time_keys(cells: set) -> list:
    return [replace(k, metric=m) for k in cells for m in ("Time", "response_time")]
