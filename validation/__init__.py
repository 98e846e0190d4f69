"""Reproduction of the studies: squall's results beside the studies' tables (`make validate`).

- `reference`: the reference CSVs (scenarios/reference/) as rows keyed like squall's cells.
- `measures`: a run's analysed cells -> values under the same keys.
- `compare`: the join, with a ratio (or a difference for percentages) per row.
- `conclusions`: the studies' qualitative conclusions checked on both sides.
- `report`: validation/report.md.  `run`: the reduced runs and the whole pipeline.
"""
