"""p-values adjusted for the number of comparisons: Holm's step-down method (Holm 1979),
which holds the family-wise error rate without assuming the tests independent. Sorted
ascending p_(1) ≤ … ≤ p_(m): adjusted p_(i) = max over j ≤ i of min(1, (m − j + 1) p_(j)).
m counts the comparisons that have a p-value."""

from __future__ import annotations

from typing import Sequence


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    present = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    adjusted: list[float | None] = [None] * len(pvalues)
    running, m = 0.0, len(present)
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
